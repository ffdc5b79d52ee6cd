package sockets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/backbench/backbench/internal/load"
)

// Conn is the connection of one load client (a worker): the socket, the
// raw reader and writer over it, the index of its upstream, the hook that
// interrupts its I/O when the run's context ends, and whether its server
// closes within LingerGrace. The zero Conn holds no connection; a Conn is
// used by one goroutine.
type Conn struct {
	// Conn is the connection; nil when none is open.
	net.Conn
	// IO reads and writes Conn.
	IO RawIO
	// Upstream is the index of Conn's address in a cluster dialer.
	Upstream int

	hook     *cancelHook // kept from dial to dial until Release
	noLinger bool        // the server once let LingerGrace pass
	ring     *RingSlot   // the ring slot the Conn is bound to; nil: none
}

// cancelHook interrupts the I/O of a Conn's open connection when the
// context of its dials ends, by setting a deadline in the past. It is
// registered with the context once and serves every later connection: a
// context.AfterFunc per dial would allocate and take the lock of the run's
// context, which all workers share, on every connect.
type cancelHook struct {
	done <-chan struct{} // the Done channel of the context it watches
	stop func() bool     // unregisters it from the context
	mu   sync.Mutex      // orders fire against watch, so no closed conn is touched
	conn net.Conn        // the open connection; nil between connections
	over bool            // the context has ended
}

// past is the deadline that ends any pending read or write at once.
var past = time.Unix(1, 0)

func (h *cancelHook) fire() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.over = true
	if h.conn != nil {
		h.conn.SetDeadline(past)
	}
}

// watch makes conn (nil: none) the connection to interrupt; a context that
// has already ended interrupts it at once.
func (h *cancelHook) watch(conn net.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conn = conn
	if h.over && conn != nil {
		conn.SetDeadline(past)
	}
}

// Open reports whether a connection is open.
func (c *Conn) Open() bool { return c.Conn != nil }

// Dial opens a connection with d within deadline. From then on, the end of
// ctx sets a deadline in the past on it, which ends any read or write. A
// Conn bound to a ring slot (UseRing) connects, and later reads, writes and
// closes, through the ring when d allows (one address, no TLS).
func (c *Conn) Dial(ctx context.Context, d *Dialer, deadline time.Time) error {
	if done := ctx.Done(); c.hook == nil || c.hook.done != done {
		c.unhook()
		h := &cancelHook{done: done}
		h.stop = context.AfterFunc(ctx, h.fire)
		c.hook = h
	}
	var conn net.Conn
	var err error
	if c.ring != nil && d.ringable() {
		// The hook watches the connect too: a cancelled run ends it.
		c.ring.conn.SetDeadline(deadline)
		c.hook.watch(&c.ring.conn)
		conn, err = d.dialRing(ctx, deadline, c.ring)
	} else {
		conn, err = d.DialDeadline(ctx, deadline)
	}
	if err != nil {
		c.hook.watch(nil)
		return err
	}
	c.Conn = conn
	c.IO.Reset(conn)
	c.Upstream = UpstreamIndex(conn)
	c.hook.watch(conn)
	return nil
}

// UseRing binds c to slot s of a ring driver (RunOnRings), whose task is
// the only user of c from then on (nil: unbound). Takes effect at the next
// Dial.
func (c *Conn) UseRing(s *RingSlot) { c.ring = s }

// Close closes the connection, if one is open. The cancellation hook stays
// for the next Dial; Release removes it too.
func (c *Conn) Close() error {
	if c.Conn == nil {
		return nil
	}
	c.hook.watch(nil)
	err := c.Conn.Close()
	c.forget()
	return err
}

// Release closes the connection, if one is open, and unregisters the
// cancellation hook from the context: the end of the worker.
func (c *Conn) Release() error {
	err := c.Close()
	c.unhook()
	return err
}

func (c *Conn) unhook() {
	if c.hook != nil {
		c.hook.stop()
		c.hook = nil
	}
}

// CloseAfterPeer closes a connection that will not be reused after the
// server's own close, when that comes within LingerGrace (see
// RawIO.CloseAfterPeer why). A server that once let the grace pass is not
// waited for again. It reports whether the server's close was seen (the
// time it came is then just before the return).
func (c *Conn) CloseAfterPeer(buf []byte) bool {
	if c.noLinger || c.Conn == nil {
		c.Close()
		return false
	}
	c.hook.watch(nil) // the wait is bounded by LingerGrace
	closed := c.IO.CloseAfterPeer(buf)
	if !closed {
		c.noLinger = true
	}
	c.forget()
	return closed
}

func (c *Conn) forget() {
	c.Conn = nil
	c.IO.Reset(nil)
}

// ResponseReader reads one response from the loop's connection into r
// (status, body bytes, KeepAlive, Server), counting what it reads with
// Loop.Read. On failure it returns the class and an error in the user's
// words that wraps the I/O error met, if any (the loop tests it for a dead
// kept connection). It may close the connection itself when it must not be
// reused.
type ResponseReader interface {
	ReadResponse(r *load.Result) (load.ErrClass, error)
}

// Loop is one worker's connection and the settings of its exchanges: the
// request loop that the FastCGI and HTTP load clients share. It dials (or
// reuses a kept connection), writes the pre-encoded request, reads the
// response with the protocol's parser (a ResponseReader), redials once a
// kept connection that the server closed while idle, classifies failures,
// and closes or lingers after the response. The protocol's encoding (done
// once) and its response parser are the only differences, so that every
// load.Result field means the same thing for both protocols:
//
//   - Dialed is true only when a connection was established for the
//     request; Connected is then when, and equals Start otherwise (a
//     refused dial leaves Dialed false: --raw's connect_ms is 0 for it).
//   - BytesWritten and BytesRead count the bytes of the attempt that
//     answered: a redial of a dead kept connection starts them again.
//   - Reconnects counts those redials (at most one per request).
//   - Written is when the request's last byte was written, FirstByte when
//     the first read that returned bytes of the response returned (ab's
//     Waiting is FirstByte − Written), and Done the response's last byte
//     or, on a connection the server closes (PeerCloses), the server's
//     close when it comes within LingerGrace, as ab's done is.
//
// Limits: one request at a time per connection (no pipelining); a dead kept
// connection is redialed once, and only when not a byte of the response
// came. A Loop is used by one goroutine.
type Loop struct {
	// Conn is the connection (none open between connections).
	Conn Conn
	// Ctx ends every dial, read and write when cancelled.
	Ctx context.Context
	// Dialer makes the connections.
	Dialer *Dialer
	// Timeout bounds a whole request, from dial to last byte.
	Timeout time.Duration
	// Request is the encoded request, written whole for every request.
	Request []byte
	// Verbose, when not nil, receives VerboseRequest before every request.
	Verbose        io.Writer
	VerboseRequest []byte
	// Prefix starts the messages of write and cancel failures ("fcgi: ").
	Prefix string
	// Late is the error of a response that completed past the timeout.
	Late error
	// Buf is the read buffer, also used while lingering after a close.
	Buf []byte
	// PeerCloses, set by the ResponseReader for each response, says that the
	// server closes the connection after it: a connection not kept is
	// then closed after the server's close (TIME_WAIT stays on its side);
	// otherwise it is closed at once, for waiting would hold one of the
	// server's workers.
	PeerCloses bool

	dl       load.Deadline
	canceled error
}

// Init prepares the loop for its first request, once its fields are set.
func (l *Loop) Init() {
	l.dl = load.NewDeadline(l.Timeout)
	l.canceled = errors.New(l.Prefix + "canceled")
	if l.Late == nil {
		l.Late = fmt.Errorf("%sresponse completed after the timeout of %v", l.Prefix, l.Timeout)
	}
}

// Do sends the request and reads the response with p, filling r; see
// load.Client.
func (l *Loop) Do(r *load.Result, p ResponseReader) {
	r.Start = load.Now()
	deadline := load.Time(r.Start + int64(l.Timeout))
	if l.Verbose != nil {
		l.Verbose.Write(l.VerboseRequest)
	}
	if l.Ctx.Err() != nil {
		l.Fail(r, load.Timeout, l.canceled)
		return
	}
	reused := l.Conn.Open()
	if reused {
		r.Connected = r.Start
		r.Upstream = l.Conn.Upstream
	} else if !l.dial(r, deadline) {
		return
	}
	for attempt := 0; ; attempt++ {
		retryable := reused && attempt == 0
		// The deadline bounds the whole request. Setting it would undo a
		// cancellation that ran before, hence the check after it.
		if err := l.dl.Arm(l.Conn.Conn, r.Start+int64(l.Timeout)); err != nil {
			l.Fail(r, load.Exceptions, fmt.Errorf("%sset deadline: %w", l.Prefix, err))
			return
		}
		if l.Ctx.Err() != nil {
			l.Fail(r, load.Timeout, l.canceled)
			return
		}
		n, err := l.Conn.IO.Write(l.Request)
		r.BytesWritten = int64(n)
		if err != nil {
			if retryable && !isTimeout(err) && l.Ctx.Err() == nil {
				if !l.redial(r, deadline) {
					return
				}
				continue
			}
			l.failIO(r, load.Exceptions, "write", err)
			return
		}
		r.Written = load.Now()
		class, err := p.ReadResponse(r)
		if err != nil {
			if retryable && r.BytesRead == 0 && deadConn(err) && l.Ctx.Err() == nil {
				if !l.redial(r, deadline) {
					return
				}
				continue
			}
			if l.Ctx.Err() != nil {
				class, err = load.Timeout, l.canceled
			}
			l.Fail(r, class, err)
			return
		}
		break
	}
	r.Done = load.Now()
	// The timeout bounds the response (to its last byte), not the wait
	// for the server's close below, which LingerGrace bounds.
	if r.Done-r.Start > int64(l.Timeout) {
		r.Class, r.Err = load.Timeout, l.Late
	}
	switch {
	case r.KeepAlive:
	case l.PeerCloses:
		// ab's "done" on a connection not kept is the server's close
		// (REFERENCE §1): its Processing counts a server that closes late
		// (an event loop's next tick), its Waiting (to the first byte)
		// does not. When the close does not come within the grace, the
		// response's last byte stays the end.
		if l.Conn.CloseAfterPeer(l.Buf) {
			r.Done = load.Now()
		}
	default:
		l.Conn.Close()
	}
}

// Read reads once into b from the connection, counting the bytes in r and
// timing the first one. It returns an error only when no byte came.
func (l *Loop) Read(r *load.Result, b []byte) (int, error) {
	n, err := l.Conn.IO.Read(b)
	if n > 0 {
		if r.BytesRead == 0 {
			r.FirstByte = load.Now()
		}
		r.BytesRead += int64(n)
		return n, nil // a sticky error comes back on the next Read
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return 0, err
}

// UseRing makes the loop's connections go through slot s of a ring driver,
// whose task runs the loop from then on (see RunOnRings).
func (l *Loop) UseRing(s *RingSlot) { l.Conn.UseRing(s) }

// Close closes the worker's connection, if any, and unhooks it from the
// run's context: the worker is done.
func (l *Loop) Close() error { return l.Conn.Release() }

func (l *Loop) dial(r *load.Result, deadline time.Time) bool {
	if err := l.Conn.Dial(l.Ctx, l.Dialer, deadline); err != nil {
		r.Upstream = FailedUpstream(err)
		switch {
		case l.Ctx.Err() != nil:
			l.Fail(r, load.Timeout, l.canceled)
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
			// Not isTimeout: the EAGAIN of a full Unix backlog says
			// Timeout() too, and is a Connect failure.
			l.Fail(r, load.Timeout, &ConnectError{Err: err})
		default:
			l.Fail(r, load.Connect, &ConnectError{Err: err})
		}
		return false
	}
	r.Dialed = true
	r.Connected = load.Now()
	l.dl.Forget()
	r.Upstream = l.Conn.Upstream
	return true
}

// redial replaces a kept connection found dead; the bytes of the dead
// attempt are not the request's.
func (l *Loop) redial(r *load.Result, deadline time.Time) bool {
	l.Conn.Close()
	r.Reconnects++
	r.BytesWritten, r.BytesRead, r.FirstByte = 0, 0, 0
	return l.dial(r, deadline)
}

// Fail ends the request with a failure and drops the connection.
func (l *Loop) Fail(r *load.Result, class load.ErrClass, err error) {
	r.Class, r.Err, r.Done = class, err, load.Now()
	r.KeepAlive = false
	l.Conn.Close()
}

// failIO fails the request with an I/O error of the named operation.
func (l *Loop) failIO(r *load.Result, class load.ErrClass, op string, err error) {
	if l.Ctx.Err() != nil {
		l.Fail(r, load.Timeout, l.canceled)
		return
	}
	class, err = l.IOFailure(class, op, err)
	l.Fail(r, class, err)
}

// IOFailure classifies and words an I/O error of the named operation
// ("read"): Timeout for a deadline, otherwise class; the error wraps err.
func (l *Loop) IOFailure(class load.ErrClass, op string, err error) (load.ErrClass, error) {
	if isTimeout(err) {
		return load.Timeout, &wrapped{fmt.Sprintf("%s%s: timeout after %v", l.Prefix, op, l.Timeout), err}
	}
	return class, DescribeError(l.Prefix+op+": ", err)
}

// IOError returns the class and worded error of a failed read of part of a
// response: Timeout for a deadline, otherwise class; the error wraps err.
func IOError(class load.ErrClass, err error, msg string) (load.ErrClass, error) {
	if isTimeout(err) {
		class = load.Timeout
	}
	return class, &wrapped{msg, err}
}

// wrapped is an error in the user's words, wrapping its cause.
type wrapped struct {
	msg string
	err error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.err }

// IsTimeout reports a deadline error (the request timeout, or the past
// deadline of a cancelled run).
func IsTimeout(err error) bool { return isTimeout(err) }

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// deadConn reports an error that, before any byte of a response on a kept
// connection, means the server had closed it while idle.
func deadConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// RawIO reads and writes one connection with raw system calls on its
// socket, through syscall.RawConn: the network poller still waits for
// readiness and keeps the deadlines, but the read(2) and write(2) calls
// themselves skip the runtime's system call bookkeeping (entersyscall and
// exitsyscall, which wake the runtime's monitor thread after every idle
// spell). On a load loop that waits on a slow backend most of the time,
// that bookkeeping is a fifth of the client's CPU. The calls cannot block:
// the poller's sockets are non-blocking.
//
// A connection that exposes no raw socket (TLS) is read and written through
// its own methods. The zero RawIO is ready for Reset; it is used by one
// goroutine and allocates nothing per call.
type RawIO struct {
	conn net.Conn
	rc   syscall.RawConn
	ring *ringConn // conn, when it goes through a ring

	// State of the call in progress, for the bound functions below.
	b                 []byte
	n                 int
	errno             syscall.Errno
	wouldBlock        bool
	read, write, peek func(fd uintptr) bool
}

// Reset points r at conn (nil: none).
func (r *RawIO) Reset(conn net.Conn) {
	r.conn, r.rc, r.ring = conn, nil, nil
	if conn == nil {
		return
	}
	if rc, ok := conn.(*ringConn); ok {
		r.ring = rc
		return
	}
	if r.read == nil {
		r.read, r.write, r.peek = r.readFD, r.writeFD, r.peekFD
	}
	c := conn
	if uc, ok := c.(*upstreamConn); ok {
		c = uc.Conn
	}
	if sc, ok := c.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			r.rc = rc
		}
	}
}

// Read reads once into b, waiting for data: as net.Conn's Read.
func (r *RawIO) Read(b []byte) (int, error) {
	if r.ring != nil {
		return r.ring.Read(b)
	}
	if r.rc == nil || len(b) == 0 {
		return r.conn.Read(b)
	}
	r.b, r.n, r.errno = b, 0, 0
	err := r.rc.Read(r.read)
	r.b = nil
	switch {
	case err != nil:
		return 0, err
	case r.errno != 0:
		return 0, os.NewSyscallError("read", r.errno)
	case r.n == 0:
		return 0, io.EOF
	}
	return r.n, nil
}

// Write writes all of b: as net.Conn's Write.
func (r *RawIO) Write(b []byte) (int, error) {
	if r.ring != nil {
		return r.ring.Write(b)
	}
	if r.rc == nil || len(b) == 0 {
		return r.conn.Write(b)
	}
	r.b, r.n, r.errno = b, 0, 0
	err := r.rc.Write(r.write)
	r.b = nil
	switch {
	case err != nil:
		return r.n, err
	case r.errno != 0:
		return r.n, os.NewSyscallError("write", r.errno)
	}
	return r.n, nil
}

// readFD reads once; false asks the poller to wait for readability.
func (r *RawIO) readFD(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.b[0])), uintptr(len(r.b)))
		switch e {
		case 0:
			r.n = int(n)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		r.errno = e
		return true
	}
}

// peekFD reads once without ever waiting: wouldBlock says that nothing was
// there.
func (r *RawIO) peekFD(fd uintptr) bool {
	r.wouldBlock = !r.readFD(fd)
	return true
}

// LingerGrace is how long CloseAfterPeer waits for the server to close
// first: 200 ms.
const LingerGrace = 200 * time.Millisecond

// CloseAfterPeer closes the connection, which will not be reused, letting
// the server close it first: it reads (and discards, into buf) until EOF,
// an error, or LingerGrace has passed, then closes, and resets r. It reports
// whether the server closed within the grace. The first reads do not wait:
// a server that closes after its response has usually done so by now, and
// then no deadline needs setting.
//
// Why: the side that closes first keeps the TIME_WAIT state. When the client
// closes first, every request leaves one of its ephemeral ports in TIME_WAIT
// for a minute, and connect() slows down as it searches for a free port
// among them. ab, which waits for the server's close, does not pay that.
func (r *RawIO) CloseAfterPeer(buf []byte) bool {
	c := r.conn
	defer r.Reset(nil)
	defer c.Close()
	for (r.rc != nil || r.ring != nil) && len(buf) > 0 {
		if r.ring != nil {
			r.n, r.errno, r.wouldBlock = r.ring.peek(buf)
		} else {
			r.b, r.n, r.errno, r.wouldBlock = buf, 0, 0, false
			err := r.rc.Read(r.peek)
			r.b = nil
			if err != nil {
				return false
			}
		}
		if r.wouldBlock {
			break // wait below, within the grace
		}
		if r.errno != 0 {
			return r.errno == syscall.ECONNRESET
		}
		if r.n == 0 {
			return true
		}
		// Bytes after the response: discarded; read on.
	}
	if err := c.SetReadDeadline(time.Now().Add(LingerGrace)); err != nil {
		return false
	}
	for {
		if _, err := r.Read(buf); err != nil {
			return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
		}
	}
}

// writeFD writes what is left of r.b; false asks the poller to wait for
// buffer space.
func (r *RawIO) writeFD(fd uintptr) bool {
	for r.n < len(r.b) {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&r.b[r.n])), uintptr(len(r.b)-r.n))
		switch e {
		case 0:
			r.n += int(n)
			continue
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		r.errno = e
		return true
	}
	return true
}
