package main

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/sockets"
)

// engines returns the engines to test explicitly: poller, and uring where
// io_uring can be set up.
func engines(t *testing.T) []string {
	if err := sockets.RingAvailable(); err != nil {
		t.Logf("uring not tested: %v", err)
		return []string{"poller"}
	}
	return []string{"poller", "uring"}
}

// engineRecord runs bench with JSON output and returns the record.
func engineRecord(t *testing.T, ctx context.Context, args ...string) (*stats.Record, stats.Summary) {
	t.Helper()
	code, out, errs := runMain(t, ctx, append([]string{"bench", "-q", "--format", "json"}, args...)...)
	if code != 0 && code != exitSIGINT {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		stats.Summary
		Record *stats.Record `json:"record"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Record == nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	return doc.Record, doc.Summary
}

// TestEngines runs the load path's conditions on each engine, named
// explicitly with --engine: the same counts, classes and error texts, and
// the engine in the record.
func TestEngines(t *testing.T) {
	t.Parallel()
	for _, engine := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			for _, network := range []string{"tcp", "unix"} {
				for _, proto := range []string{fixtures.ProtoHTTP, fixtures.ProtoFCGI} {
					// Exact counts: every request recorded once, the
					// server saw as many.
					srv := fixtures.StartTB(t, proto, network, fixtures.Options{BodyBytes: 333})
					rec, s := engineRecord(t, context.Background(), "--engine", engine, "-n", "1001", "-c", "10", srv.URL("/x"))
					if s.Complete != 1001 || s.Failed != 0 || srv.Requests() != 1001 || s.HTMLTransferred != 1001*333 {
						t.Errorf("%s/%s: complete %d failed %d served %d html %d", proto, network, s.Complete, s.Failed, srv.Requests(), s.HTMLTransferred)
					}
					if rec.Environment.Engine != engine {
						t.Errorf("%s/%s: record says engine %q", proto, network, rec.Environment.Engine)
					}
				}
				for _, fc := range []faultCase{
					{proto: "http", fault: fixtures.FaultHang, class: "timeout", msg: "timeout"},
					{proto: "http", fault: fixtures.FaultShortBody, class: "receive", msg: "closed in the body"},
					{proto: "fcgi", fault: fixtures.FaultCut, class: "receive", msg: "closed before END_REQUEST"},
					{proto: "fcgi", fault: fixtures.FaultDrip, class: "timeout", msg: "timeout", timeout: 0.15},
				} {
					srv := fixtures.StartTB(t, fc.proto, network, fixtures.Options{Fault: fc.fault})
					timeout := fc.timeout
					if timeout == 0 {
						timeout = 0.3
					}
					s, rows, wall := faultRun(t, srv, timeout, "--engine", engine, "-n", "4", "-c", "2")
					checkAccounting(t, s, rows, wall, 4, 2, timeout)
					if got := failureCount(s.Failures, fc.class); got != 4 {
						t.Errorf("%s %s/%s: %d %s failures of 4: %+v %v", engine, fc.fault, network, got, fc.class, s.Failures, s.ErrorSamples)
					}
					if !samplesHave(s.ErrorSamples, fc.msg) {
						t.Errorf("%s %s/%s: samples %v lack %q", engine, fc.fault, network, s.ErrorSamples, fc.msg)
					}
				}
			}
		})
	}
}

// TestEngineRefusedMidRun: a server that goes away mid-run gives Connect
// failures named as refused connections, on each engine.
func TestEngineRefusedMidRun(t *testing.T) {
	t.Parallel()
	for _, engine := range engines(t) {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Delay: 5 * time.Millisecond})
		time.AfterFunc(150*time.Millisecond, func() { srv.Close() })
		s := benchJSON(t, "--engine", engine, "-n", "2000", "-c", "2", "-s", "1", srv.URL("/"))
		if s.Complete < 1 || s.Failures.Connect < 1 || s.Complete+s.Failed != 2000 {
			t.Errorf("%s: complete %d failures %+v", engine, s.Complete, s.Failures)
		}
		if !samplesHave(s.ErrorSamples, "connection refused") {
			t.Errorf("%s: samples %v: no word of refused connections", engine, s.ErrorSamples)
		}
	}
}

// TestEngineTimeLimitAndCancel: -t ends a run on time, and a cancelled
// context ends one at once, even with every worker waiting on a silent
// server, on each engine.
func TestEngineTimeLimitAndCancel(t *testing.T) {
	t.Parallel()
	for _, engine := range engines(t) {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 2 * time.Millisecond})
		start := time.Now()
		_, s := engineRecord(t, context.Background(), "--engine", engine, "-t", "0.5", "-c", "4", srv.URL("/"))
		// The upper bound is loose on purpose (a busy shared machine): it
		// only tells a run that ended on time from one that waited for
		// the backend or for -s (30 s).
		if el := time.Since(start); el < 500*time.Millisecond || el > 10*time.Second || s.Complete < 10 || s.Failed != 0 {
			t.Errorf("%s: -t 0.5 took %v: complete %d failed %d", engine, el, s.Complete, s.Failed)
		}
		hang := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Fault: fixtures.FaultHang})
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start = time.Now()
		_, s = engineRecord(t, ctx, "--engine", engine, "-n", "100", "-c", "4", "-s", "30", hang.URL("/"))
		cancel()
		// Loose for a busy machine: a run that ignored the cancel would
		// wait -s 30 for the silent server.
		if el := time.Since(start); el > 10*time.Second || s.Complete != 0 || s.Failed != 0 {
			t.Errorf("%s: cancelled at 300 ms, returned after %v: complete %d failed %d", engine, el, s.Complete, s.Failed)
		}
	}
}

// TestEngineLinger: without keep-alive, a server that closes after its
// response keeps the TIME_WAIT state: the client waits for the close.
func TestEngineLinger(t *testing.T) {
	t.Parallel()
	for _, engine := range engines(t) {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 10})
		addr := strings.TrimSuffix(strings.TrimPrefix(srv.URL("/"), "http://"), "/")
		s := benchJSON(t, "--engine", engine, "-n", "300", "-c", "3", srv.URL("/"))
		n, err := sockets.CountTimeWait(addr)
		if err != nil {
			t.Skipf("cannot count TIME_WAIT sockets: %v", err)
		}
		if s.Complete != 300 || n > 30 {
			t.Errorf("%s: complete %d; %d of 300 connections left TIME_WAIT on the client's side", engine, s.Complete, n)
		}
	}
}

// TestEngineGC: a garbage collection during a run completes promptly on
// each engine, with one thread or two (the ring engine's wait in the
// kernel is bounded and yields to the runtime).
func TestEngineGC(t *testing.T) {
	for _, engine := range engines(t) {
		for _, threads := range []string{"1", "2"} {
			srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
			var wg sync.WaitGroup
			stop := make(chan struct{})
			var worst time.Duration
			wg.Go(func() {
				time.Sleep(100 * time.Millisecond)
				for {
					select {
					case <-stop:
						return
					default:
					}
					start := time.Now()
					runtime.GC()
					worst = max(worst, time.Since(start))
					time.Sleep(20 * time.Millisecond)
				}
			})
			_, s := engineRecord(t, context.Background(), "--engine", engine, "--threads", threads, "-t", "0.6", "-c", "4", srv.URL("/"))
			close(stop)
			wg.Wait()
			if worst > time.Second || s.Complete < 10 {
				t.Errorf("%s --threads %s: slowest GC %v, complete %d", engine, threads, worst, s.Complete)
			}
		}
	}
}

// TestEngineFlag: a bad --engine is a usage error; uring where it cannot
// run (open model, TLS, clusters) too.
func TestEngineFlag(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--engine", "epoll"}, "want one of auto, poller, uring"},
		{[]string{"--engine", "uring", "--rate", "100"}, "closed model only"},
	} {
		code, _, errs := runMain(t, context.Background(), append(append([]string{"bench", "-n", "10"}, c.args...), srv.URL("/"))...)
		if code != exitUsage || !strings.Contains(errs, c.msg) || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
			t.Errorf("%v: exit %d, %q", c.args, code, errs)
		}
	}
}
