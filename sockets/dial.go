package sockets

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
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
