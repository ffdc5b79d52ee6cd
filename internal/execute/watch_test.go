package execute

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/recorder"
	"github.com/backbench/backbench/internal/stats"
)

// dialClient answers from a script: request number i (0-based, shared by
// all workers) is refused when refuse(i, upstream) says so; upstreams
// alternate by request number.
type dialClient struct {
	next   *atomic.Int64
	ups    int
	refuse func(i int64, up int) bool
}

func (c *dialClient) Do(r *load.Result) {
	i := c.next.Add(1) - 1
	up := int(i % int64(max(c.ups, 1)))
	r.Start, r.Upstream, r.Dialed = load.Now(), up, true
	r.Done = load.Now()
	if c.refuse(i, up) {
		r.Class, r.Err = load.Connect, fmt.Errorf("connect: %w", syscall.ECONNREFUSED)
		return
	}
	r.Connected, r.Written, r.FirstByte = r.Start, r.Start, r.Start
	r.Status, r.BodyBytes = 200, 1
}

func (c *dialClient) Close() error { return nil }

func watchRun(t *testing.T, c, ups int, n int64, w *Watch, refuse func(i int64, up int) bool) (*stats.Record, Outcome) {
	t.Helper()
	var next atomic.Int64
	rec := recorder.New(recorder.Options{Shards: c})
	f := func(context.Context) (load.Client, error) {
		return &dialClient{next: &next, ups: ups, refuse: refuse}, nil
	}
	out, err := Closed(context.Background(), Config{Shape: &stats.Shape{Concurrency: c, Requests: n}, Factory: f, Recorder: rec, Watch: w})
	if err != nil {
		t.Fatal(err)
	}
	return rec.Merge(), out
}

// TestWatchUnreachable: a target refused from the first dial stops the run
// at once; one refused only on some upstreams, or after a success, does not.
func TestWatchUnreachable(t *testing.T) {
	w := &Watch{}
	m, out := watchRun(t, 4, 0, 1000, w, func(int64, int) bool { return true })
	if err := w.Unreachable(); !errors.Is(err, syscall.ECONNREFUSED) || out.Interrupted {
		t.Errorf("unreachable %v, interrupted %v", w.Unreachable(), out.Interrupted)
	}
	if s := stats.SummaryOf(m); s.Failed > 4 {
		t.Errorf("%d requests failed before the stop, want at most one per worker", s.Failed)
	}

	w = &Watch{Upstreams: 2}
	m, _ = watchRun(t, 2, 2, 100, w, func(_ int64, up int) bool { return up == 1 })
	if s := stats.SummaryOf(m); w.Unreachable() != nil || s.Complete+s.Failed != 100 || w.Lost() != nil {
		t.Errorf("one dead upstream of two: unreachable %v, %d + %d requests, lost %v", w.Unreachable(), s.Complete, s.Failed, w.Lost())
	}
	if errs := w.UpstreamErrors(); errs[0] != nil || !errors.Is(errs[1], syscall.ECONNREFUSED) {
		t.Errorf("upstream errors %v", errs)
	}

	w = &Watch{KeepOnUnreachable: true}
	m, _ = watchRun(t, 2, 0, 50, w, func(int64, int) bool { return true })
	if s := stats.SummaryOf(m); w.Unreachable() == nil || s.Failed != 50 {
		t.Errorf("KeepOnUnreachable: unreachable %v, %d failed", w.Unreachable(), s.Failed)
	}
}

// TestWatchLost: a target refused after 30 answers is lost after 30
// completed requests; with StopOnLoss the run ends there.
func TestWatchLost(t *testing.T) {
	for _, stop := range []bool{false, true} {
		w := &Watch{StopOnLoss: stop}
		m, _ := watchRun(t, 1, 0, 100, w, func(i int64, _ int) bool { return i >= 30 })
		s := stats.SummaryOf(m)
		lost := w.Lost()
		if lost == nil || lost.AfterRequests != 30 || lost.Error != "connection refused" || lost.AtSeconds < 0 || w.Unreachable() != nil {
			t.Fatalf("stop %v: lost %+v, unreachable %v", stop, lost, w.Unreachable())
		}
		if want := map[bool]int64{false: 70, true: 1}[stop]; s.Complete != 30 || s.Failed != want {
			t.Errorf("stop %v: %d complete, %d failed, want 30 and %d", stop, s.Complete, s.Failed, want)
		}
	}
}
