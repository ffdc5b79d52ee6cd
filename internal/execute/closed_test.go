package execute

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/recorder"
	"github.com/backbench/backbench/internal/stats"
)

// fakeClient answers at once (or after delay), failing every failEvery-th
// request with Receive.
type fakeClient struct {
	ctx       context.Context
	delay     time.Duration
	failEvery int64
	calls     *atomic.Int64
	closed    *atomic.Int64
}

func (c *fakeClient) Do(r *load.Result) {
	r.Start = load.Now()
	n := c.calls.Add(1)
	if c.delay > 0 {
		select {
		case <-time.After(c.delay):
		case <-c.ctx.Done():
			r.Class, r.Err, r.Done = load.Receive, c.ctx.Err(), load.Now()
			return
		}
	}
	r.Connected, r.Written, r.FirstByte = r.Start, r.Start, r.Start
	r.Done = load.Now()
	if c.failEvery > 0 && n%c.failEvery == 0 {
		r.Class, r.Err = load.Receive, errors.New("receive: reset")
		return
	}
	r.Status, r.BodyBytes, r.BytesRead = 200, 10, 50
}

func (c *fakeClient) Close() error { c.closed.Add(1); return nil }

func factory(delay time.Duration, failEvery int64, calls, closed *atomic.Int64) load.ClientFactory {
	return func(ctx context.Context) (load.Client, error) {
		return &fakeClient{ctx: ctx, delay: delay, failEvery: failEvery, calls: calls, closed: closed}, nil
	}
}

func TestClosedExactCounts(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		c    int
		fail int64
	}{{1, 1, 0}, {10, 3, 0}, {1000, 7, 0}, {997, 13, 5}, {5, 5, 2}} {
		var calls, closed atomic.Int64
		rec := recorder.New(recorder.Options{Shards: tc.c})
		out, err := Closed(context.Background(), Config{Shape: &stats.Shape{Concurrency: tc.c, Requests: tc.n}, Factory: factory(0, tc.fail, &calls, &closed), Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		s := summarize(rec, stats.Plan{}, out.Elapsed())
		wantFailed := int64(0)
		if tc.fail > 0 {
			wantFailed = tc.n / tc.fail
		}
		if calls.Load() != tc.n || s.Complete+s.Failed != tc.n || s.Failed != wantFailed || closed.Load() != int64(tc.c) || out.Interrupted {
			t.Errorf("n=%d c=%d: calls %d complete %d failed %d closed %d", tc.n, tc.c, calls.Load(), s.Complete, s.Failed, closed.Load())
		}
	}
}

func TestClosedDuration(t *testing.T) {
	var calls, closed atomic.Int64
	rec := recorder.New(recorder.Options{Shards: 4})
	start := time.Now()
	out, err := Closed(context.Background(), Config{Shape: &stats.Shape{Concurrency: 4, Duration: 200 * time.Millisecond}, Factory: factory(10*time.Millisecond, 0, &calls, &closed), Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	s := summarize(rec, stats.Plan{}, out.Elapsed())
	if el < 190*time.Millisecond || el > 2*time.Second || s.Complete == 0 || s.Failed != 0 {
		t.Errorf("elapsed %v complete %d failed %d", el, s.Complete, s.Failed)
	}
	// Requests in flight at the deadline are neither complete nor failed:
	// drained, and counted apart.
	if s.Complete+out.Drained != calls.Load() || out.Drained > 4 {
		t.Errorf("calls %d complete %d drained %d", calls.Load(), s.Complete, out.Drained)
	}
}

// TestDeadlineDrains: at the time limit no request starts, and those in
// flight finish (their client's context is not cancelled: no connection is
// cut) and are drained, counted neither complete nor failed, in both
// models; the window (Stop − Start) is the time limit, the drain after it.
func TestDeadlineDrains(t *testing.T) {
	const delay, limit = 60 * time.Millisecond, 300 * time.Millisecond
	for _, model := range []string{"closed", "open"} {
		t.Run(model, func(t *testing.T) {
			var calls, closed atomic.Int64
			rec := recorder.New(recorder.Options{Shards: 4})
			var clientCtx []context.Context
			f := func(ctx context.Context) (load.Client, error) {
				clientCtx = append(clientCtx, ctx)
				return factory(delay, 0, &calls, &closed)(ctx)
			}
			cfg := Config{Shape: &stats.Shape{Concurrency: 4, Duration: limit}, Factory: f, Recorder: rec}
			var out Outcome
			var acc OpenAccount
			var err error
			if model == "open" {
				cfg.Rate = 1000
				out, acc, err = Open(context.Background(), cfg)
			} else {
				out, err = Closed(context.Background(), cfg)
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, ctx := range clientCtx {
				if ctx.Err() != nil {
					t.Fatal("the clients' context ended with the window: requests in flight are cut")
				}
			}
			s := summarize(rec, stats.Plan{}, out.Window())
			if s.Failed != 0 {
				t.Errorf("%d failed (cut): %v", s.Failed, s.ErrorSamples)
			}
			// Every worker is busy at the deadline (60 ms requests back
			// to back, or a rate far above what 4 workers serve).
			if out.Drained != 4 || s.Complete+out.Drained != calls.Load() {
				t.Errorf("calls %d complete %d drained %d, want 4 drained", calls.Load(), s.Complete, out.Drained)
			}
			if out.Window() < limit || out.Window() > limit+time.Second || out.End-out.Stop <= 0 {
				t.Errorf("window %v, drain %v", out.Window(), time.Duration(out.End-out.Stop))
			}
			if model == "open" && (acc.InFlight != 4 || acc.Recorded != s.Complete || acc.Recorded+acc.Unsent != acc.Due) {
				t.Errorf("account %+v", acc)
			}
		})
	}
}

func TestClosedInterrupted(t *testing.T) {
	var calls, closed atomic.Int64
	rec := recorder.New(recorder.Options{Shards: 2})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	out, err := Closed(ctx, Config{Shape: &stats.Shape{Concurrency: 2, Requests: 1_000_000}, Factory: factory(5*time.Millisecond, 0, &calls, &closed), Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	s := summarize(rec, stats.Plan{}, 0)
	if !out.Interrupted || s.Failed != 0 || s.Complete == 0 || s.Complete >= 1_000_000 || closed.Load() != 2 {
		t.Errorf("interrupted %v complete %d failed %d closed %d", out.Interrupted, s.Complete, s.Failed, closed.Load())
	}
}

func TestClosedBadConfig(t *testing.T) {
	var calls, closed atomic.Int64
	rec := recorder.New(recorder.Options{})
	if _, err := Closed(context.Background(), Config{Shape: &stats.Shape{Concurrency: 0, Requests: 1}, Factory: factory(0, 0, &calls, &closed), Recorder: rec}); err == nil {
		t.Error("concurrency 0 accepted")
	}
	if _, err := Closed(context.Background(), Config{Shape: &stats.Shape{Concurrency: 1}, Factory: factory(0, 0, &calls, &closed), Recorder: rec}); err == nil {
		t.Error("no limit accepted")
	}
	bad := func(context.Context) (load.Client, error) { return nil, errors.New("no client") }
	if _, err := Closed(context.Background(), Config{Shape: &stats.Shape{Concurrency: 1, Requests: 1}, Factory: bad, Recorder: rec}); err == nil {
		t.Error("factory error lost")
	}
}

// TestOpenPacing: requests are due at start + i/rate; with one worker slower
// than the interval, requests queue behind it and count as ceiling-late.
func TestOpenPacing(t *testing.T) {
	var calls, closed atomic.Int64
	rec := recorder.New(recorder.Options{Shards: 4})
	out, acc, err := Open(context.Background(), Config{Shape: &stats.Shape{Rate: 200, Concurrency: 4, Requests: 50}, Factory: factory(0, 0, &calls, &closed), Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	s := summarize(rec, stats.Plan{Shape: stats.Shape{Rate: 200}}, out.Elapsed())
	// 50 requests at 200/s: the last is due at 245 ms.
	if el := out.Elapsed(); el < 240*time.Millisecond || el > 2*time.Second {
		t.Errorf("elapsed %v", el)
	}
	// Free workers take each request before it is due: hardly any waits
	// for a worker (a descheduled one on a busy machine may).
	if s.Complete != 50 || s.Open == nil || s.Open.CeilingLate > 20 {
		t.Errorf("complete %d open %+v", s.Complete, s.Open)
	}
	if acc != (OpenAccount{Due: 50, Recorded: 50}) {
		t.Errorf("account %+v, want 50 due, 50 recorded", acc)
	}

	rec = recorder.New(recorder.Options{Shards: 1})
	out, _, err = Open(context.Background(), Config{Shape: &stats.Shape{Rate: 200, Concurrency: 1, Requests: 20}, Factory: factory(20*time.Millisecond, 0, &calls, &closed), Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	s = summarize(rec, stats.Plan{Shape: stats.Shape{Rate: 200}}, out.Elapsed())
	// 20 requests of 20 ms due every 5 ms: the last is due at 95 ms and
	// sent at about 380 ms.
	if s.Open.CeilingLate < 15 || s.Percentiles["100"] < 200 || s.UncorrectedPercentiles["100"] > s.Percentiles["100"]/2 {
		t.Errorf("one 20 ms worker at 200/s: open %+v p100 %v uncorrected %v", *s.Open, s.Percentiles["100"], s.UncorrectedPercentiles["100"])
	}
	if _, _, err := Open(context.Background(), Config{Shape: &stats.Shape{Rate: 0, Concurrency: 1, Requests: 1}}); err == nil {
		t.Error("rate 0 accepted")
	}
}

// summarize merges rec under plan p and derives its Summary.
func summarize(rec *recorder.Recorder, p stats.Plan, elapsed time.Duration) stats.Summary {
	m := rec.Merge()
	p.VariableLength = m.Plan.VariableLength
	m.Plan, m.Elapsed = p, elapsed
	return stats.SummaryOf(m)
}

// TestOpenAccount: a rate above what the workers can do in a time limit
// leaves requests unsent; recorded + unsent = due = rate × time, and the
// unsent enter the corrected latencies only.
func TestOpenAccount(t *testing.T) {
	var calls, closed atomic.Int64
	rec := recorder.New(recorder.Options{Shards: 2})
	out, acc, err := Open(context.Background(), Config{Shape: &stats.Shape{Rate: 500, Concurrency: 2, Duration: 400 * time.Millisecond}, Factory: factory(10*time.Millisecond, 0, &calls, &closed), Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	// 500/s for 0.4 s as scheduled: 200 due, within the timer's error.
	if acc.Due < 190 || acc.Due > 210 || acc.Recorded+acc.Unsent != acc.Due || acc.Recorded > 100 || acc.InFlight > 2 {
		t.Errorf("account %+v over %v", acc, time.Duration(out.Stop-out.Start))
	}
	m := rec.Merge()
	if stats.SummaryOf(m).Complete != acc.Recorded {
		t.Errorf("complete != recorded %d", acc.Recorded)
	}
	if n := m.PhaseCount(stats.PhaseScheduled); n != acc.Recorded+acc.Unsent {
		t.Errorf("corrected latencies count %d, want %d", n, acc.Recorded+acc.Unsent)
	}
}

// mixClient counts the requests asked of each target of a mix and takes
// slow for target 1, at once for the others.
type mixClient struct {
	counts *[2]atomic.Int64
	slow   time.Duration
}

func (c *mixClient) Do(r *load.Result) {
	r.Start = load.Now()
	c.counts[r.Target].Add(1)
	if r.Target == 1 {
		time.Sleep(c.slow)
	}
	r.Connected, r.Written, r.FirstByte, r.Done = r.Start, r.Start, r.Start, load.Now()
	r.Status, r.BodyBytes = 200, 1
}

func (c *mixClient) Close() error { return nil }

// TestClosedMixTimed: a timed run of a mix (target 1 three times as often
// as target 0, and slower) sends each target its share of the requests
// within one per worker, however slow one target is: every worker goes
// through the schedule in order, from its own place in it.
func TestClosedMixTimed(t *testing.T) {
	const c = 4
	var counts [2]atomic.Int64
	rec := recorder.New(recorder.Options{Shards: c, Targets: 2})
	f := func(context.Context) (load.Client, error) {
		return &mixClient{counts: &counts, slow: 200 * time.Microsecond}, nil
	}
	if _, err := Closed(context.Background(), Config{Shape: &stats.Shape{Concurrency: c, Duration: 300 * time.Millisecond}, Factory: f, Recorder: rec, Mix: []int32{1, 0, 1, 1}}); err != nil {
		t.Fatal(err)
	}
	a, b := counts[0].Load(), counts[1].Load()
	total := a + b
	if total < 100 {
		t.Fatalf("only %d requests", total)
	}
	if d := float64(a) - float64(total)/4; d > c || d < -c {
		t.Errorf("target 0: %d of %d requests, want %.1f ± %d", a, total, float64(total)/4, c)
	}
}
