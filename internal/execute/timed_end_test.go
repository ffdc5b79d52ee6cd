package execute_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
)

// fragileBackend starts a FastCGI backend of 50 ms requests that exits
// when a connection is closed after a request began and before its
// END_REQUEST, as Ruby's fcgi.rb does.
func fragileBackend(t *testing.T, network string) *fixtures.Server {
	return fixtures.StartTB(t, fixtures.ProtoFCGI, network, fixtures.Options{Delay: 50 * time.Millisecond,
		Behaviour: fixtures.Behaviour{DieOnCutRequest: true}})
}

// checkBackendAlive fails the test when srv has died.
func checkBackendAlive(t *testing.T, srv *fixtures.Server, after string) {
	t.Helper()
	time.Sleep(100 * time.Millisecond) // a close at the end would be seen by now
	if r := srv.DeathReason(); r != "" {
		t.Fatalf("the backend died after %s: %s", after, r)
	}
}

// TestTimedEndKeepsFragileBackend: the end of a time limit sends no new
// request and lets the requests in flight finish, so a backend that dies
// when a begun request's connection is closed survives a timed run
// (bench -t 1 -c 4: closed and open model, stages). (The sweeps and
// capacity searches of timed steps: internal/driver.)
func TestTimedEndKeepsFragileBackend(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		for _, tc := range []struct {
			name string
			set  func(po *plan.Options)
			// oneLevel: the closed model at one level, where some
			// requests are always in flight at the deadline.
			oneLevel bool
		}{
			{"", func(*plan.Options) {}, true},
			{"-k", func(po *plan.Options) { po.KeepAlive = true }, true},
			{"--rate 40", func(po *plan.Options) { po.Rate, po.RateSet = 40, true }, false},
			{"--stages 0.5:4,0.5:1", func(po *plan.Options) { po.StageSpec = "0.5:4,0.5:1" }, false},
		} {
			t.Run("bench/"+network+tc.name, func(t *testing.T) {
				srv := fragileBackend(t, network)
				po := timedLoad(srv.URL("/x"), "", time.Second, 4, 0)
				po.ConcurrencySet = true
				tc.set(&po)
				s := runBenchPlan(t, context.Background(), po, execute.Options{Quiet: true, Observe: true}).Summary
				checkBackendAlive(t, srv, "bench -t 1 -c 4 "+tc.name)
				if s.Failed != 0 || s.Complete < 5 {
					t.Errorf("complete %d failed %d: %v", s.Complete, s.Failed, s.ErrorSamples)
				}
				// The requests in flight at the deadline are drained: at
				// most -c, and in the closed model at one level some
				// always are (50 ms requests back to back). The rate is
				// the window's: complete / the time limit.
				if s.Drained > 4 || (tc.oneLevel && s.Drained == 0) {
					t.Errorf("drained %d", s.Drained)
				}
				if s.TimeTaken < 1 || math.Abs(s.RequestsPerSecond-float64(s.Complete)/s.TimeTaken) > 0.01 {
					t.Errorf("time taken %g s, %g req/s for %d complete", s.TimeTaken, s.RequestsPerSecond, s.Complete)
				}
			})
		}
	}
}
