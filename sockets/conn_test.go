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

// TestConnCancelHookAcrossDials: one hook per context serves every
// connection of a Conn; the end of the context interrupts the open one, and
// a dial after the end is interrupted at once. Release unregisters the hook.
func TestConnCancelHookAcrossDials(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	a := listen(t, "tcp", func(c net.Conn) { <-release })
	d := NewDialer(Target{Network: a.Network, Address: a.Address}, time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var c Conn
	var first *cancelHook
	for i := range 5 {
		if err := c.Dial(ctx, d, time.Now().Add(5*time.Second)); err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		if i == 0 {
			first = c.hook
		} else if c.hook != first {
			t.Fatalf("dial %d registered a new hook", i)
		}
		if i < 4 {
			c.Close()
		}
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	if _, err := c.IO.Read(make([]byte, 16)); err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("read after cancel: %v after %v", err, time.Since(start))
	}
	c.Close()
	// The context has ended: a new connection is interrupted at once.
	if err := c.Dial(ctx, d, time.Now().Add(5*time.Second)); err == nil {
		start = time.Now()
		if _, err := c.IO.Read(make([]byte, 16)); err == nil || time.Since(start) > time.Second {
			t.Errorf("read on a dial after the end: %v after %v", err, time.Since(start))
		}
	}
	// A dial with another context replaces the hook; Release unregisters it.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	if err := c.Dial(ctx2, d, time.Now().Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	h := c.hook
	if h == first || h == nil {
		t.Fatal("a dial with a new context kept the old hook")
	}
	c.Release()
	if c.Open() || c.hook != nil || h.stop() {
		t.Errorf("Release left open %v, hook %v, registered %v", c.Open(), c.hook != nil, h.stop())
	}
}
