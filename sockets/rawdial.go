package sockets

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// dialRaw connects to upstream i of d with a non-blocking socket of its own
// and hands it to the runtime's poller only once connected, which saves what
// net.Dial does per connection and a load run without keep-alive does not
// need: the resolver and dial-context machinery, the getsockname and
// getpeername calls, and a goroutine park while a loopback connect that the
// kernel completed within the connect call is "in progress". A connect that
// is really in progress (a remote host, a full backlog on TCP) is waited for
// with the poller, within the deadline.
//
// A host name with several addresses (localhost: 127.0.0.1 and ::1) is
// tried address by address while they refuse or are unreachable, as
// net.Dial does; the address that answered is tried first from then on.
func (d *Dialer) dialRaw(ctx context.Context, deadline time.Time, i int) (net.Conn, error) {
	return d.dialAddrs(ctx, i, func(a Addr, sa unix.Sockaddr) (net.Conn, error) {
		return connectRaw(ctx, deadline, a, sa)
	})
}

// dialAddrs connects to upstream i of d with connect, trying its addresses
// in turn as dialRaw says.
func (d *Dialer) dialAddrs(ctx context.Context, i int, connect func(Addr, unix.Sockaddr) (net.Conn, error)) (net.Conn, error) {
	a := d.Upstreams()[i]
	r, err := d.resolved(ctx, i)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: a.Network, Err: err}
	}
	n := max(len(r.ips), 1)
	first := int(r.pref.Load())
	for k := 0; ; k++ {
		c, err := connect(a, r.sockaddr((first+k)%n))
		if err == nil {
			if k > 0 {
				r.pref.Store(int32((first + k) % n))
			}
			return c, nil
		}
		if k+1 == n || !(errors.Is(err, unix.ECONNREFUSED) || errors.Is(err, unix.ENETUNREACH) ||
			errors.Is(err, unix.EHOSTUNREACH) || errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.EAFNOSUPPORT)) {
			return nil, err
		}
	}
}

// connectRaw connects one socket to sa (see dialRaw).
func connectRaw(ctx context.Context, deadline time.Time, a Addr, sa unix.Sockaddr) (net.Conn, error) {
	family := unix.AF_UNIX
	switch sa.(type) {
	case *unix.SockaddrInet4:
		family = unix.AF_INET
	case *unix.SockaddrInet6:
		family = unix.AF_INET6
	}
	opErr := func(op string, err error) error { return dialError(a, op, err) }
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, opErr("socket", err)
	}
	if family != unix.AF_UNIX {
		// As net.Dial does: each write goes out at once.
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			unix.Close(fd)
			return nil, opErr("setsockopt", err)
		}
	}
	err = unix.Connect(fd, sa)
	if err == unix.EINPROGRESS || err == unix.EINTR {
		// On loopback the handshake has usually completed within the
		// call: a second connect says so (0), or EALREADY.
		err = unix.Connect(fd, sa)
		if err == unix.EISCONN {
			err = nil
		}
	}
	if err != nil && err != unix.EALREADY {
		unix.Close(fd)
		return nil, opErr("connect", err)
	}
	f := os.NewFile(uintptr(fd), a.Address) // registers fd with the poller
	c := &fileConn{File: f, network: a.Network, addr: a.Address}
	if err == unix.EALREADY {
		if err := c.awaitConnect(ctx, sa, deadline); err != nil {
			f.Close()
			return nil, opErr("connect", err)
		}
	}
	return c, nil
}

// awaitConnect waits with the poller for a connect in progress to finish,
// until deadline or ctx ends.
func (c *fileConn) awaitConnect(ctx context.Context, sa unix.Sockaddr, deadline time.Time) error {
	if !deadline.IsZero() {
		c.SetWriteDeadline(deadline)
		defer c.SetWriteDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { c.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	err = rc.Write(func(fd uintptr) bool {
		cerr = unix.Connect(int(fd), sa)
		return cerr != unix.EALREADY && cerr != unix.EINPROGRESS
	})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return err
	case cerr == unix.EISCONN:
		return nil
	}
	return cerr
}

// resolved returns upstream i resolved, resolving every upstream once: IP
// addresses and Unix paths directly, host names with the default resolver.
func (d *Dialer) resolved(ctx context.Context, i int) (*resolved, error) {
	p := d.addrs.Load()
	if p == nil {
		ups := d.Upstreams()
		addrs := make([]*resolved, len(ups))
		for k, a := range ups {
			r, err := resolve(ctx, a)
			if err != nil {
				return nil, err
			}
			addrs[k] = r
		}
		d.addrs.Store(&addrs)
		p = &addrs
	}
	return (*p)[i], nil
}

// resolved is an upstream's addresses, ready for connect(2).
type resolved struct {
	path string       // a Unix socket; "" for TCP
	ips  []netip.Addr // TCP: the host's addresses, in the resolver's order
	port int
	zone uint32       // the interface of link-local IPv6 addresses
	pref atomic.Int32 // the index in ips that answered last
}

// sockaddr returns a new socket address for ips[k] (a unix.Sockaddr is
// written to by each call that uses it, so one is never shared).
func (r *resolved) sockaddr(k int) unix.Sockaddr {
	if r.path != "" {
		return &unix.SockaddrUnix{Name: r.path}
	}
	if ip := r.ips[k]; ip.Is4() {
		return &unix.SockaddrInet4{Port: r.port, Addr: ip.As4()}
	}
	return &unix.SockaddrInet6{Port: r.port, Addr: r.ips[k].As16(), ZoneId: r.zone}
}

func resolve(ctx context.Context, a Addr) (*resolved, error) {
	if a.Network == "unix" {
		return &resolved{path: a.Address}, nil
	}
	host, port, err := net.SplitHostPort(a.Address)
	if err != nil {
		return nil, err
	}
	p, err := net.DefaultResolver.LookupPort(ctx, "tcp", port)
	if err != nil {
		return nil, err
	}
	r := &resolved{port: p}
	if ip, err := netip.ParseAddr(host); err == nil {
		r.ips = []netip.Addr{ip}
	} else if r.ips, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	if len(r.ips) == 0 {
		return nil, fmt.Errorf("no address for %s", host)
	}
	for k, ip := range r.ips {
		r.ips[k] = ip.Unmap()
		zone := ip.Zone()
		if zone == "" {
			continue
		}
		// A link-local address: fe80::1%eth0.
		if ifi, err := net.InterfaceByName(zone); err == nil {
			r.zone = uint32(ifi.Index)
		} else if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
			r.zone = uint32(n)
		} else {
			return nil, fmt.Errorf("unknown zone %q", zone)
		}
	}
	return r, nil
}

// fileConn is a connected socket held by an os.File, which the runtime's
// poller serves as it serves net.Conn: reads and writes wait for readiness
// and keep deadlines; SyscallConn gives RawIO the socket.
type fileConn struct {
	*os.File
	network, addr string
}

// LocalAddr returns nil: the local address is not looked up.
func (c *fileConn) LocalAddr() net.Addr { return nil }

// RemoteAddr returns the address dialed.
func (c *fileConn) RemoteAddr() net.Addr { return dialedAddr{c.network, c.addr} }

// dialedAddr is a net.Addr of a network and address string.
type dialedAddr struct{ network, addr string }

func (a dialedAddr) Network() string { return a.network }
func (a dialedAddr) String() string  { return a.addr }

var _ net.Conn = (*fileConn)(nil)
