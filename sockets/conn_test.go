package sockets

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
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

// TestRawIO: over TCP and Unix sockets, through a plain and a cluster
// dialer, RawIO uses the raw socket and behaves as the connection's own
// Read and Write: data both ways, EOF, the deadline, a write to a closed
// peer.
func TestRawIO(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		for _, cluster := range []bool{false, true} {
			name := network
			if cluster {
				name += "/cluster"
			}
			t.Run(name, func(t *testing.T) {
				a := listen(t, network, echo)
				d := NewDialer(Target{Network: a.Network, Address: a.Address}, time.Second)
				if cluster {
					d = NewClusterDialer(Target{Network: a.Network, Address: a.Address}, DialerOptions{Upstreams: []Addr{a, a}})
				}
				conn, err := d.DialDeadline(context.Background(), time.Now().Add(5*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				var r RawIO
				r.Reset(conn)
				if r.rc == nil {
					t.Fatalf("%T: no raw socket", conn)
				}
				msg := []byte("hello, raw socket")
				if n, err := r.Write(msg); n != len(msg) || err != nil {
					t.Fatalf("Write: %d %v", n, err)
				}
				buf := make([]byte, 64)
				got := 0
				for got < len(msg) {
					n, err := r.Read(buf[got:])
					if err != nil {
						t.Fatalf("Read: %v", err)
					}
					got += n
				}
				if string(buf[:got]) != string(msg) {
					t.Fatalf("echo %q, want %q", buf[:got], msg)
				}
				// Nothing more comes: the deadline ends the read.
				conn.SetDeadline(time.Now().Add(100 * time.Millisecond))
				start := time.Now()
				if _, err := r.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("Read past the deadline: %v, want a deadline error", err)
				}
				if el := time.Since(start); el > 2*time.Second {
					t.Errorf("the deadline ended the read after %v", el)
				}
			})
		}
	}
}

// TestRawIOPeerClose: EOF when the server closes, then an error (EPIPE or
// ECONNRESET) for writes to it, never a hang or a signal.
func TestRawIOPeerClose(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			a := listen(t, network, func(c net.Conn) {})
			conn, err := NewDialer(Target{Network: a.Network, Address: a.Address}, time.Second).Dial(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			var r RawIO
			r.Reset(conn)
			buf := make([]byte, 16)
			if n, err := r.Read(buf); n != 0 || err != io.EOF {
				t.Fatalf("Read after the server's close: %d %v, want EOF", n, err)
			}
			var werr error
			for i := 0; i < 100 && werr == nil; i++ {
				_, werr = r.Write(make([]byte, 4096))
				time.Sleep(time.Millisecond)
			}
			if !errors.Is(werr, syscall.EPIPE) && !errors.Is(werr, syscall.ECONNRESET) {
				t.Fatalf("Write to a closed peer: %v, want EPIPE or ECONNRESET", werr)
			}
		})
	}
}

// TestRawIOFallback: a connection without a raw socket (TLS) is read and
// written through its own methods.
func TestRawIOFallback(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	go echo(server)
	var r RawIO
	r.Reset(tls.Client(client, &tls.Config{}))
	if r.rc != nil {
		t.Fatal("a TLS connection got a raw socket")
	}
	r.Reset(client)
	if r.rc != nil {
		t.Fatal("a pipe got a raw socket")
	}
	go r.Write([]byte("ping"))
	buf := make([]byte, 4)
	if n, err := io.ReadFull(&r, buf); n != 4 || err != nil || string(buf) != "ping" {
		t.Fatalf("%d %v %q", n, err, buf)
	}
}

// TestRawIOCloseAfterPeer: a server that closes (after sending more bytes)
// is seen closing; one that keeps the connection open is given up on after
// LingerGrace. Either way the connection is closed and RawIO reset.
func TestRawIOCloseAfterPeer(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		for _, serverCloses := range []bool{true, false} {
			t.Run(network+"/"+map[bool]string{true: "closes", false: "stays"}[serverCloses], func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				a := listen(t, network, func(c net.Conn) {
					c.Write([]byte("trailing bytes"))
					if !serverCloses {
						<-release
					}
				})
				conn, err := NewDialer(Target{Network: a.Network, Address: a.Address}, time.Second).DialDeadline(context.Background(), time.Now().Add(5*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				var r RawIO
				r.Reset(conn)
				start := time.Now()
				got := r.CloseAfterPeer(make([]byte, 4))
				el := time.Since(start)
				if got != serverCloses {
					t.Errorf("CloseAfterPeer = %v, want %v", got, serverCloses)
				}
				if !serverCloses && (el < LingerGrace || el > LingerGrace+time.Second) {
					t.Errorf("gave up after %v, want %v", el, LingerGrace)
				}
				if r.conn != nil || r.rc != nil {
					t.Error("RawIO not reset")
				}
				if _, err := conn.Write([]byte("x")); err == nil {
					t.Error("the connection is still open")
				}
			})
		}
	}
}
