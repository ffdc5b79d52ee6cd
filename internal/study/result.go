// Package study is a study's result model: what a study file declared,
// what ran (its backend configurations, with their failures), what every
// series measured (each trial's figures, per concurrency level), the
// comparisons of the series that differ in exactly one declared factor,
// and the answers in sentences (Answers). Its renderers are
// internal/report's (StudyText, StudyMarkdown) and internal/report/page's;
// the runner is internal/studyrun, the file's format
// internal/studyfile. The result is a document of kind study
// (internal/document): compare and report read it without running
// anything.
package study

import (
	"fmt"

	"github.com/backbench/backbench/internal/trials"
)

// Result is a study's outcome: what was declared, what ran, what it
// measured and the answers.
type Result struct {
	// Declaration is the study file's question and factors, as parsed.
	Declaration
	// Measure describes the measurement.
	Measure Measure `json:"measure"`
	// Configurations are the backend configurations, Series the measured
	// lines (a configuration at a level of every client-side factor).
	Configurations []Configuration `json:"configurations"`
	Series         []Series        `json:"series"`
	// Comparisons are every one-factor pair's comparison at every level.
	Comparisons []trials.Comparison `json:"comparisons"`
	// Answers are the sentences, one conclusion per factor with its
	// detail.
	Answers []Answer `json:"answers"`
	// Notes are what the reader should know (restarts, rounds, failures).
	Notes []string `json:"notes"`
	// Rounds is the number of rounds run; Seconds the study's wall time.
	Rounds  int     `json:"rounds"`
	Seconds float64 `json:"seconds"`
	// StartedAt and EndedAt are when the study began and ended, in Unix
	// seconds (0 in files written before they were recorded).
	StartedAt float64 `json:"started_at,omitempty"`
	EndedAt   float64 `json:"ended_at,omitempty"`
	// Incomplete marks a study interrupted (SIGINT, SIGTERM) before its
	// last round: what finished is kept.
	Incomplete bool `json:"incomplete,omitempty"`
	// Seed ordered the series in every round.
	Seed uint64 `json:"seed"`
	// Noise is the threshold under which a difference does not count.
	Noise float64 `json:"noise"`
	// FalseDiscoveries says how the false directions among Comparisons
	// were controlled (nil without a comparison with a test).
	FalseDiscoveries *trials.FDR `json:"false_discoveries,omitempty"`
	// Sizing is a capacity study's measurement and answer (nil for a
	// sweep or a bench).
	Sizing *Sizing `json:"sizing,omitempty"`
	// Until says how rounds run until decided ended (nil for a study of
	// fixed rounds).
	Until *Stopping `json:"until,omitempty"`
}

// Declaration is what a study file declares of its question: the
// question, the file, and the factors. The parsed file
// (internal/studyfile.Study) holds it, and the result embeds it as parsed.
type Declaration struct {
	// Question is the study's question, a sentence: the page's title.
	Question string `json:"question"`
	// File is the file's path as given to the parser.
	File string `json:"file,omitempty"`
	// Factors are the declared factors, in the file's order.
	Factors []Factor `json:"factors"`
}

// Factor is a declared factor.
type Factor struct {
	// Name is the factor's name, also its placeholder {Name} when it is
	// backend-side.
	Name string `json:"name"`
	// Levels are the factor's levels as written (numbers as written;
	// keepalive levels normalised to "on" and "off").
	Levels []string `json:"levels"`
	// Baseline is the level the others are compared with: the first
	// unless the file says otherwise.
	Baseline string `json:"baseline"`
	// Kind is "client" (keep-alive, HTTP version: the same backend) or
	// "backend" (a backend process per level).
	Kind string `json:"kind"`
	// Setting is the backend's own name of what the factor sets
	// ("pm.max_children"), for the sizing answer; "" for none. The
	// result keeps it in its sizing (Sizing), not here.
	Setting string `json:"-"`
	// Line and Col are the position of the factor's name in the file.
	Line int `json:"-"`
	Col  int `json:"-"`
}

// Measure is the measurement every series gets.
type Measure struct {
	// Kind is "sweep" or "bench".
	Kind string `json:"kind"`
	// Levels are the concurrency levels.
	Levels []int `json:"levels"`
	// Requests per level and trial (0: Seconds bounds it), Seconds per
	// level and trial (0: none).
	Requests int64   `json:"requests"`
	Seconds  float64 `json:"seconds"`
	// Repeat is the trials per level; Warmup the requests before each,
	// not counted.
	Repeat int   `json:"repeat"`
	Warmup int64 `json:"warmup"`
	// ClientCPUs are the CPUs every thread of the client ran on
	// (client_cpus, or pin: auto's share); absent: not pinned. Pin is
	// "auto" when pin: auto divided the CPUs.
	ClientCPUs []int  `json:"client_cpus,omitempty"`
	Pin        string `json:"pin,omitempty"`
	// Until is "decided" when the rounds ran until every pair was decided
	// (Repeat is then the first rounds, those every series ran), absent
	// for the fixed Repeat rounds; BudgetSeconds is the most time they
	// could take (0: none), MaxRepeat the most rounds.
	Until         string  `json:"until,omitempty"`
	BudgetSeconds float64 `json:"budget_seconds,omitempty"`
	MaxRepeat     int     `json:"max_repeat,omitempty"`
}

// UntilDecided is Measure.Until of rounds run until decided.
const UntilDecided = "decided"

// Sequential is the rule that judges a study run until decided (its
// looks from the first rounds to MaxRepeat, at the study's noise), and
// false for a study of fixed rounds.
func (res *Result) Sequential() (trials.Sequential, bool) {
	m := res.Measure
	if m.Until != UntilDecided {
		return trials.Sequential{}, false
	}
	return trials.Sequential{MinRounds: max(m.Repeat, trials.DefaultMinRounds), MaxRounds: m.MaxRepeat, Noise: res.Noise}, true
}

// How rounds run until decided stopped (Stopping.Stopped): trials'.
const (
	// StoppedDecided: every pair was decided.
	StoppedDecided = trials.StoppedDecided
	// StoppedBudget: the budget was spent.
	StoppedBudget = trials.StoppedBudget
	// StoppedMaxRepeat: the most rounds (max_repeat) ran.
	StoppedMaxRepeat = trials.StoppedMaxRepeat
	// StoppedInterrupted: the study was interrupted.
	StoppedInterrupted = trials.StoppedInterrupted
	// StoppedNoSeries: no undecided pair had a side left to run (its
	// backends failed).
	StoppedNoSeries = trials.StoppedNoSeries
)

// Stopping is how rounds run until decided ended: the JSON object
// "until" of a study (trials.Stopping, shared with a sweep's).
type Stopping = trials.Stopping

// Pairs returns the pairs of series that the answers compare (those that
// differ in exactly one declared factor), each as the indexes of the
// series and of its baseline in Series.
func (res *Result) Pairs() [][2]int {
	var out [][2]int
	for _, p := range pairsOf(res) {
		out = append(out, [2]int{p.s, p.b})
	}
	return out
}

// Configuration is one backend configuration: what started, where, and
// what happened to it.
type Configuration struct {
	// Name is "transport=unix, workers=4"; Levels its backend-side levels.
	Name   string            `json:"name"`
	Levels map[string]string `json:"levels"`
	// Backend names the study's backend entry that started it.
	Backend string `json:"backend"`
	// Command is the command line it ran (credentials redacted).
	Command []string `json:"command"`
	// Network and Address are where it listened.
	Network string `json:"network"`
	Address string `json:"address"`
	// Protocol is the scheme of its URL ("fcgi", "http", "https");
	// ProtocolName the protocol as a sentence names it ("FastCGI",
	// "HTTP", "HTTPS").
	Protocol     string `json:"protocol"`
	ProtocolName string `json:"protocol_name"`
	// Exclusive says it ran alone, started and stopped in every round.
	Exclusive bool `json:"exclusive,omitempty"`
	// CPUs are the CPUs its whole process tree ran on (its backend's
	// cpus, or pin: auto's share); absent: not pinned.
	CPUs []int `json:"cpus,omitempty"`
	// Starts counts its starts; Killed its stops that needed SIGKILL.
	Starts int `json:"starts"`
	Killed int `json:"killed,omitempty"`
	// Lost counts the rounds in which it died.
	Lost int `json:"lost,omitempty"`
	// Failure is why it has no results (or fewer than planned), one line;
	// FailureKind is one of the Failure kinds.
	Failure     string `json:"failure,omitempty"`
	FailureKind string `json:"failure_kind,omitempty"`
	// Dir is its directory (the files the study wrote for it, its logs,
	// its working directory), kept after the study when it failed; ""
	// when it did not (its directory was removed).
	Dir string `json:"dir,omitempty"`
	// Left lists processes of its tree found alive after its stop (should
	// be none).
	Left []int `json:"left,omitempty"`
	// PeakPSSBytes and MeanPSSBytes are its process tree's memory over the
	// measured runs; MaxProcs its most processes.
	PeakPSSBytes int64   `json:"peak_pss_bytes,omitempty"`
	MeanPSSBytes float64 `json:"mean_pss_bytes,omitempty"`
	MaxProcs     int     `json:"max_procs,omitempty"`
	// Notes about this configuration.
	Notes []string `json:"notes,omitempty"`
}

// Failed reports whether c failed: it did not start, listen or verify,
// was lost during a round (even once, restarted), or left processes
// alive after its stop.
func (c *Configuration) Failed() bool { return c.Failure != "" || c.Lost > 0 }

// FailedConfigurations returns the configurations of r that failed
// (Configuration.Failed), each as its failure's line: "backend
// \"which=bad\" exited at start (status 3): ...".
func (r *Result) FailedConfigurations() []string {
	var out []string
	for i := range r.Configurations {
		c := &r.Configurations[i]
		if !c.Failed() {
			continue
		}
		why := c.Failure
		if why == "" {
			why = fmt.Sprintf("backend %q was lost in %d round(s)", c.Name, c.Lost)
			if c.Dir != "" {
				why += "; its files and logs are kept in " + c.Dir
			}
		}
		out = append(out, why)
	}
	return out
}

// FailureRef names c's failure in a few words, for the places that
// refer to it after the one line that says it in full (the notes):
// `backend "which=start" did not start (its failure is in the notes)`.
func (c *Configuration) FailureRef() string {
	what := map[string]string{FailStart: "did not start", FailListen: "did not listen", FailVerify: "failed its verification",
		FailLost: "was lost", FailStop: "left processes after its stop"}[c.FailureKind]
	if what == "" {
		what = "failed"
	}
	return fmt.Sprintf("backend %q %s (its failure is in the notes)", c.Name, what)
}

// The kinds of a configuration's failure.
const (
	FailStart  = "start"        // exited at start, or could not run
	FailListen = "listen"       // never listened within the start timeout
	FailVerify = "verify"       // the verification request failed
	FailLost   = "backend_lost" // died during the measurement
	FailStop   = "stop"         // processes left after SIGKILL
)

// Series is one measured line.
type Series struct {
	// Label is the series' name: every factor's level.
	Label string `json:"label"`
	// Config indexes Result.Configurations.
	Config int `json:"config"`
	// Levels holds every factor's level (backend and client).
	Levels map[string]string `json:"levels"`
	// URL is its target; KeepAlive and HTTP10 its client settings.
	URL       string `json:"url"`
	KeepAlive bool   `json:"keep_alive"`
	HTTP10    bool   `json:"http10,omitempty"`
	// Steps holds one entry per concurrency level run.
	Steps []Step `json:"steps"`
}

// Step is a series at one concurrency level: its trials and medians.
type Step struct {
	Concurrency int            `json:"concurrency"`
	Trials      []trials.Trial `json:"trials"`
	// RequestsPerSecond, MeanMs, P99Ms and MaxMs are the medians of the
	// trials with their intervals (Figure: 95% from 6 trials, less below).
	RequestsPerSecond Figure `json:"requests_per_second"`
	MeanMs            Figure `json:"mean_ms"`
	P99Ms             Figure `json:"p99_ms"`
	MaxMs             Figure `json:"max_ms"`
	// Complete, Failed and KeepAliveRequests are summed over the trials;
	// FailureClass names the most frequent failure class, FailureSample
	// one failure's message.
	Complete          int64  `json:"complete"`
	Failed            int64  `json:"failed"`
	KeepAliveRequests int64  `json:"keep_alive_requests"`
	FailureClass      string `json:"failure_class,omitempty"`
	// KeepAliveIgnored says that the backend closed the connection after
	// every response in every trial of a keep-alive series.
	KeepAliveIgnored bool   `json:"keep_alive_ignored,omitempty"`
	FailureSample    string `json:"failure_sample,omitempty"`
	// Targets has one entry per request of a mix (measure's targets or
	// access_log), in the targets file's order; absent for one request.
	Targets []TargetStep `json:"targets,omitempty"`
}

// TargetStep is one request of a mix at a step: its counts summed over
// the trials, its times the medians of the trials' own (those in which
// it completed a request) with their intervals (Figure).
type TargetStep struct {
	// Target is "METHOD URL" as the targets file gives it (a replayed
	// log's "METHOD PATH"); Weight its weight (a log's count of lines).
	Target string `json:"target"`
	Weight int    `json:"weight"`
	// Requests counts its finished requests (complete or failed), Failed
	// its failed ones, BodyBytes the body bytes of its complete
	// responses, each summed over the trials.
	Requests  int64 `json:"requests"`
	Failed    int64 `json:"failed"`
	BodyBytes int64 `json:"body_bytes"`
	// P50Ms, P99Ms and MaxMs are the total times of its complete
	// requests, in ms: the medians of the trials' with their intervals.
	P50Ms Figure `json:"p50_ms"`
	P99Ms Figure `json:"p99_ms"`
	MaxMs Figure `json:"max_ms"`
}

// Answer is a factor's conclusion and its detail: of a level against the
// factor's baseline (a factor of two levels has one answer).
type Answer struct {
	// Factor is the factor's name, Level the level it answers for against
	// the factor's baseline.
	Factor string `json:"factor"`
	Level  string `json:"level"`
	// Knee is a sizing answer's knee: the smallest pool within noise of
	// the best. Level is the pool to set, the knee unless the knee does
	// not fit the memory budget. "" in other answers, in a sizing answer
	// without any capacity, and in files written before it was kept.
	Knee string `json:"knee,omitempty"`
	// KneeLimit is what limits a sizing answer's knee: LimitBackend,
	// LimitCores, LimitClient, or KneeNotReached (capacity still grew at
	// the largest pool measured: the knee is at Knee or beyond). "" where
	// Knee is, and in files written before it was kept.
	KneeLimit string `json:"knee_limit,omitempty"`
	// Conclusion is one sentence; Details say each pair and level.
	Conclusion string   `json:"conclusion"`
	Details    []string `json:"details"`
}

// Figure is a median over trials and its interval (absent with fewer
// than two trials): of 95% confidence from 6 trials, the range of the
// trials below, of confidence 1 - 2^(1-n) (trials.MedianConfidence: 50%
// for 2, 93.75% for 5).
type Figure struct {
	Median float64   `json:"median"`
	CI95   []float64 `json:"ci95,omitempty"`
}

// FigureOf converts a trials.Estimate.
func FigureOf(e trials.Estimate) Figure {
	f := Figure{Median: e.Median}
	if e.HasInterval() {
		f.CI95 = []float64{e.Lo, e.Hi}
	}
	return f
}
