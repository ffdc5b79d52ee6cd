package trials

import (
	"reflect"
	"testing"
)

// TestComparePairs: the one pairing loop compares each pair, in the pairs'
// order, at each level of the series side with the baseline's level of the
// same concurrency (its one level when AnyLevel), leaves out the levels
// the baseline lacks and those skip names, sets the pair's factor and
// title, lets each change the comparisons, and gives what CompareLevel
// gives.
func TestComparePairs(t *testing.T) {
	mk := func(rps ...float64) []Trial {
		var ts []Trial
		for _, v := range rps {
			ts = append(ts, Trial{RequestsPerSecond: v, MeanMs: 1000 / v, P50Ms: 1000 / v, P99Ms: 2000 / v, MaxMs: 3000 / v,
				Finished: 100, Seconds: 2, ClientCPUMeasured: true})
		}
		return ts
	}
	fast, slow, same := mk(200, 201, 202, 203, 204), mk(100, 101, 102, 103, 104), mk(100, 101, 102, 103, 104)
	series := []Series{
		{Label: "base", Levels: []Level{{1, slow}, {4, slow}}},
		// c=8 has no baseline level: left out.
		{Label: "fast", Levels: []Level{{4, fast}, {1, fast}, {8, fast}}},
		{Label: "same", Levels: []Level{{1, same}}},
		// As a baseline, its one level stands for every level.
		{Label: "bench", Levels: []Level{{2, slow}}, AnyLevel: true},
	}
	pairs := []SeriesPair{
		{Series: 1, Baseline: 0, Factor: FactorKeepAlive, Title: "keepalive: on vs off"},
		{Series: 2, Baseline: 0, Factor: FactorTransport},
		{Series: 1, Baseline: 3, Factor: FactorNone},
	}
	type seen struct {
		s, b, l, bl, c int
	}
	var skipped, each []seen
	skip := func(at LevelPair) bool {
		if at.Series == 1 && at.Baseline == 3 && at.Concurrency == 1 {
			skipped = append(skipped, seen{at.Series, at.Baseline, at.Level, at.BaselineLevel, at.Concurrency})
			return true
		}
		return false
	}
	got := ComparePairs(series, pairs, 0.02, skip, func(at LevelPair, cs []Comparison) {
		each = append(each, seen{at.Series, at.Baseline, at.Level, at.BaselineLevel, at.Concurrency})
		for i := range cs {
			cs[i].Why = "seen"
		}
	})
	wantEach := []seen{
		{1, 0, 0, 1, 4}, {1, 0, 1, 0, 1},
		{2, 0, 0, 0, 1},
		{1, 3, 0, 0, 4}, {1, 3, 2, 0, 8},
	}
	if !reflect.DeepEqual(each, wantEach) {
		t.Errorf("levels compared %v, want %v", each, wantEach)
	}
	if want := []seen{{1, 3, 1, 0, 1}}; !reflect.DeepEqual(skipped, want) {
		t.Errorf("levels skipped %v, want %v", skipped, want)
	}
	var want []Comparison
	for _, w := range []struct {
		s, b          *Series
		sl, bl        int
		factor, title string
	}{
		{&series[1], &series[0], 0, 1, FactorKeepAlive, "keepalive: on vs off"},
		{&series[1], &series[0], 1, 0, FactorKeepAlive, "keepalive: on vs off"},
		{&series[2], &series[0], 0, 0, FactorTransport, ""},
		{&series[1], &series[3], 0, 0, FactorNone, ""},
		{&series[1], &series[3], 2, 0, FactorNone, ""},
	} {
		cs := CompareLevel(w.s.Label, w.b.Label, w.s.Levels[w.sl].Concurrency, w.s.Levels[w.sl].Trials, w.b.Levels[w.bl].Trials, 0.02)
		for i := range cs {
			cs[i].Factor, cs[i].FactorTitle, cs[i].Why = w.factor, w.title, "seen"
		}
		want = append(want, cs...)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("comparisons differ from CompareLevel's:\n got %+v\nwant %+v", got, want)
	}
	// The verdicts are the pairs': faster against the slow baseline, no
	// direction against a copy of it.
	for _, c := range got {
		if c.Metric != MetricRequestsPerSecond {
			continue
		}
		if fasterWanted := c.Series == "fast"; (c.Verdict == Faster) != fasterWanted || Directional(c.Verdict) != fasterWanted {
			t.Errorf("%s vs %s at c=%d: %s", c.Series, c.Baseline, c.Concurrency, c.Verdict)
		}
	}
	if n := len(ComparePairs(series, nil, 0.02, nil, nil)); n != 0 {
		t.Errorf("no pairs: %d comparisons", n)
	}
}
