package merge_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/merge"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/stats"
)

// TestMergeTimelinesLive: two generators started together (bench
// --start-at: execute.Options.StartAt) against one backend, merged: the
// merged record's timeline holds every request of both, each generator's
// window in the merged window that holds its start (wall time), and its
// width is theirs. The generators' runs are built with internal/plan and
// run with internal/execute, as bench does, to make the input.
func TestMergeTimelinesLive(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 500 * time.Microsecond})
	po := plan.Defaults(srv.URL("/"))
	po.Duration, po.TimeLimitSet, po.Concurrency, po.KeepAlive = time.Second, true, 2, true
	l, err := po.Build()
	if err != nil {
		t.Fatal(err)
	}
	setup := execute.Prepare(l.Plan, 4, true, nil)
	defer setup.Done()
	at := time.Now().Add(time.Second).Truncate(time.Millisecond)
	recs := make([]*stats.Record, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range recs {
		wg.Go(func() {
			run, err := execute.Run(context.Background(), l.Plan, execute.Options{Quiet: true, Setup: setup, StartAt: at, Version: "test"})
			if errs[i] = err; err == nil {
				recs[i] = run.Record
			}
		})
	}
	wg.Wait()
	var gens []*stats.Timeline
	var total int64
	m := merge.NewRuns(merge.Options{}, &document.MergeInfo{}, "")
	for i, rec := range recs {
		if errs[i] != nil || rec.Timeline == nil {
			t.Fatalf("generator %d: %v", i, errs[i])
		}
		gens = append(gens, rec.Timeline)
		total += rec.Counts.Complete + rec.Counts.Failed()
		if err := m.Add(rec, fmt.Sprintf("gen%d.json", i)); err != nil {
			t.Fatal(err)
		}
	}
	merged, err := m.Result()
	if err != nil || merged.Timeline == nil {
		t.Fatalf("merge: %v", err)
	}
	tl := merged.Timeline
	if tl.Width != gens[0].Width || tl.Width != stats.WindowFor(time.Second, 0) {
		t.Errorf("merged width %v, the generators' %v", tl.Width, gens[0].Width)
	}
	want := make([]int64, len(tl.Windows))
	for _, g := range gens {
		for j := range g.Windows {
			k := int(g.Start.Add(time.Duration(j)*g.Width).Sub(tl.Start.Time) / tl.Width)
			want[k] += g.Windows[j].Complete + g.Windows[j].Failed()
		}
	}
	var got int64
	for k := range tl.Windows {
		n := tl.Windows[k].Complete + tl.Windows[k].Failed()
		got += n
		if n != want[k] {
			t.Errorf("merged window %d holds %d requests, the generators' windows there %d", k, n, want[k])
		}
	}
	if got != total || total == 0 {
		t.Errorf("the merged timeline holds %d requests, the generators made %d", got, total)
	}
}
