// Package plan turns the options of a load (the target, its protocol, the
// request, the load's own settings) into the executor's plan of a run,
// checked before any connection is made. bench, sweep, capacity and the
// study runner build their plans here; the command line's flags are read
// in cmd/backbench, which fills Options from them.
package plan

import (
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/procstat"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// Error is a wrong option, found before any connection is made: a usage
// error of the command that gave it.
type Error struct{ Msg string }

// Error returns the message, in the command line's words.
func (e *Error) Error() string { return e.Msg }

func errorf(format string, a ...any) error { return &Error{fmt.Sprintf(format, a...)} }

// Options are the settings of a load, as bench's flags give them (the
// flag of each in its comment).
type Options struct {
	// URL is the target (fcgi:// or http(s)://, a {A..B} port range too).
	URL string
	// KeepSecrets keeps the URL's credentials in what the plan records
	// (--keep-secrets; execute.Plan.KeepSecrets).
	KeepSecrets bool
	// Shape is the load's shape: -c (Concurrency), -n (Requests), -t
	// (Duration), --rate (Rate) and --ramp (Ramp), bound straight to the
	// flags; Build sets its stages (from StageSpec or RateStageSpec) and
	// hands it to the executor's plan as it is.
	stats.Shape
	// RequestsSet says whether -n was given: with a time limit alone the
	// run has no count limit.
	RequestsSet bool
	// Timeout is -s.
	Timeout time.Duration
	// KeepAlive is -k, VariableLength -l, ABCompat --ab-compat.
	KeepAlive, VariableLength, ABCompat bool
	// Threads is --threads, Sched --client-sched, Engine --engine.
	Threads int
	Sched   string
	Engine  string
	// ClientCPUs is --client-cpus: the CPU list (0, 0-1, 0,2) every
	// thread of the client runs on; "": not pinned.
	ClientCPUs string
	// StartAt is --start-at (zero: at once).
	StartAt time.Time
	// Verbosity is -v.
	Verbosity int
	// SLO are the --slo objectives.
	SLO []string
	// Upstreams is --upstream, Balance --balance, Insecure --insecure,
	// UnixSocket --unix-socket.
	Upstreams  []string
	Balance    string
	Insecure   bool
	UnixSocket string
	// BackendPIDs is --backend-pid, BackendPIDFile --backend-pidfile,
	// FPMStatus --fpm-status.
	BackendPIDs    []int
	BackendPIDFile string
	FPMStatus      string
	// Headers is -H (@FILE too), Cookies -C, BasicAuth -A, Proxy -X.
	Headers   []string
	Cookies   []string
	BasicAuth string
	Proxy     string
	// Method is -m, Head -i, PostFile -p, PutFile -u, ContentType -T.
	Method      string
	Head        bool
	PostFile    string
	PutFile     string
	ContentType string
	// HTTP10 is --http1.0, DocumentRoot --document-root, Params --param.
	HTTP10       bool
	DocumentRoot string
	Params       []string
	// StageSpec is --stages, RateStageSpec --rate-stages: bench's load in
	// stages (with Shape.Ramp, --ramp), which sets the time limit, and the
	// concurrency or the rate.
	StageSpec, RateStageSpec string
	// ConcurrencySet, TimeLimitSet and RateSet say whether -c, -t and
	// --rate were given, for the stages.
	ConcurrencySet, TimeLimitSet, RateSet bool
	// Window is bench's --window, the width of the run's timeline
	// windows, and WindowSet whether it was given: at least a millisecond,
	// and no longer than the run's time limit.
	Window    time.Duration
	WindowSet bool
	// Stdin reads the body of -p - or -u -, or the targets of --targets -
	// (standard input, read once by its caller); nil refuses "-".
	Stdin func() ([]byte, error)
	// Targets is --targets: a targets file (internal/targets), whose
	// requests the run sends in the mix of their weights instead of one
	// request; "-" is standard input.
	Targets string
	// AccessLog is --access-log: an nginx or Apache access log whose
	// requests (their methods and paths) the run sends in the log's order
	// instead of one request; "-" is standard input. LogFormat is
	// --log-format ("combined", "common" or an nginx log_format string;
	// "" reads combined and common lines), ReplayMethods --replay-methods
	// (a comma-separated list; "" is GET,HEAD).
	AccessLog, LogFormat, ReplayMethods string
}

// Defaults are the options of a bench without flags but its URL.
func Defaults(url string) Options {
	return Options{URL: url, Shape: stats.Shape{Requests: 1, Concurrency: 1}, Timeout: 30 * time.Second,
		Balance: "round-robin", Engine: execute.EngineAuto, Verbosity: 1}
}

// Load is a checked load: the executor's plan of a run and the --slo
// objectives its runs are judged by.
type Load struct {
	*execute.Plan
	Objectives []capacity.Objective
}

// Build checks the options and makes the plan of the run; an error is an
// *Error (a usage error), but for an io_uring engine that cannot be set
// up (sockets.ErrNoRing).
func (o *Options) Build() (*Load, error) {
	c := *o
	o = &c
	stages, err := o.stages()
	if err != nil {
		return nil, err
	}
	tgt, cl, err := targets(o.URL, o.Upstreams, o.Balance, o.Insecure)
	if err != nil {
		return nil, err
	}
	r := &execute.Plan{Shape: o.Shape, Upstreams: cl.upstreams, Balance: cl.balance, TLS: cl.tls,
		Timeout: o.Timeout, KeepAlive: o.KeepAlive, VariableLength: o.VariableLength, ABCompat: o.ABCompat,
		Threads: o.Threads, Sched: o.Sched, Engine: o.Engine, KeepSecrets: o.KeepSecrets}
	if r.Proto, err = Protocol(tgt); err != nil {
		return nil, err
	}
	if r.ClientCPUs, err = ClientCPUs(o.ClientCPUs); err != nil {
		return nil, err
	}
	if err := o.backend(r); err != nil {
		return nil, err
	}
	if tgt, err = UnixSocket(tgt, o.UnixSocket, len(cl.upstreams)); err != nil {
		return nil, err
	}
	r.Target = tgt
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.WindowSet {
		switch {
		case o.Window < time.Millisecond:
			return nil, errorf("bench: --window %v: want 1ms or more", o.Window)
		case o.Duration > 0 && o.Window > o.Duration:
			return nil, errorf("bench: --window %v is longer than the run (-t %v)", o.Window, o.Duration)
		}
	}
	if o.RequestsSet || o.Duration == 0 {
		r.Requests = o.Requests
	} else {
		r.Requests = 0
	}
	if _, err := r.ResolveEngine(); err != nil {
		if errors.Is(err, sockets.ErrNoRing) {
			return nil, err
		}
		return nil, errorf("%v", err)
	}
	if err := CheckFiles(fmt.Sprintf("-c %d", o.Concurrency), o.Concurrency); err != nil {
		return nil, err
	}
	l := &Load{Plan: r}
	if len(o.SLO) > 0 {
		if l.Objectives, err = capacity.ParseAll(o.SLO); err != nil {
			return nil, errorf("--slo: %v", err)
		}
	}
	if r.Headers, r.ProtoOptions, err = Request(r.Proto, o.Headers, o.Params, o.DocumentRoot, o.HTTP10); err != nil {
		return nil, err
	}
	if err := o.request(r); err != nil {
		return nil, err
	}
	if o.Targets != "" || o.AccessLog != "" || o.LogFormat != "" || o.ReplayMethods != "" {
		if err := o.mix(r); err != nil {
			return nil, err
		}
	}
	if len(stages) > 0 {
		r.Stages = stages
	}
	return l, nil
}

// stages reads --stages or --rate-stages and sets the options they
// decide: the time limit (their total length), and the largest
// concurrency (closed model) or the mean rate (open model).
func (o *Options) stages() ([]stats.Stage, error) {
	spec, flag, open := o.StageSpec, "--stages", false
	switch {
	case o.StageSpec != "" && o.RateStageSpec != "":
		return nil, errorf("bench: --stages and --rate-stages: give one (connections in the closed model, or rates in the open one)")
	case o.RateStageSpec != "":
		spec, flag, open = o.RateStageSpec, "--rate-stages", true
	case o.StageSpec == "":
		if o.Ramp {
			return nil, errorf("bench: --ramp needs --stages or --rate-stages")
		}
		return nil, nil
	}
	st, err := stats.ParseStages(spec)
	if err != nil {
		return nil, errorf("bench: %s: %v", flag, err)
	}
	total := stats.StagesLength(st)
	switch {
	case o.RequestsSet:
		return nil, errorf("bench: %s sets the run's length: not with -n", flag)
	case o.TimeLimitSet && o.Duration != total:
		return nil, errorf("bench: -t %v differs from the stages' total length %v", o.Duration, total)
	case o.RateSet:
		return nil, errorf("bench: %s with --rate: give the rates as --rate-stages", flag)
	}
	o.Duration = total
	if open {
		var n float64
		prev := 0.0
		for _, s := range st {
			a := s.Target
			if o.Ramp {
				a = prev
			}
			n += (a + s.Target) / 2 * s.Length.Seconds()
			prev = s.Target
		}
		if n < 1 {
			return nil, errorf("bench: --rate-stages %s asks for no request", spec)
		}
		o.Rate = n / total.Seconds()
		return st, nil
	}
	most := 0.0
	for _, s := range st {
		most = max(most, s.Target)
	}
	if most < 1 || most > 1_000_000 {
		return nil, errorf("bench: --stages %s: want concurrencies from 0 to 1000000, one of them at least 1", spec)
	}
	if c := int(math.Ceil(most)); !o.ConcurrencySet {
		o.Concurrency = c
	} else if o.Concurrency < c {
		return nil, errorf("bench: -c %d is below the stages' largest concurrency %d", o.Concurrency, c)
	}
	return st, nil
}

// check checks the load's numbers and --start-at.
func (o *Options) check() error {
	limited := o.RequestsSet || o.Duration == 0
	switch {
	case o.Requests < 1 && limited:
		return errorf("-n %d: the number of requests must be at least 1", o.Requests)
	case o.Concurrency < 1:
		return errorf("-c %d: the concurrency must be at least 1", o.Concurrency)
	case o.Concurrency > 1_000_000:
		return errorf("-c %d: the concurrency is at most 1000000", o.Concurrency)
	case limited && int64(o.Concurrency) > o.Requests:
		return errorf("-c %d is greater than -n %d: cannot use more workers than requests", o.Concurrency, o.Requests)
	case o.Timeout <= 0:
		return errorf("-s must be greater than 0 seconds")
	case o.Verbosity < 0:
		return errorf("-v %d: the verbosity must be 0 or more", o.Verbosity)
	case o.Rate < 0 || o.Rate > 10_000_000:
		return errorf("--rate %g: want requests per second from 0 to 10000000", o.Rate)
	case o.Threads < 0 || o.Threads > 1024:
		return errorf("--threads %d: want from 1 to 1024 (0: every CPU)", o.Threads)
	}
	return CheckStartAt(o.StartAt, time.Now())
}

// request checks the flags that ab users type (-i, -u, -C, -A, -X), adds
// the headers of -C and -A, and sets the method and the body.
func (o *Options) request(r *execute.Plan) error {
	switch {
	case o.Proxy != "":
		return errorf("-X %s: backbench has no proxy mode, it talks to the backend directly; to measure the proxy, bench its own URL", o.Proxy)
	case o.PostFile != "" && o.PutFile != "":
		return errorf("-p and -u both give a body: choose one")
	case o.Head && (o.PostFile != "" || o.PutFile != ""):
		return errorf("-i (HEAD) sends no body: drop -p or -u")
	case o.Head && o.Method != "" && o.Method != "HEAD":
		return errorf("-i and -m %s contradict each other", o.Method)
	}
	var extra []string
	if len(o.Cookies) > 0 {
		for _, c := range o.Cookies {
			if name, _, ok := strings.Cut(c, "="); !ok || strings.TrimSpace(name) == "" {
				return errorf("bad -C %q: want name=value", c)
			}
		}
		extra = append(extra, "Cookie: "+strings.Join(o.Cookies, "; "))
	}
	if o.BasicAuth != "" {
		if !strings.Contains(o.BasicAuth, ":") {
			return errorf("bad -A %q: want user:password", o.BasicAuth)
		}
		extra = append(extra, "Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte(o.BasicAuth)))
	}
	for _, h := range extra {
		kv, err := ParseHeader(h)
		if err != nil {
			return err
		}
		r.Headers = append(r.Headers, kv)
	}
	r.Method = o.Method
	bodyFile, bodyFlag, bodyMethod := o.PostFile, "-p", "POST"
	if o.PutFile != "" {
		bodyFile, bodyFlag, bodyMethod = o.PutFile, "-u", "PUT"
	}
	if o.Head {
		r.Method = "HEAD"
	}
	if bodyFile != "" {
		b, err := o.readBody(bodyFile)
		if err != nil {
			return errorf("cannot read %s file: %v", bodyFlag, err)
		}
		r.Body = b
		if r.Method == "" {
			r.Method = bodyMethod
		}
		r.ContentType = o.ContentType
		if r.ContentType == "" {
			r.ContentType = "text/plain"
		}
	} else if o.ContentType != "" {
		return errorf("-T needs a body (-p FILE or -u FILE)")
	}
	if r.Method == "" {
		r.Method = "GET"
	}
	for _, c := range r.Method {
		if c <= ' ' || c >= 0x7f {
			return errorf("bad method %q", r.Method)
		}
	}
	return nil
}

// readBody reads the body file of -p or -u; "-" is standard input (as
// curl's --data-binary @-), through o.Stdin.
func (o *Options) readBody(name string) ([]byte, error) {
	if name != "-" {
		return os.ReadFile(name)
	}
	if o.Stdin == nil {
		return nil, errors.New("no standard input")
	}
	return o.Stdin()
}

// cluster is the checked form of the target options.
type cluster struct {
	upstreams []sockets.Addr
	balance   sockets.Balance
	tls       *tls.Config
}

// targets expands a URL with a port range into its upstreams and returns
// the target (the first URL) and the cluster settings.
func targets(url string, upstreams []string, balance string, insecure bool) (sockets.Target, cluster, error) {
	var cl cluster
	urls, err := sockets.ExpandPorts(url)
	if err != nil {
		return sockets.Target{}, cl, errorf("%v", err)
	}
	tgt, err := sockets.ParseTarget(urls[0])
	if err != nil {
		return tgt, cl, errorf("%v", err)
	}
	tgt.URL = url
	if len(urls) > 1 {
		if len(upstreams) > 0 {
			return tgt, cl, errorf("use either a {A..B} port range or --upstream, not both")
		}
		for _, u := range urls {
			t, err := sockets.ParseTarget(u)
			if err != nil {
				return tgt, cl, errorf("%v", err)
			}
			cl.upstreams = append(cl.upstreams, sockets.Addr{Network: t.Network, Address: t.Address})
		}
	}
	for _, u := range upstreams {
		a, err := sockets.ParseAddr(u)
		if err != nil {
			return tgt, cl, errorf("--upstream: %v", err)
		}
		cl.upstreams = append(cl.upstreams, a)
	}
	if cl.balance, err = sockets.ParseBalance(balance); err != nil {
		return tgt, cl, errorf("--balance: %v", err)
	}
	if tgt.UsesTLS() {
		// The name to verify, as curl does: a host name against the
		// certificate's DNS names, an IP address against its IP
		// addresses (and then no SNI is sent).
		cl.tls = &tls.Config{ServerName: tgt.Host, InsecureSkipVerify: insecure,
			ClientSessionCache: tls.NewLRUClientSessionCache(1024)}
	} else if insecure {
		return tgt, cl, errorf("--insecure applies to https:// targets only")
	}
	return tgt, cl, nil
}

// UnixSocket applies --unix-socket (path, when set) to tgt, a target of
// the given number of upstreams.
func UnixSocket(tgt sockets.Target, path string, upstreams int) (sockets.Target, error) {
	if path == "" {
		return tgt, nil
	}
	if upstreams > 0 {
		return tgt, errorf("--unix-socket and several upstreams do not mix; use --upstream unix:/path")
	}
	if !filepath.IsAbs(path) && !filepath.IsLocal(path) {
		return tgt, errorf("bad --unix-socket %q", path)
	}
	return tgt.WithUnixSocket(path), nil
}

// Protocol returns the protocol of a parsed target.
func Protocol(t sockets.Target) (protocol.Protocol, error) {
	pr, err := protocol.Of(t)
	if err != nil {
		return nil, errorf("target %q: %v", load.RedactURL(t.URL), err)
	}
	return pr, nil
}

// Request checks the request options that bench, sweep and probe share
// (-H, --param, --document-root, --http1.0) for a target of the protocol
// pr and returns the headers and the protocol's options (FastCGI's params
// and absolute document root, the current directory by default; HTTP's
// version). The protocol refuses the options it does not take, before
// any is parsed.
func Request(pr protocol.Protocol, headers, params []string, docRoot string, http10 bool) (hs [][2]string, opts any, err error) {
	if err := pr.Check(looseFlags(params, docRoot, http10)); err != nil {
		return nil, nil, errorf("%v", err)
	}
	if headers, err = headerFiles(headers); err != nil {
		return nil, nil, err
	}
	for _, h := range headers {
		kv, err := ParseHeader(h)
		if err != nil {
			return nil, nil, err
		}
		hs = append(hs, kv)
	}
	f := protocol.Flags{DocumentRoot: docRoot, HTTP10: http10}
	for _, p := range params {
		kv, err := ParseParam(p)
		if err != nil {
			return nil, nil, err
		}
		f.Params = append(f.Params, kv)
	}
	if opts, err = pr.Options(f); err != nil {
		return nil, nil, errorf("%v", err)
	}
	return hs, opts, nil
}

// looseFlags are the request options as given, the params not checked
// yet: enough for Protocol.Check, which asks only which are set.
func looseFlags(params []string, docRoot string, http10 bool) protocol.Flags {
	f := protocol.Flags{DocumentRoot: docRoot, HTTP10: http10}
	for _, p := range params {
		name, value, _ := strings.Cut(p, "=")
		f.Params = append(f.Params, [2]string{name, value})
	}
	return f
}

// ForSeries returns the options of one series of a sweep at url: the
// FastCGI options only when its protocol takes them (a sweep may mix
// protocols), --insecure only when it is an https:// target; usesTLS says
// whether it is one.
func (o Options) ForSeries(url string) (s Options, usesTLS bool) {
	o.URL = url
	if pr, err := protocol.OfURL(url); err == nil && pr.Check(looseFlags(o.Params, o.DocumentRoot, false)) != nil {
		o.DocumentRoot, o.Params = "", nil
	}
	usesTLS = sockets.SchemeUsesTLS(sockets.SchemeOf(url))
	if !usesTLS {
		o.Insecure = false
	}
	return o, usesTLS
}

// backend checks what to sample of the backend of a target of the
// protocol p.Proto and sets it in p.
func (o *Options) backend(p *execute.Plan) error {
	p.BackendPIDs = append([]int(nil), o.BackendPIDs...)
	if o.BackendPIDFile != "" {
		b, err := os.ReadFile(o.BackendPIDFile)
		if err != nil {
			return errorf("cannot read --backend-pidfile: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			return errorf("--backend-pidfile %s: no PID in it", o.BackendPIDFile)
		}
		p.BackendPIDs = append(p.BackendPIDs, pid)
	}
	if len(p.BackendPIDs) > 0 {
		if err := procstat.Check(p.BackendPIDs); err != nil {
			return errorf("%v", err)
		}
	}
	if o.FPMStatus != "" {
		if err := p.Proto.Check(protocol.Flags{FPMStatus: o.FPMStatus}); err != nil {
			return errorf("%v", err)
		}
		if !strings.HasPrefix(o.FPMStatus, "/") {
			return errorf("--fpm-status %q: want a path starting with /", o.FPMStatus)
		}
		p.FPMStatus = o.FPMStatus
	}
	return nil
}

// ParseHeader checks one -H value, "Name: value", and splits it.
func ParseHeader(h string) ([2]string, error) {
	name, value, ok := strings.Cut(h, ":")
	if !ok {
		return [2]string{}, errorf("bad header %q: want 'Name: value'", h)
	}
	if name == "" || strings.ContainsFunc(name, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r)
	}) {
		return [2]string{}, errorf("bad header %q: the name must be a non-empty token", h)
	}
	value = strings.TrimSpace(value)
	if strings.ContainsAny(value, "\r\n\x00") {
		return [2]string{}, errorf("bad header %q: the value has a control byte", h)
	}
	return [2]string{name, value}, nil
}

// headerFiles replaces every -H @FILE by the headers in FILE, one a line
// (curl's -H @file); blank lines and lines starting with # are skipped. No
// header name starts with @ (it is not a token character), so the two
// forms cannot be confused.
func headerFiles(headers []string) ([]string, error) {
	var out []string
	for _, h := range headers {
		name, ok := strings.CutPrefix(h, "@")
		if !ok {
			out = append(out, h)
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, errorf("cannot read -H @%s: %v", name, err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			l = strings.TrimRight(l, "\r")
			if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue
			}
			out = append(out, l)
		}
	}
	return out, nil
}

// ParseParam checks one --param value, "NAME=VALUE".
func ParseParam(p string) ([2]string, error) {
	name, value, ok := strings.Cut(p, "=")
	if !ok || name == "" {
		return [2]string{}, errorf("bad --param %q: want NAME=VALUE", p)
	}
	return [2]string{name, value}, nil
}

// MaxStartAhead bounds how far in the future --start-at may be: further
// is more likely a unit mistake (milliseconds for seconds) than a plan.
const MaxStartAhead = 24 * time.Hour

// CheckStartAt refuses a --start-at more than a second in the past or
// more than MaxStartAhead ahead of now.
func CheckStartAt(t, now time.Time) error {
	switch d := t.Sub(now); {
	case t.IsZero():
		return nil
	case d < -time.Second:
		return errorf("--start-at %s is %.1f s in the past (more than 1 s): give a time ahead", t.Format(time.RFC3339Nano), -d.Seconds())
	case d > MaxStartAhead:
		return errorf("--start-at %s is more than %v ahead (Unix seconds, not milliseconds?)", t.Format(time.RFC3339Nano), MaxStartAhead)
	}
	return nil
}

// CheckFiles refuses a concurrency whose connections the file limit
// cannot hold even raised to its hard limit (execute.FileLimit); what
// names the concurrency in the message ("-c 30000", "sweep: the highest
// level, 30000,").
func CheckFiles(what string, concurrency int) error {
	need, limit, ok := execute.FileLimit(concurrency)
	if ok {
		return nil
	}
	return errorf("%s needs %d open files (one per connection and %d for the rest), more than the limit of %d (RLIMIT_NOFILE, raised to its hard limit): use at most %d, or raise the hard limit (ulimit -Hn; LimitNOFILE= for a service)",
		what, need, need-uint64(concurrency), limit, execute.MaxConcurrency())
}

// ClientCPUs reads --client-cpus: a CPU list as taskset -c takes it, each
// CPU one this machine has; "" is nil (not pinned).
func ClientCPUs(list string) ([]int, error) {
	if list == "" {
		return nil, nil
	}
	cpus, err := load.ParseCPUs(list)
	if err == nil {
		err = load.CheckCPUs(cpus, load.MachineCPUs())
	}
	if err != nil {
		return nil, errorf("--client-cpus %s: %v", list, err)
	}
	return cpus, nil
}
