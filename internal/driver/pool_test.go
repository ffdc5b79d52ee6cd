package driver

import (
	"bytes"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/stats"
)

// TestPoolKeepsFiguresApart: pooled trials keep the pooled run's own
// summary (its requests/sec over the trials' times added up) apart from
// the medians; only the saved form puts the median in RequestsPerSecond,
// as a new value.
func TestPoolKeepsFiguresApart(t *testing.T) {
	tr := threeTrials(t)
	runs := tr.Runs
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

// threeTrials pools three trials of 100, 200 and 600 requests, a second
// each, 2 s apart: 300 req/s pooled, a median of 200.
func threeTrials(t *testing.T) *Trials {
	t.Helper()
	t0 := time.Unix(1_764_556_800, 0)
	var runs []*stats.Run
	for i, n := range []int64{100, 200, 600} {
		r := &stats.Record{Schema: stats.Schema, StartedAt: stats.Wall{Time: t0.Add(time.Duration(i) * 2 * time.Second)},
			Plan: stats.Plan{Shape: stats.Shape{Concurrency: 2, Requests: n}, Target: stats.TargetInfo{URL: "http://x/"}}, Elapsed: time.Second}
		r.EndedAt = stats.Wall{Time: r.StartedAt.Add(time.Second)}
		r.Counts.Complete = n
		runs = append(runs, &stats.Run{Record: r, Summary: stats.SummaryOf(r)})
	}
	tr, err := Pool(runs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestSavedTrialsOneShape: bench's saved form of trials (the codec's,
// document.NewTrials) and a sweep level's (Trials.Saved) are one shape.
func TestSavedTrialsOneShape(t *testing.T) {
	tr := threeTrials(t)
	var a, b bytes.Buffer
	saved := tr.Saved()
	saved.Seed = 7
	if err := document.Write(&a, document.NewTrials(tr.Runs, tr.Pooled, tr.Medians, tr.Precise, 7)); err != nil {
		t.Fatal(err)
	}
	if err := document.Write(&b, &document.Trials{Summary: &saved, Record: tr.Pooled.Record}); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("bench's saved trials differ from a sweep level's:\n%s\n%s", a.String(), b.String())
	}
}

// TestJudgeSLO: the pooled run of trials gets the objectives' verdicts
// (none without objectives).
func TestJudgeSLO(t *testing.T) {
	tr := threeTrials(t)
	tr.JudgeSLO(nil)
	if tr.Pooled.Summary.SLO != nil {
		t.Errorf("no objectives, verdicts %+v", tr.Pooled.Summary.SLO)
	}
	objs, err := capacity.ParseAll([]string{"errors<=1%", "p99<=1ms"})
	if err != nil {
		t.Fatal(err)
	}
	tr.JudgeSLO(objs)
	s := &tr.Pooled.Summary
	if len(s.SLO) != 2 || !s.SLO[0].Pass || s.SLO[0].Objective != "errors<=1%" {
		t.Errorf("verdicts %+v", s.SLO)
	}
}
