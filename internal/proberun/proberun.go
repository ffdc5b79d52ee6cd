// Package proberun runs backbench probe on its addresses: one address, or
// each address of a {A..B} port range in turn, with the probe of the
// target's protocol (protocol.Protocol.Probe), and makes of it the probe's
// document (document.Probe, document.ProbeRange) and its text: one line a
// check, the "For benchmarking" advice, and for a range the checks on
// which the addresses disagree (probe.Disagreements).
//
// It decides what reaching an address means before the checks: a Unix
// socket must exist; a protocol that dials first (HTTP,
// protocol.Prober.DialFirst) gets one connection, and over TLS one
// handshake whose certificate must verify unless Options.Insecure; the
// others (FastCGI: some backends exit on a connection without a request)
// leave it to the first check's own dial. An address not reached is a
// *protocol.UnreachableError; a range fails only when no address was
// reached.
//
// It lives apart from internal/probe, the checks' own library that the
// protocol packages import, because it stands above the protocols: it
// picks none, it is handed one, and it writes the result model.
package proberun

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/probe"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/sockets"
)

// Options are what a probe of an address takes: the protocol and its
// request, and the bounds of the checks.
type Options struct {
	// Protocol is the targets' protocol; Headers the -H headers and
	// Request the protocol's request options (plan.Request).
	Protocol protocol.Protocol
	Headers  [][2]string
	Request  any
	// Timeout bounds each exchange of a check; IdleMax the wait of the
	// idle-timeout check.
	Timeout, IdleMax time.Duration
	// MaxRequests bounds the requests of the checks that count them.
	MaxRequests int
	// Insecure accepts any server certificate over TLS.
	Insecure bool
	// Only and Skip select checks by name.
	Only, Skip []string
	// JSON writes the document instead of the text.
	JSON bool
}

// RequestError is a probe the protocol refused to run as asked (a bad
// check name, say): the command line's fault, not the target's.
type RequestError struct{ Err error }

// Error is the cause's message.
func (e *RequestError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *RequestError) Unwrap() error { return e.Err }

// Result is the probe of one address: its target, the timeout of one
// exchange, its document, and its text lines and advice.
type Result struct {
	// Target is the address probed; Timeout bounds one exchange.
	Target  sockets.Target
	Timeout time.Duration
	// Doc is the probe's document (its JSON).
	Doc *document.Probe
	// Lines are the checks' lines; Summary the "For benchmarking" advice.
	Lines   []protocol.ProbeLine
	Summary []string
}

// WriteText writes the text: the Probing line (after the checks: a
// FastCGI target that cannot be reached is known only from the first
// check's dial), the lines and the advice.
func (r *Result) WriteText(w io.Writer) {
	fmt.Fprintf(w, "Probing %s (%s %s), each exchange within %v\n\n", r.Target.ShownURL(), r.Target.Network, r.Target.Address, r.Timeout)
	for _, l := range r.Lines {
		fmt.Fprintf(w, "%-28s %-16s %s\n", l.Name, l.Verdict, l.Evidence)
	}
	fmt.Fprintf(w, "\nFor benchmarking:\n")
	if len(r.Summary) == 0 {
		fmt.Fprintf(w, "  nothing special was seen\n")
	}
	for _, s := range r.Summary {
		fmt.Fprintf(w, "  %s\n", s)
	}
}

// verdicts are r's checks and verdicts, as probe.Disagreements compares
// them.
func (r *Result) verdicts() []probe.Verdict {
	var vs []probe.Verdict
	for _, l := range r.Lines {
		vs = append(vs, probe.Verdict{Check: l.Name, Verdict: l.Verdict})
	}
	return vs
}

// Targets are the addresses of url: one, or each of its {A..B} port
// range (sockets.ExpandPorts), in order.
func Targets(url string) ([]sockets.Target, error) {
	urls, err := sockets.ExpandPorts(url)
	if err != nil {
		return nil, err
	}
	var ts []sockets.Target
	for _, u := range urls {
		t, err := sockets.ParseTarget(u)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// Run probes the targets of url (one, or each address of its port range)
// and writes the report to w: the text, or the JSON with o.JSON. A range
// is written address by address as each is probed. Stopped by ctx, it
// returns ctx's error when nothing was probed.
func Run(ctx context.Context, w io.Writer, url string, targets []sockets.Target, o Options) error {
	if len(targets) > 1 {
		return runRange(ctx, w, url, targets, o)
	}
	res, err := Probe(ctx, targets[0], o)
	if err != nil {
		return err
	}
	if o.JSON {
		return document.Write(w, res.Doc)
	}
	res.WriteText(w)
	return nil
}

// Probe probes tgt with o.Protocol's probe, after checking that it can be
// reached as the package doc says.
func Probe(ctx context.Context, tgt sockets.Target, o Options) (*Result, error) {
	var dialer *sockets.Dialer
	if tgt.UsesTLS() {
		dialer = sockets.NewClusterDialer(tgt, sockets.DialerOptions{Timeout: o.Timeout,
			TLS: &tls.Config{ServerName: tgt.Host, InsecureSkipVerify: o.Insecure}})
	}
	check := sockets.StatUnix(tgt)
	if sel, ok := o.Protocol.(protocol.Prober); ok && sel.DialFirst() && check == nil {
		check = reachable(ctx, tgt, dialer, o.Timeout)
	}
	if check != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &protocol.UnreachableError{Err: check}
	}
	rep, err := o.Protocol.Probe(ctx, protocol.ProbeRequest{Target: tgt, Headers: o.Headers, Options: o.Request,
		Dialer: dialer, Timeout: o.Timeout, IdleMax: o.IdleMax, MaxRequests: o.MaxRequests, Only: o.Only, Skip: o.Skip})
	var ue *protocol.UnreachableError
	if errors.As(err, &ue) {
		return nil, ue
	}
	if err != nil {
		return nil, &RequestError{err}
	}
	res := &Result{Target: tgt, Timeout: o.Timeout, Lines: rep.Lines, Summary: rep.Summary}
	if res.Doc, err = document.NewProbe(probeTarget(tgt), o.Timeout.Seconds(), rep.Report, res.Summary); err != nil {
		return nil, err
	}
	return res, nil
}

// probeTarget is tgt as a probe's document names it.
func probeTarget(tgt sockets.Target) document.ProbeTarget {
	return document.ProbeTarget{URL: tgt.ShownURL(), Protocol: tgt.Scheme, Network: tgt.Network, Address: tgt.Address}
}

// reachable checks that one connection can be made and, over TLS
// (tlsDialer not nil), that the server's certificate verifies.
func reachable(ctx context.Context, tgt sockets.Target, tlsDialer *sockets.Dialer, timeout time.Duration) error {
	if err := sockets.Check(ctx, tgt, timeout); err != nil || tlsDialer == nil {
		return err
	}
	c, err := tlsDialer.DialDeadline(ctx, time.Now().Add(timeout))
	if err != nil {
		return execute.DialError(tgt, nil, 0, &sockets.ConnectError{Err: err})
	}
	return c.Close()
}

// runRange probes each address of a port range in turn, one section each,
// then names the checks on which they disagree. It fails only when no
// address could be reached.
func runRange(ctx context.Context, w io.Writer, url string, targets []sockets.Target, o Options) error {
	text := !o.JSON
	if text {
		fmt.Fprintf(w, "Probing %d addresses of %s, one after the other\n", len(targets), sockets.Target{URL: url}.ShownURL())
	}
	out := document.ProbeRange{URL: url}
	var done [][]probe.Verdict
	var addrs []string
	var errs []error
	for _, t := range targets {
		if ctx.Err() != nil {
			break
		}
		if text {
			fmt.Fprintln(w)
		}
		res, err := Probe(ctx, t, o)
		var ue *protocol.UnreachableError
		switch {
		case errors.As(err, &ue):
			errs = append(errs, ue.Err)
			out.Addresses = append(out.Addresses, document.ProbeAddress{Target: probeTarget(t), Error: ue.Err.Error()})
			if text {
				fmt.Fprintf(w, "Probing %s (%s %s): not reached: %v\n", t.ShownURL(), t.Network, t.Address, ue.Err)
			}
			continue
		case err != nil:
			return err
		}
		out.Addresses = append(out.Addresses, document.ProbeAddress{Probe: res.Doc})
		done = append(done, res.verdicts())
		addrs = append(addrs, t.Network+":"+t.Address)
		if text {
			res.WriteText(w)
		}
	}
	if len(done) == 0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &protocol.UnreachableError{Err: errors.Join(errs...)}
	}
	ds := probe.Disagreements(addrs, done)
	out.Disagreements = []document.ProbeDisagreement{}
	for _, d := range ds {
		out.Disagreements = append(out.Disagreements, document.ProbeDisagreement(d))
	}
	if !text {
		return document.Write(w, &out)
	}
	fmt.Fprintln(w)
	if len(errs) > 0 {
		fmt.Fprintf(w, "%d of the %d addresses could not be reached (see above).\n", len(errs), len(targets))
	}
	switch {
	case len(done) == 1:
		fmt.Fprintf(w, "Only one address was probed: nothing to compare.\n")
	case len(ds) == 0:
		fmt.Fprintf(w, "The %d addresses probed agree on every check.\n", len(done))
	}
	for _, d := range ds {
		fmt.Fprintln(w, d.Text(addrs))
	}
	return nil
}
