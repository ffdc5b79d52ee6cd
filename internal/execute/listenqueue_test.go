package execute_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// The listen queues of a run's target as execute.Run reads them (its own
// listening sockets through sock_diag, the machine's TCP counters) and the
// notes its summary makes of them. plan (above execute) builds the runs'
// plans as bench would from its flags.

// execBenchSummary runs against url the plan bench builds by default (one
// request, one worker, no keep-alive), changed by edit (nil: none), as
// bench runs it (observed), and returns the run's summary.
func execBenchSummary(t *testing.T, url string, edit func(*plan.Options)) stats.Summary {
	t.Helper()
	o := plan.Defaults(url)
	if edit != nil {
		edit(&o)
	}
	o.RequestsSet = o.Requests != 1
	o.ConcurrencySet = o.Concurrency != 1
	l, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	run, err := execute.Run(context.Background(), l.Plan, execute.Options{Stderr: io.Discard, Quiet: true, Observe: true})
	if err != nil {
		t.Fatal(err)
	}
	return run.Summary
}

// execSpeedAttempts is how many times a speed assertion is tried: a loaded
// machine can wreck the timing of one run, while a broken feature fails
// every attempt. Counts are checked on every attempt with t.Fatalf.
const execSpeedAttempts = 3

// execSpeedRetries runs attempt until it reports nothing wrong, at most
// execSpeedAttempts times.
func execSpeedRetries(t *testing.T, attempt func() []string) {
	t.Helper()
	for i := 1; ; i++ {
		bad := attempt()
		if len(bad) == 0 {
			return
		}
		if i == execSpeedAttempts {
			t.Fatalf("after %d attempts: %s", i, strings.Join(bad, "; "))
		}
		t.Logf("attempt %d: %s; trying again", i, strings.Join(bad, "; "))
	}
}

// TestListenOverflowElsewhereNotBlamed: another listener of this machine,
// with a backlog of 1 and never accepting, is flooded with connects by the
// test while a run (bench -n 300 -c 2) runs against a healthy backend. The machine-wide
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
	s := execBenchSummary(t, srv.URL("/"), func(o *plan.Options) { o.Requests, o.Concurrency = 300, 2 })
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
	s := execBenchSummary(t, srv.URL("/"), func(o *plan.Options) { o.Requests, o.Concurrency = 20, 2 })
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

// TestListenOverflowNote: a backend with a listen backlog of 1 and -c 60
// new connections at once overflows its accept queue; the report names its
// own listening socket, with the socket's own drop count and the backlog.
// (A threaded backend drains its queue at once, so the dropped connects
// succeed on their first SYN retransmission, after 1 s, or time out (-s 3)
// when the handshake's last ACK was dropped; a serial backend would make
// them back off for many seconds.)
func TestListenOverflowNote(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Backlog: 1})
	var s stats.Summary
	execSpeedRetries(t, func() []string {
		s = execBenchSummary(t, srv.URL("/"), func(o *plan.Options) { o.Requests, o.Concurrency, o.Timeout = 120, 60, 3*time.Second })
		if s.ListenOverflows == nil || s.ListenBacklog == nil || len(s.ListenQueues) != 1 || s.ListenQueues[0].Drops == nil {
			t.Fatalf("listen_overflows %v, listen_backlog %v, listen_queues %+v: not read for a loopback target",
				s.ListenOverflows, s.ListenBacklog, s.ListenQueues)
		}
		if *s.ListenBacklog != 1 || s.ListenQueues[0].Backlog != 1 || s.ListenQueues[0].Address != "tcp:"+srv.Addr {
			t.Fatalf("backlog %d, listen_queues %+v: want backlog 1 on tcp:%s", *s.ListenBacklog, s.ListenQueues, srv.Addr)
		}
		if *s.ListenQueues[0].Drops <= 0 {
			return []string{"the listen queue did not overflow"}
		}
		return nil
	})
	q := s.ListenQueues[0]
	// The machine-wide counters saw the overflow too. They are not an
	// upper or lower bound of the socket's own counter (sk_drops also
	// counts drops that neither ListenOverflows nor ListenDrops counts,
	// and other listeners add to the machine's), so only that.
	if s.ListenDrops == nil {
		t.Errorf("no machine-wide ListenDrops for a loopback target")
	} else if *s.ListenDrops <= 0 || *s.ListenOverflows <= 0 {
		t.Errorf("machine-wide ListenOverflows %d, ListenDrops %d: the socket's %d drops not seen there", *s.ListenOverflows, *s.ListenDrops, *q.Drops)
	}
	var note string
	for _, n := range s.Notes {
		if strings.Contains(n, "listen queue") {
			if note != "" {
				t.Errorf("two listen queue notes: %q and %q", note, n)
			}
			note = n
		}
	}
	for _, want := range []string{"the target's own socket tcp:" + srv.Addr, fmt.Sprintf("dropped %d connection attempts", *q.Drops),
		"backlog 1,", fmt.Sprintf("queue peaked at %d", q.PeakQueued), "somaxconn", "lower -c",
		fmt.Sprintf("%d connects took 1 s or more", s.ConnectsOver1s)} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q: %q", want, note)
		}
	}
	if strings.Contains(note, "machine-wide") {
		t.Errorf("the note rests on the machine-wide counters although the socket's own were read: %q", note)
	}
	// A Unix socket target: the TCP counters say nothing about it.
	usrv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	if u := execBenchSummary(t, usrv.URL("/"), func(o *plan.Options) { o.Requests = 5 }); u.ListenOverflows != nil {
		t.Errorf("listen_overflows %d for a Unix socket target", *u.ListenOverflows)
	}
}
