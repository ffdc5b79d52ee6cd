package sockets

import (
	"net"
	"strings"
	"testing"
	"time"
)

func TestParseProcAddr(t *testing.T) {
	ip, port, ok := parseProcAddr("0100007F:1F90")
	if !ok || !ip.Equal(net.IPv4(127, 0, 0, 1)) || port != 8080 {
		t.Errorf("%v %d %v", ip, port, ok)
	}
	ip, port, ok = parseProcAddr("00000000000000000000000001000000:0050")
	if !ok || !ip.Equal(net.IPv6loopback) || port != 80 {
		t.Errorf("%v %d %v", ip, port, ok)
	}
	for _, bad := range []string{"", "zz", "0100007F", "0100007F:xyz", "GG00007F:0050"} {
		if _, _, ok := parseProcAddr(bad); ok {
			t.Errorf("parseProcAddr(%q) accepted", bad)
		}
	}
}

// TestCountTimeWaitTable: only TIME_WAIT lines (state 06) towards the
// given address count, over IPv4 and IPv6 tables.
func TestCountTimeWaitTable(t *testing.T) {
	const table = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:9C40 0100007F:1F90 06 00000000:00000000 03:00001770 00000000     0        0 0 3
   1: 0100007F:9C41 0100007F:1F90 06 00000000:00000000 03:00001770 00000000     0        0 0 3
   2: 0100007F:9C42 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 1 1
   3: 0100007F:9C43 0100007F:1F91 06 00000000:00000000 03:00001770 00000000     0        0 0 3
   4: 0100007F:9C44 0200007F:1F90 06 00000000:00000000 03:00001770 00000000     0        0 0 3
   5: 0100007F:1F90 0100007F:9C45 06 00000000:00000000 03:00001770 00000000     0        0 0 3
`
	if n := countTimeWait(strings.NewReader(table), net.IPv4(127, 0, 0, 1), 8080); n != 2 {
		t.Errorf("IPv4 table: %d, want 2", n)
	}
	const table6 = `  sl  local_address                         remote_address                        st
   0: 00000000000000000000000001000000:9C40 00000000000000000000000001000000:0050 06
   1: 00000000000000000000000001000000:9C41 00000000000000000000000001000000:0050 0A
`
	if n := countTimeWait(strings.NewReader(table6), net.IPv6loopback, 80); n != 1 {
		t.Errorf("IPv6 table: %d, want 1", n)
	}
}

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
	lo, hi, err := LocalPortRange()
	if err != nil || lo <= 0 || hi < lo {
		t.Errorf("port range %d-%d %v", lo, hi, err)
	}
}
