package sockets

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestConnNoLinger: a Conn waits LingerGrace for a server that does not
// close, once; after that it closes at once. Cancelling the dial's context
// ends a blocked read.
func TestConnNoLinger(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	a := listen(t, "unix", func(c net.Conn) { <-release })
	d := NewDialer(Target{Network: a.Network, Address: a.Address}, time.Second)
	var c Conn
	for i, want := range []time.Duration{LingerGrace, 0} {
		if err := c.Dial(context.Background(), d, time.Now().Add(5*time.Second)); err != nil || !c.Open() {
			t.Fatalf("dial %d: %v", i, err)
		}
		start := time.Now()
		c.CloseAfterPeer(make([]byte, 16))
		if el := time.Since(start); el < want || el > want+time.Second {
			t.Errorf("close %d took %v, want about %v", i, el, want)
		}
		if c.Open() {
			t.Fatalf("close %d left the connection open", i)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Dial(ctx, d, time.Now().Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	if _, err := c.IO.Read(make([]byte, 16)); err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("read after cancel: %v after %v", err, time.Since(start))
	}
}
