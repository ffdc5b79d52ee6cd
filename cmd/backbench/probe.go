package main

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/proberun"
	"github.com/backbench/backbench/internal/protocol"
)

// probeOptions are the flags of probe.
type probeOptions struct {
	format      string
	timeout     time.Duration
	idleMax     time.Duration
	maxRequests int
	headers     []string
	docRoot     string
	params      []string
	unixSocket  string
	insecure    bool
	only, skip  []string
	output      string
}

const probeUsage = `Usage: backbench probe [flags] URL

Finds out what a FastCGI or HTTP backend supports at the protocol level:
keep-alive, requests per connection, multiplexing, GET_VALUES, roles,
unknown record types, idle timeout, pipelining, framing. Each check runs on a
fresh connection (unless it is about reuse), each exchange within -s. Prints
one line per check (name, verdict, evidence) and what it means for
benchmarking, or JSON with --format json.

URL: every form bench takes: http://, https:// (the HTTP checks over TLS;
--insecure for a self-signed certificate), fcgi://, a Unix socket
(http://unix:/run/app.sock:/PATH), or a port range
(fcgi://127.0.0.1:{3000..3004}/app: each address in turn, then the checks on
which they disagree).

Flags:
`

func newProbeFlags(o *probeOptions) *pflag.FlagSet {
	fs := newFlagSet("probe")
	fs.SortFlags = false
	fs.Var(NewChoice(&o.format, "text", "text", "json"), "format", "output format: text or json")
	fs.VarP(load.NewSeconds(&o.timeout, 5*time.Second), "timeout", "s", "timeout of each exchange of a check, in seconds")
	fs.Var(load.NewSeconds(&o.idleMax, 10*time.Second), "idle-max", "HTTP: longest wait for the server to close an idle kept connection")
	fs.IntVar(&o.maxRequests, "max-requests", 1000, "most requests sent on one connection by max_requests_per_connection (which also stops after 10 s)")
	fs.StringArrayVarP(&o.headers, "header", "H", nil, "add a request header 'Name: value' (repeatable); @FILE adds the headers in FILE, one a line (blank lines and lines starting with # skipped)")
	fs.StringVar(&o.docRoot, "document-root", "", "FastCGI: DOCUMENT_ROOT; SCRIPT_FILENAME is this plus the path (default: the current directory)")
	fs.StringArrayVar(&o.params, "param", nil, "FastCGI: set or override a param NAME=VALUE (repeatable)")
	fs.StringVar(&o.unixSocket, "unix-socket", "", "connect to this Unix socket instead of the URL's host and port")
	fs.BoolVar(&o.insecure, "insecure", false, "https: accept any server certificate (self-signed)")
	fs.StringSliceVar(&o.only, "only", nil, "run only these checks (comma-separated names, as in the report)")
	fs.StringSliceVar(&o.skip, "skip", nil, "do not run these checks (comma-separated names)")
	addOutputFlag(fs, &o.output)
	return fs
}

func probeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var o probeOptions
	fs := newProbeFlags(&o)
	if err := parseFlags(fs, probeUsage, args, stdout); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("probe: want exactly one URL, got %d (see backbench probe --help)", fs.NArg())
	}
	targets, err := proberun.Targets(fs.Arg(0))
	if err != nil {
		return usagef("%v", err)
	}
	tgt := targets[0]
	switch {
	case o.timeout <= 0:
		return usagef("-s must be greater than 0 seconds")
	case o.idleMax <= 0:
		return usagef("--idle-max must be greater than 0 seconds")
	case o.maxRequests < 1 || o.maxRequests > 1_000_000:
		return usagef("--max-requests %d: want 1 to 1000000", o.maxRequests)
	case o.insecure && !tgt.UsesTLS():
		return usagef("--insecure applies to https:// targets only")
	case o.unixSocket != "" && len(targets) > 1:
		return usagef("--unix-socket and a {A..B} port range do not mix")
	}
	if targets[0], err = plan.UnixSocket(targets[0], o.unixSocket, 0); err != nil {
		return err
	}
	po := proberun.Options{Timeout: o.timeout, IdleMax: o.idleMax, MaxRequests: o.maxRequests, Insecure: o.insecure,
		Only: o.only, Skip: o.skip, JSON: o.format == "json"}
	if po.Protocol, err = plan.Protocol(tgt); err != nil {
		return err
	}
	if po.Headers, po.Request, err = plan.Request(po.Protocol, o.headers, o.params, o.docRoot, false); err != nil {
		return err
	}
	if sel, ok := po.Protocol.(protocol.Prober); ok {
		if err := sel.SelectChecks(o.only, o.skip); err != nil {
			return usagef("%v", err)
		}
	}
	out, closeOut, err := OpenOutput(o.output, stdout)
	if err != nil {
		return err
	}
	defer closeOut(&err)
	// The report, text or JSON, goes to -o.
	err = proberun.Run(ctx, out, fs.Arg(0), targets, po)
	var ue *protocol.UnreachableError
	var re *proberun.RequestError
	switch {
	case ctx.Err() != nil && (err == nil || errors.Is(err, ctx.Err())):
		return errInterrupted
	case errors.As(err, &ue):
		return &unreachableError{ue.Err}
	case errors.As(err, &re):
		return usagef("%v", re.Err)
	}
	return err
}
