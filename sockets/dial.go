package sockets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Dialer opens connections to one address. It is safe for concurrent use.
type Dialer struct {
	// Network is "tcp" or "unix".
	Network string
	// Address is host:port or a socket path.
	Address string
	// Timeout bounds one dial; 0 means no bound other than the context's.
	Timeout time.Duration
	d       net.Dialer
}

// NewDialer returns a Dialer for the target's network and address. TCP
// keep-alive probes are off: benchmark connections are short-lived or busy,
// and turning them on costs two system calls per dial.
func NewDialer(t Target, timeout time.Duration) *Dialer {
	return &Dialer{Network: t.Network, Address: t.Address, Timeout: timeout, d: net.Dialer{KeepAlive: -1}}
}

// Dial connects, honouring ctx and d.Timeout on TCP and Unix sockets alike.
// TCP connections get TCP_NODELAY (Go's default).
func (d *Dialer) Dial(ctx context.Context) (net.Conn, error) {
	nd := d.d
	nd.Timeout = d.Timeout
	return nd.DialContext(ctx, d.Network, d.Address)
}

// DialDeadline connects like Dial but with an absolute deadline, which lets a
// caller bound a whole request (dial included) by one instant.
func (d *Dialer) DialDeadline(ctx context.Context, deadline time.Time) (net.Conn, error) {
	nd := d.d
	nd.Deadline = deadline
	return nd.DialContext(ctx, d.Network, d.Address)
}

// Check verifies, before any load is sent, that the target can be reached:
// for a Unix socket that the path exists, is a socket and may be opened; for
// both networks that one connection can be made (it is closed at once, with
// nothing sent). The error names the cause in a user's words.
func Check(ctx context.Context, t Target, timeout time.Duration) error {
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
	c, err := NewDialer(t, timeout).Dial(ctx)
	if err != nil {
		return fmt.Errorf("cannot connect to %s %s: %s", t.Network, t.Address, Describe(err))
	}
	return c.Close()
}

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
// "timeout", or the error text when it is none of those.
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
	}
	return err.Error()
}

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

// LingerGrace is how long CloseAfterPeer waits for the server to close
// first: 200 ms.
const LingerGrace = 200 * time.Millisecond

// CloseAfterPeer closes a connection that will not be reused, letting the
// server close it first: it reads (and discards, into buf) until EOF, an
// error, or LingerGrace has passed, then closes. It reports whether the
// server closed within the grace.
//
// Why: the side that closes first keeps the TIME_WAIT state. When the client
// closes first, every request leaves one of its ephemeral ports in TIME_WAIT
// for a minute, and connect() slows down as it searches for a free port
// among them. ab, which waits for the server's close, does not pay that.
func CloseAfterPeer(c net.Conn, buf []byte) bool {
	closed := false
	if err := c.SetReadDeadline(time.Now().Add(LingerGrace)); err == nil {
		for {
			if _, err := c.Read(buf); err != nil {
				closed = errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
				break
			}
		}
	}
	c.Close()
	return closed
}
