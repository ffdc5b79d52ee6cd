package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/report"
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

// validateLoad checks the load flags and the target URL and makes the
// plan of the run; every error is a usage error, caught before any
// connection is made.
func validateLoad(fs *pflag.FlagSet, o *loadOptions, url string) (*execute.Plan, error) {
	tgt, cl, err := parseTargets(url, &o.clusterOptions)
	if err != nil {
		return nil, err
	}
	r := &execute.Plan{Upstreams: cl.upstreams, Balance: cl.balance, TLS: cl.tls, BackendPIDs: cl.pids,
		FPMStatus: cl.fpmStatus, Concurrency: o.concurrency, Requests: o.requests, Duration: o.timeLimit,
		Rate: o.rate, Timeout: o.timeout, KeepAlive: o.keepAlive, VariableLength: o.variableLength,
		ABCompat: o.abCompat, HTTP10: o.http10, Threads: o.threads, Sched: o.clientSched}
	if o.unixSocket != "" {
		if len(cl.upstreams) > 0 {
			return nil, usagef("--unix-socket and several upstreams do not mix; use --upstream unix:/path")
		}
		if !filepath.IsAbs(o.unixSocket) && !filepath.IsLocal(o.unixSocket) {
			return nil, usagef("bad --unix-socket %q", o.unixSocket)
		}
		tgt = tgt.WithUnixSocket(o.unixSocket)
	}
	r.Target = tgt
	nSet := fs.Changed("requests")
	limited := nSet || o.timeLimit == 0
	switch {
	case o.requests < 1 && limited:
		return nil, usagef("-n %d: the number of requests must be at least 1", o.requests)
	case o.concurrency < 1:
		return nil, usagef("-c %d: the concurrency must be at least 1", o.concurrency)
	case o.concurrency > 1_000_000:
		return nil, usagef("-c %d: the concurrency is at most 1000000", o.concurrency)
	case limited && int64(o.concurrency) > o.requests:
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
	if !limited {
		r.Requests = 0
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
		r.Headers = append(r.Headers, kv)
	}
	for _, p := range o.params {
		kv, err := parseParam(p)
		if err != nil {
			return nil, err
		}
		r.Params = append(r.Params, kv)
	}
	r.Method = o.method
	if o.postFile != "" {
		b, err := os.ReadFile(o.postFile)
		if err != nil {
			return nil, usagef("cannot read -p file: %v", err)
		}
		r.Body = b
		if r.Method == "" {
			r.Method = "POST"
		}
		r.ContentType = o.contentType
		if r.ContentType == "" {
			r.ContentType = "text/plain"
		}
	} else if o.contentType != "" {
		return nil, usagef("-T needs a body (-p FILE)")
	}
	if r.Method == "" {
		r.Method = "GET"
	}
	for _, c := range r.Method {
		if c <= ' ' || c >= 0x7f {
			return nil, usagef("bad method %q", r.Method)
		}
	}
	if tgt.Scheme == sockets.SchemeFCGI {
		dr := o.docRoot
		if dr == "" {
			if dr, err = os.Getwd(); err != nil {
				return nil, usagef("cannot find the current directory for --document-root: %v", err)
			}
		}
		if r.DocumentRoot, err = filepath.Abs(dr); err != nil {
			return nil, usagef("bad --document-root %q: %v", o.docRoot, err)
		}
	}
	return r, nil
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
	m, err := execute.Run(ctx, r, execute.Options{Stderr: stderr, Quiet: o.quiet, Verbosity: o.verbosity,
		Announce: !o.quiet && o.format == "text", Progress: true, KeepRows: gf != nil, RawFile: o.rawFile, Observe: true})
	if err != nil {
		return executeError(err)
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

// executeError turns the executor's errors into the command's: usage,
// unreachable target, interruption.
func executeError(err error) error {
	var ue *execute.UnreachableError
	var se *execute.SetupError
	switch {
	case errors.Is(err, execute.ErrInterrupted):
		return errInterrupted
	case errors.As(err, &ue):
		return &unreachableError{ue.Err}
	case errors.As(err, &se):
		return usagef("%v", se.Err)
	}
	return err
}
