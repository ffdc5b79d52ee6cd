package driver_test

import (
	"context"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
)

// fragileStepsBackend starts a FastCGI backend of 50 ms requests that
// exits when a connection is closed after a request began and before its
// END_REQUEST, as Ruby's fcgi.rb does.
func fragileStepsBackend(t *testing.T) *fixtures.Server {
	return fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{Delay: 50 * time.Millisecond,
		Behaviour: fixtures.Behaviour{DieOnCutRequest: true}})
}

// checkStepsBackendAlive fails the test when srv has died.
func checkStepsBackendAlive(t *testing.T, srv *fixtures.Server, after string) {
	t.Helper()
	time.Sleep(100 * time.Millisecond) // a close at the end would be seen by now
	if r := srv.DeathReason(); r != "" {
		t.Fatalf("the backend died after %s: %s", after, r)
	}
}

// TestTimedStepsKeepFragileBackend: the end of a time limit sends no new
// request and lets the requests in flight finish, so a backend that dies
// when a begun request's connection is closed survives 20 timed runs of a
// sweep (half a second each, sweep --repeat 5 -t 0.5 -c 1,2,3,4) with
// their warm-ups, and capacity searches of short steps, open and closed.
// (A timed bench run: internal/execute.) The sweep is built with
// internal/plan and run with internal/sweep, the searches built with
// internal/plan, as the commands do.
func TestTimedStepsKeepFragileBackend(t *testing.T) {
	t.Run("sweep", func(t *testing.T) {
		srv := fragileStepsBackend(t)
		po := plan.Defaults("")
		po.Duration, po.TimeLimitSet = 500*time.Millisecond, true
		so := plan.SweepOptions{Load: po, Args: []string{srv.URL("/x")}, Levels: "1,2,3,4"}
		sp, err := so.Build()
		if err != nil {
			t.Fatal(err)
		}
		tp, err := trials.Options{Repeat: 5, RepeatSet: true, MaxRepeat: trials.DefaultMaxRepeat}.Build()
		if err != nil {
			t.Fatal(err)
		}
		tp.Noise = 0.02
		sp.Config.Trials = &tp
		sp.Config.Options = execute.Options{Quiet: true, Version: "test"}
		res, err := sweep.Run(context.Background(), sp.Config, sp.Series)
		checkStepsBackendAlive(t, srv, "sweep --repeat 5 -t 0.5 -c 1,2,3,4")
		if err != nil || res.Interrupted {
			t.Fatalf("sweep: %v, interrupted %v", err, res.Interrupted)
		}
	})
	for _, model := range []string{capacity.ModelOpen, capacity.ModelClosed} {
		t.Run("capacity/"+model, func(t *testing.T) {
			srv := fragileStepsBackend(t)
			po := plan.Defaults(srv.URL("/x"))
			po.Duration, po.TimeLimitSet, po.SLO = 300*time.Millisecond, true, []string{"p99<=1s"}
			co := plan.CapacityOptions{Load: po, Model: model, Resolution: 0.02, ResolutionText: "2%", ConfirmSet: true,
				Warmup: 100 * time.Millisecond}
			if model == capacity.ModelOpen {
				co.Start, co.Max = 20, 160
			} else {
				co.Start, co.Max = 1, 8
			}
			c, err := co.Build()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			sched := driver.NewCapacity(ctx, c.Config)
			_, err = driver.Run(ctx, driver.Config{Schedule: sched, Warmup: driver.Warmup{Duration: c.Warmup},
				Options: execute.Options{Quiet: true, Observe: true, Version: "test"}},
				[]driver.Series{{Label: c.ShownURL(), Plan: c.Plan}})
			checkStepsBackendAlive(t, srv, "capacity -t 0.3 --model "+model)
			res, serr := sched.Result()
			if err != nil || serr != nil || len(res.Steps) == 0 || res.Best < 0 {
				t.Fatalf("search: %v, %v: %d steps, best %d", err, serr, len(res.Steps), res.Best)
			}
		})
	}
}
