package recorder

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
)

// TestMergedTimelineIsTheSummedRun: two generators' timelines merged
// (stats.Merge) equal the timeline of one run that recorded both loads:
// exactly when the generators started a whole number of windows apart,
// and within a window's edge (the cumulative counts, window by window, lie
// between the one run's of the windows either side) when they did not.
func TestMergedTimelineIsTheSummedRun(t *testing.T) {
	const width = 100 * time.Millisecond
	for _, offset := range []time.Duration{0, 3 * width, 37 * time.Millisecond, 250 * time.Millisecond} {
		rng := rand.New(rand.NewPCG(7, uint64(offset)))
		span := 4 * time.Second
		a := New(Options{Shards: 2, Span: span, Window: width})
		b := New(Options{Shards: 3, Span: span, Window: width})
		one := New(Options{Shards: 4, Span: span + offset, Window: width})
		a.Begin(0)
		b.Begin(int64(offset))
		one.Begin(0)
		for i := range 5000 {
			gen, origin := a, int64(0)
			if i%2 == 1 {
				gen, origin = b, int64(offset)
			}
			start := origin + rng.Int64N(int64(span))
			r := ok(start, 1e5+rng.Int64N(5e7), 10)
			if i%97 == 0 {
				r = load.Result{Class: load.Timeout, Start: start, Done: start + 1e6}
			}
			r2 := r
			gen.Shard(i).Record(&r)
			one.Shard(i).Record(&r2)
		}
		ra, rb, r1 := a.Merge(), b.Merge(), one.Merge()
		for _, r := range []*stats.Record{ra, rb, r1} {
			r.Plan.Target.URL = "fcgi://x/"
		}
		m, err := stats.Merge(ra, rb)
		if err != nil {
			t.Fatal(err)
		}
		got, want := m.Timeline, r1.Timeline
		if got.Width != want.Width || !got.Start.Equal(want.Start.Time) {
			t.Fatalf("offset %v: merged width %v start %v, one run's %v %v", offset, got.Width, got.Start, want.Width, want.Start)
		}
		if offset%width == 0 {
			if !reflect.DeepEqual(got.Windows[:len(want.Windows)], want.Windows) {
				t.Errorf("offset %v: the merged timeline differs from the one run's", offset)
			}
			continue
		}
		cum := func(ws []stats.TimelineWindow) []int64 {
			var c []int64
			var n int64
			for i := range ws {
				n += ws[i].Complete + ws[i].Failed()
				c = append(c, n)
			}
			return c
		}
		cg, cw := cum(got.Windows), cum(want.Windows)
		for i := range cw {
			lo, hi := int64(0), cw[len(cw)-1]
			if i > 0 {
				lo = cw[i-1]
			}
			if i+1 < len(cw) {
				hi = cw[i+1]
			}
			if i < len(cg) && (cg[i] < lo || cg[i] > hi) {
				t.Errorf("offset %v: window %d: %d requests so far, the one run %d (%d..%d)", offset, i, cg[i], cw[i], lo, hi)
			}
		}
		if cg[len(cg)-1] != cw[len(cw)-1] {
			t.Errorf("offset %v: %d requests merged, %d in the one run", offset, cg[len(cg)-1], cw[len(cw)-1])
		}
	}
}
