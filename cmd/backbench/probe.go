package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/fcgi"
	"github.com/backbench/backbench/httpprobe"
	"github.com/backbench/backbench/sockets"
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
	only, skip  []string
}

const probeUsage = `Usage: backbench probe [flags] URL

Finds out what a FastCGI or HTTP backend supports at the protocol level:
keep-alive, requests per connection, multiplexing, GET_VALUES, roles,
unknown record types, idle timeout, pipelining, framing. Each check runs on a
fresh connection (unless it is about reuse), each exchange within -s. Prints
one line per check (name, verdict, evidence) and what it means for
benchmarking, or JSON with --format json.

Flags:
`

func newProbeFlags(o *probeOptions) *pflag.FlagSet {
	fs := newFlagSet("probe")
	fs.SortFlags = false
	fs.Var(newChoice(&o.format, "text", "text", "json"), "format", "output format: text or json")
	fs.VarP(newSeconds(&o.timeout, 5*time.Second), "timeout", "s", "timeout of each exchange of a check, in seconds")
	fs.Var(newSeconds(&o.idleMax, 10*time.Second), "idle-max", "HTTP: longest wait for the server to close an idle kept connection")
	fs.IntVar(&o.maxRequests, "max-requests", 1000, "most requests sent on one connection by max_requests_per_connection (which also stops after 10 s)")
	fs.StringArrayVarP(&o.headers, "header", "H", nil, "add a request header 'Name: value' (repeatable)")
	fs.StringVar(&o.docRoot, "document-root", "", "FastCGI: DOCUMENT_ROOT; SCRIPT_FILENAME is this plus the path (default: the current directory)")
	fs.StringArrayVar(&o.params, "param", nil, "FastCGI: set or override a param NAME=VALUE (repeatable)")
	fs.StringVar(&o.unixSocket, "unix-socket", "", "connect to this Unix socket instead of the URL's host and port")
	fs.StringSliceVar(&o.only, "only", nil, "run only these checks (comma-separated names, as in the report)")
	fs.StringSliceVar(&o.skip, "skip", nil, "do not run these checks (comma-separated names)")
	return fs
}

// probeTarget is the target as the JSON report shows it.
type probeTarget struct {
	URL      string `json:"url"`
	Protocol string `json:"protocol"`
	Network  string `json:"network"`
	Address  string `json:"address"`
}

// fcgiProbeOutput and httpProbeOutput are the JSON reports: the target, the
// timeout, every check under its key, and the summary lines.
type fcgiProbeOutput struct {
	Target         probeTarget `json:"target"`
	TimeoutSeconds float64     `json:"timeout_seconds"`
	*fcgi.ProbeReport
	Summary []string `json:"summary"`
}

type httpProbeOutput struct {
	Target         probeTarget `json:"target"`
	TimeoutSeconds float64     `json:"timeout_seconds"`
	*httpprobe.ProbeReport
	Summary []string `json:"summary"`
}

// probeLine is one text line: a check's name, verdict and evidence.
type probeLine struct{ name, verdict, evidence string }

func probeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o probeOptions
	fs := newProbeFlags(&o)
	if err := parseFlags(fs, probeUsage, args, stdout); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("probe: want exactly one URL, got %d (see backbench probe --help)", fs.NArg())
	}
	tgt, err := sockets.ParseTarget(fs.Arg(0))
	if err != nil {
		return usagef("%v", err)
	}
	switch {
	case tgt.Scheme == sockets.SchemeHTTPS:
		return usagef("target %q: https is not supported", tgt.URL)
	case o.timeout <= 0:
		return usagef("-s must be greater than 0 seconds")
	case o.idleMax <= 0:
		return usagef("--idle-max must be greater than 0 seconds")
	case o.maxRequests < 1 || o.maxRequests > 1_000_000:
		return usagef("--max-requests %d: want 1 to 1000000", o.maxRequests)
	}
	if tgt, err = withUnixSocket(tgt, o.unixSocket, 0); err != nil {
		return err
	}
	headers, params, docRoot, err := requestParts(tgt.Scheme, o.headers, o.params, o.docRoot)
	if err != nil {
		return err
	}
	isFCGI := tgt.Scheme == sockets.SchemeFCGI
	selectChecks := httpprobe.SelectChecks
	if isFCGI {
		selectChecks = fcgi.SelectChecks
	}
	if _, err := selectChecks(o.only, o.skip); err != nil {
		return usagef("%v", err)
	}
	// FastCGI: no connection without a request (Ruby's fcgi.rb exits on
	// one); the first check's own dial decides reachability.
	check := sockets.StatUnix(tgt)
	if !isFCGI && check == nil {
		check = sockets.Check(ctx, tgt, o.timeout)
	}
	if check != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return &unreachableError{check}
	}
	pt := probeTarget{URL: tgt.URL, Protocol: tgt.Scheme, Network: tgt.Network, Address: tgt.Address}
	var lines []probeLine
	var summary []string
	var out any
	if isFCGI {
		rep, err := fcgi.Probe(ctx, fcgi.ProbeConfig{
			Config: fcgi.Config{Target: tgt, Headers: headers, DocumentRoot: docRoot,
				Params: params, Timeout: o.timeout},
			MaxRequests: o.maxRequests, Only: o.only, Skip: o.skip,
		})
		if errors.Is(err, fcgi.ErrUnreachable) {
			return &unreachableError{fmt.Errorf("cannot connect to %s %s: %s", tgt.Network, tgt.Address,
				strings.TrimPrefix(err.Error(), fcgi.ErrUnreachable.Error()+": "))}
		}
		if err != nil {
			return usagef("%v", err)
		}
		for _, l := range rep.Lines() {
			lines = append(lines, probeLine{l.Name, l.Verdict, l.Evidence})
		}
		summary = rep.Summary()
		out = fcgiProbeOutput{pt, o.timeout.Seconds(), rep, summary}
	} else {
		rep, err := httpprobe.Probe(ctx, httpprobe.ProbeConfig{Target: tgt, Headers: headers,
			Timeout: o.timeout, IdleMax: o.idleMax, MaxRequests: o.maxRequests, Only: o.only, Skip: o.skip})
		if err != nil {
			return usagef("%v", err)
		}
		for _, l := range rep.Lines() {
			lines = append(lines, probeLine{l.Name, l.Verdict, l.Evidence})
		}
		summary = rep.Summary()
		out = httpProbeOutput{pt, o.timeout.Seconds(), rep, summary}
	}
	if o.format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		// After the checks: a FastCGI target that cannot be reached is
		// known only from the first check's dial.
		fmt.Fprintf(stdout, "Probing %s (%s %s), each exchange within %v\n\n", tgt.URL, tgt.Network, tgt.Address, o.timeout)
		for _, l := range lines {
			fmt.Fprintf(stdout, "%-28s %-16s %s\n", l.name, l.verdict, l.evidence)
		}
		fmt.Fprintf(stdout, "\nFor benchmarking:\n")
		if len(summary) == 0 {
			fmt.Fprintf(stdout, "  nothing special was seen\n")
		}
		for _, s := range summary {
			fmt.Fprintf(stdout, "  %s\n", s)
		}
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	return nil
}
