package sockets

import (
	"context"
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ringConn is a connected socket whose I/O goes through its slot's ring: a
// blocking socket (the ring waits for it), read and written by the slot's
// task, which yields to the driver while the kernel works. Its deadline is
// the slot's, which the driver keeps by cancelling the operation in flight;
// SetDeadline may be called from any goroutine. One per slot, reused from
// connection to connection.
type ringConn struct {
	s             *RingSlot
	fd            int // -1 when closed
	network, addr string
}

// Read reads once into b, waiting for data: as net.Conn's Read.
func (c *ringConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if c.s.expired() {
		return 0, os.ErrDeadlineExceeded
	}
	c.s.buf = b // keeps b reachable (and off the stack) while the kernel writes it
	res := c.s.do(opRecv, c.fd, unsafe.Pointer(&b[0]), len(b), 0, 0)
	switch {
	case res > 0:
		return int(res), nil
	case res == 0:
		return 0, io.EOF
	}
	return 0, c.ioError("read", res)
}

// Write writes all of b: as net.Conn's Write. It tries send(2) at once
// (a request nearly always fits the socket's buffer), and waits through the
// ring only for what does not fit.
func (c *ringConn) Write(b []byte) (int, error) {
	n := 0
	if len(b) > 0 && !c.s.expired() {
		r, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
			unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, 0, 0)
		switch e {
		case 0:
			n = int(r)
		case unix.EAGAIN, unix.EINTR:
		default:
			return 0, os.NewSyscallError("write", e)
		}
	}
	for n < len(b) {
		if c.s.expired() {
			return n, os.ErrDeadlineExceeded
		}
		c.s.buf = b
		res := c.s.do(opSend, c.fd, unsafe.Pointer(&b[n]), len(b)-n, 0, unix.MSG_NOSIGNAL)
		if res < 0 {
			return n, c.ioError("write", res)
		}
		n += int(res)
	}
	return n, nil
}

// peek reads once into b without waiting: n bytes (0: the peer's close),
// an errno, or wouldBlock when nothing was there.
func (c *ringConn) peek(b []byte) (n int, errno syscall.Errno, wouldBlock bool) {
	r, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		unix.MSG_DONTWAIT, 0, 0)
	switch e {
	case 0:
		return int(r), 0, false
	case unix.EAGAIN, unix.EINTR:
		return 0, 0, true
	}
	return 0, e, false
}

// ioError turns a failed operation's result into the error the poller's
// path returns: os.ErrDeadlineExceeded for one cancelled at its deadline.
func (c *ringConn) ioError(op string, res int32) error {
	if e := errnoOf(res); e != unix.ECANCELED && e != unix.EINTR {
		return os.NewSyscallError(op, e)
	}
	return os.ErrDeadlineExceeded
}

// Close closes the socket (through the ring, without waiting).
func (c *ringConn) Close() error {
	if c.fd < 0 {
		return nil
	}
	c.s.closeFD(c.fd)
	c.fd = -1
	return nil
}

// LocalAddr returns nil: the local address is not looked up.
func (c *ringConn) LocalAddr() net.Addr { return nil }

// RemoteAddr returns the address dialed.
func (c *ringConn) RemoteAddr() net.Addr { return dialedAddr{c.network, c.addr} }

// SetDeadline sets the deadline of every read and write, those in flight
// included (the zero time: none).
func (c *ringConn) SetDeadline(t time.Time) error {
	var ns int64
	if !t.IsZero() {
		ns = max(t.UnixNano(), 1)
	}
	c.s.deadline.Store(ns)
	return nil
}

// SetReadDeadline sets the deadline (one for reads and writes).
func (c *ringConn) SetReadDeadline(t time.Time) error { return c.SetDeadline(t) }

// SetWriteDeadline sets the deadline (one for reads and writes).
func (c *ringConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }

var _ net.Conn = (*ringConn)(nil)

// ringable reports whether d's connections can go through a ring: one
// upstream, no TLS.
func (d *Dialer) ringable() bool { return len(d.ups) <= 1 && d.tls == nil }

// dialRing connects s's connection to d's address within deadline, through
// the ring (see dialRaw for the choice of address). The end of ctx (which
// sets a past deadline on s's connection through its hook) ends the connect.
func (d *Dialer) dialRing(ctx context.Context, deadline time.Time, s *RingSlot) (net.Conn, error) {
	return d.dialAddrs(ctx, 0, func(a Addr, sa unix.Sockaddr) (net.Conn, error) {
		return s.connect(ctx, a, sa)
	})
}

// connect connects the slot's connection to sa; its deadline is set. A
// TCP connect goes through the ring (its socket blocking, for the ring's
// reads and writes: a non-blocking one gets EAGAIN from them instead of a
// wait); the driver bounds how many a round queues (maxRoundConnects),
// since the kernel makes them in the submission that ends the round.
func (s *RingSlot) connect(ctx context.Context, a Addr, sa unix.Sockaddr) (net.Conn, error) {
	family, size := s.sockaddr(sa)
	if size == 0 {
		return nil, dialError(a, "connect", unix.EINVAL) // a Unix path too long
	}
	fd, errno := s.socket(family)
	if errno != 0 {
		return nil, dialError(a, "socket", errno)
	}
	if family != unix.AF_UNIX {
		// As net.Dial does: each write goes out at once.
		one := int32(1)
		_, _, errno = unix.RawSyscall6(unix.SYS_SETSOCKOPT, fd, unix.IPPROTO_TCP, unix.TCP_NODELAY,
			uintptr(unsafe.Pointer(&one)), 4, 0)
		if errno != 0 {
			unix.Close(int(fd))
			return nil, dialError(a, "setsockopt", errno)
		}
	}
	c := &s.conn
	c.fd, c.network, c.addr = int(fd), a.Network, a.Address
	var err error
	switch {
	case s.expired():
		err = os.ErrDeadlineExceeded
	case family == unix.AF_UNIX:
		// A Unix connect completes within the call, or fails: with
		// EAGAIN when the server's backlog is full, a Connect failure as
		// on the poller's path, where a blocking connect would wait. The
		// socket is then made blocking, for the ring's reads and writes.
		_, _, errno = unix.RawSyscall(unix.SYS_CONNECT, fd, uintptr(unsafe.Pointer(&s.sa[0])), size)
		if errno == 0 {
			_, _, errno = unix.RawSyscall(unix.SYS_FCNTL, fd, unix.F_SETFL, 0)
		}
		if errno != 0 {
			err = errno
		}
	default:
		s.d.connects++
		if res := s.do(opConnect, c.fd, unsafe.Pointer(&s.sa[0]), 0, uint64(size), 0); res < 0 {
			e := errnoOf(res)
			err = e
			if e == unix.ECANCELED || e == unix.EINTR {
				err = os.ErrDeadlineExceeded
				if ctx.Err() != nil {
					err = ctx.Err()
				}
			}
		}
	}
	if err != nil {
		c.Close()
		return nil, dialError(a, "connect", err)
	}
	return c, nil
}

// socket makes a socket of family (non-blocking for a Unix one, whose
// connect is made at once, not through the ring). At the file limit, the
// closes the slot's driver has queued are submitted first and the socket
// tried again: a worker closes its connection through the ring before it
// dials the next one, so without that it would hold two descriptors for a
// moment, and a run of -c workers would need up to 2 × -c of them.
func (s *RingSlot) socket(family int) (uintptr, syscall.Errno) {
	typ := uintptr(unix.SOCK_STREAM | unix.SOCK_CLOEXEC)
	if family == unix.AF_UNIX {
		typ |= unix.SOCK_NONBLOCK
	}
	fd, _, errno := unix.RawSyscall(unix.SYS_SOCKET, uintptr(family), typ, 0)
	if errno == unix.EMFILE || errno == unix.ENFILE {
		s.d.ring.Flush()
		fd, _, errno = unix.RawSyscall(unix.SYS_SOCKET, uintptr(family), typ, 0)
	}
	return fd, errno
}

// sockaddr writes sa into s.sa as the kernel reads it, and returns its
// family and length.
func (s *RingSlot) sockaddr(sa unix.Sockaddr) (family int, size uintptr) {
	s.sa = [unix.SizeofSockaddrAny]byte{}
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		r := (*unix.RawSockaddrInet4)(unsafe.Pointer(&s.sa[0]))
		r.Family = unix.AF_INET
		putPort(&r.Port, sa.Port)
		r.Addr = sa.Addr
		return unix.AF_INET, unix.SizeofSockaddrInet4
	case *unix.SockaddrInet6:
		r := (*unix.RawSockaddrInet6)(unsafe.Pointer(&s.sa[0]))
		r.Family = unix.AF_INET6
		putPort(&r.Port, sa.Port)
		r.Addr = sa.Addr
		r.Scope_id = sa.ZoneId
		return unix.AF_INET6, unix.SizeofSockaddrInet6
	case *unix.SockaddrUnix:
		r := (*unix.RawSockaddrUnix)(unsafe.Pointer(&s.sa[0]))
		r.Family = unix.AF_UNIX
		name := sa.Name
		n := len(name)
		if n >= len(r.Path) {
			return unix.AF_UNIX, 0
		}
		for i := range n {
			r.Path[i] = int8(name[i])
		}
		size = 2
		if n > 0 {
			size += uintptr(n) + 1
		}
		if r.Path[0] == '@' {
			// An abstract socket: no trailing NUL.
			r.Path[0] = 0
			size--
		}
		return unix.AF_UNIX, size
	}
	return unix.AF_UNIX, 2
}

// putPort writes port into a sockaddr's port field in network byte order,
// whatever the machine's byte order.
func putPort(field *uint16, port int) {
	b := (*[2]byte)(unsafe.Pointer(field))
	b[0], b[1] = byte(port>>8), byte(port)
}

// dialError is a failed dial's error as connectRaw words it.
func dialError(a Addr, op string, err error) error {
	if errno, ok := err.(syscall.Errno); ok {
		err = os.NewSyscallError(op, errno)
	}
	return &net.OpError{Op: "dial", Net: a.Network, Addr: dialedAddr{a.Network, a.Address}, Err: err}
}
