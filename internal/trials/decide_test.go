package trials

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestRoundsToDecide(t *testing.T) {
	for _, c := range []struct {
		name   string
		lo, hi float64
		n      int
		want   func(int) bool
	}{
		// Centred on 1.0, ±10% after 5 rounds: inside ±2% needs the
		// half-width 5 times smaller, 25 times the rounds: 125 > 100.
		{"centred, wide", 0.9, 1.1, 5, func(k int) bool { return k == -1 }},
		// Centred on 1.0, ±3%: (3/2)² · 5 = 11.3 rounds, 7 more.
		{"centred, near", 0.97, 1.03, 5, func(k int) bool { return k >= 6 && k <= 8 }},
		// Centred on 1.5 with [1.0, 2.25]: outside 1.02 needs the
		// half-width from 0.405 to 0.386: a round more.
		{"far, wide", 1.0, 2.25, 5, func(k int) bool { return k == 1 }},
		// On the band's edge: never.
		{"on the edge", 1.0, 1.0404, 5, func(k int) bool { return k == -1 }},
		{"no interval", math.NaN(), math.NaN(), 5, func(k int) bool { return k == -1 }},
	} {
		if got := RoundsToDecide(c.lo, c.hi, c.n, 0.02); !c.want(got) {
			t.Errorf("%s: [%g, %g] after %d: %d more rounds", c.name, c.lo, c.hi, c.n, got)
		}
	}
}

// TestUndecidedEstimate: CompareLevel gives an undecided comparison its
// estimate of more rounds and, from the trials' times, of seconds; the
// text says both.
func TestUndecidedEstimate(t *testing.T) {
	mk := func(rps ...float64) []Trial {
		var ts []Trial
		for _, v := range rps {
			ts = append(ts, Trial{RequestsPerSecond: v, P99Ms: 1, MeanMs: 1, P50Ms: 1, MaxMs: 1, Seconds: 2, ClientCPUMeasured: true})
		}
		return ts
	}
	cs := CompareLevel("a", "b", 1, mk(100, 101, 99, 103, 97), mk(100, 102, 98, 100.5, 99.5), 0.02)
	c := cs[0]
	if c.Verdict != Undecided || c.MoreRounds == 0 || (c.MoreRounds > 0 && c.MoreSeconds != 4*float64(c.MoreRounds)) {
		t.Fatalf("%+v: want undecided with an estimate, 4 s a round", c)
	}
	if txt := c.VerdictText(); txt[:len("undecided: ")] != "undecided: " {
		t.Errorf("text %q", txt)
	}
}

// TestUpgrade: an old "no difference" reads "same" inside the band, else
// "undecided"; other verdicts stay.
func TestUpgrade(t *testing.T) {
	for _, c := range []struct {
		verdict string
		ci      []float64
		want    string
	}{
		{OldNoDifference, []float64{0.99, 1.015}, Same},
		{OldNoDifference, []float64{0.47, 2.96}, Undecided},
		{OldNoDifference, nil, Undecided},
		{Faster, []float64{1.1, 1.2}, Faster},
	} {
		cmp := Comparison{Verdict: c.verdict, RatioCI95: c.ci, Trials: 5, BaselineTrials: 5}
		cmp.Upgrade(0.02)
		if cmp.Verdict != c.want {
			t.Errorf("%q %v: %q, want %q", c.verdict, c.ci, cmp.Verdict, c.want)
		}
	}
}

func TestBenjaminiHochberg(t *testing.T) {
	// m = 5, q = 5%: thresholds 0.01, 0.02, 0.03, 0.04, 0.05. The sorted
	// p-values 0.001, 0.015, 0.035, 0.039, 0.6: the largest k with p(k)
	// <= k·q/m is 4 (0.039 <= 0.04), so the first four are kept, 0.035
	// too though above its own threshold (0.03).
	ps := []float64{0.6, 0.039, 0.001, 0.035, 0.015}
	want := []bool{false, true, true, true, true}
	got := BenjaminiHochberg(ps, 0.05)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("BH(%v) = %v, want %v", ps, got, want)
		}
	}
	if got := BenjaminiHochberg([]float64{0.02, 0.03}, 0.05); got[0] || got[1] {
		// 0.03 > 2·0.05/2? no: 0.03 <= 0.05, so both are kept.
		if !(got[0] && got[1]) {
			t.Errorf("BH(0.02, 0.03) = %v", got)
		}
	}
	if got := BenjaminiHochberg([]float64{0.04, 0.5}, 0.05); got[0] || got[1] {
		t.Errorf("BH(0.04, 0.5) = %v, want none (0.04 > 0.025)", got)
	}
}

// TestControlFDR: among many identical pairs and a few clear
// differences, the control keeps the clear ones and withdraws the
// directions that chance gave, and says so.
func TestControlFDR(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 1))
	var cs []Comparison
	// 8 trials a side: with 5, the rank test's smallest p-value (0.008)
	// is above BH's threshold for the first of 200 (0.00025), and a
	// direction survives only among many.
	draw := func(scale float64) []float64 { return sample(r, dists[1], 8, scale) }
	for i := range 200 {
		scale := 1.0
		if i < 20 {
			scale = 3
		}
		rr := Compare(draw(scale), draw(1))
		cs = append(cs, Comparison{Metric: MetricRequestsPerSecond, Trials: 8, BaselineTrials: 8,
			Ratio: num(rr.Ratio), RatioCI95: []float64{rr.Lo, rr.Hi}, PValue: rr.P, Verdict: rr.Verdict(0.02, Faster, Slower)})
	}
	before := 0
	for i := 20; i < len(cs); i++ {
		if Directional(cs[i].Verdict) {
			before++
		}
	}
	f := ControlFDR(cs, 0.02)
	after, kept := 0, 0
	for i := range cs {
		switch {
		case i < 20 && cs[i].Verdict == Faster:
			kept++
		case i >= 20 && Directional(cs[i].Verdict):
			after++
		}
	}
	t.Logf("false directions: %d before, %d after; %d of 20 real kept; %s", before, after, kept, f.Text())
	if after > before || kept < 18 || f.Comparisons != 200 || f.Directions != kept+after {
		t.Errorf("false %d -> %d, real kept %d of 20, %+v", before, after, kept, f)
	}
	if before > 0 && f.Withdrawn == 0 {
		t.Errorf("no direction withdrawn: %+v", f)
	}
}

// seqDraw draws one round's value: lognormal of median m and spread
// (0.03: 3%), one round in ten from a slow stretch (a shared machine's
// tail, up to 10% slower).
func seqDraw(r *rand.Rand, m, spread float64) float64 {
	v := m * math.Exp(spread*r.NormFloat64())
	if r.IntN(10) == 0 {
		v *= 1 - 0.1*r.Float64()
	}
	return v
}

// seqRun is one experiment under the sequential rule: rounds of both
// sides (true ratio truth, spread the per-round spread), looked at after
// every round from 4 to 20. Decide replays the looks in order
// (TestSequentialLooks), so one call on all the rounds is the same as a
// call after each.
func seqRun(r *rand.Rand, q Sequential, truth, spread float64) Decision {
	var a, b []float64
	for range q.MaxRounds {
		a = append(a, seqDraw(r, 1000*truth, spread))
		b = append(b, seqDraw(r, 1000, spread))
	}
	return q.Decide(a, b, Faster, Slower)
}

// TestSequentialTruth measures the sequential rule's error rates on
// synthetic rounds, 2,000 experiments each (deterministic seeds):
// identical sides get a false direction in at most 5%; the interval at
// the stop covers the true ratio (0.83, 0.98, 1.0) in at least 93%; a
// 1.5% difference with a 2% band ends "same" or "undecided", never a
// direction, in at least 95%. docs/statistics.md quotes the rates.
func TestSequentialTruth(t *testing.T) {
	q := Sequential{MinRounds: DefaultMinRounds, MaxRounds: DefaultMaxRepeat, Noise: 0.02}
	for _, spread := range []float64{0.005, 0.03} {
		for _, truth := range []float64{1.0, 0.98, 0.83, 1.015} {
			r := rand.New(rand.NewPCG(45+uint64(spread*1000), uint64(truth*1000)))
			var dir, same, covered, rounds int
			for range experiments {
				d := seqRun(r, q, truth, spread)
				rounds += d.Rounds
				switch {
				case Directional(d.Verdict):
					dir++
				case d.Verdict == Same:
					same++
				}
				if d.Lo <= truth && truth <= d.Hi {
					covered++
				}
			}
			pct := func(k int) float64 { return 100 * float64(k) / experiments }
			t.Logf("spread %g%%, ratio %g: directions %.2f%%, same %.2f%%, undecided %.2f%%, covered %.2f%%, mean rounds %.1f",
				100*spread, truth, pct(dir), pct(same), pct(experiments-dir-same), pct(covered), float64(rounds)/experiments)
			if pct(covered) < 93 {
				t.Errorf("ratio %g: the interval at the stop covered it in %.2f%%, want 93%% or more", truth, pct(covered))
			}
			switch truth {
			case 1.0:
				if pct(dir) > 5 {
					t.Errorf("identical sides: %.2f%% false directions, want at most 5%%", pct(dir))
				}
			case 1.015:
				if pct(dir) > 5 {
					t.Errorf("1.5%% apart, 2%% band: %.2f%% directions, want at most 5%%", pct(dir))
				}
			case 0.83:
				if pct(dir) < 95 {
					t.Errorf("17%% apart: found in %.2f%%, want 95%% or more", pct(dir))
				}
			}
		}
	}
}

// TestSequentialLooks: the looks of 4 to 20 rounds are at 5, 7, 10, 14
// and 20, each at 99%; a clear difference is decided at the first look;
// the rule replays its looks, so deciding on all the rounds at once gives
// the look that decided first.
func TestSequentialLooks(t *testing.T) {
	q := Sequential{MinRounds: 4, MaxRounds: 20, Noise: 0.02}
	if c, l := q.LookConfidence(), q.LookRounds(); math.Abs(c-(1-0.05/5)) > 1e-12 || !slices.Equal(l, []int{5, 7, 10, 14, 20}) {
		t.Errorf("looks at %v, of confidence %g", l, c)
	}
	for _, tc := range []struct{ min, max int }{{4, 4}, {4, 5}, {4, 8}, {4, 12}, {4, 30}, {6, 20}, {4, 100}} {
		q := Sequential{MinRounds: tc.min, MaxRounds: tc.max}
		l := q.LookRounds()
		if l[0] < tc.min || l[len(l)-1] != tc.max || !slices.IsSorted(l) || q.FirstLook(0) != l[0] {
			t.Errorf("%d to %d rounds: looks %v, first with an interval %d", tc.min, tc.max, l, q.FirstLook(0))
		}
	}
	var a, b []float64
	for i := range 20 {
		a = append(a, 2000+float64(i))
		b = append(b, 1000+float64(i))
	}
	d := q.Decide(a[:4], b[:4], Faster, Slower)
	if d.Verdict != Undecided || d.Final || !math.IsNaN(d.Lo) {
		t.Errorf("4 rounds: %+v, want undecided, not final, no interval yet", d)
	}
	d = q.Decide(a, b, Faster, Slower)
	if d.Verdict != Faster || d.Rounds != 5 || !d.Final || !(d.Lo > 1.9 && d.Hi < 2.1) {
		t.Errorf("20 rounds: %+v, want faster at 5", d)
	}
	// Identical values: the same at the first look with an interval.
	d = q.Decide(b, b, Faster, Slower)
	if d.Verdict != Same || d.Rounds != 5 {
		t.Errorf("identical: %+v, want same at 5", d)
	}
	// MaxRounds reached undecided: final.
	w := []float64{800, 1200, 900, 1100, 1000, 950, 1050, 1150, 850, 1000, 990, 1010, 1020, 980, 1200, 800, 870, 1130, 1000, 1000}
	d = q.Decide(w, b, Faster, Slower)
	if d.Verdict != Undecided || !d.Final || d.Rounds != 20 {
		t.Errorf("wide: %+v, want undecided and final at 20", d)
	}
}
