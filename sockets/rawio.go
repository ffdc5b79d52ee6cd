package sockets

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

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
