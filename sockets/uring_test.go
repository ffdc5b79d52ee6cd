package sockets

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/testnet"
)

// TestRingConn: connections bound to ring slots connect, read what the
// server sends and its close, and end a read at their deadline or at the
// end of their dial's context (set from another goroutine), with the
// poller's errors.
func TestRingConn(t *testing.T) {
	if err := RingAvailable(); err != nil {
		t.Skipf("io_uring: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held sync.WaitGroup
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held.Go(func() {
				// Every third connection gets a greeting and a close;
				// the others silence until the test ends.
				var b [1]byte
				if _, err := c.Read(b[:]); err == nil && b[0] == 'g' {
					c.Write([]byte("hello"))
					c.Close()
					return
				}
				<-done
				c.Close()
			})
		}
	}()
	d := NewDialer(Target{Network: "tcp", Address: ln.Addr().String()}, 0)
	conns := make([]Conn, 3)
	errs := make([]error, 3)
	took := make([]time.Duration, 3)
	err = RunOnRings(1, 3, func(i int, s *RingSlot) { conns[i].UseRing(s) }, func(i int) {
		c := &conns[i]
		defer c.Release()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if errs[i] = c.Dial(ctx, d, time.Now().Add(time.Second)); errs[i] != nil {
			return
		}
		if _, ok := c.Conn.(*ringConn); !ok {
			errs[i] = errors.New("not a ring connection")
			return
		}
		start := time.Now()
		buf := make([]byte, 64)
		switch i {
		case 0:
			c.Conn.SetDeadline(start.Add(50 * time.Millisecond))
			c.IO.Write([]byte("x"))
			_, errs[i] = c.IO.Read(buf)
		case 1:
			time.AfterFunc(50*time.Millisecond, cancel)
			c.IO.Write([]byte("x"))
			_, errs[i] = c.IO.Read(buf)
		case 2:
			c.IO.Write([]byte("g"))
			n, err := c.IO.Read(buf)
			if n != 5 || string(buf[:n]) != "hello" || err != nil {
				errs[i] = errors.New("no greeting")
				return
			}
			if _, err := io.ReadAll(&c.IO); err != nil {
				errs[i] = err
				return
			}
			errs[i] = io.EOF
		}
		took[i] = time.Since(start)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []error{os.ErrDeadlineExceeded, os.ErrDeadlineExceeded, io.EOF} {
		if !errors.Is(errs[i], want) {
			t.Errorf("connection %d: %v, want %v", i, errs[i], want)
		}
		if i < 2 && (took[i] < 40*time.Millisecond || took[i] > time.Second) {
			t.Errorf("connection %d: ended after %v, want 50 ms", i, took[i])
		}
	}
}

// TestRingConnRefused: a refused connect through the ring is the poller's
// error, in the same words.
func TestRingConnRefused(t *testing.T) {
	if err := RingAvailable(); err != nil {
		t.Skipf("io_uring: %v", err)
	}
	addr := testnet.DeadTCP(t, "127.0.0.1")
	d := NewDialer(Target{Network: "tcp", Address: addr}, 0)
	var ringErr error
	var c Conn
	err := RunOnRings(1, 1, func(_ int, s *RingSlot) { c.UseRing(s) }, func(int) {
		ringErr = c.Dial(context.Background(), d, time.Now().Add(time.Second))
		c.Release()
	})
	if err != nil {
		t.Fatal(err)
	}
	var p Conn
	pollErr := p.Dial(context.Background(), d, time.Now().Add(time.Second))
	p.Release()
	if ringErr == nil || pollErr == nil || ringErr.Error() != pollErr.Error() {
		t.Errorf("ring: %v; poller: %v", ringErr, pollErr)
	}
}
