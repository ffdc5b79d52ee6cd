// Package httpprobe is backbench's HTTP/1.0 and HTTP/1.1 client side: a
// load.Client per worker that sends one request serialized once per run over
// one connection (TCP or Unix socket), with or without keep-alive, and reads
// the response from a fixed buffer of its own without allocating.
//
// What it supports: Content-Length, chunked and close-delimited bodies (RFC
// 9112 section 6.3), bodyless responses (HEAD, 1xx, 204, 304), interim 1xx
// responses skipped, HTTP/1.1 persistence (kept unless "Connection: close")
// and HTTP/1.0 persistence ("Connection: keep-alive"), and one silent redial
// when a kept connection turns out to have been closed by the server.
//
// TLS (https) is the Dialer's business: give Config a Dialer made with TLS.
//
// Its limits: no pipelining, no 101 protocol switch, no
// request bodies other than a fixed one, and a response head of at most
// MaxHeadBytes. Bodies are counted and discarded. Response heads with
// folded header lines are accepted unless a framing header is folded.
//
// ParseHead and ChunkedDecoder are usable on their own, for instance by the
// probe command.
package httpprobe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/sockets"
)

// DefaultTimeout bounds one request (dial to last byte) when Config.Timeout
// is 0: 30 seconds, ab's default.
const DefaultTimeout = 30 * time.Second

// Config describes the request a client sends and how.
type Config struct {
	// Target is where to connect and what to ask for; its scheme must be
	// http or https (https needs a Dialer with TLS).
	Target sockets.Target
	// Dialer, when not nil, replaces the target's own address: a cluster
	// of upstreams and/or TLS (see sockets.NewClusterDialer).
	Dialer *sockets.Dialer
	// Method is the request method; "" means GET.
	Method string
	// Headers are extra request headers, name and value, in order (from
	// -H). A header named like a default one (Host, User-Agent, Accept,
	// Connection, Content-Type, Content-Length) replaces it in place.
	Headers [][2]string
	// Body is the request body; nil sends none. A non-nil body, even
	// empty, sends Content-Length and Content-Type.
	Body []byte
	// ContentType is the Content-Type of the body; "" means text/plain (as
	// ab does).
	ContentType string
	// KeepAlive asks for persistent connections (ab's -k). Without it the
	// client closes the connection after each response.
	KeepAlive bool
	// HTTP10 sends HTTP/1.0 requests, as ab does; the default is HTTP/1.1.
	HTTP10 bool
	// Timeout bounds one request, dial to last byte; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Verbose, when not nil, receives the request head once per request and
	// every response head, each in one Write call. The caller makes it safe
	// for concurrent use.
	Verbose io.Writer
	// Mix, when not empty, are the requests of a mix (--targets), each a
	// whole Config of its own (its Target, method, headers and body; its
	// KeepAlive, HTTP10 and Timeout those of the run): every one is
	// serialized once, and a client sends Mix[r.Target] for each
	// load.Result r. The Config's own request is then not sent; its
	// Target, Dialer, Timeout, KeepAlive and Verbose still apply.
	Mix []Config
}

func (cfg *Config) method() string {
	if cfg.Method == "" {
		return "GET"
	}
	return cfg.Method
}

// RequestHead returns the request head that a client made from cfg sends:
// the request line, the header lines and the blank line, without the body.
func RequestHead(cfg Config) (string, error) {
	if cfg.Target.Scheme != sockets.SchemeHTTP && cfg.Target.Scheme != sockets.SchemeHTTPS {
		return "", fmt.Errorf("httpprobe: target scheme %q is not http or https", cfg.Target.Scheme)
	}
	method := cfg.method()
	if !isToken(method) {
		return "", fmt.Errorf("httpprobe: bad method %q", method)
	}
	uri := cfg.Target.RequestURI()
	if uri == "" || strings.ContainsAny(uri, " \t\r\n") {
		return "", fmt.Errorf("httpprobe: bad request URI %q", uri)
	}
	for _, h := range cfg.Headers {
		if !isToken(h[0]) {
			return "", fmt.Errorf("httpprobe: bad header name %q", h[0])
		}
		if strings.ContainsAny(h[1], "\r\n\x00") {
			return "", fmt.Errorf("httpprobe: header %s: value has a CR, LF or NUL byte", h[0])
		}
	}

	var b strings.Builder
	b.WriteString(method)
	b.WriteByte(' ')
	b.WriteString(uri)
	if cfg.HTTP10 {
		b.WriteString(" HTTP/1.0\r\n")
	} else {
		b.WriteString(" HTTP/1.1\r\n")
	}
	used := make([]bool, len(cfg.Headers))
	// header writes the default name: value, or in its place every user
	// header of that name.
	header := func(name, value string) {
		replaced := false
		for i, h := range cfg.Headers {
			if strings.EqualFold(h[0], name) {
				writeHeader(&b, h[0], h[1])
				used[i], replaced = true, true
			}
		}
		if !replaced && value != "" {
			writeHeader(&b, name, value)
		}
	}
	header("Host", cfg.Target.HostHeader())
	header("User-Agent", "backbench")
	header("Accept", "*/*")
	header("Connection", defaultConnection(cfg))
	if cfg.Body != nil {
		ct := cfg.ContentType
		if ct == "" {
			ct = "text/plain"
		}
		header("Content-Type", ct)
		header("Content-Length", strconv.Itoa(len(cfg.Body)))
	}
	for i, h := range cfg.Headers {
		if !used[i] {
			writeHeader(&b, h[0], h[1])
		}
	}
	b.WriteString("\r\n")
	return b.String(), nil
}

// defaultConnection is the Connection header sent unless -H replaces it:
// keep-alive for HTTP/1.0 with keep-alive, close for HTTP/1.1 without, none
// otherwise (each version's default then says it).
func defaultConnection(cfg Config) string {
	switch {
	case cfg.HTTP10 && cfg.KeepAlive:
		return "keep-alive"
	case !cfg.HTTP10 && !cfg.KeepAlive:
		return "close"
	}
	return ""
}

// ConnectionHeader returns the value of the Connection header that a client
// made from cfg sends ("" when it sends none): the default of RequestHead,
// or the values of the -H headers that replace it, joined by ", ".
func ConnectionHeader(cfg Config) string {
	var vals []string
	for _, h := range cfg.Headers {
		if strings.EqualFold(h[0], "Connection") {
			vals = append(vals, h[1])
		}
	}
	if vals == nil {
		return defaultConnection(cfg)
	}
	return strings.Join(vals, ", ")
}

// BuildRequest returns the whole request a client made from cfg sends: the
// head from RequestHead, then the body.
func BuildRequest(cfg Config) ([]byte, error) {
	head, err := RequestHead(cfg)
	if err != nil {
		return nil, err
	}
	req := make([]byte, 0, len(head)+len(cfg.Body))
	req = append(req, head...)
	return append(req, cfg.Body...), nil
}

func writeHeader(b *strings.Builder, name, value string) {
	b.WriteString(name)
	b.WriteString(": ")
	b.WriteString(value)
	b.WriteString("\r\n")
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}

// bufSize is each client's read buffer, in bytes: room for the largest head
// and some body after it.
const bufSize = MaxHeadBytes + 4<<10

// maxServer bounds the Server token kept for a Result, in bytes.
const maxServer = 256

// factory holds what all the clients of one run share, read-only.
type factory struct {
	reqs      requests // the requests, encoded once: one, or a mix's
	dialer    *sockets.Dialer
	timeout   time.Duration
	keepAlive bool
	verbose   io.Writer
	late      error // a response that completed past its deadline
}

// requests are a run's requests as they go on the wire, each encoded once
// and all back to back in one buffer: the one request of the run, or every
// request of a mix. A client picks a mix's request by its index into a
// small array of spans, and the bytes it writes all come from one
// allocation. With 1,000 requests allocated one by one (each beside a copy
// of its head for Verbose, which is now a prefix of the request), picking
// one and the kernel's copy of its bytes cost about twice what the single
// request's did; BenchmarkClientMix measures what is left.
type requests struct {
	buf []byte // every request, back to back
	at  []span // request i is buf[at[i].start:at[i].end]
}

// span is one request's place in requests.buf, and what else a client
// must know of it per request: 16 bytes, four to a cache line.
type span struct {
	start, head, end uint32 // the request is buf[start:end], its head buf[start:head]
	isHead           bool   // a HEAD request: no body comes back
}

// maxRequests bounds the bytes of a run's requests together (the spans'
// offsets are 32-bit): 4 GiB - 1.
const maxRequests = 1<<32 - 1

// encodeRequests serializes the requests of cfgs once, into one buffer;
// mix says that cfgs are a mix's, for the errors.
func encodeRequests(cfgs []Config, mix bool) (requests, error) {
	heads := make([]string, len(cfgs))
	var total int64
	for i, cfg := range cfgs {
		if mix && len(cfg.Mix) > 0 {
			return requests{}, errors.New("httpprobe: a mix's request has a mix of its own")
		}
		head, err := RequestHead(cfg)
		if err != nil && mix {
			return requests{}, fmt.Errorf("httpprobe: request %d of the mix: %w", i+1, err)
		}
		if err != nil {
			return requests{}, err
		}
		heads[i] = head
		if total += int64(len(head) + len(cfg.Body)); total > maxRequests {
			return requests{}, fmt.Errorf("httpprobe: the requests add up to more than %d bytes", int64(maxRequests))
		}
	}
	q := requests{buf: make([]byte, 0, total), at: make([]span, len(cfgs))}
	for i, cfg := range cfgs {
		start := len(q.buf)
		q.buf = append(q.buf, heads[i]...)
		head := len(q.buf)
		q.buf = append(q.buf, cfg.Body...)
		q.at[i] = span{start: uint32(start), head: uint32(head), end: uint32(len(q.buf)), isHead: cfg.method() == "HEAD"}
	}
	return q, nil
}

// use makes request i of q the one that l sends next, and returns whether
// it is a HEAD request.
func (q *requests) use(l *sockets.Loop, i int) (isHead bool) {
	s := q.at[i]
	l.Request = q.buf[s.start:s.end:s.end]
	l.VerboseRequest = q.buf[s.start:s.head:s.head]
	return s.isHead
}

// NewFactory checks cfg, serializes its request once and returns a factory
// of clients that share it. Each client owns one connection and its own
// read buffer (about 68 KiB), taken at its first request.
func NewFactory(cfg Config) (load.ClientFactory, error) {
	if cfg.Timeout < 0 {
		return nil, errors.New("httpprobe: negative timeout")
	}
	f := &factory{
		timeout:   cfg.Timeout,
		keepAlive: cfg.KeepAlive,
		verbose:   cfg.Verbose,
	}
	one := []Config{cfg}
	if len(cfg.Mix) > 0 {
		one = cfg.Mix
	}
	var err error
	if f.reqs, err = encodeRequests(one, len(cfg.Mix) > 0); err != nil {
		return nil, err
	}
	if f.timeout == 0 {
		f.timeout = DefaultTimeout
	}
	f.late = fmt.Errorf("httpprobe: response completed after the timeout of %v", f.timeout)
	f.dialer = cfg.Dialer
	if f.dialer == nil {
		if cfg.Target.Scheme == sockets.SchemeHTTPS {
			return nil, errors.New("httpprobe: https needs a Dialer with TLS (sockets.NewClusterDialer)")
		}
		f.dialer = sockets.NewDialer(cfg.Target, f.timeout)
	}
	return func(ctx context.Context) (load.Client, error) {
		c := &client{f: f, mix: len(f.reqs.at) > 1} // buf: at the first request (see Do)
		c.Loop = sockets.Loop{Ctx: ctx, Dialer: f.dialer, Timeout: f.timeout,
			Verbose: f.verbose, Late: f.late, Buf: c.buf}
		c.isHead = f.reqs.use(&c.Loop, 0)
		c.Init()
		return c, nil
	}, nil
}

// client is one worker's connection and buffers: the shared exchange loop
// and the HTTP response parser's state. Used by one goroutine.
type client struct {
	sockets.Loop
	f      *factory
	mix    bool // a mix: Do sends the request of each Result's Target
	isHead bool // the request being sent is a HEAD
	buf    []byte
	w      int // end of the valid bytes in buf
	dec    ChunkedDecoder
	head   Head
	server [maxServer]byte
	// onBody, when set (by tests), sees every run of body bytes; the
	// bytes are valid only during the call.
	onBody func([]byte)
}

// Do sends the request and reads the whole response into r. See
// load.Client.
func (c *client) Do(r *load.Result) {
	if c.buf == nil {
		// The buffer is taken at the worker's first request, not when
		// the run makes its clients: a run holds buffers only for the
		// workers that get to send.
		c.buf = make([]byte, bufSize)
		c.Loop.Buf = c.buf
	}
	if c.mix {
		// The runner chose the request by its index.
		c.isHead = c.f.reqs.use(&c.Loop, r.Target)
	}
	c.Loop.Do(r, c)
}

// fill reads once into c.buf[c.w:], counting the bytes. It returns an error
// only when no byte came.
func (c *client) fill(r *load.Result) error {
	n, err := c.Read(r, c.buf[c.w:])
	c.w += n
	return err
}

// ReadResponse reads one whole response, skipping interim 1xx ones, and
// sets r.Status, r.Server, r.BodyBytes and r.KeepAlive; see
// sockets.ResponseReader.
func (c *client) ReadResponse(r *load.Result) (load.ErrClass, error) {
	h := &c.head
	c.w = 0
	start := 0 // start of the current head in c.buf
	for {
		scan, end := 0, -1
		for {
			end, scan = findHeadEnd(c.buf[start:c.w], scan)
			if end >= 0 {
				break
			}
			if !maybeHTTP(c.buf[start:c.w]) {
				// Do not wait for the end of a head that cannot be
				// one: garbage is malformed, whatever follows it.
				return load.Protocol, errNotHTTP
			}
			if c.w-start > MaxHeadBytes {
				return load.Protocol, errHeadTooLarge
			}
			if c.w == len(c.buf) { // only after an interim response
				c.w = copy(c.buf, c.buf[start:c.w])
				start = 0
			}
			if err := c.fill(r); err != nil {
				return readFailure(err, r.BytesRead, "response head")
			}
		}
		if end > MaxHeadBytes {
			return load.Protocol, errHeadTooLarge
		}
		hb := c.buf[start : start+end]
		if c.f.verbose != nil {
			c.f.verbose.Write(hb)
		}
		if err := parseHead(hb, h); err != nil {
			return load.Protocol, err
		}
		start += end
		if h.Status >= 200 {
			break
		}
		if h.Status == 101 {
			return load.Protocol, errors.New("httpprobe: 101 Switching Protocols is not supported")
		}
	}
	r.Status = h.Status
	if h.Server != nil {
		r.Server = c.server[:copy(c.server[:], h.ServerToken())]
	}
	keep := c.f.keepAlive && h.KeepsConn()
	// Wait for the server's close (sockets.Loop.PeerCloses) only when
	// the response said it would close: Connection: close, HTTP/1.0
	// without keep-alive, or a body that runs to the close.
	c.PeerCloses = !h.KeepsConn()
	avail := c.w - start
	switch h.Body(c.isHead) {
	case BodyNone:
		if avail > 0 {
			keep = false // bytes nobody asked for: do not trust the conn
			r.Unsolicited = int64(avail)
		}
	case BodyLength:
		left := h.ContentLength
		for int64(avail) < left {
			c.body(c.buf[c.w-avail : c.w])
			r.BodyBytes += int64(avail)
			left -= int64(avail)
			c.w = 0
			if err := c.fill(r); err != nil {
				return readFailure(err, r.BytesRead, fmt.Sprintf("body (%d of %d bytes)", h.ContentLength-left, h.ContentLength))
			}
			avail = c.w
		}
		c.body(c.buf[c.w-avail : c.w-avail+int(left)])
		r.BodyBytes += left
		if int64(avail) > left {
			keep = false
			r.Unsolicited = int64(avail) - left
		}
	case BodyChunked:
		c.dec.Reset()
		p := c.buf[start:c.w]
		for {
			for len(p) > 0 && !c.dec.Done() {
				n, data, err := c.dec.Step(p)
				if err != nil {
					return load.Protocol, err
				}
				c.body(data)
				r.BodyBytes += int64(len(data))
				p = p[n:]
			}
			if c.dec.Done() {
				break
			}
			c.w = 0
			if err := c.fill(r); err != nil {
				return readFailure(err, r.BytesRead, "chunked body")
			}
			p = c.buf[:c.w]
		}
		if len(p) > 0 {
			keep = false
			r.Unsolicited = int64(len(p))
		}
	case BodyClose:
		keep = false
		c.PeerCloses = true
		c.body(c.buf[start:c.w])
		r.BodyBytes += int64(avail)
		for {
			c.w = 0
			err := c.fill(r)
			if err == io.EOF {
				break
			}
			if err != nil {
				return readFailure(err, r.BytesRead, "close-delimited body")
			}
			c.body(c.buf[:c.w])
			r.BodyBytes += int64(c.w)
		}
	}
	r.KeepAlive = keep
	return load.OK, nil
}

// errNotHTTP is a response whose first bytes are not "HTTP/".
var errNotHTTP = errors.New("httpprobe: not an HTTP response (it does not start with HTTP/)")

// maybeHTTP reports whether b may be the start of a response head: its
// first bytes are those of "HTTP/".
func maybeHTTP(b []byte) bool {
	const prefix = "HTTP/"
	n := min(len(b), len(prefix))
	return string(b[:n]) == prefix[:n]
}

func (c *client) body(b []byte) {
	if c.onBody != nil && len(b) > 0 {
		c.onBody(b)
	}
}

// readFailure classifies a read error met while reading part of a response.
func readFailure(err error, got int64, part string) (load.ErrClass, error) {
	var msg string
	switch {
	case sockets.IsTimeout(err):
		msg = fmt.Sprintf("timeout reading the %s (%d bytes read)", part, got)
	case err == io.EOF && got == 0:
		msg = "receive: connection closed before any response byte"
	case err == io.EOF:
		msg = fmt.Sprintf("receive: connection closed in the %s (%d bytes read)", part, got)
	default:
		msg = fmt.Sprintf("receive: %s in the %s (%d bytes read)", sockets.Describe(err), part, got)
	}
	return sockets.IOError(load.Receive, err, msg)
}
