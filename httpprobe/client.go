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
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/sockets"
)

// bufSize is each client's read buffer, in bytes: room for the largest head
// and some body after it.
const bufSize = MaxHeadBytes + 4<<10

// maxServer bounds the Server token kept for a Result, in bytes.
const maxServer = 256

// factory holds what all the clients of one run share, read-only.
type factory struct {
	reqs      []encoded // the requests, encoded once: one, or a mix's
	dialer    *sockets.Dialer
	timeout   time.Duration
	keepAlive bool
	verbose   io.Writer
	late      error // a response that completed past its deadline
}

// encoded is one request as it goes on the wire.
type encoded struct {
	req     []byte // the whole request
	reqHead []byte // its head, for Verbose
	isHead  bool   // HEAD requests get no body back
}

// encode serializes the request of cfg once.
func encode(cfg Config) (encoded, error) {
	head, err := RequestHead(cfg)
	if err != nil {
		return encoded{}, err
	}
	req, err := BuildRequest(cfg)
	if err != nil {
		return encoded{}, err
	}
	return encoded{req: req, reqHead: []byte(head), isHead: cfg.method() == "HEAD"}, nil
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
	if len(cfg.Mix) == 0 {
		e, err := encode(cfg)
		if err != nil {
			return nil, err
		}
		f.reqs = []encoded{e}
	}
	for i, m := range cfg.Mix {
		if len(m.Mix) > 0 {
			return nil, errors.New("httpprobe: a mix's request has a mix of its own")
		}
		e, err := encode(m)
		if err != nil {
			return nil, fmt.Errorf("httpprobe: request %d of the mix: %w", i+1, err)
		}
		f.reqs = append(f.reqs, e)
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
		c := &client{f: f, isHead: f.reqs[0].isHead} // buf: at the first request (see Do)
		c.Loop = sockets.Loop{Ctx: ctx, Dialer: f.dialer, Timeout: f.timeout, Request: f.reqs[0].req,
			Verbose: f.verbose, VerboseRequest: f.reqs[0].reqHead, Late: f.late, Buf: c.buf}
		c.Init()
		return c, nil
	}, nil
}

// client is one worker's connection and buffers: the shared exchange loop
// and the HTTP response parser's state. Used by one goroutine.
type client struct {
	sockets.Loop
	f      *factory
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
	if len(c.f.reqs) > 1 {
		// A mix: the runner chose the request by its index.
		e := &c.f.reqs[r.Target]
		c.Loop.Request, c.Loop.VerboseRequest, c.isHead = e.req, e.reqHead, e.isHead
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
