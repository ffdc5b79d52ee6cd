package sockets

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/backbench/backbench/internal/testnet"
)

// TestDialRaw: DialDeadline's own connect reaches TCP (by address and by
// host name) and Unix listeners, and the connection works both ways through
// RawIO's raw socket.
func TestDialRaw(t *testing.T) {
	tcp := listen(t, "tcp", echo)
	_, port, _ := net.SplitHostPort(tcp.Address)
	for _, a := range []Addr{tcp, {"tcp", "localhost:" + port}, listen(t, "unix", echo)} {
		t.Run(a.String(), func(t *testing.T) {
			d := NewDialer(Target{Network: a.Network, Address: a.Address}, time.Second)
			for i := range 3 { // the second and third reuse the resolved address
				conn, err := d.DialDeadline(context.Background(), time.Now().Add(5*time.Second))
				if err != nil {
					t.Fatalf("dial %d: %v", i, err)
				}
				if _, ok := conn.(*fileConn); !ok || conn.RemoteAddr().String() != a.Address || conn.RemoteAddr().Network() != a.Network {
					t.Errorf("%T to %v", conn, conn.RemoteAddr())
				}
				var r RawIO
				r.Reset(conn)
				if r.rc == nil {
					t.Fatal("no raw socket")
				}
				msg := "ping " + strconv.Itoa(i)
				if _, err := r.Write([]byte(msg)); err != nil {
					t.Fatal(err)
				}
				buf := make([]byte, 16)
				n, err := r.Read(buf)
				if err != nil || string(buf[:n]) != msg {
					t.Fatalf("echo %q %v", buf[:n], err)
				}
				conn.Close()
			}
		})
	}
}

// TestDialRawErrors: a refused TCP port, a missing Unix socket and a full
// Unix backlog fail at once with the errno that Describe names.
func TestDialRawErrors(t *testing.T) {
	closed := testnet.DeadTCP(t, "127.0.0.1")

	// After the first connections are queued, the next connect gets
	// EAGAIN.
	full := listenNoAccept(t, "unix")
	d := NewDialer(Target{Network: "unix", Address: full}, time.Second)
	var backlogErr error
	for range 8 {
		c, err := d.DialDeadline(context.Background(), time.Now().Add(time.Second))
		if err != nil {
			backlogErr = err
			break
		}
		defer c.Close()
	}

	for _, tc := range []struct {
		name  string
		err   error
		errno syscall.Errno
		text  string
	}{
		{"refused", dialOnce(t, Addr{"tcp", closed}), unix.ECONNREFUSED, "connection refused"},
		{"missing", dialOnce(t, Addr{"unix", filepath.Join(t.TempDir(), "none.sock")}), unix.ENOENT, "no such Unix socket"},
		{"backlog", backlogErr, unix.EAGAIN, "backlog full"},
	} {
		if !errors.Is(tc.err, tc.errno) || !strings.Contains(Describe(tc.err), tc.text) {
			t.Errorf("%s: %v (%q), want %v", tc.name, tc.err, Describe(tc.err), tc.errno)
		}
	}
}

// listenNoAccept makes a listener on 127.0.0.1 or a Unix socket with a
// backlog of 0 that never accepts, and returns its address.
func listenNoAccept(t *testing.T, network string) string {
	t.Helper()
	family, sa := unix.AF_INET, unix.Sockaddr(&unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
	if network == "unix" {
		family, sa = unix.AF_UNIX, &unix.SockaddrUnix{Name: filepath.Join(t.TempDir(), "full.sock")}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, sa); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	if network == "unix" {
		return sa.(*unix.SockaddrUnix).Name
	}
	got, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(got.(*unix.SockaddrInet4).Port)
}

func dialOnce(t *testing.T, a Addr) error {
	t.Helper()
	c, err := NewDialer(Target{Network: a.Network, Address: a.Address}, time.Second).DialDeadline(context.Background(), time.Now().Add(time.Second))
	if err == nil {
		c.Close()
		t.Fatalf("dial %v succeeded", a)
	}
	return err
}

// TestDialRawInProgress: a TCP connect that stays in progress (the
// listener's accept queue is full, so its SYNs are dropped) is waited for
// until the deadline, or until the context is canceled.
func TestDialRawInProgress(t *testing.T) {
	d := NewDialer(Target{Network: "tcp", Address: listenNoAccept(t, "tcp")}, time.Second)
	// Fill the accept queue: dials that complete are queued, never
	// accepted; the first that times out shows the queue is full.
	var filled bool
	for range 8 {
		c, err := d.DialDeadline(context.Background(), time.Now().Add(300*time.Millisecond))
		if err != nil {
			filled = errors.Is(err, os.ErrDeadlineExceeded)
			break
		}
		defer c.Close()
	}
	if !filled {
		t.Fatal("the accept queue never filled")
	}
	start := time.Now()
	_, err := d.DialDeadline(context.Background(), time.Now().Add(300*time.Millisecond))
	if el := time.Since(start); !errors.Is(err, os.ErrDeadlineExceeded) || el < 250*time.Millisecond || el > 3*time.Second {
		t.Errorf("dial to a full queue: %v after %v, want a deadline error after 300ms", err, el)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = d.DialDeadline(ctx, time.Now().Add(10*time.Second))
	if el := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || el > 3*time.Second {
		t.Errorf("canceled dial: %v after %v", err, el)
	}
}

// TestDialRawFallback: of a host's addresses, one that refuses is passed
// over for the next, which is then tried first.
func TestDialRawFallback(t *testing.T) {
	a := listen(t, "tcp", echo)
	ap := netip.MustParseAddrPort(a.Address)
	ln, err := net.Listen("tcp", "127.0.0.2:0") // a port nothing listens on at 127.0.0.2
	if err != nil {
		t.Skip("no 127.0.0.2:", err)
	}
	refusing := netip.MustParseAddrPort(ln.Addr().String()).Addr()
	ln.Close()
	d := NewDialer(Target{Network: "tcp", Address: a.Address}, time.Second)
	r := &resolved{ips: []netip.Addr{refusing, ap.Addr()}, port: int(ap.Port())}
	d.addrs.Store(&[]*resolved{r})
	for i := range 2 {
		c, err := d.DialDeadline(context.Background(), time.Now().Add(time.Second))
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		c.Close()
		if r.pref.Load() != 1 {
			t.Fatalf("dial %d: preferred address %d, want 1", i, r.pref.Load())
		}
	}
}
