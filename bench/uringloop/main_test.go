package main

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/sockets"
)

// runAgainst runs the loop for a short time against a fixture's URL; it
// skips the test when the kernel refuses io_uring (a seccomp filter).
func runAgainst(t *testing.T, url string, cfg config) result {
	t.Helper()
	tg, err := sockets.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.target = tg
	if cfg.conns == 0 {
		cfg.conns, cfg.threads = 3, 2
	}
	cfg.dur = 200 * time.Millisecond
	done := make(chan struct{})
	var res result
	go func() {
		defer close(done)
		res, err = run(cfg)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the loop did not stop")
	}
	if errors.Is(err, errNoRing) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestLoop: whole responses (Content-Length and chunked bodies larger than
// the buffer, over TCP and Unix sockets) are counted, none fails, every
// request reached the server, and connections are new per request without
// -k and kept with it.
func TestLoop(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		for _, path := range []string{"/", fixtures.HTTPPathChunked} {
			for _, keep := range []bool{false, true} {
				for _, socketOp := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s%s/keep=%v/socketop=%v", network, path, keep, socketOp), func(t *testing.T) {
						srv := fixtures.StartTB(t, fixtures.ProtoHTTP, network, fixtures.Options{BodyBytes: 40_000})
						// The IORING_OP_SOCKET runs also wait for batches
						// of completions. (Not -rawenter: a raw wait can
						// hold up a GC stop, and with it the in-process
						// server, until the loop's timeout.)
						cfg := config{keepAlive: keep, measure: true, socketOp: socketOp, defer_: true}
						if socketOp {
							cfg.batch = 2
						}
						reqs, accepted := srv.Requests(), srv.Accepted()
						res := runAgainst(t, srv.URL(path), cfg)
						if res.ok == 0 || res.failed != 0 {
							t.Fatalf("ok %d, failed %d", res.ok, res.failed)
						}
						if got := srv.Requests() - reqs; got < res.ok {
							t.Errorf("server served %d, loop counted %d", got, res.ok)
						}
						conns := srv.Accepted() - accepted
						if !keep && conns < res.ok {
							t.Errorf("%d connections for %d requests without keep-alive", conns, res.ok)
						}
						if keep && conns > 3 {
							t.Errorf("%d connections for 3 kept ones", conns)
						}
						var n int64
						for _, c := range res.hist {
							n += int64(c)
						}
						if n != res.ok {
							t.Errorf("%d durations recorded for %d requests", n, res.ok)
						}
					})
				}
			}
		}
	}
}

// TestLoopRedial: kept connections the server closes are redialled, not
// counted as failures.
func TestLoopRedial(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{KeepAlive: fixtures.KeepAlive{Max: 3}})
	res := runAgainst(t, srv.URL("/"), config{keepAlive: true, socketOp: true})
	if res.ok < 4 || res.failed != 0 {
		t.Fatalf("ok %d, failed %d", res.ok, res.failed)
	}
	if srv.Accepted() <= 3 {
		t.Fatalf("%d connections: no redial", srv.Accepted())
	}
}

// TestLoopFailures: broken responses and a refused connection are failures,
// never counts, and the loop still stops on time.
func TestLoopFailures(t *testing.T) {
	for _, fault := range []string{fixtures.FaultGarbage, fixtures.FaultShortBody, fixtures.FaultChunkedCut, fixtures.FaultReset, fixtures.FaultHang} {
		for _, keep := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/keep=%v", fault, keep), func(t *testing.T) {
				srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 1000, Fault: fault})
				res := runAgainst(t, srv.URL("/"), config{keepAlive: keep, socketOp: true, defer_: true})
				if res.ok != 0 || (fault != fixtures.FaultHang && res.failed == 0) {
					t.Fatalf("ok %d, failed %d", res.ok, res.failed)
				}
			})
		}
	}
	t.Run("refused", func(t *testing.T) {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
		url := srv.URL("/")
		srv.Close()
		res := runAgainst(t, url, config{conns: 1, threads: 1, socketOp: true})
		if res.ok != 0 || res.failed == 0 {
			t.Fatalf("ok %d, failed %d", res.ok, res.failed)
		}
	})
}
