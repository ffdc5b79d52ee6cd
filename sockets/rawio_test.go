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

// TestWriteAwait: WriteAwait writes the whole request, then returns only
// once the response has begun (found by a read that does not wait), with
// the time of the write before it; a request larger than the socket's
// buffers is written whole; a silent server's deadline is met by the next
// Read, not lost; a write to a closed peer fails as Write does.
func TestWriteAwait(t *testing.T) {
	const delay = 50 * time.Millisecond
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			// The server reads the whole request (its size first), waits,
			// then answers with one byte, or stays silent for size 0.
			a := listen(t, network, func(c net.Conn) {
				var size [8]byte
				for {
					if _, err := io.ReadFull(c, size[:]); err != nil {
						return
					}
					n := int64(size[0])<<16 | int64(size[1])<<8 | int64(size[2])
					if _, err := io.CopyN(io.Discard, c, n-8); err != nil {
						return
					}
					if n == 8 {
						continue // silent
					}
					time.Sleep(delay)
					c.Write([]byte{'!'})
				}
			})
			conn, err := NewDialer(Target{Network: a.Network, Address: a.Address}, time.Second).Dial(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var r RawIO
			r.Reset(conn)
			clock := func() int64 { return time.Now().UnixNano() }
			fd := rawFD(t, conn)
			for _, size := range []int{64, 8 << 20} {
				req := make([]byte, size)
				req[0], req[1], req[2] = byte(size>>16), byte(size>>8), byte(size)
				start := time.Now()
				n, written, err := r.WriteAwait(req, clock)
				if n != size || err != nil {
					t.Fatalf("%d bytes: WriteAwait %d, %v", size, n, err)
				}
				if size == 64 {
					// Returned after the response began, and the write's
					// time is before it.
					if el := time.Since(start); el < delay {
						t.Errorf("WriteAwait returned after %v, before the response (%v)", el, delay)
					}
					if w := time.Unix(0, written); w.Before(start) || w.After(start.Add(delay/2)) {
						t.Errorf("written at %v after the start, want within %v", w.Sub(start), delay/2)
					}
					var b [1]byte
					if n, _, err := syscall.Recvfrom(fd, b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT); n != 1 || err != nil {
						t.Errorf("after WriteAwait the response is not there: %d, %v", n, err)
					}
				}
				var b [1]byte
				if n, err := r.Read(b[:]); n != 1 || err != nil {
					t.Fatalf("%d bytes: Read %d, %v", size, n, err)
				}
			}
			// A silent server: the deadline ends the wait, and the next Read
			// reports it.
			conn.SetDeadline(time.Now().Add(100 * time.Millisecond))
			req := make([]byte, 8)
			req[2] = 8
			if n, _, err := r.WriteAwait(req, clock); n != 8 || err != nil {
				t.Fatalf("silent server: WriteAwait %d, %v", n, err)
			}
			var b [1]byte
			if _, err := r.Read(b[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("silent server: Read %v, want a deadline error", err)
			}
			conn.SetDeadline(time.Time{})
		})
	}
	// A closed peer: the write fails (EPIPE or ECONNRESET on a stream whose
	// peer has gone).
	a := listen(t, "unix", func(c net.Conn) {})
	conn, err := NewDialer(Target{Network: a.Network, Address: a.Address}, time.Second).Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var r RawIO
	r.Reset(conn)
	var b [1]byte
	r.Read(b[:]) // EOF: the server has closed
	if _, _, err := r.WriteAwait(make([]byte, 64), func() int64 { return 0 }); !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("write to a closed peer: %v, want EPIPE or ECONNRESET", err)
	}
}

// rawFD returns conn's socket descriptor.
func rawFD(t *testing.T, conn net.Conn) int {
	t.Helper()
	rc, err := conn.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	rc.Control(func(s uintptr) { fd = int(s) })
	return fd
}
