package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/recorder"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// loadOptions are the flags of bench that describe the load and the request;
// sweep shares them.
type loadOptions struct {
	// po holds every flag of the load and the request, bound to its
	// field: one home and one default (plan.Defaults) each.
	po      plan.Options
	quiet   bool
	rawFile string
	share   shareOptions
}

// benchOptions are the flags of bench.
type benchOptions struct {
	loadOptions
	gnuplotFile    string
	percentileFile string
	format         string
	spectrum       bool
	cpuProfile     string
	version        bool
	label          string
	output         string
	timelineCSV    string
	repeatOptions
	againstOptions
}

// addLoadFlags adds the load flags to fs, their defaults a bench's
// (plan.Defaults).
func addLoadFlags(fs *pflag.FlagSet, o *loadOptions) {
	d := plan.Defaults("")
	fs.Int64VarP(&o.po.Requests, "requests", "n", d.Requests, "number of requests to perform (with -t alone: no count limit)")
	fs.IntVarP(&o.po.Concurrency, "concurrency", "c", d.Concurrency, "number of requests to perform at a time (one connection each)")
	fs.VarP(load.NewSeconds(&o.po.Duration, 0), "timelimit", "t", "time limit of the run in seconds (or a duration: 10s, 1m)")
	fs.VarP(load.NewSeconds(&o.po.Timeout, d.Timeout), "timeout", "s", "timeout of one whole request, from dial to last byte, in seconds")
	fs.BoolVarP(&o.po.KeepAlive, "keepalive", "k", false, "keep connections open (HTTP keep-alive, FastCGI FCGI_KEEP_CONN)")
	fs.StringArrayVarP(&o.po.Headers, "header", "H", nil, "add a request header 'Name: value' (repeatable; the value may contain commas); @FILE adds the headers in FILE, one a line (blank lines and lines starting with # skipped)")
	fs.StringVarP(&o.po.Method, "method", "m", "", "request method (default GET, or POST with -p)")
	fs.StringVarP(&o.po.PostFile, "postfile", "p", "", "file holding the request body (method POST unless -m); - reads it from standard input")
	fs.StringVar(&o.po.Targets, "targets", "", "send the requests of a targets `FILE` (vegeta's format: METHOD URL, headers, @body; '# weight: N' in a block weighs it) in the mix of their weights; - reads it from standard input")
	fs.StringVar(&o.po.AccessLog, "access-log", "", "replay the requests (methods and paths) of an nginx or Apache access log `FILE` in the log's order; - reads it from standard input")
	fs.StringVar(&o.po.LogFormat, "log-format", "", "--access-log's format: combined, common, or an nginx log_format `STRING` ($remote_addr, $request, $status ...); default: combined or common lines")
	fs.StringVar(&o.po.ReplayMethods, "replay-methods", "", "--access-log: replay the lines of these methods (a `LIST`: GET,HEAD,POST; default GET,HEAD); bodies are not in a log, so none is sent")
	fs.StringVarP(&o.po.PutFile, "putfile", "u", "", "file holding the request body, method PUT (ab's -u); - reads it from standard input")
	fs.BoolVarP(&o.po.Head, "head", "i", false, "send HEAD requests instead of GET (ab's -i)")
	fs.StringArrayVarP(&o.po.Cookies, "cookie", "C", nil, "add a cookie 'name=value' (repeatable; one Cookie header; ab's -C)")
	fs.StringVarP(&o.po.BasicAuth, "basic-auth", "A", "", "HTTP basic authentication 'user:password' (an Authorization header; ab's -A)")
	fs.StringVarP(&o.po.Proxy, "proxy", "X", "", "ab's proxy: refused, backbench talks to the backend itself (bench the proxy's own URL instead)")
	fs.StringVarP(&o.po.ContentType, "content-type", "T", "", "Content-Type of the body (default text/plain with -p)")
	fs.BoolVarP(&o.po.VariableLength, "variable-length", "l", false, "accept a variable document length (no Length failures)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress output on stderr")
	fs.IntVarP(&o.po.Verbosity, "verbosity", "v", d.Verbosity, "verbosity; 2 or more prints every request and response head on stderr")
	fs.BoolVar(&o.po.HTTP10, "http1.0", false, "send HTTP/1.0 requests, as ab does (default HTTP/1.1)")
	fs.StringVar(&o.po.DocumentRoot, "document-root", "", "FastCGI: DOCUMENT_ROOT; SCRIPT_FILENAME is this plus the path (default: the current directory)")
	fs.StringArrayVar(&o.po.Params, "param", nil, "FastCGI: set or override a param NAME=VALUE (repeatable)")
	fs.StringVar(&o.po.UnixSocket, "unix-socket", "", "connect to this Unix socket instead of the URL's host and port")
	fs.Var(NewFinite(&o.po.Rate, 0), "rate", "open model: send this many requests per second whatever the responses do (-c caps requests in flight); latency counts from each intended start")
	fs.BoolVar(&o.po.ABCompat, "ab-compat", false, "use ab's own arithmetic for the connection times and percentiles (keeps every request in memory)")
	fs.StringArrayVar(&o.po.Upstreams, "upstream", nil, "spread connections over this address too: tcp:HOST:PORT or unix:/path (repeatable; replaces the URL's address)")
	fs.StringVar(&o.po.Balance, "balance", d.Balance, "how connections are spread over several addresses: round-robin or least-conn")
	fs.BoolVar(&o.po.Insecure, "insecure", false, "https: accept any server certificate (self-signed)")
	fs.IntSliceVar(&o.po.BackendPIDs, "backend-pid", nil, "sample this backend process and its descendants from /proc during the run (repeatable)")
	fs.StringVar(&o.po.BackendPIDFile, "backend-pidfile", "", "like --backend-pid, with the PID read from FILE")
	fs.StringVar(&o.po.FPMStatus, "fpm-status", "", "fcgi: read php-fpm's status page at PATH (pm.status_path) at the start and end of the run")
	addShareFlags(fs, &o.share, true)
	fs.StringVar(&o.rawFile, "raw", "", "stream one CSV row per request to FILE (intended and actual start, connect, waiting, total, status, bytes, class)")
	fs.Var(NewChoice(&o.po.Sched, "", "normal", "batch"), "client-sched",
		"scheduling policy of the client's threads: normal (SCHED_OTHER) or batch (SCHED_BATCH: a woken client thread does not preempt the backend on a shared core); default: the policy backbench was started with")
	fs.StringVar(&o.po.ClientCPUs, "client-cpus", "", "run every thread of the client on these CPUs (a `LIST` as taskset -c takes it: 0, 0-1, 0,2), apart from a backend pinned to others; default: not pinned")
	fs.IntVar(&o.po.Threads, "threads", 0, "run the client on at most N threads at once (GOMAXPROCS; like wrk's -t); default: every CPU, but half of them for kept connections to a backend on this machine")
	fs.Var(NewChoice(&o.po.Engine, d.Engine, execute.EngineAuto, execute.EnginePoller, execute.EngineUring), "engine",
		"what runs the workers: poller (a goroutine each, on Go's network poller), uring (io_uring, one ring per thread; Linux 5.11+), or auto: uring for closed-model HTTP runs without keep-alive to plain TCP or Unix targets when io_uring can be set up, poller otherwise")
	fs.Var(NewStartAt(&o.po.StartAt), "start-at", "set up, then start the load at TIME (RFC 3339 or Unix seconds), to start generators on several machines together (see backbench merge)")
	fs.StringArrayVar(&o.po.SLO, "slo", nil, "service level `OBJECTIVE` the run must meet: p50|p90|p99|p99.9|max<=DURATION (p99<=50ms) or errors<=PERCENT (errors<=1%) (repeatable; all must hold): exit status 3 when one fails")
}

func newBenchFlags(o *benchOptions) *pflag.FlagSet {
	fs := newFlagSet("bench")
	addLoadFlags(fs, &o.loadOptions)
	fs.StringVarP(&o.gnuplotFile, "gnuplot", "g", "", "write every request's times to FILE as ab's gnuplot TSV")
	fs.StringVarP(&o.percentileFile, "csv", "e", "", "write the percentiles 0..100 to FILE as ab's CSV")
	fs.Var(NewChoice(&o.format, "text", "text", "json", "markdown"), "format", "report format: text (ab's), json, or markdown (the headline figures as a GitHub table, for a pull request)")
	fs.BoolVar(&o.spectrum, "percentiles", false, "add the full percentile spectrum (50 to 99.999 and max) to the text report")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the client to FILE (for go tool pprof)")
	fs.BoolVarP(&o.version, "version", "V", false, "print backbench's version and exit (ab's -V)")
	fs.Var(load.NewSeconds(&o.po.Window, 0), "window", "width of the windows of the run's timeline (seconds, or a duration: 250ms); default 1 s, narrower for a run shorter than 20 s so that it has about 20")
	fs.StringVar(&o.po.StageSpec, "stages", "", "closed model in stages: `LENGTH:CONNECTIONS,...` (30s:10,60s:40): each stage's concurrency for its length; the run lasts their total")
	fs.StringVar(&o.po.RateStageSpec, "rate-stages", "", "open model in stages: `LENGTH:RATE,...` (30s:100,60s:400): each stage's requests per second for its length (-c caps requests in flight)")
	fs.BoolVar(&o.po.Ramp, "ramp", false, "with --stages or --rate-stages: move the load linearly across each stage, from the previous stage's (0 before the first) to its own, instead of jumping")
	fs.StringVar(&o.timelineCSV, "timeline-csv", "", "write the run's timeline to FILE as CSV: one row per window (requests, failures by class, latency p50/p99/max, backend samples)")
	fs.StringVar(&o.label, "label", "", "name the result `NAME` (its backend) in the saved JSON: compare pairs and names runs by it rather than by URL")
	addRepeatFlags(fs, &o.repeatOptions, false)
	addAgainstFlags(fs, &o.againstOptions)
	addOutputFlag(fs, &o.output)
	fs.SortFlags = false
	return fs
}

const benchUsage = `Usage: backbench bench [flags] URL

Runs an ab-style benchmark against one FastCGI or HTTP target and prints
ApacheBench's report (or JSON with --format json).

URL: http://HOST:PORT/PATH?QUERY, fcgi://HOST:PORT/PATH?QUERY, or with a Unix
socket http://unix:/run/app.sock:/PATH, fcgi://unix:/run/php/fpm.sock:/PATH.

With --repeat N (or --precision P) it runs N trials and reports the pooled
trials, then the medians of req/s, p50 and p99 with their intervals (95%
from 6 trials; below, the range of the trials: 50% for 2, 93.75% for 5).

With --until decided and --against FILE, the trials are not a fixed count:
after the first ones (--repeat, default and at least 4), trials are added
until the comparisons with the saved run (req/s, or the metrics of
--fail-on's rules) are decided by the sequential rule (a direction, or the
same within --noise), --budget is spent or --max-repeat trials ran
(default 20); a note says which.

Flags:
`

// parseFlags parses args with fs; it prints help to stdout and returns
// errHelp for -h/--help, and a usage error for anything else wrong.
func parseFlags(fs *pflag.FlagSet, usage string, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SetNormalizeFunc(normalizeAlias)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(stdout, WrapText(usage, HelpWidth(stdout)))
			fmt.Fprint(stdout, fs.FlagUsagesWrapped(HelpWidth(stdout)))
			return errHelp
		}
		return usagef("%s %v", fs.Name()+":", err)
	}
	return nil
}

// errHelp is returned after help was printed; Main exits with status 0.
var errHelp = errors.New("help printed")

// loadPlan is a validated load: the executor's plan of a run and the --slo
// objectives its runs are judged by.
type loadPlan struct {
	*execute.Plan
	objectives []capacity.Objective
	// privacy is what the records leave out (--keep-secrets, --no-hostname).
	privacy stats.Privacy
}

// planOptions are the options of the load of o at url, as internal/plan
// takes them.
func (o *loadOptions) planOptions(fs *pflag.FlagSet, url string) plan.Options {
	po := o.po
	po.URL, po.Stdin = url, readStdin
	po.RequestsSet, po.ConcurrencySet = fs.Changed("requests"), fs.Changed("concurrency")
	po.TimeLimitSet, po.RateSet, po.WindowSet = fs.Changed("timelimit"), fs.Changed("rate"), fs.Changed("window")
	po.KeepSecrets = o.share.keepSecrets
	return po
}

// buildLoad builds the plan of po, its records keeping what privacy says.
func buildLoad(po plan.Options, privacy stats.Privacy) (*loadPlan, error) {
	l, err := po.Build()
	if err != nil {
		return nil, err
	}
	return &loadPlan{Plan: l.Plan, objectives: l.Objectives, privacy: privacy}, nil
}

// benchCmd runs the bench command: its flags into plan.Options and the
// trials' plan, one run (execute.Run) or trials (driver.RunTrials), the
// record and its summary into the renderers, then the gates.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var o benchOptions
	fs := newBenchFlags(&o)
	if err := parseFlags(fs, benchUsage, args, stdout); err != nil {
		return err
	}
	if o.version {
		fmt.Fprint(stdout, versionLine())
		return nil
	}
	if fs.NArg() != 1 {
		return usagef("bench: want exactly one URL, got %d (see backbench bench --help)", fs.NArg())
	}
	po := o.planOptions(fs, fs.Arg(0))
	r, err := buildLoad(po, o.share.privacy(fs))
	if err != nil {
		return err
	}
	tp, err := validateRepeat(fs, &o.repeatOptions)
	if err != nil {
		return err
	}
	against, err := validateAgainst(fs, &o.againstOptions, tp.noise)
	if err != nil {
		return err
	}
	if fs.Changed("label") && strings.TrimSpace(o.label) == "" {
		return usagef("bench: --label wants a name")
	}
	if tp.plan.Until != "" {
		if err := against.untilDecided(&tp, r.Plan, strings.TrimSpace(o.label)); err != nil {
			return err
		}
	}
	if tp.on && (o.gnuplotFile != "" || o.rawFile != "" || o.po.ABCompat) {
		return usagef("bench: -g, --raw and --ab-compat keep every request of one run: not with --repeat or --precision")
	}
	// Open the output files before the run, so that a bad path costs
	// nothing; "-" is standard output (the terminal's, not -o's). -g and
	// -e replace their files only once written whole (report.AtomicFile);
	// --raw and --cpuprofile are streamed as the run goes.
	out, closeOut, err := OpenOutput(o.output, stdout)
	if err != nil {
		return err
	}
	defer closeOut(&err)
	var gf, ef, pf, raw, tf io.Writer
	for _, p := range []struct {
		flag, name string
		w          *io.Writer
	}{{"-g", o.gnuplotFile, &gf}, {"-e", o.percentileFile, &ef}, {"--raw", o.rawFile, &raw}, {"--cpuprofile", o.cpuProfile, &pf},
		{"--timeline-csv", o.timelineCSV, &tf}} {
		if p.name == "" {
			continue
		}
		if p.name == "-" {
			if p.w == &pf {
				return usagef("--cpuprofile -: the profile is binary and would mix with the report; give a file")
			}
			*p.w = stdout
			continue
		}
		if p.w == &gf || p.w == &ef || p.w == &tf {
			a, err := report.CreateAtomic(p.name)
			if err != nil {
				return usagef("cannot create %s file: %v", p.flag, err)
			}
			defer a.Abort()
			*p.w = a
			continue
		}
		f, err := os.Create(p.name)
		if err != nil {
			return usagef("cannot create %s file: %v", p.flag, err)
		}
		defer f.Close()
		*p.w = f
	}
	if pf != nil {
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	// From here workers (the Benchmarking line, -v 2) and the progress
	// write to stderr at once: whole writes, one at a time, under the live
	// line on a terminal.
	var lw *LiveWriter
	if isTerminal(stderr) {
		lw = NewLiveWriter(stderr)
		stderr = lw
	} else {
		stderr = &execute.LockedWriter{W: stderr}
	}
	// The design is judged once every flag is known good, before the
	// first request.
	tp.warnDesign(stderr)
	AnnounceStart(stderr, o.po.StartAt, o.quiet)
	// run is the run's own record and summary; with trials, the pooled
	// run's (t holds the trials' runs and medians beside it).
	var run *stats.Run
	var t *driver.Trials
	if tp.on {
		if t, err = driver.RunTrials(ctx, r.Plan, &tp.plan, execute.Options{Stderr: stderr, Quiet: o.quiet, Verbosity: o.po.Verbosity,
			Announce: !o.quiet && o.format == "text", Observe: true, Version: version(), StartAt: o.po.StartAt, Privacy: r.privacy,
			Window: o.po.Window}); err == nil {
			run = &t.Pooled
		}
	} else {
		run, err = execute.Run(ctx, r.Plan, execute.Options{Stderr: stderr, Quiet: o.quiet, Verbosity: o.po.Verbosity,
			Announce: !o.quiet && o.format == "text", KeepRows: gf != nil, Raw: raw, Observe: true, Version: version(),
			Progress: func(rec *recorder.Recorder) func(bool) {
				return Progress(rec, stderr, ProgressOptions{Requests: r.Plan.Requests, Limit: r.Plan.Duration,
					Quiet: o.quiet, Verbosity: o.po.Verbosity, Live: lw})
			},
			StartAt: o.po.StartAt, Privacy: r.privacy, Window: o.po.Window})
	}
	if err != nil {
		return executeError(err)
	}
	m, sum := run.Record, &run.Summary
	// --slo's verdicts: a closed run of trials is judged at the trials'
	// median requests/sec.
	switch {
	case len(r.objectives) == 0:
	case t != nil:
		t.JudgeSLO(r.objectives)
	default:
		capacity.JudgeSummary(sum, sum.RequestsPerSecond, r.objectives)
	}
	sum.Label = strings.TrimSpace(o.label)
	var doc document.Result = &document.Run{Summary: sum, Record: m}
	if t != nil {
		td := document.NewTrials(t.Runs, t.Pooled, t.Medians, t.Precise, tp.plan.Seed)
		td.SetUntil(tp.plan, t.Until)
		doc = td
	}
	switch o.format {
	case "json":
		err = document.Write(out, doc)
	case "markdown":
		saved, _, _ := document.Bench(doc) // with trials, the medians beside the pooled run's figures
		err = report.BenchMarkdown(out, saved, commandLine("bench", args, r.privacy))
	default:
		if t != nil {
			err = report.TrialsText(out, &report.Trials{Pooled: &t.Pooled.Summary, Medians: &t.Medians, Runs: len(t.Runs),
				Precise: t.Precise, Plan: tp.plan}, report.TextOptions{Spectrum: o.spectrum})
		} else {
			err = report.Text(out, sum, report.TextOptions{Spectrum: o.spectrum})
		}
	}
	if err != nil {
		return err
	}
	if gf != nil || ef != nil || tf != nil {
		if err := (report.RunFiles{Gnuplot: gf, Percentiles: ef, Timeline: tf}).Write(m); err != nil {
			return err
		}
	}
	if sum.Interrupted {
		return errInterrupted
	}
	sloErr := sloGate(out, o.format == "text", r.objectives, sum.SLO)
	name := "this run"
	if o.output != "" && o.output != "-" {
		name = o.output
	}
	gateErr := against.check(out, o.format, name, doc)
	if sloErr != nil {
		return sloErr // an objective that failed (exit status 3) outranks the gate
	}
	return gateErr
}

// executeError turns the executor's errors into the command's: usage,
// unreachable target, interruption.
func executeError(err error) error {
	var ue *execute.UnreachableError
	var se *execute.SetupError
	switch {
	case errors.As(err, &ue):
		return &unreachableError{ue.Err}
	case errors.As(err, &se):
		return usagef("%v", se.Err)
	case errors.Is(err, driver.ErrNoTrial):
		return errInterrupted
	}
	return err
}
