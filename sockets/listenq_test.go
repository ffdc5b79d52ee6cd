package sockets

import (
	"net"
	"strings"
	"testing"
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
	if _, _, err := ListenBacklog("127.0.0.1:1"); err == nil {
		t.Error("no listener on port 1: no error")
	}
}
