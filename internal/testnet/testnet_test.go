package testnet

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// TestDeadTCP: the address refuses connections, and servers started on
// port 0 while it is held never get its port.
func TestDeadTCP(t *testing.T) {
	dead := DeadTCP(t, "127.0.0.1")
	if _, err := net.Dial("tcp", dead); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", dead, err)
	}
	if ln, err := net.Listen("tcp", dead); err == nil {
		ln.Close()
		t.Fatalf("%s could be listened on", dead)
	}
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range 200 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		if ln.Addr().String() == dead {
			t.Fatalf("port 0 got the dead address %s", dead)
		}
	}
}
