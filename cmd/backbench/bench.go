package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/fcgi"
	"github.com/backbench/backbench/httpprobe"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/run"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// loadOptions are the flags of bench that describe the load and the request;
// sweep shares them.
type loadOptions struct {
	requests       int64
	concurrency    int
	timeLimit      time.Duration
	timeout        time.Duration
	keepAlive      bool
	headers        []string
	method         string
	postFile       string
	contentType    string
	variableLength bool
	quiet          bool
	verbosity      int
	http10         bool
	docRoot        string
	params         []string
	unixSocket     string
	rate           float64
	abCompat       bool
	rawFile        string
	clientSched    string
	threads        int
	clusterOptions
}

// benchOptions are the flags of bench.
type benchOptions struct {
	loadOptions
	gnuplotFile    string
	percentileFile string
	format         string
	spectrum       bool
	cpuProfile     string
}

func addLoadFlags(fs *pflag.FlagSet, o *loadOptions) {
	fs.Int64VarP(&o.requests, "requests", "n", 1, "number of requests to perform (with -t alone: no count limit)")
	fs.IntVarP(&o.concurrency, "concurrency", "c", 1, "number of requests to perform at a time (one connection each)")
	fs.VarP(newSeconds(&o.timeLimit, 0), "timelimit", "t", "time limit of the run in seconds (or a duration: 10s, 1m)")
	fs.VarP(newSeconds(&o.timeout, 30*time.Second), "timeout", "s", "timeout of one whole request, from dial to last byte, in seconds")
	fs.BoolVarP(&o.keepAlive, "keepalive", "k", false, "keep connections open (HTTP keep-alive, FastCGI FCGI_KEEP_CONN)")
	fs.StringArrayVarP(&o.headers, "header", "H", nil, "add a request header 'Name: value' (repeatable; the value may contain commas)")
	fs.StringVarP(&o.method, "method", "m", "", "request method (default GET, or POST with -p)")
	fs.StringVarP(&o.postFile, "postfile", "p", "", "file holding the request body (method POST unless -m)")
	fs.StringVarP(&o.contentType, "content-type", "T", "", "Content-Type of the body (default text/plain with -p)")
	fs.BoolVarP(&o.variableLength, "variable-length", "l", false, "accept a variable document length (no Length failures)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress output on stderr")
	fs.IntVarP(&o.verbosity, "verbosity", "v", 1, "verbosity; 2 or more prints every request and response head on stderr")
	fs.BoolVar(&o.http10, "http1.0", false, "send HTTP/1.0 requests, as ab does (default HTTP/1.1)")
	fs.StringVar(&o.docRoot, "document-root", "", "FastCGI: DOCUMENT_ROOT; SCRIPT_FILENAME is this plus the path (default: the current directory)")
	fs.StringArrayVar(&o.params, "param", nil, "FastCGI: set or override a param NAME=VALUE (repeatable)")
	fs.StringVar(&o.unixSocket, "unix-socket", "", "connect to this Unix socket instead of the URL's host and port")
	fs.Float64Var(&o.rate, "rate", 0, "open model: send this many requests per second whatever the responses do (-c caps requests in flight); latency counts from each intended start")
	fs.BoolVar(&o.abCompat, "ab-compat", false, "use ab's own arithmetic for the connection times and percentiles (keeps every request in memory)")
	addClusterFlags(fs, &o.clusterOptions)
	fs.StringVar(&o.rawFile, "raw", "", "stream one CSV row per request to FILE (intended and actual start, connect, waiting, total, status, bytes, class)")
	fs.Var(newChoice(&o.clientSched, "", "normal", "batch"), "client-sched",
		"scheduling policy of the client's threads: normal (SCHED_OTHER) or batch (SCHED_BATCH: a woken client thread does not preempt the backend on a shared core); default: the policy backbench was started with")
	fs.IntVar(&o.threads, "threads", 0, "run the client on at most N threads at once (GOMAXPROCS; like wrk's -t); default: every CPU")
}

// useThreads applies --threads for the length of a run: it returns the
// function that restores the previous GOMAXPROCS.
func useThreads(o *loadOptions) func() {
	if o.threads <= 0 {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(o.threads)
	return func() { runtime.GOMAXPROCS(prev) }
}

// applySched gives the client's threads the policy --client-sched asks for,
// if any (otherwise they keep the one backbench was started with, chrt's
// for example), and returns the name of the policy they run with ("" if it
// cannot be read).
func applySched(o *loadOptions, stderr io.Writer) string {
	if o.clientSched != "" {
		want := sockets.SchedNormal
		if o.clientSched == "batch" {
			want = sockets.SchedBatch
		}
		if _, err := sockets.SetSchedPolicy(want); err != nil && !o.quiet {
			fmt.Fprintf(stderr, "backbench: warning: %v\n", err)
		}
	}
	p, err := sockets.SchedPolicyOf(0)
	if err != nil {
		return ""
	}
	return p.String()
}

func newBenchFlags(o *benchOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	addLoadFlags(fs, &o.loadOptions)
	fs.StringVarP(&o.gnuplotFile, "gnuplot", "g", "", "write every request's times to FILE as ab's gnuplot TSV")
	fs.StringVarP(&o.percentileFile, "csv", "e", "", "write the percentiles 0..100 to FILE as ab's CSV")
	fs.Var(newChoice(&o.format, "text", "text", "json"), "format", "report format: text (ab's) or json")
	fs.BoolVar(&o.spectrum, "percentiles", false, "add the full percentile spectrum (50 to 99.999 and max) to the text report")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the client to FILE (for go tool pprof)")
	fs.SortFlags = false
	return fs
}

const benchUsage = `Usage: backbench bench [flags] URL

Runs an ab-style benchmark against one FastCGI or HTTP target and prints
ApacheBench's report (or JSON with --format json).

URL: http://HOST:PORT/PATH?QUERY, fcgi://HOST:PORT/PATH?QUERY, or with a Unix
socket http://unix:/run/app.sock:/PATH, fcgi://unix:/run/php/fpm.sock:/PATH.

Flags:
`

// parseFlags parses args with fs; it prints help to stdout and returns
// errHelp for -h/--help, and a usage error for anything else wrong.
func parseFlags(fs *pflag.FlagSet, usage string, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return errHelp
		}
		return usagef("%s %v", fs.Name()+":", err)
	}
	return nil
}

// errHelp is returned after help was printed; Main exits with status 0.
var errHelp = errors.New("help printed")

// request is a validated load description, ready to build clients from.
type request struct {
	target  sockets.Target
	opts    loadOptions
	method  string
	body    []byte
	ctype   string
	headers [][2]string
	params  [][2]string
	docRoot string
	limited bool // a request count applies
	cluster cluster
	dialer  *sockets.Dialer // nil: the clients' own
	policy  string          // the client threads' scheduling policy during the run
}

// validateLoad checks the load flags and the target URL; every error is a
// usage error, caught before any connection is made.
func validateLoad(fs *pflag.FlagSet, o *loadOptions, url string) (*request, error) {
	r := &request{opts: *o}
	tgt, cl, err := parseTargets(url, &o.clusterOptions)
	if err != nil {
		return nil, err
	}
	r.cluster = cl
	if o.unixSocket != "" {
		if len(cl.upstreams) > 0 {
			return nil, usagef("--unix-socket and several upstreams do not mix; use --upstream unix:/path")
		}
		if !filepath.IsAbs(o.unixSocket) && !filepath.IsLocal(o.unixSocket) {
			return nil, usagef("bad --unix-socket %q", o.unixSocket)
		}
		tgt = tgt.WithUnixSocket(o.unixSocket)
	}
	r.target = tgt
	nSet := fs.Changed("requests")
	r.limited = nSet || o.timeLimit == 0
	switch {
	case o.requests < 1 && (nSet || o.timeLimit == 0):
		return nil, usagef("-n %d: the number of requests must be at least 1", o.requests)
	case o.concurrency < 1:
		return nil, usagef("-c %d: the concurrency must be at least 1", o.concurrency)
	case o.concurrency > 1_000_000:
		return nil, usagef("-c %d: the concurrency is at most 1000000", o.concurrency)
	case r.limited && int64(o.concurrency) > o.requests:
		return nil, usagef("-c %d is greater than -n %d: cannot use more workers than requests", o.concurrency, o.requests)
	case o.timeout <= 0:
		return nil, usagef("-s must be greater than 0 seconds")
	case o.verbosity < 0:
		return nil, usagef("-v %d: the verbosity must be 0 or more", o.verbosity)
	case o.rate < 0 || o.rate > 10_000_000:
		return nil, usagef("--rate %g: want requests per second from 0 to 10000000", o.rate)
	case o.threads < 0 || o.threads > 1024:
		return nil, usagef("--threads %d: want from 1 to 1024 (0: every CPU)", o.threads)
	}
	if !r.limited {
		r.opts.requests = 0
	}
	if tgt.Scheme != sockets.SchemeFCGI {
		if o.docRoot != "" || len(o.params) > 0 {
			return nil, usagef("--document-root and --param apply to fcgi:// targets only")
		}
	}
	if tgt.Scheme == sockets.SchemeFCGI && o.http10 {
		return nil, usagef("--http1.0 applies to http:// targets only")
	}
	for _, h := range o.headers {
		kv, err := parseHeader(h)
		if err != nil {
			return nil, err
		}
		r.headers = append(r.headers, kv)
	}
	for _, p := range o.params {
		kv, err := parseParam(p)
		if err != nil {
			return nil, err
		}
		r.params = append(r.params, kv)
	}
	r.method = o.method
	if o.postFile != "" {
		b, err := os.ReadFile(o.postFile)
		if err != nil {
			return nil, usagef("cannot read -p file: %v", err)
		}
		r.body = b
		if r.method == "" {
			r.method = "POST"
		}
		r.ctype = o.contentType
		if r.ctype == "" {
			r.ctype = "text/plain"
		}
	} else if o.contentType != "" {
		return nil, usagef("-T needs a body (-p FILE)")
	}
	if r.method == "" {
		r.method = "GET"
	}
	for _, c := range r.method {
		if c <= ' ' || c >= 0x7f {
			return nil, usagef("bad method %q", r.method)
		}
	}
	r.dialer = r.cluster.dialer(r.target, o.timeout)
	if tgt.Scheme == sockets.SchemeFCGI {
		dr := o.docRoot
		if dr == "" {
			if dr, err = os.Getwd(); err != nil {
				return nil, usagef("cannot find the current directory for --document-root: %v", err)
			}
		}
		if r.docRoot, err = filepath.Abs(dr); err != nil {
			return nil, usagef("bad --document-root %q: %v", o.docRoot, err)
		}
	}
	return r, nil
}

// factory builds the client factory for the request's protocol. verbose, if
// not nil, receives request and response heads.
func (r *request) factory(verbose io.Writer) (load.ClientFactory, error) {
	if r.target.Scheme == sockets.SchemeFCGI {
		return fcgi.NewFactory(fcgi.Config{
			Target: r.target, Method: r.method, Headers: r.headers, Body: r.body,
			ContentType: r.ctype, DocumentRoot: r.docRoot, Params: r.params,
			KeepAlive: r.opts.keepAlive, Timeout: r.opts.timeout, Verbose: verbose, Dialer: r.dialer,
		})
	}
	return httpprobe.NewFactory(httpprobe.Config{
		Target: r.target, Method: r.method, Headers: r.headers, Body: r.body,
		ContentType: r.ctype, KeepAlive: r.opts.keepAlive, HTTP10: r.opts.http10,
		Timeout: r.opts.timeout, Verbose: verbose, Dialer: r.dialer,
	})
}

// plan describes the run for its record.
func (r *request) plan() stats.Plan {
	t := r.target
	ri := stats.Plan{
		Target:         stats.TargetInfo{URL: t.URL, Protocol: t.Scheme, Network: t.Network, Address: t.Address},
		Hostname:       t.Host,
		Port:           t.Port,
		Path:           t.RequestURI(),
		Concurrency:    r.opts.concurrency,
		Requests:       r.opts.requests,
		Duration:       r.opts.timeLimit,
		Timeout:        r.opts.timeout,
		KeepAlive:      r.opts.keepAlive,
		Method:         r.method,
		BodySize:       int64(len(r.body)),
		Rate:           r.opts.rate,
		ABCompat:       r.opts.abCompat,
		VariableLength: r.opts.variableLength,
		Balance:        r.cluster.balance.String(),
	}
	for _, a := range r.cluster.upstreams {
		ri.Upstreams = append(ri.Upstreams, a.String())
	}
	if t.Port == "" { // nginx-style Unix target
		ri.Hostname = "unix:" + t.Address
	}
	if t.Scheme != sockets.SchemeFCGI {
		ri.HTTPVersion = "1.1"
		if r.opts.http10 {
			ri.HTTPVersion = "1.0"
		}
	}
	return ri
}

// lockedWriter serializes whole Write calls of several workers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// execute checks that the target is reachable, runs the closed model and
// returns the run's record.
// With announce, it prints ab's "Benchmarking" line on stderr once the
// target is known to be reachable.
func (r *request) execute(ctx context.Context, keepRows, announce bool, stderr io.Writer) (*stats.Record, error) {
	o := &r.opts
	noFile, err := sockets.RaiseNoFileLimit(uint64(o.concurrency)*2 + 64)
	if err != nil && !o.quiet {
		fmt.Fprintf(stderr, "backbench: warning: %v\n", err)
	}
	if err := checkReachable(ctx, r.target, r.cluster.upstreams, o.timeout, stderr); err != nil {
		if ctx.Err() != nil {
			return nil, errInterrupted
		}
		return nil, &unreachableError{err}
	}
	if announce {
		fmt.Fprintf(stderr, "Benchmarking %s (be patient)\n", r.target.URL)
	}
	r.policy = applySched(o, stderr)
	defer useThreads(o)()
	var verbose io.Writer
	if o.verbosity >= 2 {
		verbose = &lockedWriter{w: stderr}
	}
	f, err := r.factory(verbose)
	if err != nil {
		return nil, usagef("%v", err)
	}
	var raw *bufio.Writer
	if o.rawFile != "" {
		rf, err := os.Create(o.rawFile)
		if err != nil {
			return nil, usagef("cannot create --raw file: %v", err)
		}
		defer rf.Close()
		raw = bufio.NewWriterSize(rf, 256<<10)
		raw.WriteString(stats.RawHeader)
	}
	ropts := stats.Options{Shards: o.concurrency, VariableLength: o.variableLength, KeepRows: keepRows || o.abCompat,
		Upstreams: len(r.cluster.upstreams)}
	if raw != nil {
		ropts.Raw = raw
	}
	rec := stats.NewRecorder(ropts)
	stopProgress := r.progress(rec, stderr)
	backend := startBackendProbe(ctx, r)
	cfg := run.Config{Concurrency: o.concurrency, Requests: o.requests, Duration: o.timeLimit, Factory: f, Recorder: rec}
	var out run.Outcome
	if o.rate > 0 {
		out, err = run.Open(ctx, run.OpenConfig{Config: cfg, Rate: o.rate})
	} else {
		out, err = run.Closed(ctx, cfg)
	}
	stopProgress()
	backendUsage := backend.finish(ctx)
	if err != nil {
		return nil, err
	}
	m := rec.Merge()
	if raw != nil {
		if err := errors.Join(m.RawErr(), raw.Flush()); err != nil {
			return nil, fmt.Errorf("writing --raw file: %w", err)
		}
	}
	r.finishRecord(out, m)
	m.Backend = backendUsage
	m.TLS = tlsInfo(r.dialer, &r.cluster)
	tw := 0
	if r.target.Network == "tcp" && !o.keepAlive {
		tw, _ = sockets.CountTimeWait(r.target.Address)
	}
	m.Notes = append(m.Notes, connectionNotes(m, r.target, tw, noFile)...)
	return m, nil
}

// finishRecord sets what the run knows beside its recorder: the plan, the
// wall-clock times, the environment and the client's health.
func (r *request) finishRecord(out run.Outcome, m *stats.Record) {
	m.Plan = r.plan()
	m.StartedAt, m.EndedAt = stats.Wall{Time: load.Time(out.Start)}, stats.Wall{Time: load.Time(out.End)}
	m.Elapsed, m.Interrupted = time.Duration(out.Elapsed()), out.Interrupted
	m.Environment = stats.CurrentEnvironment("")
	m.Client = clientHealth(out, r.policy)
	for i := range m.Upstreams {
		m.Upstreams[i].Address = m.Plan.Upstreams[i]
	}
}

// clientHealth turns the runner's measurements into the report's lines,
// with a warning when the client itself may have been the bottleneck.
func clientHealth(out run.Outcome, policy string) stats.ClientHealth {
	h := out.Health
	c := stats.ClientHealth{
		Scheduling:         policy,
		CPUUserSeconds:     float64(h.UserCPU) / 1e9,
		CPUSysSeconds:      float64(h.SysCPU) / 1e9,
		Cores:              h.Cores,
		SchedulerLateMaxMs: float64(h.SchedLateMax) / 1e6,
		Warnings:           []string{},
	}
	if el := out.Elapsed(); el > 0 {
		c.CPUPercent = float64(h.UserCPU+h.SysCPU) / float64(el) * 100
	}
	if c.Cores > 0 && c.CPUPercent >= stats.CPUWarnFraction*100*float64(c.Cores) && out.Elapsed() > int64(100*time.Millisecond) {
		c.Warnings = append(c.Warnings, fmt.Sprintf("client CPU at %.0f%% of %d cores: the client may have been the bottleneck", c.CPUPercent, c.Cores))
	}
	if c.SchedulerLateMaxMs > stats.SchedLateWarnMs {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the client's goroutines waited up to %.1f ms for a CPU: latencies include client delay", c.SchedulerLateMaxMs))
	}
	return c
}

// progress prints ab's heartbeat ("Completed N requests" every tenth of the
// run) on stderr unless -q; the returned function stops it.
func (r *request) progress(rec *stats.Recorder, stderr io.Writer) func() {
	o := &r.opts
	if o.quiet || o.requests <= 150 {
		return func() {}
	}
	step := o.requests / 10
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		next := step
		report := func() {
			for n := rec.Done(); n >= next && next < o.requests; next += step {
				fmt.Fprintf(stderr, "Completed %d requests\n", next)
			}
		}
		for {
			select {
			case <-done:
				report()
				fmt.Fprintf(stderr, "Finished %d requests\n", rec.Done())
				return
			case <-tick.C:
				report()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o benchOptions
	fs := newBenchFlags(&o)
	if err := parseFlags(fs, benchUsage, args, stdout); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("bench: want exactly one URL, got %d (see backbench bench --help)", fs.NArg())
	}
	r, err := validateLoad(fs, &o.loadOptions, fs.Arg(0))
	if err != nil {
		return err
	}
	// Open the output files before the run, so that a bad path costs
	// nothing.
	var gf, ef *os.File
	for _, p := range []struct {
		name string
		f    **os.File
	}{{o.gnuplotFile, &gf}, {o.percentileFile, &ef}} {
		if p.name == "" {
			continue
		}
		f, err := os.Create(p.name)
		if err != nil {
			return usagef("cannot create output file: %v", err)
		}
		defer f.Close()
		*p.f = f
	}
	if o.cpuProfile != "" {
		pf, err := os.Create(o.cpuProfile)
		if err != nil {
			return usagef("cannot create --cpuprofile file: %v", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	m, err := r.execute(ctx, gf != nil, !o.quiet && o.format == "text", stderr)
	if err != nil {
		return err
	}
	sum := m.Summary()
	if o.format == "json" {
		err = report.JSON(stdout, &sum, m)
	} else {
		err = report.Text(stdout, &sum, report.TextOptions{Spectrum: o.spectrum})
	}
	if err != nil {
		return err
	}
	if gf != nil {
		if err := report.Gnuplot(gf, m.Rows()); err != nil {
			return err
		}
	}
	if ef != nil {
		if err := report.PercentileCSV(ef, m.PercentileSpectrum()); err != nil {
			return err
		}
	}
	if sum.Interrupted {
		return errInterrupted
	}
	return nil
}
