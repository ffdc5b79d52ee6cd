package sockets

import (
	"net"
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

// TestCountTimeWait: a connection the client closes first leaves a
// TIME_WAIT socket towards the server's address.
func TestCountTimeWait(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 1)
			c.Read(buf) // wait for the client's close
			c.Close()
		}
	}()
	for range 5 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		n, err := CountTimeWait(ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if n >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d TIME_WAIT sockets, want 5", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	lo, hi, err := LocalPortRange()
	if err != nil || lo <= 0 || hi < lo {
		t.Errorf("port range %d-%d %v", lo, hi, err)
	}
}
