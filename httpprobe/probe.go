package httpprobe

// The probe: what an HTTP/1.x server really does about persistence,
// pipelining and framing. Each check opens a fresh connection, sends
// requests made by RequestHead, and reports a verdict word, the evidence and
// numbers. Every exchange is bounded by the timeout (the idle check by
// IdleMax), heads by MaxHeadBytes, and bodies are counted, never kept.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/backbench/backbench/internal/probe"
	"github.com/backbench/backbench/sockets"
)

// Probe defaults.
const (
	// DefaultProbeTimeout bounds one exchange when ProbeConfig.Timeout is
	// 0: 5 s.
	DefaultProbeTimeout = 5 * time.Second
	// DefaultIdleMax bounds the idle_timeout_seconds check when
	// ProbeConfig.IdleMax is 0: 10 s.
	DefaultIdleMax = 10 * time.Second
	// DefaultProbeMaxRequests bounds max_requests_per_connection when
	// ProbeConfig.MaxRequests is 0: 1000 requests.
	DefaultProbeMaxRequests = 1000
	// DefaultProbeMaxRequestsTime bounds that check's duration when
	// ProbeConfig.MaxRequestsTime is 0: 10 s.
	DefaultProbeMaxRequestsTime = 10 * time.Second
)

// Verdict words of the HTTP checks.
const (
	VerdictNoAnswer       = probe.VerdictNoAnswer
	VerdictClosed         = probe.VerdictClosed
	VerdictError          = probe.VerdictError
	VerdictHonored        = probe.VerdictHonored
	VerdictIgnored        = probe.VerdictIgnored
	VerdictMeasured       = probe.VerdictMeasured
	VerdictNotReached     = probe.VerdictNotReached
	VerdictSupported      = probe.VerdictSupported
	VerdictUnsolicited    = probe.VerdictUnsolicited
	VerdictFirstOnly      = "first only"
	VerdictContentLength  = "content-length"
	VerdictChunked        = "chunked"
	VerdictCloseDelimited = "close-delimited"
	VerdictNoBody         = "no body"
	VerdictPresent        = "present"
	VerdictAbsent         = "absent"
)

// ProbeConfig describes a probe of one HTTP server.
type ProbeConfig struct {
	// Target is where to connect and what to ask for (scheme http, or
	// https with a Dialer that speaks TLS).
	Target sockets.Target
	// Dialer, when not nil, dials instead of a plain Dialer for the
	// target: TLS for https (see sockets.NewClusterDialer).
	Dialer *sockets.Dialer
	// Headers are extra request headers, as in Config.
	Headers [][2]string
	// Timeout bounds each exchange; 0 means DefaultProbeTimeout.
	Timeout time.Duration
	// IdleMax bounds the wait of the idle_timeout_seconds check; 0 means
	// DefaultIdleMax.
	IdleMax time.Duration
	// MaxRequests bounds max_requests_per_connection, in requests; 0 means
	// DefaultProbeMaxRequests.
	MaxRequests int
	// MaxRequestsTime bounds that check's duration; 0 means
	// DefaultProbeMaxRequestsTime.
	MaxRequestsTime time.Duration
	// Only, when not empty, names the checks to run (ProbeChecks); Skip
	// names checks not to run. The others get the verdict "skipped".
	Only, Skip []string
}

// Check is what every check reports (see probe.Check).
type Check = probe.Check

// PersistResult is the outcome of the http11_persistent check.
type PersistResult struct {
	Check
	// Served is how many of the two requests were answered on the one
	// connection.
	Served int `json:"served"`
	// ConnectionClose reports "Connection: close" in the first response.
	ConnectionClose bool `json:"connection_close"`
}

// HTTP10Result is the outcome of the http10_keep_alive check.
type HTTP10Result struct {
	PersistResult
	// ResponseVersion is the version of the first response ("HTTP/1.0").
	ResponseVersion string `json:"response_version"`
	// ConnectionKeepAlive reports a "keep-alive" token in its Connection
	// header, and KeepAliveHeader a Keep-Alive header.
	ConnectionKeepAlive bool `json:"connection_keep_alive"`
	KeepAliveHeader     bool `json:"keep_alive_header"`
	// ABSeesKeepAlive reports that "keep-alive" appears anywhere in the
	// head, in any case: what ab 2.4 looks for to reuse a connection.
	ABSeesKeepAlive bool `json:"ab_sees_keep_alive"`
}

// MaxRequestsResult is the outcome of max_requests_per_connection (see
// probe.MaxRequestsResult).
type MaxRequestsResult = probe.MaxRequestsResult

// IdleResult is the outcome of idle_timeout_seconds.
type IdleResult struct {
	Check
	// Seconds until the server closed an idle kept connection, nil when it
	// did not within MaxSeconds.
	IdleSeconds *float64 `json:"idle_seconds"`
	// MaxSeconds is how long the check waits at most.
	MaxSeconds float64 `json:"max_seconds"`
}

// PipelineResult is the outcome of the pipelining check.
type PipelineResult struct {
	Check
	// Answered is how many of the two pipelined requests were answered.
	Answered int `json:"answered"`
}

// FramingResult is the outcome of the framing check.
type FramingResult struct {
	Check
	// Status is the response status.
	Status int `json:"status"`
	// BodyBytes is the body size.
	BodyBytes int64 `json:"body_bytes"`
	// ResponseVersion is the version of the response ("HTTP/1.1").
	ResponseVersion string `json:"response_version"`
}

// ServerResult is the outcome of the server check.
type ServerResult struct {
	Check
	// Server is the whole Server header value; Token its first word, as ab
	// prints it under "Server Software".
	Server string `json:"server"`
	Token  string `json:"token"`
}

// ProbeReport holds the outcome of every HTTP check, under the keys of the
// JSON report.
type ProbeReport struct {
	HTTP11Persistent PersistResult     `json:"http11_persistent"`
	HTTP10KeepAlive  HTTP10Result      `json:"http10_keep_alive"`
	MaxRequests      MaxRequestsResult `json:"max_requests_per_connection"`
	IdleTimeout      IdleResult        `json:"idle_timeout_seconds"`
	Pipelining       PipelineResult    `json:"pipelining"`
	Framing          FramingResult     `json:"framing"`
	Server           ServerResult      `json:"server"`
}

// NamedCheck is one line of a text report: a check's key and its outcome.
type NamedCheck = probe.NamedCheck

// Lines returns the checks in the order they run, with their JSON keys.
func (r *ProbeReport) Lines() []NamedCheck {
	return []NamedCheck{
		{Name: "http11_persistent", Check: r.HTTP11Persistent.Check},
		{Name: "http10_keep_alive", Check: r.HTTP10KeepAlive.Check},
		{Name: "max_requests_per_connection", Check: r.MaxRequests.Check},
		{Name: "idle_timeout_seconds", Check: r.IdleTimeout.Check},
		{Name: "pipelining", Check: r.Pipelining.Check},
		{Name: "framing", Check: r.Framing.Check},
		{Name: "server", Check: r.Server.Check},
	}
}

// Summary returns what the outcome means for benchmarking, one sentence per
// line (never nil).
func (r *ProbeReport) Summary() []string {
	s := []string{}
	switch r.HTTP11Persistent.Verdict {
	case VerdictHonored:
		s = append(s, "keep-alive: -k is meaningful over HTTP/1.1 (connections are kept)")
	case VerdictIgnored:
		s = append(s, "keep-alive: -k changes nothing over HTTP/1.1 (the server closes after every response)")
	case VerdictUnsolicited:
		s = append(s, "the server sends bytes nobody asked for after a response: a client that keeps the connection reads them as "+
			"the next answer; backbench bench drops such a connection and counts the bytes apart (a note says how many)")
	}
	h10 := &r.HTTP10KeepAlive
	switch {
	case h10.Verdict == VerdictHonored && !h10.ABSeesKeepAlive:
		s = append(s, "ab -k would hang: no Keep-Alive in the HTTP/1.0 responses, yet the server keeps the connection (ab waits for a close); use backbench")
	case h10.Verdict == VerdictHonored:
		s = append(s, "ab -k works: HTTP/1.0 keep-alive is honored and announced")
	case h10.Verdict == VerdictIgnored:
		s = append(s, "ab -k gains nothing: HTTP/1.0 keep-alive is ignored (use backbench -k over HTTP/1.1)")
	}
	// Seen on nginx in front of php-fpm: a body of unknown length is
	// chunked for HTTP/1.1 and ends with the close for HTTP/1.0.
	if h10.Verdict == VerdictIgnored && r.HTTP11Persistent.Verdict == VerdictHonored && r.Framing.Verdict == VerdictChunked {
		s = append(s, "HTTP/1.0 keep-alive is lost because the body has no length: chunked over HTTP/1.1, ended by the close over HTTP/1.0 "+
			"(nginx in front of a FastCGI app that sends no Content-Length does this); --http1.0 -k pays a connect per request")
	}
	// Seen on Thin: connections are kept, yet a pipelined second request
	// is never answered.
	if r.Pipelining.Verdict == VerdictFirstOnly && r.HTTP11Persistent.Verdict == VerdictHonored {
		s = append(s, "pipelining: the second of two pipelined requests gets no answer although connections are kept (seen on Thin 1.8): "+
			"a tool that pipelines would stall; backbench sends one request at a time per connection")
	}
	if r.MaxRequests.Verdict == VerdictMeasured && r.MaxRequests.Requests != nil && *r.MaxRequests.Requests > 1 {
		n := *r.MaxRequests.Requests
		s = append(s, fmt.Sprintf("with -k, the server closes a kept connection every %d requests: expect about one reconnect per %d requests", n, n))
	}
	if r.IdleTimeout.Verdict == VerdictMeasured && r.IdleTimeout.IdleSeconds != nil {
		s = append(s, fmt.Sprintf("idle kept connections are closed after %.1f s: with --rate, gaps longer than that cost a reconnect", *r.IdleTimeout.IdleSeconds))
	}
	switch r.Framing.Verdict {
	case VerdictChunked:
		s = append(s, "bodies are chunked: ab cannot read them (it sends HTTP/1.0 and may get another framing); backbench reads chunked bodies")
	case VerdictCloseDelimited:
		s = append(s, "bodies end with the connection's close: keep-alive is impossible for this URL")
	}
	if r.Framing.Status >= 400 {
		s = append(s, fmt.Sprintf("the URL answers status %d: every benchmark response will be a non-2xx", r.Framing.Status))
	}
	return s
}

// Probe runs every HTTP check against cfg.Target, one after the other. It
// returns an error only for a bad configuration; what the server does,
// including not answering, is in the report. Cancelling ctx ends the check
// in progress at once and the rest quickly.
func Probe(ctx context.Context, cfg ProbeConfig) (*ProbeReport, error) {
	run, err := SelectChecks(cfg.Only, cfg.Skip)
	if err != nil {
		return nil, err
	}
	p, err := newProber(cfg)
	if err != nil {
		return nil, err
	}
	r := &ProbeReport{}
	steps := []probe.Step{
		{Name: "http11_persistent", Check: &r.HTTP11Persistent.Check, Run: func() { r.HTTP11Persistent = p.persistent(ctx, false).PersistResult }},
		{Name: "http10_keep_alive", Check: &r.HTTP10KeepAlive.Check, Run: func() { r.HTTP10KeepAlive = p.persistent(ctx, true) }},
		{Name: "max_requests_per_connection", Check: &r.MaxRequests.Check, Run: func() { r.MaxRequests = p.maxRequests(ctx) }},
		{Name: "idle_timeout_seconds", Check: &r.IdleTimeout.Check, Run: func() { r.IdleTimeout = p.idle(ctx) }},
		{Name: "pipelining", Check: &r.Pipelining.Check, Run: func() { r.Pipelining = p.pipelining(ctx) }},
		// One exchange for both framing and server: the one that runs
		// first fills both (a check not selected is marked after all ran).
		{Name: "framing", Check: &r.Framing.Check, Run: func() { r.Framing, r.Server = p.framing(ctx) }},
		{Name: "server", Check: &r.Server.Check, Run: func() {
			if !run["framing"] {
				r.Framing, r.Server = p.framing(ctx)
			}
		}},
	}
	if err := probe.RunAll(steps, run, nil); err != nil {
		return nil, err
	}
	return r, nil
}

// ProbeChecks are the names of the HTTP checks, in the order they run.
var ProbeChecks = []string{"http11_persistent", "http10_keep_alive", "max_requests_per_connection",
	"idle_timeout_seconds", "pipelining", "framing", "server"}

// SelectChecks returns the checks to run given --only and --skip lists of
// names (ProbeChecks); an unknown name is an error.
func SelectChecks(only, skip []string) (map[string]bool, error) {
	run, err := probe.Select(ProbeChecks, only, skip)
	if err != nil {
		return nil, fmt.Errorf("httpprobe: %w", err)
	}
	return run, nil
}

type prober struct {
	cfg     ProbeConfig
	run     probe.Runner
	timeout time.Duration
	req11   []byte // HTTP/1.1, persistent
	req10   []byte // HTTP/1.0, Connection: keep-alive
}

func newProber(cfg ProbeConfig) (*prober, error) {
	if cfg.Timeout < 0 || cfg.IdleMax < 0 || cfg.MaxRequests < 0 || cfg.MaxRequestsTime < 0 {
		return nil, errors.New("httpprobe: negative probe bound")
	}
	// A bound left at 0 takes its default.
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultProbeTimeout)
	cfg.IdleMax = cmp.Or(cfg.IdleMax, DefaultIdleMax)
	cfg.MaxRequests = cmp.Or(cfg.MaxRequests, DefaultProbeMaxRequests)
	cfg.MaxRequestsTime = cmp.Or(cfg.MaxRequestsTime, DefaultProbeMaxRequestsTime)
	base := Config{Target: cfg.Target, Headers: cfg.Headers, KeepAlive: true}
	h11, err := RequestHead(base)
	if err != nil {
		return nil, err
	}
	base.HTTP10 = true
	h10, err := RequestHead(base)
	if err != nil {
		return nil, err
	}
	d := cfg.Dialer
	if d == nil {
		d = sockets.NewDialer(cfg.Target, 0)
	}
	// A head is parsed whole in the read buffer: room for the largest
	// one and some of the body.
	run := probe.Runner{Dialer: d, Timeout: cfg.Timeout, Inside: "the body", BufferSize: MaxHeadBytes + 4<<10}
	return &prober{cfg: cfg, run: run, timeout: cfg.Timeout, req11: []byte(h11), req10: []byte(h10)}, nil
}

// presp is what the probe keeps of one response.
type presp struct {
	minor           int
	status          int
	keeps           bool
	connClose       bool
	connKeepAlive   bool
	keepAliveHeader bool
	abSees          bool
	server          string
	token           string
	kind            BodyKind
	body            int64
}

func (r *presp) version() string { return fmt.Sprintf("HTTP/1.%d", r.minor) }

func (r *presp) describe() string {
	s := fmt.Sprintf("%s %d", r.version(), r.status)
	switch r.kind {
	case BodyLength:
		s += fmt.Sprintf(", Content-Length %d", r.body)
	case BodyChunked:
		s += fmt.Sprintf(", chunked %d bytes", r.body)
	case BodyClose:
		s += fmt.Sprintf(", %d bytes up to the close", r.body)
	}
	switch {
	case r.connClose:
		s += ", Connection: close"
	case r.connKeepAlive:
		s += ", Connection: keep-alive"
	}
	if r.keepAliveHeader {
		s += ", Keep-Alive header"
	}
	return s
}

var keepAliveWord = []byte("keep-alive")

// response reads one whole response from c (interim 1xx ones skipped): the
// head parsed whole in the read buffer, the body counted, not kept.
func response(c *probe.Conn) (presp, error) {
	in := c.In
	var h Head
	var r presp
	for {
		for {
			b, _ := in.Peek(in.Buffered())
			n, err := ParseHead(b, &h)
			if err == nil {
				head := b[:n]
				r = presp{minor: h.Minor, status: h.Status, keeps: h.KeepsConn(), connClose: h.ConnClose,
					connKeepAlive: h.ConnKeepAlive, keepAliveHeader: h.KeepAliveHeader,
					abSees: bytes.Contains(bytes.ToLower(head), keepAliveWord),
					kind:   h.Body(false)}
				if h.Server != nil {
					r.server, r.token = string(h.Server), string(h.ServerToken())
				}
				in.Discard(n)
				break
			}
			if err != ErrIncomplete {
				return r, err
			}
			if len(b) >= MaxHeadBytes {
				return r, errHeadTooLarge
			}
			if _, err := in.Peek(len(b) + 1); err != nil {
				return r, err
			}
		}
		if h.Status >= 200 || h.Status == 101 {
			break
		}
	}
	switch r.kind {
	case BodyLength:
		n, err := in.Discard(int(h.ContentLength))
		r.body += int64(n)
		if err != nil {
			return r, bodyErr(err)
		}
	case BodyChunked:
		var dec ChunkedDecoder
		for !dec.Done() {
			if in.Buffered() == 0 {
				if _, err := in.Peek(1); err != nil {
					return r, bodyErr(err)
				}
			}
			b, _ := in.Peek(in.Buffered())
			n, data, err := dec.Step(b)
			if err != nil {
				return r, err
			}
			r.body += int64(len(data)) // data points into b: counted before the discard
			in.Discard(n)
		}
	case BodyClose:
		for {
			n, _ := in.Discard(in.Buffered())
			r.body += int64(n)
			if _, err := in.Peek(1); err != nil {
				if err == io.EOF {
					break
				}
				return r, bodyErr(err)
			}
		}
	}
	return r, nil
}

// bodyErr makes an EOF inside a body an unexpected one.
func bodyErr(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// roundTrip sends req on c and reads the response, within the timeout.
func (p *prober) roundTrip(ctx context.Context, c *probe.Conn, req []byte) (presp, error) {
	c.Exchange(ctx, p.timeout)
	if _, err := c.Write(req); err != nil {
		return presp{}, err
	}
	return response(c)
}

// ask is the runner's Ask of req: each response read is appended to resps
// when that is not nil.
func (p *prober) ask(req []byte, resps *[]presp) probe.Ask {
	return func(ctx context.Context, c *probe.Conn) (probe.Answer, error) {
		resp, err := p.roundTrip(ctx, c, req)
		if err != nil {
			return probe.Answer{}, err
		}
		if resps != nil {
			*resps = append(*resps, resp)
		}
		return probe.Answer{Got: resp.describe(), Ends: resp.connClose, EndsByClose: resp.kind == BodyClose}, nil
	}
}

// persistent sends two requests on one connection: HTTP/1.1 without a
// Connection header, or HTTP/1.0 with "Connection: keep-alive".
func (p *prober) persistent(ctx context.Context, http10 bool) (r HTTP10Result) {
	req, what := p.req11, "HTTP/1.1"
	if http10 {
		req, what = p.req10, "HTTP/1.0 with Connection: keep-alive"
	}
	var resps []presp
	p.run.Run(ctx, &r.Check, time.Time{}, func(c *probe.Conn) {
		r.Served = p.run.Reuse(ctx, c, &r.Check, probe.Reuse{First: "request 1 (" + what + ")", Ask: p.ask(req, &resps)})
	})
	if len(resps) == 0 {
		return r
	}
	r1 := resps[0]
	r.ConnectionClose = r1.connClose
	r.ResponseVersion = r1.version()
	r.ConnectionKeepAlive, r.KeepAliveHeader, r.ABSeesKeepAlive = r1.connKeepAlive, r1.keepAliveHeader, r1.abSees
	if r.Verdict == VerdictHonored && !r1.keeps {
		r.Evidence += ", although response 1 did not announce keep-alive"
	}
	return r
}

// maxRequests sends HTTP/1.1 requests on one connection until the server
// closes it, the bound or the time budget.
func (p *prober) maxRequests(ctx context.Context) MaxRequestsResult {
	return p.run.MaxRequests(ctx, probe.Repeat{What: "HTTP/1.1 requests", Bound: p.cfg.MaxRequests,
		Time: p.cfg.MaxRequestsTime, Ask: p.ask(p.req11, nil)})
}

// idle sends one request, then waits, silent, for the server to close the
// kept connection, up to IdleMax.
func (p *prober) idle(ctx context.Context) (r IdleResult) {
	r.MaxSeconds = p.cfg.IdleMax.Seconds()
	p.run.Run(ctx, &r.Check, time.Time{}, func(c *probe.Conn) {
		resp, err := p.roundTrip(ctx, c, p.req11)
		if err != nil {
			p.run.Fail(&r.Check, "request (HTTP/1.1): ", err)
			return
		}
		if resp.kind == BodyClose || resp.connClose {
			r.Verdict = VerdictIgnored
			r.Evidence = "request (HTTP/1.1): " + resp.describe() + "; the connection is not kept, so nothing to measure"
			return
		}
		idleStart := time.Now()
		c.Exchange(ctx, p.cfg.IdleMax)
		_, err = c.In.Peek(1)
		waited := time.Since(idleStart)
		switch v := probe.VerdictOf(err); {
		case err == nil:
			r.Verdict = VerdictError
			r.Evidence = fmt.Sprintf("after the response, the server sent %d bytes nobody asked for", c.In.Buffered())
		case v == VerdictClosed:
			sec := float64(waited.Round(10*time.Millisecond)) / float64(time.Second)
			r.IdleSeconds = &sec
			r.Verdict = VerdictMeasured
			r.Evidence = fmt.Sprintf("one HTTP/1.1 request answered (%s), then the server closed the idle connection after %.2f s", resp.describe(), sec)
		case v == VerdictNoAnswer && ctx.Err() == nil:
			r.Verdict = VerdictNotReached
			r.Evidence = fmt.Sprintf("one HTTP/1.1 request answered, then the idle connection stayed open for %v", p.cfg.IdleMax)
		default:
			r.Verdict = v
			r.Evidence = "waiting on the idle connection: " + probe.DescribeErr(err, p.cfg.IdleMax, "the body")
		}
	})
	return r
}

// pipelining sends two HTTP/1.1 requests in one write.
func (p *prober) pipelining(ctx context.Context) (r PipelineResult) {
	p.run.Run(ctx, &r.Check, time.Time{}, func(c *probe.Conn) {
		c.Exchange(ctx, p.timeout)
		sent := "sent two HTTP/1.1 requests in one write"
		if _, err := c.Write(append(append([]byte(nil), p.req11...), p.req11...)); err != nil {
			p.run.Fail(&r.Check, sent+"; write: ", err)
			return
		}
		r1, err := response(c)
		if err != nil {
			p.run.Fail(&r.Check, sent+"; response 1: ", err)
			return
		}
		r.Answered = 1
		ev := sent + "; response 1: " + r1.describe()
		r2, err := response(c)
		if err != nil {
			r.Verdict = VerdictFirstOnly
			r.Evidence = ev + "; response 2: " + p.run.Describe(err)
			return
		}
		r.Answered = 2
		if n := c.Unsolicited(ctx, probe.UnsolicitedWait); n > 0 {
			r.Verdict = VerdictUnsolicited
			r.Evidence = ev + "; response 2: " + r2.describe() + fmt.Sprintf("; then %d more bytes nobody asked for: more than the answers to two requests, so they cannot be matched to them", n)
			return
		}
		r.Verdict = VerdictSupported
		r.Evidence = ev + "; response 2: " + r2.describe() + ", in order on the same connection"
	})
	return r
}

// framing sends one HTTP/1.1 request and reports how the body is delimited
// and the Server header.
func (p *prober) framing(ctx context.Context) (f FramingResult, s ServerResult) {
	dialed := p.run.Run(ctx, &f.Check, time.Time{}, func(c *probe.Conn) {
		resp, err := p.roundTrip(ctx, c, p.req11)
		if err != nil {
			p.run.Fail(&f.Check, "request (HTTP/1.1): ", err)
			s.Check = f.Check
			return
		}
		f.Status, f.BodyBytes, f.ResponseVersion = resp.status, resp.body, resp.version()
		switch resp.kind {
		case BodyLength:
			f.Verdict = VerdictContentLength
		case BodyChunked:
			f.Verdict = VerdictChunked
		case BodyClose:
			f.Verdict = VerdictCloseDelimited
		default:
			f.Verdict = VerdictNoBody
		}
		f.Evidence = "sent " + p.cfg.Target.RequestURI() + " (HTTP/1.1); got " + resp.describe()
		s.Server, s.Token = resp.server, resp.token
		if resp.server != "" {
			s.Verdict = VerdictPresent
			s.Evidence = "Server: " + resp.server
		} else {
			s.Verdict = VerdictAbsent
			s.Evidence = "no Server header in " + resp.version() + " " + fmt.Sprint(resp.status) + " response"
		}
	})
	if !dialed {
		s.Check = f.Check
	}
	s.Seconds = f.Seconds
	return f, s
}
