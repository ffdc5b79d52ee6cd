package study

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestConclusionNamesCost: keep-alive faster in req/s but with a p99 far
// higher at the level above the pool's size: the conclusion names the p99
// cost with its level, and a detail note gives the cause, the kept
// connections outnumbering the pool's workers.
func TestConclusionNamesCost(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 3))
	res := design2x2(rng, 8, func(tr, ka string) float64 { return 1000 })
	res.Factors = res.Factors[1:] // keep-alive alone
	res.Series = res.Series[:2]
	res.Configurations = res.Configurations[:1]
	res.Configurations[0].MaxProcs = 4
	res.Measure.Levels = []int{2, 32}
	for i := range res.Series {
		se := &res.Series[i]
		se.Steps = nil
		for _, c := range res.Measure.Levels {
			rps, p99 := 1000.0, 1.0
			if se.KeepAlive {
				rps = 1800
				if c == 32 {
					p99 = 19
				}
			}
			ts := synth(rng, 8, rps, 0.01)
			for k := range ts {
				ts[k].P99Ms = p99 * (1 + 0.01*rng.NormFloat64())
				ts[k].MaxMs = ts[k].P99Ms * 2
			}
			se.Steps = append(se.Steps, Step{Concurrency: c, Trials: ts, Complete: 8000})
		}
	}
	res.Answer()
	a := res.Answers[0]
	if !strings.HasPrefix(a.Conclusion, "keepalive on against off: faster") || !strings.Contains(a.Conclusion, "but p99 19× higher at c=32") {
		t.Errorf("conclusion: %s", a.Conclusion)
	}
	note := a.Details[len(a.Details)-1]
	if !strings.HasPrefix(note, "Note (keepalive on): kept connections outnumber the pool's workers: at c=32 the backend ran at most 4 processes") {
		t.Errorf("note: %s", note)
	}

	// Without a cost: no "but", no note.
	for i := range res.Series {
		for j := range res.Series[i].Steps {
			for k := range res.Series[i].Steps[j].Trials {
				tr := &res.Series[i].Steps[j].Trials[k]
				tr.P99Ms, tr.MaxMs = 1000/tr.RequestsPerSecond, 1000/tr.RequestsPerSecond
			}
		}
	}
	res.Answer()
	a = res.Answers[0]
	if strings.Contains(a.Conclusion, "but") || strings.HasPrefix(a.Details[len(a.Details)-1], "Note") {
		t.Errorf("no cost, yet: %s / %q", a.Conclusion, a.Details)
	}
}

// TestCostCauses: failures on the fast side and a knee passed are named
// when seen; none seen gives the list of known causes.
func TestCostCauses(t *testing.T) {
	res := &Result{Measure: Measure{Levels: []int{4, 8}},
		Series: []Series{{Label: "a", Steps: []Step{{Concurrency: 4, RequestsPerSecond: Figure{Median: 100}}, {Concurrency: 8, Failed: 3, RequestsPerSecond: Figure{Median: 101}}}},
			{Label: "b", Steps: []Step{{Concurrency: 4, RequestsPerSecond: Figure{Median: 50}}, {Concurrency: 8, RequestsPerSecond: Figure{Median: 90}}}}}}
	n := res.costNote("f x", []cost{{s: 0, b: 1, level: 8}}, true)
	if !strings.Contains(n, "failures make a side look fast: a had 3 failed requests at c=8") || !strings.Contains(n, "a knee passed: a's req/s stopped rising after c=4") {
		t.Errorf("note: %s", n)
	}
	n = res.costNote("f x", []cost{{s: 1, b: 0, level: 4}}, true)
	if !strings.Contains(n, "none was seen here") {
		t.Errorf("note: %s", n)
	}
}

// TestLevelsText: the levels a cause was seen at, sorted, once each, and
// past four counted rather than listed, so that a cause seen at every
// level of a 51-level sweep takes one short clause.
func TestLevelsText(t *testing.T) {
	for _, tc := range []struct {
		ls   []int
		want string
	}{
		{[]int{32}, "at c=32"},
		{[]int{21, 11}, "at c=11 and 21"},
		{[]int{31, 11, 21, 11}, "at c=11, 21 and 31"},
		{[]int{41, 31, 21, 11}, "at c=11, 21, 31 and 41"},
		{[]int{11, 21, 31, 41, 51, 61}, "at c=11, 21, 31 and 3 more levels"},
	} {
		if got := levelsText(tc.ls); got != tc.want {
			t.Errorf("levelsText(%v) = %q, want %q", tc.ls, got, tc.want)
		}
	}
}

// TestCostNoteOnce: a cause seen at many levels is named once, with its
// levels: kept connections outnumbering a pool of 2 at ten levels, and a
// knee passed by one side at its first flat level.
func TestCostNoteOnce(t *testing.T) {
	res := &Result{}
	var cs []cost
	var a, b []Step
	for i := 1; i <= 10; i++ {
		c := 4 * i
		res.Measure.Levels = append(res.Measure.Levels, c)
		a = append(a, Step{Concurrency: c, RequestsPerSecond: Figure{Median: 100 * float64(min(i, 3))}})
		b = append(b, Step{Concurrency: c, RequestsPerSecond: Figure{Median: 30 * float64(i)}})
		if i > 1 {
			cs = append(cs, cost{s: 0, b: 1, level: c, keepOn: true, workers: 2})
		}
	}
	res.Series = []Series{{Label: "a", Steps: a}, {Label: "b", Steps: b}}
	n := res.costNote("keepalive on", cs, true)
	if strings.Count(n, "outnumber") != 1 || !strings.Contains(n, "at c=8, 12, 16 and 6 more levels the backend ran at most 2 processes") {
		t.Errorf("note: %s", n)
	}
	if strings.Count(n, "a knee passed") != 1 || !strings.Contains(n, "a's req/s stopped rising after c=12 (flat after 6 higher levels too)") {
		t.Errorf("note: %s", n)
	}
}
