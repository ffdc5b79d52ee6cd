package execute_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/sockets"
)

// enginesToRun returns the engines to test explicitly: poller, and uring
// where io_uring can be set up.
func enginesToRun(t *testing.T) []string {
	if err := sockets.RingAvailable(); err != nil {
		t.Logf("uring not tested: %v", err)
		return []string{execute.EnginePoller}
	}
	return []string{execute.EnginePoller, execute.EngineUring}
}

// timedLoad is the options of a run of bench -t limit -c c (--engine
// engine, --threads threads when not 0) against url.
func timedLoad(url, engine string, limit time.Duration, c, threads int) plan.Options {
	po := plan.Defaults(url)
	po.Duration, po.TimeLimitSet, po.Concurrency, po.Engine, po.Threads = limit, true, c, engine, threads
	return po
}

// TestEngines runs the load path's conditions on each engine, named
// explicitly: the same counts, classes and error texts, and the engine in
// the record.
func TestEngines(t *testing.T) {
	t.Parallel()
	for _, engine := range enginesToRun(t) {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			for _, network := range []string{"tcp", "unix"} {
				for _, proto := range []string{fixtures.ProtoHTTP, fixtures.ProtoFCGI} {
					// Exact counts: every request recorded once, the
					// server saw as many.
					srv := fixtures.StartTB(t, proto, network, fixtures.Options{BodyBytes: 333})
					run := runBenchPlan(t, context.Background(), benchLoad{n: 1001, c: 10, timeout: 30, engine: engine}.options(srv.URL("/x")),
						execute.Options{Quiet: true, Observe: true})
					s := run.Summary
					if s.Complete != 1001 || s.Failed != 0 || srv.Requests() != 1001 || s.HTMLTransferred != 1001*333 {
						t.Errorf("%s/%s: complete %d failed %d served %d html %d", proto, network, s.Complete, s.Failed, srv.Requests(), s.HTMLTransferred)
					}
					if run.Record.Environment.Engine != engine {
						t.Errorf("%s/%s: record says engine %q", proto, network, run.Record.Environment.Engine)
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
					s, rows, wall := faultRun(t, srv, benchLoad{n: 4, c: 2, timeout: timeout, engine: engine})
					checkAccounting(t, s, rows, wall, 4, 2, timeout)
					if got := failureCount(s.Failures, fc.class); got != 4 {
						t.Errorf("%s %s/%s: %d %s failures of 4: %+v %v", engine, fc.fault, network, got, fc.class, s.Failures, s.ErrorSamples)
					}
					if !errorSamplesHave(s.ErrorSamples, fc.msg) {
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
	for _, engine := range enginesToRun(t) {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Delay: 5 * time.Millisecond})
		s := runBenchPlan(t, context.Background(), benchLoad{n: 2000, c: 2, timeout: 1, engine: engine}.options(srv.URL("/")),
			execute.Options{Quiet: true, Observe: true, Started: closeAfterRequests(srv, 10)}).Summary
		if s.Complete < 1 || s.Failures.Connect < 1 || s.Complete+s.Failed != 2000 {
			t.Errorf("%s: complete %d failures %+v", engine, s.Complete, s.Failures)
		}
		if !errorSamplesHave(s.ErrorSamples, "connection refused") {
			t.Errorf("%s: samples %v: no word of refused connections", engine, s.ErrorSamples)
		}
	}
}

// TestEngineTimeLimitAndCancel: a time limit ends a run on time, and a
// cancelled context ends one at once, even with every worker waiting on a
// silent server, on each engine.
func TestEngineTimeLimitAndCancel(t *testing.T) {
	t.Parallel()
	for _, engine := range enginesToRun(t) {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 2 * time.Millisecond})
		start := time.Now()
		s := runBenchPlan(t, context.Background(), timedLoad(srv.URL("/"), engine, 500*time.Millisecond, 4, 0),
			execute.Options{Quiet: true, Observe: true}).Summary
		// The upper bound is loose on purpose (a busy shared machine): it
		// only tells a run that ended on time from one that waited for
		// the backend or for the timeout (30 s).
		if el := time.Since(start); el < 500*time.Millisecond || el > 10*time.Second || s.Complete < 10 || s.Failed != 0 {
			t.Errorf("%s: -t 0.5 took %v: complete %d failed %d", engine, el, s.Complete, s.Failed)
		}
		hang := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Fault: fixtures.FaultHang})
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start = time.Now()
		run := runBenchPlan(t, ctx, benchLoad{n: 100, c: 4, timeout: 30, engine: engine}.options(hang.URL("/")),
			execute.Options{Quiet: true, Observe: true})
		cancel()
		s = run.Summary
		// Loose for a busy machine: a run that ignored the cancel would
		// wait the 30 s timeout for the silent server.
		if el := time.Since(start); el > 10*time.Second || s.Complete != 0 || s.Failed != 0 || !run.Record.Interrupted {
			t.Errorf("%s: cancelled at 300 ms, returned after %v: complete %d failed %d interrupted %v", engine, el, s.Complete, s.Failed, run.Record.Interrupted)
		}
	}
}

// TestEngineLinger: without keep-alive, a server that closes after its
// response keeps the TIME_WAIT state: the client waits for the close.
func TestEngineLinger(t *testing.T) {
	t.Parallel()
	for _, engine := range enginesToRun(t) {
		srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 10})
		addr := strings.TrimSuffix(strings.TrimPrefix(srv.URL("/"), "http://"), "/")
		s := runBenchPlan(t, context.Background(), benchLoad{n: 300, c: 3, timeout: 30, engine: engine}.options(srv.URL("/")),
			execute.Options{Quiet: true, Observe: true}).Summary
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
	for _, engine := range enginesToRun(t) {
		for _, threads := range []int{1, 2} {
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
			s := runBenchPlan(t, context.Background(), timedLoad(srv.URL("/"), engine, 600*time.Millisecond, 4, threads),
				execute.Options{Quiet: true, Observe: true}).Summary
			close(stop)
			wg.Wait()
			if worst > time.Second || s.Complete < 10 {
				t.Errorf("%s --threads %d: slowest GC %v, complete %d", engine, threads, worst, s.Complete)
			}
		}
	}
}
