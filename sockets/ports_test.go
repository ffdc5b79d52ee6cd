package sockets

import (
	"net"
	"testing"
	"time"
)

// TestCountTimeWait: connections the client closes first leave TIME_WAIT
// sockets towards the server's address, and CountTimeWait finds them in the
// live tables. (At least one, not exactly five: on a busy machine the kernel
// may hand a later dial the port of an earlier one still in TIME_WAIT, with
// net.ipv4.tcp_tw_reuse, which replaces that TIME_WAIT socket.) The
// listener's port must have no TIME_WAIT socket of its own before: the
// kernel may give it the port of an earlier test's listener, whose TIME_WAIT
// sockets would count too.
func TestCountTimeWait(t *testing.T) {
	var a Addr
	for try := 0; ; try++ {
		a = listen(t, "tcp", func(c net.Conn) {
			c.Read(make([]byte, 1)) // wait for the client's close, then close
		})
		n, err := CountTimeWait(a.Address)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if try == 20 {
			t.Fatalf("every port tried had TIME_WAIT sockets already (%s: %d)", a.Address, n)
		}
	}
	const dials = 5
	for range dials {
		c, err := net.Dial("tcp", a.Address)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := CountTimeWait(a.Address)
		if err != nil {
			t.Fatal(err)
		}
		if n > dials {
			t.Fatalf("%d TIME_WAIT sockets from %d dials", n, dials)
		}
		if n == dials || (n >= 1 && time.Now().After(deadline)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no TIME_WAIT socket towards %s after %d dials", a.Address, dials)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The kernel's filter keeps the address as well as the port: the same
	// port on another address of the machine has none of them.
	_, port, _ := net.SplitHostPort(a.Address)
	for _, other := range []string{"127.0.0.2:" + port, "[::1]:" + port} {
		if n, err := CountTimeWait(other); err != nil || n != 0 {
			t.Errorf("CountTimeWait(%s) = %d, %v; want 0 (the dials went to %s)", other, n, err, a.Address)
		}
	}
	for _, bad := range []string{"localhost:80", "127.0.0.1", "127.0.0.1:x"} {
		if _, err := CountTimeWait(bad); err == nil {
			t.Errorf("CountTimeWait(%q): no error", bad)
		}
	}
	lo, hi, err := LocalPortRange()
	if err != nil || lo <= 0 || hi < lo {
		t.Errorf("port range %d-%d %v", lo, hi, err)
	}
}
