package driver

import (
	"testing"
	"time"

	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/summary"
)

// TestPoolKeepsFiguresApart: pooled trials keep the pooled run's own
// summary (its requests/sec over the trials' times added up) apart from
// the medians; only the saved form puts the median in RequestsPerSecond,
// as a new value.
func TestPoolKeepsFiguresApart(t *testing.T) {
	t0 := time.Unix(1_764_556_800, 0)
	var runs []*summary.Run
	for i, n := range []int64{100, 200, 600} {
		r := &stats.Record{Schema: stats.Schema, StartedAt: stats.Wall{Time: t0.Add(time.Duration(i) * 2 * time.Second)},
			Plan: stats.Plan{Target: stats.TargetInfo{URL: "http://x/"}, Concurrency: 2, Requests: n}, Elapsed: time.Second}
		r.EndedAt = stats.Wall{Time: r.StartedAt.Add(time.Second)}
		r.Counts.Complete = n
		runs = append(runs, &summary.Run{Record: r, Summary: summary.Of(r)})
	}
	tr, err := Pool(runs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.Pooled.Summary.RequestsPerSecond; got != 300 { // 900 requests in 3 s
		t.Errorf("pooled req/s %v, want 300", got)
	}
	if tr.Pooled.Record.Elapsed != 3*time.Second || tr.Pooled.Record.Plan.Concurrency != 2 {
		t.Errorf("pooled elapsed %v, concurrency %d", tr.Pooled.Record.Elapsed, tr.Pooled.Record.Plan.Concurrency)
	}
	if tr.Medians.RequestsPerSecond.Median != 200 || tr.Medians.Trials != 3 {
		t.Errorf("medians %+v", tr.Medians)
	}
	runs[0].Record.Counts.Complete = 0 // the runs are the trials'
	s := tr.Saved()
	if s.Repeated == nil || s.PooledRequestsPerSecond != 300 || s.RequestsPerSecond != 200 || len(s.Trials) != 3 {
		t.Errorf("saved %+v", s)
	}
	if tr.Pooled.Summary.Repeated != nil {
		t.Error("Saved changed the pooled run's own summary")
	}
}
