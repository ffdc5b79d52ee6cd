package driver

import (
	"context"
	"errors"
	"github.com/backbench/backbench/internal/stats"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/internal/trials"
	"github.com/backbench/backbench/sockets"
)

// plan returns the plan of a run against url, as the command line would
// build it.
func plan(t *testing.T, url string, concurrency int, requests int64) *execute.Plan {
	t.Helper()
	tgt, err := sockets.ParseTarget(url)
	if err != nil {
		t.Fatal(err)
	}
	return &execute.Plan{Shape: stats.Shape{Concurrency: concurrency, Requests: requests}, Target: tgt, KeepAlive: true, Timeout: 5 * time.Second, ProtoOptions: protocol.FCGIOptions{DocumentRoot: "/srv"}, Method: "GET"}
}

// deadUnix is the URL of a Unix socket path where nothing listens (no
// port that the kernel could hand to someone else).
func deadUnix(t *testing.T) string {
	return "fcgi://unix:" + filepath.Join(t.TempDir(), "none.sock") + ":/x.php"
}

// setup is the process-wide setup of a test's runs, made by the caller
// as sweep makes it: the runs then check no socket path themselves, so
// that a dead Unix socket is data, as a dead TCP port is.
func setup(t *testing.T) *execute.Setup {
	s := execute.Prepare(&execute.Plan{}, 8, true, nil)
	t.Cleanup(s.Done)
	return s
}

// event is one run the driver started, as Progress saw it.
type event struct {
	series, level int
	warmup        bool
	requests      int64
}

// TestTrialsInterleaved: N trials of every series at every level run in
// rounds, trial k of every series before trial k+1 of any, in the orders
// the seed gives (trials.Rounds); every trial follows its own warm-up of
// a tenth of -n; the counts are exact, at the backend too.
func TestTrialsInterleaved(t *testing.T) {
	a := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{})
	b := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	const n, repeat = 20, 3
	tp := trials.Plan{Repeat: repeat, Seed: 42}
	var events []event
	kept := 0
	res, err := Run(context.Background(), Config{
		Schedule: Concurrencies([]int{1, 2}, n, 0),
		Trials:   &tp,
		Warmup:   DefaultWarmup(n, 0),
		Progress: func(p Progress) {
			events = append(events, event{p.SeriesIndex, p.LevelIndex, p.Warmup, p.Requests})
		},
		OnTrial: func(Trial) { kept++ },
	}, []Series{{Label: "a", Plan: plan(t, a.URL("/x.php"), 1, n)}, {Label: "b", Plan: plan(t, b.URL("/"), 1, n)}})
	if err != nil {
		t.Fatal(err)
	}
	// The orders the seed gives, level after level.
	rounds := trials.NewRounds(tp)
	var want [][]int
	for range 2 {
		lr, _ := rounds.Level([]int{0, 1}, func(int) (float64, error) { return 1, nil })
		want = append(want, lr.Orders...)
	}
	if !slices.EqualFunc(res.Orders, want, slices.Equal) {
		t.Fatalf("orders %v, want %v", res.Orders, want)
	}
	// Every measured run follows its own warm-up, in the orders above.
	var runs []event
	for i, e := range events {
		if e.warmup {
			if e.requests != n/10 || i+1 == len(events) || events[i+1].warmup || events[i+1].series != e.series {
				t.Fatalf("event %d: warm-up %+v not followed by its trial (%+v)", i, e, events)
			}
			continue
		}
		if i == 0 || !events[i-1].warmup || e.requests != n {
			t.Fatalf("event %d: trial %+v without its warm-up", i, e)
		}
		runs = append(runs, e)
	}
	if len(runs) != 2*2*repeat || kept != len(runs) {
		t.Fatalf("%d trials run, %d kept, want %d", len(runs), kept, 2*2*repeat)
	}
	for r, order := range want {
		for j, si := range order {
			if e := runs[r*2+j]; e.series != si || e.level != r/repeat {
				t.Errorf("round %d, run %d: series %d at level %d, want series %d at level %d", r, j, e.series, e.level, si, r/repeat)
			}
		}
	}
	// Exact counts: every level pools its trials' n requests each.
	for _, sr := range res.Series {
		if len(sr.Levels) != 2 || sr.Stop != nil {
			t.Fatalf("%s: %d levels, stop %+v", sr.Label, len(sr.Levels), sr.Stop)
		}
		for k, s := range sr.Levels {
			if s.Repeated == nil || len(s.Trials) != repeat || s.Complete != repeat*n || s.Failed != 0 || s.Concurrency != k+1 {
				t.Errorf("%s level %d: %d trials, complete %d, failed %d, c=%d", sr.Label, k, len(s.Trials), s.Complete, s.Failed, s.Concurrency)
			}
		}
	}
	for _, srv := range []*fixtures.Server{a, b} {
		if got, want := srv.Requests(), int64(2*repeat*(n+n/10)); got != want {
			t.Errorf("the backend served %d requests, want %d (trials and their warm-ups)", got, want)
		}
	}
}

// TestOneRunPerLevel: without trials the series run in the order given
// at every level, each run once after one warm-up, and a level's result
// is that run's own (no pooling).
func TestOneRunPerLevel(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	var events []event
	res, err := Run(context.Background(), Config{
		Schedule: Concurrencies([]int{1, 3, 5}, 10, 0),
		Warmup:   Warmup{Requests: 2},
		Progress: func(p Progress) { events = append(events, event{p.SeriesIndex, p.LevelIndex, p.Warmup, p.Requests}) },
	}, []Series{{Label: "x", Plan: plan(t, srv.URL("/"), 1, 10)}, {Label: "y", Plan: plan(t, srv.URL("/"), 1, 10)}})
	if err != nil {
		t.Fatal(err)
	}
	var want []event
	for l := range 3 {
		for s := range 2 {
			want = append(want, event{s, l, true, 2}, event{s, l, false, 10})
		}
	}
	if !slices.Equal(events, want) {
		t.Fatalf("runs %v, want %v", events, want)
	}
	for _, sr := range res.Series {
		for k, s := range sr.Levels {
			if s.Repeated != nil || s.Complete != 10 || s.Concurrency != []int{1, 3, 5}[k] {
				t.Errorf("%s level %d: %+v", sr.Label, k, s)
			}
		}
	}
	if got := srv.Requests(); got != 2*3*12 {
		t.Errorf("the backend served %d requests, want %d", got, 2*3*12)
	}
}

// TestStopRules: a series whose failure ratio passes the bound ends after
// that level while the other goes on; a run where no series reaches its
// target ends after the first level; a series whose backend dies ends
// with that reason.
func TestStopRules(t *testing.T) {
	t.Run("error rate", func(t *testing.T) {
		good := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{})
		res, err := Run(context.Background(), Config{
			Schedule: Concurrencies([]int{1, 2, 4}, 8, 0), Trials: &trials.Plan{Repeat: 2, Seed: 1},
			Warmup: Warmup{Requests: 1}, StopOnErrors: true, StopErrorRate: 0.5, KeepOnUnreachable: true,
			Options: execute.Options{Setup: setup(t)},
		}, []Series{{Label: "dead", Plan: plan(t, deadUnix(t), 1, 8)}, {Label: "good", Plan: plan(t, good.URL("/x.php"), 1, 8)}})
		if err != nil {
			t.Fatal(err)
		}
		dead, ok := res.Series[0], res.Series[1]
		if len(dead.Levels) != 1 || dead.Stop == nil || dead.Stop.Concurrency != 1 || dead.Stop.ErrorRate != 1 ||
			!strings.Contains(dead.Stop.Reason, "16 of 16 requests failed over 2 trials at concurrency 1") {
			t.Fatalf("dead series: %d levels, stop %+v", len(dead.Levels), dead.Stop)
		}
		if dead.Unreachable == nil {
			t.Error("the dead series is not marked unreachable")
		}
		if len(ok.Levels) != 3 || ok.Stop != nil || len(res.Steps) != 3 {
			t.Errorf("good series: %d levels, stop %+v; %d steps", len(ok.Levels), ok.Stop, len(res.Steps))
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		res, err := Run(context.Background(), Config{
			Schedule: Concurrencies([]int{1, 2}, 4, 0), KeepOnUnreachable: true, EndUnreachable: true,
			Options: execute.Options{Setup: setup(t)},
		}, []Series{{Label: "a", Plan: plan(t, deadUnix(t), 1, 4)}, {Label: "b", Plan: plan(t, deadUnix(t), 1, 4)}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Steps) != 1 {
			t.Fatalf("%d steps run, want the first only", len(res.Steps))
		}
		for _, sr := range res.Series {
			if sr.Unreachable == nil || len(sr.Levels) != 1 || sr.Levels[0].Failed != 4 {
				t.Errorf("%s: unreachable %v, %d levels", sr.Label, sr.Unreachable, len(sr.Levels))
			}
		}
	})
	t.Run("unreachable is an error without KeepOnUnreachable", func(t *testing.T) {
		_, err := Run(context.Background(), Config{Schedule: Levels{{}}},
			[]Series{{Label: "a", Plan: plan(t, deadUnix(t), 1, 4)}})
		var re *RunError
		var ue *execute.UnreachableError
		if !errors.As(err, &re) || !errors.As(err, &ue) || re.Series != "a" {
			t.Fatalf("err %v, want a RunError of an UnreachableError", err)
		}
	})
	t.Run("backend lost", func(t *testing.T) {
		good := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
		dying := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{Behaviour: fixtures.Behaviour{ExitAfter: 30}})
		res, err := Run(context.Background(), Config{
			Schedule: Concurrencies([]int{1, 2, 4}, 20, 0), Warmup: Warmup{Requests: 2},
			StopOnLoss: true, KeepOnUnreachable: true,
		}, []Series{{Label: "good", Plan: plan(t, good.URL("/"), 1, 20)}, {Label: "dying", Plan: plan(t, dying.URL("/x"), 1, 20)}})
		if err != nil {
			t.Fatal(err)
		}
		g, d := res.Series[0], res.Series[1]
		if len(g.Levels) != 3 || g.Stop != nil {
			t.Errorf("good series: %d levels, stop %+v", len(g.Levels), g.Stop)
		}
		// 30 requests: level 1 and its warm-up (22), then part of level 2.
		if d.Stop == nil || d.Stop.Concurrency != 2 || len(d.Levels) != 2 || d.Levels[1].BackendLost == nil ||
			!strings.Contains(d.Stop.Reason, "the backend stopped accepting connections after ") {
			t.Fatalf("dying series: %d levels, stop %+v", len(d.Levels), d.Stop)
		}
	})
}

// doubling is a schedule that reads the records: it doubles the
// concurrency while the last level's every request completed, up to
// most.
type doubling struct{ most int }

func (d doubling) Next(res *Result) (Step, bool) {
	if len(res.Steps) == 0 {
		return Step{Concurrency: 1}, true
	}
	sr := &res.Series[0]
	last := &sr.Levels[len(sr.Levels)-1]
	if last.Failed > 0 || last.Concurrency*2 > d.most {
		return Step{}, false
	}
	return Step{Concurrency: last.Concurrency * 2}, true
}

func (doubling) Len() int { return 0 }

// TestScheduleReadsRecords: a schedule that picks its next level from
// the last record runs exactly the levels it picked, each with its exact
// count.
func TestScheduleReadsRecords(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{})
	res, err := Run(context.Background(), Config{Schedule: doubling{most: 8}},
		[]Series{{Label: "s", Plan: plan(t, srv.URL("/x.php"), 1, 16)}})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, s := range res.Series[0].Levels {
		got = append(got, s.Concurrency)
		if s.Complete != 16 || s.Failed != 0 {
			t.Errorf("c=%d: complete %d, failed %d, want 16 and 0", s.Concurrency, s.Complete, s.Failed)
		}
	}
	if !slices.Equal(got, []int{1, 2, 4, 8}) || srv.Requests() != 4*16 {
		t.Errorf("levels %v, %d requests served; want [1 2 4 8] and 64", got, srv.Requests())
	}
}

// TestCapacitySchedule: a capacity search run by the driver on a backend
// that answers every request with a 500: every step fails the errors
// objective, so the search halves from its start (measuring the first
// level twice) until a sixteenth of it, and every step after a failing one
// settles first. The driver's steps are the search's, level for level.
func TestCapacitySchedule(t *testing.T) {
	// A serial backend, 5 ms a request: the client's CPU stays low, so
	// that no step is taken for the client's limit.
	m, err := fixtures.ParseModel("serial")
	if err != nil {
		t.Fatal(err)
	}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Status: 500, Model: m, Delay: 5 * time.Millisecond})
	objs, err := capacity.ParseAll([]string{"errors<=1%"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := capacity.Config{Objectives: objs, Start: 8, Max: 64, Integer: true, Step: 100 * time.Millisecond}
	sched := NewCapacity(context.Background(), cfg)
	res, err := Run(context.Background(), Config{Schedule: sched, Warmup: Warmup{Duration: 20 * time.Millisecond}},
		[]Series{{Label: "s", Plan: plan(t, srv.URL("/"), 1, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	cr, err := sched.Result()
	if err != nil {
		t.Fatal(err)
	}
	var levels []int
	for _, st := range cr.Steps {
		levels = append(levels, int(st.Level))
		if st.Pass || st.ErrorRate != 1 {
			t.Errorf("step at %v: pass %v, error rate %v; want a failure, 1", st.Level, st.Pass, st.ErrorRate)
		}
	}
	if !slices.Equal(levels, []int{8, 8, 4, 2, 1}) || cr.Best != -1 || cr.Capacity != 0 {
		t.Fatalf("search steps %v, best %d, capacity %v; want [8 8 4 2 1], -1, 0", levels, cr.Best, cr.Capacity)
	}
	if len(res.Steps) != len(cr.Steps) {
		t.Fatalf("the driver ran %d steps, the search has %d", len(res.Steps), len(cr.Steps))
	}
	for i, st := range res.Steps {
		s := res.Series[0].Levels[i]
		if st.Concurrency != levels[i] || s.Concurrency != levels[i] || st.Duration != cfg.Step || st.Windows != capacity.StepWindows {
			t.Errorf("step %d: %+v (ran at c=%d), want c=%d for %v", i, st, s.Concurrency, levels[i], cfg.Step)
		}
		if (st.Settle > 0) != (i > 0) {
			t.Errorf("step %d: settle %v, want one after every failing step", i, st.Settle)
		}
		if s.Non2xx == 0 || s.Non2xx != s.Complete {
			t.Errorf("step %d: %d non-2xx of %d", i, s.Non2xx, s.Complete)
		}
	}
}

// TestCapacityInterrupted: a search whose context ends is interrupted,
// not failed, and keeps the steps it ran.
func TestCapacityInterrupted(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	objs, _ := capacity.ParseAll([]string{"p99<=1s"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := capacity.Config{Objectives: objs, Start: 1, Max: 1 << 20, Integer: true, Step: 50 * time.Millisecond,
		OnStep: func(capacity.Step) { cancel() }}
	sched := NewCapacity(ctx, cfg)
	res, err := Run(ctx, Config{Schedule: sched}, []Series{{Label: "s", Plan: plan(t, srv.URL("/"), 1, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	cr, err := sched.Result()
	if err != nil || !cr.Interrupted || len(cr.Steps) != 1 || len(res.Steps) < 1 {
		t.Fatalf("err %v, interrupted %v, %d search steps, %d driver steps", err, cr.Interrupted, len(cr.Steps), len(res.Steps))
	}
}

// TestSettle: settling sends requests through the executor, two a run
// on one worker: a backend that answers within the bound settles after
// the first pair; one slower than the bound is sent pairs until the
// context ends.
func TestSettle(t *testing.T) {
	quick := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{})
	d := &driver{}
	d.settle(context.Background(), plan(t, quick.URL("/x.php"), 8, 1000), time.Minute, 0)
	if got := quick.Requests(); got != 2 {
		t.Errorf("a quick backend got %d requests, want one pair", got)
	}
	slow := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 10 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	d.settle(ctx, plan(t, slow.URL("/"), 8, 1000), time.Microsecond, 0)
	if got := slow.Requests(); got < 4 || ctx.Err() == nil {
		t.Errorf("a backend slower than the bound got %d requests (want pairs until the end), context %v", got, ctx.Err())
	}
}
