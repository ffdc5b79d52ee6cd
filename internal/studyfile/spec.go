// Package studyfile reads a study file: the YAML that declares a study's
// question, its factors and their levels, the backends that serve each
// combination of backend-side levels, and the measurement. Parse checks the
// whole file before anything starts and reports the first problem as one
// line, FILE:LINE:COL: message. Configurations and Series expand the
// declaration into the backend processes to start and the series to
// measure; Expand and Configuration.Vars fill in the placeholders of a
// backend's command, environment, files, URL and headers.
package studyfile

import (
	"fmt"
	"github.com/backbench/backbench/internal/study"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/backbench/backbench/internal/trials"
)

// The kinds of a factor.
const (
	// KindClient is a factor the client applies (keep-alive, the HTTP
	// version): its levels share one backend process.
	KindClient = "client"
	// KindBackend is a factor whose levels need a backend process each:
	// substituted into a backend's command, environment, files and URL,
	// or the transport the backend listens on.
	KindBackend = "backend"
)

// The kinds of measurement.
const (
	// MeasureSweep runs every series at each concurrency level.
	MeasureSweep = "sweep"
	// MeasureBench runs every series at one concurrency level.
	MeasureBench = "bench"
	// MeasureCapacity searches each series' highest load within the
	// objectives.
	MeasureCapacity = "capacity"
)

// The reserved factor names.
const (
	// FactorTransport is the backend-side factor that decides whether a
	// backend listens on TCP or on a Unix socket (levels tcp and unix).
	FactorTransport = "transport"
	// FactorKeepalive is the client-side factor of keep-alive (levels on
	// and off; true/false/yes/no are read as on/off).
	FactorKeepalive = "keepalive"
	// FactorHTTP is the client-side factor of the HTTP version (levels 1.0
	// and 1.1).
	FactorHTTP = "http"
)

// The transports.
const (
	// TransportTCP is a TCP port on the loopback address.
	TransportTCP = "tcp"
	// TransportUnix is a Unix socket in a directory the runner makes.
	TransportUnix = "unix"
)

// Bounds of a study.
const (
	// MaxConfigurations is the most backend configurations a study may
	// declare (each one is a backend process).
	MaxConfigurations = 1000
	// MaxSeries is the most combinations of all factor levels a study may
	// declare.
	MaxSeries = 10000
	// MaxFileSize is the largest study file, in bytes.
	MaxFileSize = 1 << 20
)

// Defaults of a backend.
const (
	// DefaultStartTimeout is how long a backend may take to listen.
	DefaultStartTimeout = 30 * time.Second
	// DefaultGrace is how long a backend may take to exit after its stop
	// signal, before SIGKILL.
	DefaultGrace = 5 * time.Second
	// DefaultStatus is the status the verification request expects.
	DefaultStatus = 200
)

// Study is a parsed and validated study file.
type Study struct {
	// Declaration is the question, the file's path as given to Parse or
	// Load (File), and the declared factors in file order: the result
	// (study.Result) embeds it as it is.
	study.Declaration
	// Exclude lists the combinations left out: each map names factors and
	// a level of each; a combination matching every entry of one map is
	// excluded. Levels are normalised as the factors' are.
	Exclude []map[string]string
	// Backends are the declared backends in file order.
	Backends []Backend
	// Measure is the measurement of every series.
	Measure Measure
}

// Factor is one declared factor (study.Factor): its name, levels,
// baseline, kind (KindClient or KindBackend), the backend's own name of
// its setting, and its place in the file.
type Factor = study.Factor

// Backend is one declared backend: how to start, check and stop it.
type Backend struct {
	// Name is the backend's name, unique in the study.
	Name string
	// When holds the backend-side factor levels this backend serves; a
	// configuration is served by the first backend whose When it matches.
	// Empty: every configuration.
	When map[string]string
	// Command is the command line, unsubstituted templates.
	Command []string
	// Env holds the extra environment, name and value template, in file
	// order.
	Env [][2]string
	// Files are written per configuration into its own directory.
	Files []File
	// URL is the target's URL template (scheme fcgi, http or https).
	URL string
	// Verify is the expected answer of the verification request.
	Verify Verify
	// Exclusive: the backend cannot run beside the other configurations
	// (true too when Port is set).
	Exclusive bool
	// Port is a fixed TCP port, 0 for one the runner picks.
	Port int
	// Transport is "tcp" (the default) or "unix": used when the study has
	// no transport factor.
	Transport string
	// StartTimeout is how long the backend may take to listen.
	StartTimeout time.Duration
	// StopSignal is the signal sent to the backend's process group to
	// stop it.
	StopSignal syscall.Signal
	// Grace is how long after StopSignal before SIGKILL.
	Grace time.Duration
	// Insecure skips the verification of the certificate (https).
	Insecure bool
	// DocumentRoot is FastCGI's DOCUMENT_ROOT, "" for the default.
	DocumentRoot string
	// Headers are extra request headers, "Name: value" templates.
	Headers []string
	// CPUs are the CPUs its whole process tree runs on (cpus:, a CPU list
	// as taskset -c takes it, or pin: auto's share); empty: not pinned.
	CPUs []int
	// Line and Col are the position of the backend's entry in the file.
	Line, Col int
}

// File is a file written into a configuration's directory before its
// backend starts. Both fields are templates.
type File struct {
	// Path is relative to the configuration's directory.
	Path string
	// Content is the file's content.
	Content string
}

// Verify is the expected answer of the request sent once a backend
// listens.
type Verify struct {
	// Status is the expected status (default 200).
	Status int
	// Body is a substring the body must hold, "" for any body.
	Body string
}

// Measure is the measurement of every series.
type Measure struct {
	// Kind is MeasureSweep, MeasureBench or MeasureCapacity.
	Kind string
	// Levels are the concurrency levels, strictly increasing (one for a
	// bench; none or one for a capacity search), read as sweep's -c
	// (load.ParseLevels).
	Levels []int
	// Requests per level and trial, 0 when Duration alone bounds it.
	Requests int64
	// Duration per level and trial (or capacity step), 0 when Requests
	// alone bounds it.
	Duration time.Duration
	// Repeat is the number of trials per level (at least 1).
	Repeat int
	// Warmup is the number of requests before each trial, not counted.
	Warmup int64
	// Noise is the noise threshold of the verdicts, a fraction (read as
	// --noise reads it: "2%" or 0.02), and NoiseSet whether the file or
	// the command line gave it (otherwise the caller's default).
	Noise    float64
	NoiseSet bool
	// Timeout is the deadline of one request, 0 for the caller's default.
	Timeout time.Duration
	// SLO are the objectives as written ("p99<=100ms", "errors<=1%"),
	// each one that --slo takes (capacity.Parse): required by a capacity
	// search; a sweep or a bench judges each run by them, as their --slo.
	SLO []string
	// Confirm is the length of the run that confirms a capacity search's
	// answer (0: the runner's default; below 0: none, as a confirm of 0
	// in the file or capacity's --confirm 0 says).
	Confirm time.Duration
	// Memory is a capacity study's memory budget in bytes (0: none): the
	// sizing answer names the largest pool that fits it.
	Memory int64
	// ClientCPUs are the CPUs every thread of backbench runs on
	// (client_cpus:, or pin: auto's share); empty: not pinned.
	ClientCPUs []int
	// Until is UntilDecided when rounds run until every pair is decided
	// (until: decided), "" for the fixed Repeat rounds. Budget is then
	// the most time the rounds may take (0: none) and MaxRepeat the most
	// rounds (at least trials.DefaultMinRounds; trials.DefaultMaxRepeat
	// when not given); Repeat is the first rounds, those every series
	// runs, raised to trials.DefaultMinRounds (UntilRounds).
	Until     string
	Budget    time.Duration
	MaxRepeat int
	// Pin is "auto" when pin: auto divides the machine's CPUs between the
	// client and the backends, "" otherwise; PinNote says why pin: auto
	// pinned nothing ("" when it did).
	Pin     string
	PinNote string
	// Targets is targets:, a targets file (as --targets) every series
	// sends, its path resolved against the study file's directory; ""
	// for one request.
	Targets string
	// AccessLog is access_log:, an access log every series replays (as
	// --access-log), resolved like Targets; LogFormat is log_format: and
	// ReplayMethods replay_methods: (comma-separated), as --log-format and
	// --replay-methods take them.
	AccessLog, LogFormat, ReplayMethods string
}

// Error is a problem of a study file, at a line and column of it.
type Error struct {
	// File is the path of the study file.
	File string
	// Line and Col are 1-based; Col is 1 when only the line is known.
	Line, Col int
	// Msg is the problem, one line.
	Msg string
}

// Error returns the problem as one line, FILE:LINE:COL: message.
func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Load reads the study file at path and parses it.
func Load(path string) (*Study, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses and validates a study file's content; path names it in
// errors. Any error is an *Error for the first problem found.
func Parse(path string, data []byte) (s *Study, err error) {
	p := &parser{file: path, src: data}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			s, err = nil, e
		}
	}()
	s = p.parse()
	return s, nil
}

// oneLine makes a message one line.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\u0085' || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}

// UntilDecided is until's one value: rounds run until every pair is
// decided, within the budget and max_repeat.
const UntilDecided = "decided"

// UntilRounds are the first rounds and the most rounds of a study run
// until decided: the first rounds every series runs (Repeat, at least
// trials.DefaultMinRounds, at most the most), the most MaxRepeat
// (trials.DefaultMaxRepeat when 0).
func (m *Measure) UntilRounds() (first, most int) {
	most = m.MaxRepeat
	if most == 0 {
		most = trials.DefaultMaxRepeat
	}
	return min(max(m.Repeat, trials.DefaultMinRounds), most), most
}
