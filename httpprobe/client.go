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
	"net"
	"os"
	"syscall"
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
	req       []byte // the whole request, encoded once
	reqHead   []byte // its head, for Verbose
	dialer    *sockets.Dialer
	timeout   time.Duration
	keepAlive bool
	isHead    bool // HEAD requests get no body back
	verbose   io.Writer
	late      error // a response that completed past its deadline
}

// NewFactory checks cfg, serializes its request once and returns a factory
// of clients that share it. Each client owns one connection and its own
// read buffer (about 68 KiB).
func NewFactory(cfg Config) (load.ClientFactory, error) {
	if cfg.Timeout < 0 {
		return nil, errors.New("httpprobe: negative timeout")
	}
	head, err := RequestHead(cfg)
	if err != nil {
		return nil, err
	}
	req, err := BuildRequest(cfg)
	if err != nil {
		return nil, err
	}
	f := &factory{
		req:       req,
		reqHead:   []byte(head),
		timeout:   cfg.Timeout,
		keepAlive: cfg.KeepAlive,
		isHead:    cfg.method() == "HEAD",
		verbose:   cfg.Verbose,
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
		return &client{f: f, ctx: ctx, dl: load.NewDeadline(f.timeout), buf: make([]byte, bufSize)}, nil
	}, nil
}

// client is one worker's connection and buffers. Used by one goroutine.
type client struct {
	f      *factory
	ctx    context.Context
	conn   sockets.Conn
	dl     load.Deadline
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
	r.Start = load.Now()
	deadline := load.Time(r.Start + int64(c.f.timeout))
	if c.f.verbose != nil {
		c.f.verbose.Write(c.f.reqHead)
	}
	reused := c.conn.Open()
	if reused {
		r.Connected = r.Start
		r.Upstream = c.conn.Upstream
	} else if !c.dial(r, deadline) {
		return
	}
	for {
		// The deadline bounds the whole request. Setting it would undo a
		// cancellation that ran before, hence the check after it.
		if err := c.dl.Arm(c.conn.Conn, r.Start+int64(c.f.timeout)); err != nil {
			c.fail(r, load.Exceptions, fmt.Errorf("set deadline: %w", err))
			return
		}
		if err := c.ctx.Err(); err != nil {
			c.fail(r, load.Timeout, err)
			return
		}
		n, err := c.conn.IO.Write(c.f.req)
		r.BytesWritten = int64(n)
		if err != nil {
			if reused && c.redial(r, deadline) {
				reused = false
				continue
			}
			if r.Class == load.OK {
				c.fail(r, errClass(err, load.Exceptions), sockets.DescribeError("write: ", err))
			}
			return
		}
		r.Written = load.Now()
		class, err := c.read(r)
		if err == nil {
			break
		}
		if reused && r.BytesRead == 0 && deadConn(err) {
			if c.redial(r, deadline) {
				reused = false
				continue
			}
			return
		}
		c.fail(r, class, err)
		return
	}
	r.Done = load.Now()
	if r.Done-r.Start > int64(c.f.timeout) {
		r.Class, r.Err = load.Timeout, c.f.late
	}
	if !r.KeepAlive {
		c.conn.CloseAfterPeer(c.buf)
	}
}

// Close closes the client's connection, if any, and unhooks it from the
// run's context: the worker is done.
func (c *client) Close() error { return c.conn.Release() }

func (c *client) dial(r *load.Result, deadline time.Time) bool {
	err := c.conn.Dial(c.ctx, c.f.dialer, deadline)
	r.Dialed = true
	r.Connected = load.Now()
	if err != nil {
		r.Upstream = sockets.FailedUpstream(err)
		// A dial that used up the request's deadline is a Timeout, as
		// in the fcgi client; any other dial failure is Connect, EAGAIN
		// of a full Unix backlog included (whose Errno says Timeout()).
		class := load.Connect
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
			class = load.Timeout
		}
		c.fail(r, class, sockets.DescribeError("connect: ", err))
		return false
	}
	c.dl.Forget()
	r.Upstream = c.conn.Upstream
	return true
}

// redial replaces a kept connection found dead by a new one.
func (c *client) redial(r *load.Result, deadline time.Time) bool {
	c.conn.Close()
	r.Reconnects++
	r.BytesWritten, r.BytesRead = 0, 0
	return c.dial(r, deadline)
}

func (c *client) fail(r *load.Result, class load.ErrClass, err error) {
	r.Class, r.Err = class, err
	r.KeepAlive = false
	r.Done = load.Now()
	c.conn.Close()
}

// fill reads once into c.buf[c.w:], counting the bytes. It returns an error
// only when no byte came.
func (c *client) fill(r *load.Result) error {
	n, err := c.conn.IO.Read(c.buf[c.w:])
	if n > 0 {
		if r.BytesRead == 0 {
			r.FirstByte = load.Now()
		}
		r.BytesRead += int64(n)
		c.w += n
		return nil // a sticky error comes back on the next Read
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// read reads one whole response, skipping interim 1xx ones, and sets
// r.Status, r.Server, r.BodyBytes and r.KeepAlive.
func (c *client) read(r *load.Result) (load.ErrClass, error) {
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
	avail := c.w - start
	switch h.Body(c.f.isHead) {
	case BodyNone:
		if avail > 0 {
			keep = false // bytes nobody asked for: do not trust the conn
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
		}
	case BodyClose:
		keep = false
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
	class := errClass(err, load.Receive)
	var msg string
	switch {
	case class == load.Timeout:
		msg = fmt.Sprintf("timeout reading the %s (%d bytes read)", part, got)
	case err == io.EOF && got == 0:
		msg = "receive: connection closed before any response byte"
	case err == io.EOF:
		msg = fmt.Sprintf("receive: connection closed in the %s (%d bytes read)", part, got)
	default:
		msg = fmt.Sprintf("receive: %s in the %s (%d bytes read)", sockets.Describe(err), part, got)
	}
	return class, &readError{msg: msg, err: err}
}

// readError is a read failure in a user's words, wrapping its cause.
type readError struct {
	msg string
	err error
}

func (e *readError) Error() string { return e.msg }
func (e *readError) Unwrap() error { return e.err }

// errClass returns Timeout for a deadline error (the request timeout, or a
// cancelled context) and other otherwise.
func errClass(err error, other load.ErrClass) load.ErrClass {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return load.Timeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return load.Timeout
	}
	return other
}

// deadConn reports an error that, before any byte of a response on a kept
// connection, means the server had closed it while idle.
func deadConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
