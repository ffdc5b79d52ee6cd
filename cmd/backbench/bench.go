package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/fcgi"
	"github.com/backbench/backbench/httpprobe"
	"github.com/backbench/backbench/internal/capacity"
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
	putFile        string
	head           bool
	cookies        []string
	basicAuth      string
	proxy          string
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
	slo            []string
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
	version        bool
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
	fs.StringVarP(&o.putFile, "putfile", "u", "", "file holding the request body, method PUT (ab's -u)")
	fs.BoolVarP(&o.head, "head", "i", false, "send HEAD requests instead of GET (ab's -i)")
	fs.StringArrayVarP(&o.cookies, "cookie", "C", nil, "add a cookie 'name=value' (repeatable; one Cookie header; ab's -C)")
	fs.StringVarP(&o.basicAuth, "basic-auth", "A", "", "HTTP basic authentication 'user:password' (an Authorization header; ab's -A)")
	fs.StringVarP(&o.proxy, "proxy", "X", "", "ab's proxy: refused, backbench talks to the backend itself (bench the proxy's own URL instead)")
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
	fs.StringArrayVar(&o.slo, "slo", nil, "service level `OBJECTIVE` the run must meet: p50|p90|p99|p99.9|max<=DURATION (p99<=50ms) or errors<=PERCENT (errors<=1%) (repeatable; all must hold): exit status 3 when one fails")
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
	fs := newFlagSet("bench")
	addLoadFlags(fs, &o.loadOptions)
	fs.StringVarP(&o.gnuplotFile, "gnuplot", "g", "", "write every request's times to FILE as ab's gnuplot TSV")
	fs.StringVarP(&o.percentileFile, "csv", "e", "", "write the percentiles 0..100 to FILE as ab's CSV")
	fs.Var(newChoice(&o.format, "text", "text", "json"), "format", "report format: text (ab's) or json")
	fs.BoolVar(&o.spectrum, "percentiles", false, "add the full percentile spectrum (50 to 99.999 and max) to the text report")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the client to FILE (for go tool pprof)")
	fs.BoolVarP(&o.version, "version", "V", false, "print backbench's version and exit (ab's -V)")
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
	rawOut  io.Writer       // --raw's destination, nil without --raw
	// objectives are --slo's, judged on every run.
	objectives []capacity.Objective
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
	if len(o.slo) > 0 {
		if r.objectives, err = capacity.ParseAll(o.slo); err != nil {
			return nil, usagef("--slo: %v", err)
		}
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
	if err := r.abFlags(o); err != nil {
		return nil, err
	}
	r.method = o.method
	bodyFile, bodyFlag, bodyMethod := o.postFile, "-p", "POST"
	if o.putFile != "" {
		bodyFile, bodyFlag, bodyMethod = o.putFile, "-u", "PUT"
	}
	if o.head {
		r.method = "HEAD"
	}
	if bodyFile != "" {
		b, err := os.ReadFile(bodyFile)
		if err != nil {
			return nil, usagef("cannot read %s file: %v", bodyFlag, err)
		}
		r.body = b
		if r.method == "" {
			r.method = bodyMethod
		}
		r.ctype = o.contentType
		if r.ctype == "" {
			r.ctype = "text/plain"
		}
	} else if o.contentType != "" {
		return nil, usagef("-T needs a body (-p FILE or -u FILE)")
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

// abFlags checks the flags that ab users type (-i, -u, -C, -A, -X) and
// adds the headers of -C and -A.
func (r *request) abFlags(o *loadOptions) error {
	switch {
	case o.proxy != "":
		return usagef("-X %s: backbench has no proxy mode, it talks to the backend directly; to measure the proxy, bench its own URL", o.proxy)
	case o.postFile != "" && o.putFile != "":
		return usagef("-p and -u both give a body: choose one")
	case o.head && (o.postFile != "" || o.putFile != ""):
		return usagef("-i (HEAD) sends no body: drop -p or -u")
	case o.head && o.method != "" && o.method != "HEAD":
		return usagef("-i and -m %s contradict each other", o.method)
	}
	var extra []string
	if len(o.cookies) > 0 {
		for _, c := range o.cookies {
			if name, _, ok := strings.Cut(c, "="); !ok || strings.TrimSpace(name) == "" {
				return usagef("bad -C %q: want name=value", c)
			}
		}
		extra = append(extra, "Cookie: "+strings.Join(o.cookies, "; "))
	}
	if o.basicAuth != "" {
		if !strings.Contains(o.basicAuth, ":") {
			return usagef("bad -A %q: want user:password", o.basicAuth)
		}
		extra = append(extra, "Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte(o.basicAuth)))
	}
	for _, h := range extra {
		kv, err := parseHeader(h)
		if err != nil {
			return err
		}
		r.headers = append(r.headers, kv)
	}
	return nil
}

// factory builds the client factory for the request's protocol. verbose, if
// not nil, receives request and response heads.
func (r *request) factory(verbose io.Writer) (load.ClientFactory, error) {
	if r.target.Scheme == sockets.SchemeFCGI {
		return fcgi.NewFactory(r.fcgiConfig(verbose))
	}
	return httpprobe.NewFactory(httpprobe.Config{
		Target: r.target, Method: r.method, Headers: r.headers, Body: r.body,
		ContentType: r.ctype, KeepAlive: r.opts.keepAlive, HTTP10: r.opts.http10,
		Timeout: r.opts.timeout, Verbose: verbose, Dialer: r.dialer,
	})
}

// fcgiConfig is the FastCGI request of an fcgi:// target.
func (r *request) fcgiConfig(verbose io.Writer) fcgi.Config {
	return fcgi.Config{
		Target: r.target, Method: r.method, Headers: r.headers, Body: r.body,
		ContentType: r.ctype, DocumentRoot: r.docRoot, Params: r.params,
		KeepAlive: r.opts.keepAlive, Timeout: r.opts.timeout, Verbose: verbose, Dialer: r.dialer,
	}
}

// scriptFilename is the SCRIPT_FILENAME param sent ("" for HTTP).
func (r *request) scriptFilename() string {
	if r.target.Scheme != sockets.SchemeFCGI {
		return ""
	}
	v := ""
	for _, p := range fcgi.Params(r.fcgiConfig(nil)) {
		if p[0] == "SCRIPT_FILENAME" {
			v = p[1]
		}
	}
	return v
}

// runInfo describes the run for the summary.
func (r *request) runInfo(out run.Outcome) stats.RunInfo {
	t := r.target
	ri := stats.RunInfo{
		Target:      stats.TargetInfo{URL: t.URL, Protocol: t.Scheme, Network: t.Network, Address: t.Address},
		Hostname:    t.Host,
		Port:        t.Port,
		Path:        t.RequestURI(),
		Concurrency: r.opts.concurrency,
		Requests:    r.opts.requests,
		KeepAlive:   r.opts.keepAlive,
		Method:      r.method,
		BodySent:    int64(len(r.body)),
		Elapsed:     out.Elapsed(),
		Interrupted: out.Interrupted,
		Rate:        r.opts.rate,
		ABCompat:    r.opts.abCompat,
		Client:      clientHealth(out, r.policy),
		Balance:     r.cluster.balance.String(),
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
		ri.ConnectionHeader = httpprobe.ConnectionHeader(httpprobe.Config{Headers: r.headers,
			KeepAlive: r.opts.keepAlive, HTTP10: r.opts.http10})
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

// execute runs the closed (or open) model and returns the merged records
// and the summary. It opens no connection without a request: a target that
// cannot be reached is found by the run's own first dials (run.Watch).
// With announce, it prints ab's "Benchmarking" line on stderr first.
func (r *request) execute(ctx context.Context, keepRows, announce bool, stderr io.Writer) (*stats.Merged, stats.Summary, error) {
	o := &r.opts
	noFile, err := sockets.RaiseNoFileLimit(uint64(o.concurrency)*2 + 64)
	if err != nil && !o.quiet {
		fmt.Fprintf(stderr, "backbench: warning: %v\n", err)
	}
	if err := checkSockets(r.target, r.cluster.upstreams, stderr); err != nil {
		return nil, stats.Summary{}, &unreachableError{err}
	}
	// From here workers (the Benchmarking line, -v 2) and the progress
	// write to stderr at once: whole writes, one at a time, under the live
	// line on a terminal.
	var lw *liveWriter
	if isTerminal(stderr) {
		lw = &liveWriter{w: stderr}
		stderr = lw
	} else {
		stderr = &lockedWriter{w: stderr}
	}
	// ab's "Benchmarking" line, once a dial of the run has reached the
	// target (or after the run), so that an unreachable target gets one
	// error line only.
	var announceOnce sync.Once
	announceNow := func() {
		if announce {
			announceOnce.Do(func() { fmt.Fprintf(stderr, "Benchmarking %s (be patient)\n", r.target.URL) })
		}
	}
	r.policy = applySched(o, stderr)
	defer useThreads(o)()
	var verbose io.Writer
	if o.verbosity >= 2 {
		verbose = stderr
	}
	f, err := r.factory(verbose)
	if err != nil {
		return nil, stats.Summary{}, usagef("%v", err)
	}
	var raw *bufio.Writer
	if r.rawOut != nil {
		raw = bufio.NewWriterSize(r.rawOut, 256<<10)
		raw.WriteString(stats.RawHeader)
	}
	ropts := stats.Options{Shards: o.concurrency, VariableLength: o.variableLength, KeepRows: keepRows || o.abCompat,
		Upstreams: len(r.cluster.upstreams)}
	if raw != nil {
		ropts.Raw = raw
	}
	rec := stats.NewRecorder(ropts)
	stopProgress := r.progress(rec, stderr, lw)
	observed := r.observe(ctx)
	watch := &run.Watch{Upstreams: len(r.cluster.upstreams), OnReach: announceNow}
	cfg := run.Config{Concurrency: o.concurrency, Requests: o.requests, Duration: o.timeLimit, Factory: f, Recorder: rec, Watch: watch}
	var out run.Outcome
	var acc run.OpenAccount
	if o.rate > 0 {
		out, acc, err = run.Open(ctx, run.OpenConfig{Config: cfg, Rate: o.rate})
	} else {
		out, err = run.Closed(ctx, cfg)
	}
	stopProgress(watch.Unreachable() == nil)
	if err != nil {
		observed(&stats.Summary{})
		return nil, stats.Summary{}, err
	}
	if err := watch.Unreachable(); err != nil && ctx.Err() == nil {
		observed(&stats.Summary{})
		return nil, stats.Summary{}, &unreachableError{dialError(r.target, r.cluster.upstreams, 0, err)}
	}
	announceNow()
	warnDeadUpstreams(r.target, r.cluster.upstreams, watch.UpstreamErrors(), stderr)
	m := rec.Merge()
	if raw != nil {
		if err := errors.Join(m.RawErr(), raw.Flush()); err != nil {
			return nil, stats.Summary{}, fmt.Errorf("writing --raw file: %w", err)
		}
	}
	ri := r.runInfo(out)
	ri.Due, ri.Unsent, ri.CutInFlight = acc.Due, acc.Unsent, acc.CutInFlight
	sum := m.Summary(ri)
	observed(&sum)
	sum.BackendLost = watch.Lost()
	sum.TLS = tlsInfo(r.dialer, &r.cluster)
	tw := 0
	if r.target.Network == "tcp" && !o.keepAlive {
		tw, _ = sockets.CountTimeWait(r.target.Address)
	}
	sum.Notes = append(sum.Notes, connectionNotes(&sum, r.target, tw, noFile)...)
	sum.Notes = append(sum.Notes, responseNotes(&sum, r.scriptFilename())...)
	if len(r.objectives) > 0 {
		ms := capacity.FromSummary(&sum, r.objectives)
		sum.SLO = capacity.Evaluate(r.objectives, &ms)
	}
	return m, sum, nil
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
	if el := out.Elapsed(); float64(el) >= stats.CPUShareMinSeconds*1e9 {
		c.CPUPercent = float64(h.UserCPU+h.SysCPU) / float64(el) * 100
	}
	if c.Cores > 0 && c.CPUPercent >= stats.CPUWarnFraction*100*float64(c.Cores) {
		c.Warnings = append(c.Warnings, fmt.Sprintf("client CPU at %.0f%% of %d cores: the client may have been the bottleneck", c.CPUPercent, c.Cores))
	}
	if c.SchedulerLateMaxMs > stats.SchedLateWarnMs {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the client's goroutines waited up to %.1f ms for a CPU: latencies include client delay", c.SchedulerLateMaxMs))
	}
	return c
}

func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
	r, err := validateLoad(fs, &o.loadOptions, fs.Arg(0))
	if err != nil {
		return err
	}
	// Open the output files before the run, so that a bad path costs
	// nothing; "-" is standard output.
	var gf, ef, pf io.Writer
	for _, p := range []struct {
		flag, name string
		w          *io.Writer
	}{{"-g", o.gnuplotFile, &gf}, {"-e", o.percentileFile, &ef}, {"--raw", o.rawFile, &r.rawOut}, {"--cpuprofile", o.cpuProfile, &pf}} {
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
	m, sum, err := r.execute(ctx, gf != nil, !o.quiet && o.format == "text", stderr)
	if err != nil {
		return err
	}
	if o.format == "json" {
		err = report.JSON(stdout, &sum)
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
	return sloGate(stdout, o.format == "text", r.objectives, sum.SLO)
}
