package sockets

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseNetstat(t *testing.T) {
	in := "TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPHPHits\n" +
		"TcpExt: 0 175 180 12\n" +
		"IpExt: InNoRoutes\nIpExt: 0\n"
	c, err := parseNetstat(strings.NewReader(in))
	if err != nil || c.Overflows != 175 || c.Drops != 180 {
		t.Fatalf("parseNetstat = %+v, %v; want 175 and 180", c, err)
	}
	if _, err := parseNetstat(strings.NewReader("IpExt: a\nIpExt: 1\n")); err == nil {
		t.Error("no TcpExt lines: no error")
	}
	if _, err := ReadListenCounters(); err != nil {
		t.Errorf("ReadListenCounters on this machine: %v", err)
	}
}

func TestListenBacklog(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("skip %s: %v", addr, err)
			continue
		}
		defer ln.Close()
		if err := SetBacklog(ln, 7); err != nil {
			t.Fatal(err)
		}
		backlog, queued, err := ListenBacklog(ln.Addr().String())
		if err != nil || backlog != 7 || queued != 0 {
			t.Errorf("%s: ListenBacklog = %d, %d, %v; want 7, 0", ln.Addr(), backlog, queued, err)
		}
		if !IsLocalTCP(ln.Addr().String()) {
			t.Errorf("IsLocalTCP(%s) = false", ln.Addr())
		}
	}
	if IsLocalTCP("192.0.2.1:80") {
		t.Error("IsLocalTCP(192.0.2.1:80) = true")
	}
	// A port held by a bound socket that does not listen: nothing can
	// listen on it during the test (another program may listen on any
	// fixed port, such as 1).
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	held := fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port)
	if _, _, err := ListenBacklog(held); err == nil {
		t.Errorf("no listener on %s: no error", held)
	}
}

// TestTCPListenerDrops: a listener with backlog 1 that never accepts holds
// two connections in its queue; every further connect's SYN is dropped and
// counted in the socket's own drop counter, which another listener's does
// not see.
func TestTCPListenerDrops(t *testing.T) {
	full, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	if err := SetBacklog(full, 1); err != nil {
		t.Fatal(err)
	}
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	addr := full.Addr().String()
	before, err := TCPListener(addr)
	if err != nil || !before.HasDrops || before.Drops != 0 || before.Backlog != 1 {
		t.Fatalf("TCPListener(%s) = %+v, %v; want backlog 1, drops 0 and a drop counter", addr, before, err)
	}
	// The first two connects complete into the queue (backlog + 1); the
	// SYN of each later one is dropped (and would be sent again after
	// 1 s: the timeout ends the dial before that).
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 2 {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connect into the queue: %v", err)
		}
		conns = append(conns, c)
	}
	for range 3 {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			t.Fatal("a connect to a full queue completed")
		}
	}
	after, err := TCPListener(addr)
	if err != nil || after.Queued != 2 || after.Drops < 3 {
		t.Errorf("TCPListener(%s) after the flood = %+v, %v; want 2 queued and 3 or more drops", addr, after, err)
	}
	if st, err := TCPListener(other.Addr().String()); err != nil || st.Drops != 0 || st.Queued != 0 {
		t.Errorf("the other listener: %+v, %v; want no drops", st, err)
	}
}

// TestUnixListener: the backlog and queue of a Unix listener that never
// accepts, and no drop counter.
func TestUnixListener(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := SetBacklog(ln, 3); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	st, err := UnixListener(path)
	if err != nil || st.Backlog != 3 || st.Queued != 2 || st.HasDrops {
		t.Errorf("UnixListener(%s) = %+v, %v; want backlog 3, 2 queued, no drop counter", path, st, err)
	}
	if _, err := UnixListener(filepath.Join(t.TempDir(), "none.sock")); err == nil {
		t.Error("no listener: no error")
	}
}

// TestTCPListenerReusePort: the sockets sharing a port with SO_REUSEPORT
// count as one listener: their queues add up.
func TestTCPListenerReusePort(t *testing.T) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) }); err != nil {
			return err
		}
		return serr
	}}
	a, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := lc.Listen(context.Background(), "tcp", a.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for range 4 {
		c, err := net.DialTimeout("tcp", a.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	st, err := TCPListener(a.Addr().String())
	if err != nil || st.Queued != 4 || !st.HasDrops || st.Drops != 0 {
		t.Errorf("TCPListener(%s) over two SO_REUSEPORT sockets = %+v, %v; want 4 queued, 0 drops", a.Addr(), st, err)
	}
}
