package main

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/sockets"
)

// TestListenOverflowElsewhereNotBlamed: another listener of this machine,
// with a backlog of 1 and never accepting, is flooded with connects by the
// test while a bench runs against a healthy backend. The machine-wide
// TcpExt counters rise; the backend's own socket dropped nothing, and no
// note blames it.
func TestListenOverflowElsewhereNotBlamed(t *testing.T) {
	full, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	if err := sockets.SetBacklog(full, 1); err != nil {
		t.Fatal(err)
	}
	// Fill its queue (backlog + 1 connections), then keep sending SYNs
	// that it drops, until the bench is over.
	for range 2 {
		c, err := net.DialTimeout("tcp", full.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	stop := make(chan struct{})
	var flood sync.WaitGroup
	for range 3 {
		flood.Add(1)
		go func() {
			defer flood.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if c, err := net.DialTimeout("tcp", full.Addr().String(), 20*time.Millisecond); err == nil {
					c.Close()
				}
			}
		}()
	}
	defer func() { close(stop); flood.Wait() }()
	waitDrops := func() int64 {
		for range 500 {
			if st, err := sockets.TCPListener(full.Addr().String()); err == nil && st.Drops > 0 {
				return st.Drops
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatal("the flooded listener dropped nothing")
		return 0
	}
	waitDrops()
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Delay: time.Millisecond})
	before, err := sockets.TCPListener(full.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := benchJSON(t, "-n", "300", "-c", "2", srv.URL("/"))
	after, err := sockets.TCPListener(full.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if s.Complete != 300 || s.Failed != 0 {
		t.Fatalf("%d complete, %d failed", s.Complete, s.Failed)
	}
	if after.Drops <= before.Drops {
		t.Fatalf("the flooded listener dropped nothing during the bench (%d, then %d)", before.Drops, after.Drops)
	}
	if s.ListenOverflows == nil || *s.ListenOverflows <= 0 {
		t.Fatalf("listen_overflows %v: the machine-wide counter did not rise while another listener overflowed", s.ListenOverflows)
	}
	if len(s.ListenQueues) != 1 || s.ListenQueues[0].Drops == nil || *s.ListenQueues[0].Drops != 0 {
		t.Errorf("listen_queues %+v: want the backend's own socket with 0 drops", s.ListenQueues)
	}
	for _, n := range s.Notes {
		if strings.Contains(n, "listen queue") || strings.Contains(n, "ListenOverflows") {
			t.Errorf("a note blames the backend for another listener's overflow: %q", n)
		}
	}
}

// TestListenQueueUnix: a Unix socket target's own listener is read (its
// backlog; the kernel keeps no drop counter for it), and the machine's TCP
// counters are not.
func TestListenQueueUnix(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{Backlog: 3})
	s := benchJSON(t, "-n", "20", "-c", "2", srv.URL("/"))
	if s.Complete != 20 {
		t.Fatalf("%d complete, %d failed", s.Complete, s.Failed)
	}
	if len(s.ListenQueues) != 1 {
		t.Fatalf("listen_queues %+v: want the backend's own socket", s.ListenQueues)
	}
	q := s.ListenQueues[0]
	if q.Address != "unix:"+srv.Addr || q.Backlog != 3 || q.Drops != nil || q.PeakQueued > 3 {
		t.Errorf("listen_queues %+v: want unix:%s, backlog 3, no drop counter", q, srv.Addr)
	}
	if s.ListenOverflows != nil {
		t.Errorf("listen_overflows %d for a Unix socket target", *s.ListenOverflows)
	}
}
