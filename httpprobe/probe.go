package httpprobe

// The probe: what an HTTP/1.x server really does about persistence,
// pipelining and framing. Each check opens a fresh connection, sends
// requests made by RequestHead, and reports a verdict word, the evidence and
// numbers. Every exchange is bounded by the timeout (the idle check by
// IdleMax), heads by MaxHeadBytes, and bodies are counted, never kept.

import (
	"bytes"
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

// MaxRequestsResult is the outcome of max_requests_per_connection.
type MaxRequestsResult struct {
	Check
	// Requests is how many requests one kept connection served before the
	// server closed it, nil when it did not within the bound.
	Requests *int `json:"requests"`
	// Served is how many requests were answered on the connection.
	Served int `json:"served"`
	// Bound is the most requests the check sends.
	Bound int `json:"bound"`
}

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
	if run["http11_persistent"] {
		r.HTTP11Persistent = p.persistent(ctx, false).PersistResult
	}
	if run["http10_keep_alive"] {
		r.HTTP10KeepAlive = p.persistent(ctx, true)
	}
	if run["max_requests_per_connection"] {
		r.MaxRequests = p.maxRequests(ctx)
	}
	if run["idle_timeout_seconds"] {
		r.IdleTimeout = p.idle(ctx)
	}
	if run["pipelining"] {
		r.Pipelining = p.pipelining(ctx)
	}
	if run["framing"] || run["server"] {
		r.Framing, r.Server = p.framing(ctx) // one exchange for both
	}
	for _, l := range []struct {
		name string
		chk  *Check
	}{{"http11_persistent", &r.HTTP11Persistent.Check}, {"http10_keep_alive", &r.HTTP10KeepAlive.Check},
		{"max_requests_per_connection", &r.MaxRequests.Check}, {"idle_timeout_seconds", &r.IdleTimeout.Check},
		{"pipelining", &r.Pipelining.Check}, {"framing", &r.Framing.Check}, {"server", &r.Server.Check}} {
		if !run[l.name] {
			*l.chk = Check{Verdict: probe.VerdictSkipped, Evidence: probe.NotSelected}
		}
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
	dialer  *sockets.Dialer
	timeout time.Duration
	req11   []byte // HTTP/1.1, persistent
	req10   []byte // HTTP/1.0, Connection: keep-alive
}

func newProber(cfg ProbeConfig) (*prober, error) {
	if cfg.Timeout < 0 || cfg.IdleMax < 0 || cfg.MaxRequests < 0 || cfg.MaxRequestsTime < 0 {
		return nil, errors.New("httpprobe: negative probe bound")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultProbeTimeout
	}
	if cfg.IdleMax == 0 {
		cfg.IdleMax = DefaultIdleMax
	}
	if cfg.MaxRequests == 0 {
		cfg.MaxRequests = DefaultProbeMaxRequests
	}
	if cfg.MaxRequestsTime == 0 {
		cfg.MaxRequestsTime = DefaultProbeMaxRequestsTime
	}
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
	return &prober{cfg: cfg, dialer: d, timeout: cfg.Timeout,
		req11: []byte(h11), req10: []byte(h10)}, nil
}

// pconn is a probe connection with its own bounded read buffer.
type pconn struct {
	*probe.Conn
	buf  []byte
	r, w int
	read int64
}

// dial opens a fresh connection whose I/O is bounded by p.timeout from now.
func (p *prober) dial(ctx context.Context) (*pconn, error) {
	c, err := probe.Dial(ctx, p.dialer, p.timeout, time.Time{})
	if err != nil {
		return nil, err
	}
	return &pconn{Conn: c, buf: make([]byte, MaxHeadBytes+4<<10)}, nil
}

// fill reads once more into the buffer, making room first.
func (pc *pconn) fill() error {
	if pc.r == pc.w {
		pc.r, pc.w = 0, 0
	}
	if pc.w == len(pc.buf) {
		pc.w = copy(pc.buf, pc.buf[pc.r:pc.w])
		pc.r = 0
	}
	n, err := pc.Read(pc.buf[pc.w:])
	pc.w += n
	pc.read += int64(n)
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// unsolicited returns how many bytes came after the answer just read:
// those already buffered, or else those that come within wait (0: none
// waited for). Bytes nobody asked for would be read as the answer to the
// next request, so a check that sends one must look first.
func (pc *pconn) unsolicited(ctx context.Context, wait time.Duration) int {
	if n := pc.w - pc.r; n > 0 || wait <= 0 || !pc.CanWaitIdle() {
		return n
	}
	pc.Exchange(ctx, wait)
	if pc.fill() != nil {
		return 0
	}
	return pc.w - pc.r
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

// response reads one whole response (interim 1xx ones skipped).
func (pc *pconn) response() (presp, error) {
	var h Head
	var r presp
	for {
		for {
			n, err := ParseHead(pc.buf[pc.r:pc.w], &h)
			if err == nil {
				head := pc.buf[pc.r : pc.r+n]
				r = presp{minor: h.Minor, status: h.Status, keeps: h.KeepsConn(), connClose: h.ConnClose,
					connKeepAlive: h.ConnKeepAlive, keepAliveHeader: h.KeepAliveHeader,
					abSees: bytes.Contains(bytes.ToLower(head), keepAliveWord),
					kind:   h.Body(false)}
				if h.Server != nil {
					r.server, r.token = string(h.Server), string(h.ServerToken())
				}
				pc.r += n
				break
			}
			if err != ErrIncomplete {
				return r, err
			}
			if pc.w-pc.r >= MaxHeadBytes {
				return r, errHeadTooLarge
			}
			if err := pc.fill(); err != nil {
				return r, err
			}
		}
		if h.Status >= 200 || h.Status == 101 {
			break
		}
	}
	switch r.kind {
	case BodyLength:
		left := h.ContentLength
		for {
			k := min(left, int64(pc.w-pc.r))
			pc.r += int(k)
			left -= k
			r.body += k
			if left == 0 {
				break
			}
			if err := pc.fill(); err != nil {
				return r, bodyErr(err)
			}
		}
	case BodyChunked:
		var dec ChunkedDecoder
		for !dec.Done() {
			if pc.r == pc.w {
				if err := pc.fill(); err != nil {
					return r, bodyErr(err)
				}
			}
			n, data, err := dec.Step(pc.buf[pc.r:pc.w])
			if err != nil {
				return r, err
			}
			pc.r += n
			r.body += int64(len(data))
		}
	case BodyClose:
		for {
			r.body += int64(pc.w - pc.r)
			pc.r = pc.w
			if err := pc.fill(); err != nil {
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

// roundTrip sends req on pc and reads the response, within the timeout.
func (p *prober) roundTrip(ctx context.Context, pc *pconn, req []byte) (presp, error) {
	pc.Exchange(ctx, p.timeout)
	if _, err := pc.Write(req); err != nil {
		return presp{}, err
	}
	return pc.response()
}

// persistent sends two requests on one connection: HTTP/1.1 without a
// Connection header, or HTTP/1.0 with "Connection: keep-alive".
func (p *prober) persistent(ctx context.Context, http10 bool) (r HTTP10Result) {
	start := time.Now()
	defer func() { r.Seconds = probe.Since(start) }()
	req, what := p.req11, "HTTP/1.1"
	if http10 {
		req, what = p.req10, "HTTP/1.0 with Connection: keep-alive"
	}
	pc, err := p.dial(ctx)
	if err != nil {
		probe.DialFailed(&r.Check, err)
		return r
	}
	defer pc.Close()
	r1, err := p.roundTrip(ctx, pc, req)
	if err != nil {
		r.Verdict = probe.VerdictOf(err)
		r.Evidence = "request 1 (" + what + "): " + probe.DescribeErr(err, p.timeout, "the body")
		return r
	}
	r.Served = 1
	r.ConnectionClose = r1.connClose
	r.ResponseVersion = r1.version()
	r.ConnectionKeepAlive, r.KeepAliveHeader, r.ABSeesKeepAlive = r1.connKeepAlive, r1.keepAliveHeader, r1.abSees
	ev := "request 1 (" + what + "): " + r1.describe()
	if r1.kind == BodyClose {
		r.Verdict = VerdictIgnored
		r.Evidence = ev + "; the body ended with the close, so the connection cannot be kept"
		return r
	}
	if n := pc.unsolicited(ctx, probe.UnsolicitedWait); n > 0 {
		r.Verdict = VerdictUnsolicited
		r.Evidence = ev + fmt.Sprintf("; then, before request 2, the server sent %d bytes nobody asked for: not counted as an answer", n)
		return r
	}
	read := pc.read
	r2, err := p.roundTrip(ctx, pc, req)
	switch {
	case err == nil:
		r.Served = 2
		r.Verdict = VerdictHonored
		ev += "; request 2 answered on the same connection (" + r2.describe() + ")"
		if !r1.keeps {
			ev += ", although response 1 did not announce keep-alive"
		}
	case pc.read == read && probe.VerdictOf(err) == VerdictClosed:
		r.Verdict = VerdictIgnored
		ev += "; the server closed the connection after it (request 2: " + probe.DescribeErr(err, p.timeout, "the body") + ")"
	default:
		r.Verdict = probe.VerdictOf(err)
		ev += "; request 2 on the same connection: " + probe.DescribeErr(err, p.timeout, "the body")
	}
	r.Evidence = ev
	return r
}

// maxRequests sends HTTP/1.1 requests on one connection until the server
// closes it, the bound or the time budget.
func (p *prober) maxRequests(ctx context.Context) (r MaxRequestsResult) {
	start := time.Now()
	defer func() { r.Seconds = probe.Since(start) }()
	r.Bound = p.cfg.MaxRequests
	pc, err := p.dial(ctx)
	if err != nil {
		probe.DialFailed(&r.Check, err)
		return r
	}
	defer pc.Close()
	stop := start.Add(p.cfg.MaxRequestsTime)
	for r.Served < r.Bound {
		if time.Now().After(stop) {
			r.Verdict = VerdictNotReached
			r.Evidence = fmt.Sprintf("%d HTTP/1.1 requests answered on one connection; stopped after %v", r.Served, p.cfg.MaxRequestsTime)
			return r
		}
		read := pc.read
		resp, err := p.roundTrip(ctx, pc, p.req11)
		if err != nil {
			if r.Served > 0 && pc.read == read && probe.VerdictOf(err) == VerdictClosed {
				n := r.Served
				r.Requests = &n
				r.Verdict = VerdictMeasured
				r.Evidence = fmt.Sprintf("%d HTTP/1.1 requests answered, then the server closed the connection", n)
				return r
			}
			r.Verdict = probe.VerdictOf(err)
			r.Evidence = fmt.Sprintf("request %d on the kept connection: %s", r.Served+1, probe.DescribeErr(err, p.timeout, "the body"))
			return r
		}
		r.Served++
		if n := pc.unsolicited(ctx, 0); n > 0 {
			r.Verdict = VerdictUnsolicited
			r.Evidence = fmt.Sprintf("%d HTTP/1.1 requests answered; after answer %d the server sent %d bytes nobody asked for: not counted as an answer", r.Served, r.Served, n)
			return r
		}
		if resp.kind == BodyClose || resp.connClose {
			n := r.Served
			r.Requests = &n
			r.Verdict = VerdictMeasured
			r.Evidence = fmt.Sprintf("%d HTTP/1.1 requests answered; the last one ended the connection (%s)", n, resp.describe())
			return r
		}
	}
	r.Verdict = VerdictNotReached
	r.Evidence = fmt.Sprintf("%d HTTP/1.1 requests answered on one connection, still open", r.Served)
	return r
}

// idle sends one request, then waits, silent, for the server to close the
// kept connection, up to IdleMax.
func (p *prober) idle(ctx context.Context) (r IdleResult) {
	start := time.Now()
	defer func() { r.Seconds = probe.Since(start) }()
	r.MaxSeconds = p.cfg.IdleMax.Seconds()
	pc, err := p.dial(ctx)
	if err != nil {
		probe.DialFailed(&r.Check, err)
		return r
	}
	defer pc.Close()
	resp, err := p.roundTrip(ctx, pc, p.req11)
	if err != nil {
		r.Verdict = probe.VerdictOf(err)
		r.Evidence = "request (HTTP/1.1): " + probe.DescribeErr(err, p.timeout, "the body")
		return r
	}
	if resp.kind == BodyClose || resp.connClose {
		r.Verdict = VerdictIgnored
		r.Evidence = "request (HTTP/1.1): " + resp.describe() + "; the connection is not kept, so nothing to measure"
		return r
	}
	idleStart := time.Now()
	pc.Exchange(ctx, p.cfg.IdleMax)
	for pc.r == pc.w {
		err = pc.fill()
		if err != nil {
			break
		}
	}
	waited := time.Since(idleStart)
	switch v := probe.VerdictOf(err); {
	case err == nil:
		r.Verdict = VerdictError
		r.Evidence = fmt.Sprintf("after the response, the server sent %d bytes nobody asked for", pc.w-pc.r)
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
	return r
}

// pipelining sends two HTTP/1.1 requests in one write.
func (p *prober) pipelining(ctx context.Context) (r PipelineResult) {
	start := time.Now()
	defer func() { r.Seconds = probe.Since(start) }()
	pc, err := p.dial(ctx)
	if err != nil {
		probe.DialFailed(&r.Check, err)
		return r
	}
	defer pc.Close()
	pc.Exchange(ctx, p.timeout)
	sent := "sent two HTTP/1.1 requests in one write"
	if _, err := pc.Write(append(append([]byte(nil), p.req11...), p.req11...)); err != nil {
		r.Verdict, r.Evidence = probe.VerdictOf(err), sent+"; write: "+probe.DescribeErr(err, p.timeout, "the body")
		return r
	}
	r1, err := pc.response()
	if err != nil {
		r.Verdict, r.Evidence = probe.VerdictOf(err), sent+"; response 1: "+probe.DescribeErr(err, p.timeout, "the body")
		return r
	}
	r.Answered = 1
	ev := sent + "; response 1: " + r1.describe()
	r2, err := pc.response()
	if err != nil {
		r.Verdict = VerdictFirstOnly
		r.Evidence = ev + "; response 2: " + probe.DescribeErr(err, p.timeout, "the body")
		return r
	}
	r.Answered = 2
	if n := pc.unsolicited(ctx, probe.UnsolicitedWait); n > 0 {
		r.Verdict = VerdictUnsolicited
		r.Evidence = ev + "; response 2: " + r2.describe() + fmt.Sprintf("; then %d more bytes nobody asked for: more than the answers to two requests, so they cannot be matched to them", n)
		return r
	}
	r.Verdict = VerdictSupported
	r.Evidence = ev + "; response 2: " + r2.describe() + ", in order on the same connection"
	return r
}

// framing sends one HTTP/1.1 request and reports how the body is delimited
// and the Server header.
func (p *prober) framing(ctx context.Context) (f FramingResult, s ServerResult) {
	start := time.Now()
	defer func() { f.Seconds = probe.Since(start); s.Seconds = f.Seconds }()
	pc, err := p.dial(ctx)
	if err != nil {
		probe.DialFailed(&f.Check, err)
		s.Check = f.Check
		return f, s
	}
	defer pc.Close()
	resp, err := p.roundTrip(ctx, pc, p.req11)
	if err != nil {
		f.Verdict = probe.VerdictOf(err)
		f.Evidence = "request (HTTP/1.1): " + probe.DescribeErr(err, p.timeout, "the body")
		s.Check = f.Check
		return f, s
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
	return f, s
}
