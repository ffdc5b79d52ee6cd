package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/cli"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/probe"
	"github.com/backbench/backbench/internal/protocol"
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
	fs.Var(cli.NewChoice(&o.format, "text", "text", "json"), "format", "output format: text or json")
	fs.VarP(cli.NewSeconds(&o.timeout, 5*time.Second), "timeout", "s", "timeout of each exchange of a check, in seconds")
	fs.Var(cli.NewSeconds(&o.idleMax, 10*time.Second), "idle-max", "HTTP: longest wait for the server to close an idle kept connection")
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

// probeLine is one text line: a check's name, verdict and evidence.
type probeLine struct{ name, verdict, evidence string }

func probeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var o probeOptions
	fs := newProbeFlags(&o)
	if err := parseFlags(fs, probeUsage, args, stdout); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("probe: want exactly one URL, got %d (see backbench probe --help)", fs.NArg())
	}
	urls, err := sockets.ExpandPorts(fs.Arg(0))
	if err != nil {
		return usagef("%v", err)
	}
	var targets []sockets.Target
	for _, u := range urls {
		t, err := sockets.ParseTarget(u)
		if err != nil {
			return usagef("%v", err)
		}
		targets = append(targets, t)
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
	p := prober{o: &o}
	if p.proto, err = plan.Protocol(tgt); err != nil {
		return err
	}
	if p.headers, p.options, err = plan.Request(p.proto, o.headers, o.params, o.docRoot, false); err != nil {
		return err
	}
	if sel, ok := p.proto.(protocol.Prober); ok {
		if err := sel.SelectChecks(o.only, o.skip); err != nil {
			return usagef("%v", err)
		}
	}
	out, closeOut, err := cli.OpenOutput(o.output, stdout)
	if err != nil {
		return err
	}
	defer closeOut(&err)
	stdout = out // the report, text or JSON, goes to -o
	if len(targets) == 1 {
		res, err := p.run(ctx, targets[0])
		if err != nil {
			return err
		}
		if o.format == "json" {
			if err := writeJSON(stdout, res.out); err != nil {
				return err
			}
		} else {
			res.print(stdout)
		}
	} else if err := p.runRange(ctx, fs.Arg(0), targets, stdout); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	return nil
}

// prober runs the probe of one address after another.
type prober struct {
	o       *probeOptions
	proto   protocol.Protocol
	headers [][2]string
	options any // the protocol's
}

// probeResult is the probe of one address: its target, JSON object, text
// lines and summary.
type probeResult struct {
	tgt     sockets.Target
	timeout time.Duration
	out     *document.Probe
	lines   []probeLine
	summary []string
}

// print writes the text: the Probing line (after the checks: a FastCGI
// target that cannot be reached is known only from the first check's
// dial), the lines and the summary.
func (r *probeResult) print(w io.Writer) {
	fmt.Fprintf(w, "Probing %s (%s %s), each exchange within %v\n\n", r.tgt.URL, r.tgt.Network, r.tgt.Address, r.timeout)
	for _, l := range r.lines {
		fmt.Fprintf(w, "%-28s %-16s %s\n", l.name, l.verdict, l.evidence)
	}
	fmt.Fprintf(w, "\nFor benchmarking:\n")
	if len(r.summary) == 0 {
		fmt.Fprintf(w, "  nothing special was seen\n")
	}
	for _, s := range r.summary {
		fmt.Fprintf(w, "  %s\n", s)
	}
}

// writeJSON writes a probe's JSON, a result of kind probe.
func writeJSON(w io.Writer, r document.Result) error {
	return document.Write(w, r)
}

// run probes tgt with its protocol's probe. A protocol that dials first
// (HTTP: protocol.Prober.DialFirst) gets one connection first, and for
// https one TLS handshake, whose certificate must verify unless
// --insecure; the others (FastCGI: no connection without a request, Ruby's
// fcgi.rb exits on one) leave reachability to the first check's own dial.
func (p *prober) run(ctx context.Context, tgt sockets.Target) (*probeResult, error) {
	o := p.o
	var dialer *sockets.Dialer
	if tgt.UsesTLS() {
		dialer = sockets.NewClusterDialer(tgt, sockets.DialerOptions{Timeout: o.timeout,
			TLS: &tls.Config{ServerName: tgt.Host, InsecureSkipVerify: o.insecure}})
	}
	check := sockets.StatUnix(tgt)
	if sel, ok := p.proto.(protocol.Prober); ok && sel.DialFirst() && check == nil {
		check = probeReachable(ctx, tgt, dialer, o.timeout)
	}
	if check != nil {
		if ctx.Err() != nil {
			return nil, errInterrupted
		}
		return nil, &unreachableError{check}
	}
	pt := document.ProbeTarget{URL: tgt.URL, Protocol: tgt.Scheme, Network: tgt.Network, Address: tgt.Address}
	res := &probeResult{tgt: tgt, timeout: o.timeout}
	rep, err := p.proto.Probe(ctx, protocol.ProbeRequest{Target: tgt, Headers: p.headers, Options: p.options,
		Dialer: dialer, Timeout: o.timeout, IdleMax: o.idleMax, MaxRequests: o.maxRequests, Only: o.only, Skip: o.skip})
	var ue *protocol.UnreachableError
	if errors.As(err, &ue) {
		return nil, &unreachableError{ue.Err}
	}
	if err != nil {
		return nil, usagef("%v", err)
	}
	for _, l := range rep.Lines {
		res.lines = append(res.lines, probeLine{l.Name, l.Verdict, l.Evidence})
	}
	res.summary = rep.Summary
	if res.out, err = document.NewProbe(pt, o.timeout.Seconds(), rep.Report, res.summary); err != nil {
		return nil, err
	}
	return res, nil
}

// probeReachable checks that one connection can be made and, over TLS
// (tlsDialer not nil), that the server's certificate verifies.
func probeReachable(ctx context.Context, tgt sockets.Target, tlsDialer *sockets.Dialer, timeout time.Duration) error {
	if err := sockets.Check(ctx, tgt, timeout); err != nil || tlsDialer == nil {
		return err
	}
	c, err := tlsDialer.DialDeadline(ctx, time.Now().Add(timeout))
	if err != nil {
		return execute.DialError(tgt, nil, 0, &sockets.ConnectError{Err: err})
	}
	return c.Close()
}

// rangeOutput is the JSON of a probe over a {A..B} port range: one object
// per address (the probe's, or the target and why it could not be reached)
// and the checks whose verdicts differ between the addresses probed.
type rangeOutput = document.ProbeRange

// runRange probes each address of a port range in turn, one section each,
// then names the checks on which they disagree. It fails only when no
// address could be reached.
func (p *prober) runRange(ctx context.Context, url string, targets []sockets.Target, stdout io.Writer) error {
	text := p.o.format == "text"
	if text {
		fmt.Fprintf(stdout, "Probing %d addresses of %s, one after the other\n", len(targets), url)
	}
	out := rangeOutput{URL: url}
	var done [][]probe.Verdict
	var addrs []string
	var errs []error
	for _, t := range targets {
		if ctx.Err() != nil {
			break
		}
		if text {
			fmt.Fprintln(stdout)
		}
		res, err := p.run(ctx, t)
		var ue *unreachableError
		switch {
		case errors.As(err, &ue):
			errs = append(errs, ue.err)
			out.Addresses = append(out.Addresses, document.ProbeAddress{Target: document.ProbeTarget{URL: t.URL, Protocol: t.Scheme, Network: t.Network, Address: t.Address}, Error: ue.err.Error()})
			if text {
				fmt.Fprintf(stdout, "Probing %s (%s %s): not reached: %v\n", t.URL, t.Network, t.Address, ue.err)
			}
			continue
		case err != nil:
			return err
		}
		out.Addresses = append(out.Addresses, document.ProbeAddress{Probe: res.out})
		var vs []probe.Verdict
		for _, l := range res.lines {
			vs = append(vs, probe.Verdict{Check: l.name, Verdict: l.verdict})
		}
		done = append(done, vs)
		addrs = append(addrs, t.Network+":"+t.Address)
		if text {
			res.print(stdout)
		}
	}
	if len(done) == 0 {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return &unreachableError{errors.Join(errs...)}
	}
	ds := probe.Disagreements(addrs, done)
	out.Disagreements = []document.ProbeDisagreement{}
	for _, d := range ds {
		out.Disagreements = append(out.Disagreements, document.ProbeDisagreement(d))
	}
	if !text {
		return writeJSON(stdout, &out)
	}
	fmt.Fprintln(stdout)
	if len(errs) > 0 {
		fmt.Fprintf(stdout, "%d of the %d addresses could not be reached (see above).\n", len(errs), len(targets))
	}
	switch {
	case len(done) == 1:
		fmt.Fprintf(stdout, "Only one address was probed: nothing to compare.\n")
	case len(ds) == 0:
		fmt.Fprintf(stdout, "The %d addresses probed agree on every check.\n", len(done))
	}
	for _, d := range ds {
		fmt.Fprintln(stdout, d.Text(addrs))
	}
	return nil
}
