package sockets

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Dialer opens connections to one address, or to several (a cluster of
// workers without a balancer in front), and optionally speaks TLS over them.
// It is safe for concurrent use.
type Dialer struct {
	// Network is "tcp" or "unix" (of the first upstream).
	Network string
	// Address is host:port or a socket path (of the first upstream).
	Address string
	// Timeout bounds one dial; 0 means no bound other than the context's.
	Timeout time.Duration
	d       net.Dialer

	ups     []Addr
	balance Balance
	next    atomic.Uint64
	open    []atomic.Int64 // connections open per upstream (least-conn)

	tls        *tls.Config
	tlsState   atomic.Pointer[tls.ConnectionState]
	handshakes atomic.Int64
	resumed    atomic.Int64

	addrs atomic.Pointer[[]*resolved] // the upstreams resolved (dialRaw)
}

// Addr is one upstream address.
type Addr struct {
	// Network is "tcp" or "unix".
	Network string
	// Address is host:port or a socket path.
	Address string
}

// String returns the address as ParseAddr reads it: tcp:host:port or
// unix:/path.
func (a Addr) String() string { return a.Network + ":" + a.Address }

// ParseAddr reads an upstream address: tcp:HOST:PORT, unix:/path.sock, or a
// bare HOST:PORT or /path.sock.
func ParseAddr(s string) (Addr, error) {
	switch {
	case strings.HasPrefix(s, "unix:"):
		s = s[len("unix:"):]
		if s == "" {
			return Addr{}, errors.New("empty Unix socket path")
		}
		return Addr{"unix", s}, nil
	case strings.HasPrefix(s, "/"):
		return Addr{"unix", s}, nil
	}
	s = strings.TrimPrefix(s, "tcp:")
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return Addr{}, fmt.Errorf("bad address %q: want tcp:HOST:PORT or unix:/path.sock", s)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return Addr{}, fmt.Errorf("bad port in %q", s)
	}
	return Addr{"tcp", s}, nil
}

// Balance is how a Dialer with several upstreams picks one for a new
// connection.
type Balance int

// Balancing policies.
const (
	// RoundRobin takes the upstreams in turn, one per new connection.
	RoundRobin Balance = iota
	// LeastConn takes the upstream with the fewest open connections.
	LeastConn
)

// ParseBalance reads "round-robin" or "least-conn".
func ParseBalance(s string) (Balance, error) {
	switch s {
	case "round-robin", "rr", "":
		return RoundRobin, nil
	case "least-conn", "lc":
		return LeastConn, nil
	}
	return 0, fmt.Errorf("bad balance %q: want round-robin or least-conn", s)
}

// String returns the policy's name.
func (b Balance) String() string {
	if b == LeastConn {
		return "least-conn"
	}
	return "round-robin"
}

// NewDialer returns a Dialer for the target's network and address. TCP
// keep-alive probes are off: benchmark connections are short-lived or busy,
// and turning them on costs two system calls per dial.
func NewDialer(t Target, timeout time.Duration) *Dialer {
	return &Dialer{Network: t.Network, Address: t.Address, Timeout: timeout, d: net.Dialer{KeepAlive: -1}}
}

// DialerOptions are the options of NewClusterDialer.
type DialerOptions struct {
	// Upstreams are the addresses to spread connections over; empty means
	// the target's own address.
	Upstreams []Addr
	// Balance picks an upstream per new connection.
	Balance Balance
	// TLS, when not nil, makes every connection a TLS client connection
	// with this configuration (the handshake is part of the dial).
	TLS *tls.Config
	// Timeout bounds one dial (with the TLS handshake).
	Timeout time.Duration
}

// NewClusterDialer returns a Dialer over several upstreams and/or TLS.
func NewClusterDialer(t Target, o DialerOptions) *Dialer {
	d := NewDialer(t, o.Timeout)
	d.ups = o.Upstreams
	if len(d.ups) == 0 {
		d.ups = []Addr{{t.Network, t.Address}}
	}
	d.Network, d.Address = d.ups[0].Network, d.ups[0].Address
	d.balance = o.Balance
	d.open = make([]atomic.Int64, len(d.ups))
	d.tls = o.TLS
	return d
}

// Upstreams returns the addresses the Dialer spreads connections over (one
// for a plain Dialer).
func (d *Dialer) Upstreams() []Addr {
	if len(d.ups) == 0 {
		return []Addr{{d.Network, d.Address}}
	}
	return d.ups
}

// TLSState returns the connection state of the first TLS handshake (nil
// before any), the number of handshakes and how many of them resumed a
// session.
func (d *Dialer) TLSState() (first *tls.ConnectionState, handshakes, resumed int64) {
	return d.tlsState.Load(), d.handshakes.Load(), d.resumed.Load()
}

// Dial connects, honouring ctx and d.Timeout on TCP and Unix sockets alike.
// TCP connections get TCP_NODELAY (Go's default).
func (d *Dialer) Dial(ctx context.Context) (net.Conn, error) {
	nd := d.d
	nd.Timeout = d.Timeout
	return nd.DialContext(ctx, d.Network, d.Address)
}

// DefaultFetchTimeout bounds a one-off exchange (SendOnce) when its
// timeout is 0 or less: 10 s.
const DefaultFetchTimeout = 10 * time.Second

// SendOnce opens a fresh connection for one exchange and writes the
// encoded request req on it: dialled with d, or a Dialer of t when d is
// nil, the whole exchange bounded by timeout from now
// (DefaultFetchTimeout when 0 or less), dial and write included, by one
// deadline set on the connection. The caller reads the response and
// closes the connection. Its errors start with proto ("fcgi: connect:
// ...", "http: write: ..."), the cause named by Describe. It is for side
// requests (a verification, a status page), not for load.
func SendOnce(ctx context.Context, d *Dialer, t Target, timeout time.Duration, req []byte, proto string) (net.Conn, error) {
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	deadline := time.Now().Add(timeout)
	if d == nil {
		d = NewDialer(t, timeout)
	}
	conn, err := d.DialDeadline(ctx, deadline)
	if err != nil {
		return nil, fmt.Errorf("%s: connect: %s", proto, Describe(err))
	}
	conn.SetDeadline(deadline)
	if _, err := conn.Write(req); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s: write: %s", proto, Describe(err))
	}
	return conn, nil
}

// DialDeadline connects like Dial but with an absolute deadline, which lets a
// caller bound a whole request (dial and TLS handshake included) by one
// instant. With several upstreams it picks one by the balancing policy; use
// UpstreamIndex on the connection to learn which.
func (d *Dialer) DialDeadline(ctx context.Context, deadline time.Time) (net.Conn, error) {
	if len(d.ups) <= 1 && d.tls == nil {
		return d.dialRaw(ctx, deadline, 0)
	}
	i := d.pick()
	d.open[i].Add(1)
	c, err := d.dialRaw(ctx, deadline, i)
	if err != nil {
		d.open[i].Add(-1)
		return nil, &UpstreamError{Index: i, Err: err}
	}
	var conn net.Conn = &upstreamConn{Conn: c, idx: i, d: d}
	if d.tls != nil {
		tc := tls.Client(conn, d.tls)
		tc.SetDeadline(deadline)
		if err := tc.HandshakeContext(ctx); err != nil {
			tc.Close()
			return nil, &UpstreamError{Index: i, Err: fmt.Errorf("TLS handshake: %w", err)}
		}
		st := tc.ConnectionState()
		d.handshakes.Add(1)
		if st.DidResume {
			d.resumed.Add(1)
		}
		if d.tlsState.Load() == nil {
			d.tlsState.CompareAndSwap(nil, &st)
		}
		conn = tc
	}
	return conn, nil
}

// IsUnverified reports whether err is (or wraps) the failure to verify a
// TLS server's certificate: unknown authority, wrong name or address,
// expired.
func IsUnverified(err error) bool {
	var ve *tls.CertificateVerificationError
	return errors.As(err, &ve)
}

func (d *Dialer) pick() int {
	n := len(d.ups)
	if n == 1 {
		return 0
	}
	if d.balance == LeastConn {
		// Start the scan at a rotating place so that ties spread.
		start := int(d.next.Add(1) % uint64(n))
		best := start
		for k := 1; k < n; k++ {
			i := (start + k) % n
			if d.open[i].Load() < d.open[best].Load() {
				best = i
			}
		}
		return best
	}
	return int((d.next.Add(1) - 1) % uint64(n))
}

// upstreamConn is a connection to one upstream of a cluster Dialer; it
// counts itself out of the upstream's open connections when closed.
type upstreamConn struct {
	net.Conn
	idx    int
	d      *Dialer
	closed atomic.Bool
}

func (c *upstreamConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.d.open[c.idx].Add(-1)
	}
	return c.Conn.Close()
}

// UpstreamError is a failed dial of a cluster Dialer: which upstream, and
// why.
type UpstreamError struct {
	// Index is the upstream's index in the Dialer's Upstreams.
	Index int
	// Err is the dial or handshake error.
	Err error
}

// Error returns the dial or handshake error's text.
func (e *UpstreamError) Error() string { return e.Err.Error() }

// Unwrap returns the dial or handshake error.
func (e *UpstreamError) Unwrap() error { return e.Err }

// FailedUpstream returns the index of the upstream a dial error is about (0
// when it does not say).
func FailedUpstream(err error) int {
	var ue *UpstreamError
	if errors.As(err, &ue) {
		return ue.Index
	}
	return 0
}

// UpstreamIndex returns the index, in the Dialer's Upstreams, of the
// upstream c was dialed to (0 for a plain Dialer's connections).
func UpstreamIndex(c net.Conn) int {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if uc, ok := c.(*upstreamConn); ok {
		return uc.idx
	}
	return 0
}

// Check verifies, before any load is sent, that the target can be reached:
// for a Unix socket that the path exists, is a socket and may be opened; for
// both networks that one connection can be made (it is closed at once, with
// nothing sent). The error names the cause in a user's words.
func Check(ctx context.Context, t Target, timeout time.Duration) error {
	if err := StatUnix(t); err != nil {
		return err
	}
	c, err := NewDialer(t, timeout).Dial(ctx)
	if err != nil {
		return fmt.Errorf("cannot connect to %s %s: %s", t.Network, t.Address, Describe(err))
	}
	return c.Close()
}

// StatUnix checks, without connecting, that a Unix target's path is a
// socket: "no such Unix socket", "permission denied" or "not a Unix socket"
// otherwise. It returns nil for any other network.
func StatUnix(t Target) error {
	if t.Network == "unix" {
		fi, err := os.Stat(t.Address)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("no such Unix socket: %s", t.Address)
		case errors.Is(err, fs.ErrPermission):
			return fmt.Errorf("permission denied: %s", t.Address)
		case err != nil:
			return fmt.Errorf("cannot use Unix socket %s: %v", t.Address, err)
		case fi.Mode().Type() != fs.ModeSocket:
			return fmt.Errorf("not a Unix socket: %s (%s)", t.Address, describeMode(fi.Mode()))
		}
	}
	return nil
}

// ConnectError is a failed dial as the load clients report it: its text is
// "connect: " and Describe's words, and it unwraps to the dial's error, so
// that load.Unreachable still sees the errno.
type ConnectError struct{ Err error }

// Error returns "connect: " and Describe's words for the dial's error.
func (e *ConnectError) Error() string { return "connect: " + Describe(e.Err) }

// Unwrap returns the dial's error.
func (e *ConnectError) Unwrap() error { return e.Err }

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	}
	return "mode " + m.String()
}

// Describe names a dial or I/O error in a user's words: "connection refused",
// "Unix socket backlog full (EAGAIN)", "too many open files", "ephemeral
// ports exhausted (EADDRNOTAVAIL)", "permission denied", "connection reset",
// "timeout", a TLS certificate that does not verify, or the error text when
// it is none of those.
func Describe(err error) string {
	if err == nil {
		return ""
	}
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.EAGAIN):
		return "Unix socket backlog full (EAGAIN)"
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return "too many open files"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return "ephemeral ports exhausted (EADDRNOTAVAIL)"
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return "permission denied"
	case errors.Is(err, syscall.ENOENT):
		return "no such Unix socket"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by peer"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case IsUnverified(err):
		var ve *tls.CertificateVerificationError
		errors.As(err, &ve)
		return "the server's TLS certificate does not verify: " + ve.Err.Error()
	}
	return err.Error()
}

// DescribeError returns an error that reads prefix + Describe(err) and
// unwraps to err, so that callers can still test its errno (load.KindOf).
func DescribeError(prefix string, err error) error {
	return &describedError{msg: prefix + Describe(err), err: err}
}

type describedError struct {
	msg string
	err error
}

func (e *describedError) Error() string { return e.msg }
func (e *describedError) Unwrap() error { return e.err }

// RaiseNoFileLimit raises the soft RLIMIT_NOFILE towards want (never above
// the hard limit) and returns the soft limit in force afterwards.
func RaiseNoFileLimit(want uint64) (uint64, error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("sockets: getrlimit: %w", err)
	}
	if rl.Cur >= want {
		return rl.Cur, nil
	}
	n := want
	if n > rl.Max {
		n = rl.Max
	}
	rl.Cur = n
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("sockets: setrlimit: %w", err)
	}
	return n, nil
}

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
