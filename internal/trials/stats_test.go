package trials

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/aclements/go-moremath/stats"
)

// dist is a distribution of known median that draws trial values.
type dist struct {
	name   string
	median float64
	draw   func(r *rand.Rand) float64
}

// dists are shapes that benchmark trials take: symmetric, skewed to the
// right (a long tail of slow trials), flat, and bimodal.
var dists = []dist{
	{"normal", 1000, func(r *rand.Rand) float64 { return 1000 + 50*r.NormFloat64() }},
	{"lognormal", 1000, func(r *rand.Rand) float64 { return 1000 * math.Exp(0.2*r.NormFloat64()) }},
	{"exponential tail", 900 + 100*math.Ln2, func(r *rand.Rand) float64 { return 900 + 100*r.ExpFloat64() }},
	{"uniform", 1000, func(r *rand.Rand) float64 { return 900 + 200*r.Float64() }},
	// Two modes of equal weight, the median between them.
	{"bimodal", 1000, func(r *rand.Rand) float64 {
		if r.IntN(2) == 0 {
			return 950 + 30*r.NormFloat64()
		}
		return 1050 + 30*r.NormFloat64()
	}},
}

func sample(r *rand.Rand, d dist, n int, scale float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = scale * d.draw(r)
	}
	return xs
}

const experiments = 2000

// TestMedianCoverage: over 2,000 simulated experiments, the 95% interval
// of the median covers the true median 93 to 97% of the time, for every
// shape and for 5 trials (the default: the range, 93.75%) and more.
func TestMedianCoverage(t *testing.T) {
	for _, d := range dists {
		for _, n := range []int{5, 6, 10, 20} {
			r := rand.New(rand.NewPCG(uint64(n), 17))
			covered := 0
			for range experiments {
				e := Median(sample(r, d, n, 1))
				if e.Lo <= d.median && d.median <= e.Hi {
					covered++
				}
			}
			got := float64(covered) / experiments
			t.Logf("%s, n=%d: %.1f%% (nominal %.2f%%)", d.name, n, 100*got, 100*Median(make([]float64, n)).Confidence)
			if got < 0.93 || got > 0.97 {
				t.Errorf("%s, n=%d: the interval covered the median in %.1f%% of %d experiments, want 93 to 97%%",
					d.name, n, 100*got, experiments)
			}
		}
	}
}

// TestRatioCoverage: the ratio interval covers the true ratio of the
// medians (one series a scaled copy of the other: 0.8, 1, 1.25) 93 to 97%
// of the time.
func TestRatioCoverage(t *testing.T) {
	for _, d := range dists {
		for _, n := range []int{5, 10} {
			for _, truth := range []float64{0.8, 1, 1.25} {
				r := rand.New(rand.NewPCG(uint64(n), uint64(truth*100)))
				covered := 0
				for range experiments {
					c := Compare(sample(r, d, n, truth), sample(r, d, n, 1))
					if c.Lo <= truth && truth <= c.Hi {
						covered++
					}
				}
				got := float64(covered) / experiments
				t.Logf("%s, n=%d, ratio %g: %.1f%%", d.name, n, truth, 100*got)
				if got < 0.93 || got > 0.97 {
					t.Errorf("%s, n=%d, ratio %g: the interval covered the ratio in %.1f%% of %d experiments, want 93 to 97%%",
						d.name, n, truth, 100*got, experiments)
				}
			}
		}
	}
}

// TestFalsePositives: two series from one distribution get a direction
// (neither "same" nor "undecided") in at most 5% of 2,000 experiments with the
// default noise threshold (2%). Without one (noise 0) the verdict is the
// rank test's alone, of level 5% by construction, which 2,000 experiments
// measure to ±0.5% (one standard error): that case may reach 6.5%.
func TestFalsePositives(t *testing.T) {
	for _, d := range dists {
		for _, n := range []int{5, 10, 20} {
			for _, noise := range []float64{0, 0.02} {
				r := rand.New(rand.NewPCG(uint64(n), uint64(noise*1000)+3))
				fp := 0
				for range experiments {
					c := Compare(sample(r, d, n, 1), sample(r, d, n, 1))
					if v := c.Verdict(noise, Faster, Slower); Directional(v) {
						fp++
					}
				}
				got := float64(fp) / experiments
				t.Logf("%s, n=%d, noise %g: %.2f%%", d.name, n, noise, 100*got)
				if bound := map[float64]float64{0: 0.065, 0.02: 0.05}[noise]; got > bound {
					t.Errorf("%s, n=%d, noise %g: %.1f%% false verdicts, want at most %g%%", d.name, n, noise, 100*got, 100*bound)
				}
			}
		}
	}
}

// TestPower: a 20% difference on a 5% noise is found with 5 trials a side,
// almost always, in the right direction; p99's words are used for it.
func TestPower(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	d := dists[0]
	found := 0
	for range 200 {
		c := Compare(sample(r, d, 5, 0.8), sample(r, d, 5, 1))
		switch v := c.Verdict(0.02, Higher, Lower); v {
		case Lower:
			found++
		case Higher:
			t.Fatalf("verdict %q for a ratio of 0.8 (%+v)", v, c)
		}
	}
	if found < 190 {
		t.Errorf("found the difference %d times of 200, want 190 or more", found)
	}
}

func TestMedianSmall(t *testing.T) {
	cases := []struct {
		xs             []float64
		med, lo, hi, c float64
	}{
		{[]float64{3, 1, 2}, 2, 1, 3, 0.75},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4, 0.875},
		{[]float64{5, 4, 3, 2, 1}, 3, 1, 5, 0.9375},
		{[]float64{7}, 7, math.NaN(), math.NaN(), 0},
	}
	for _, c := range cases {
		e := Median(c.xs)
		same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
		if !same(e.Median, c.med) || !same(e.Lo, c.lo) || !same(e.Hi, c.hi) || e.Confidence != c.c {
			t.Errorf("Median(%v) = %+v, want median %g [%g, %g] at %g", c.xs, e, c.med, c.lo, c.hi, c.c)
		}
	}
	if e := Median([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}); !(e.Lo > 2 && e.Lo < 3 && e.Hi > 8 && e.Hi < 9) {
		t.Errorf("Median(1..10) = %+v, want an interval interpolated between x(2)..x(3) and x(8)..x(9)", e)
	}
}

func TestPrecise(t *testing.T) {
	steady := []float64{100, 101, 99, 100.5, 99.5}
	if e := Median(steady); !e.Precise(0.02) || e.Precise(0.005) {
		t.Errorf("%v: %+v, half width %.3f: want precise at 2%%, not at 0.5%%", steady, e, e.HalfWidth())
	}
	if e := Median(steady[:4]); e.Precise(0.5) {
		t.Errorf("4 trials counted as precise: %+v", e)
	}
}

func TestVerdictEdges(t *testing.T) {
	// A series whose every request failed: 0 req/s against 100.
	c := Compare([]float64{0, 0, 0, 0, 0}, []float64{100, 101, 99, 100, 102})
	if v := c.Verdict(0.02, Faster, Slower); v != Slower || c.Ratio != 0 {
		t.Errorf("0 against 100: %+v, verdict %q, want slower with ratio 0", c, v)
	}
	// Old median 0: no ratio, no verdict.
	c = Compare([]float64{1, 2, 3}, []float64{0, 0, 0})
	if !math.IsNaN(c.Ratio) {
		t.Errorf("ratio over 0 = %v, want NaN", c.Ratio)
	}
	// One trial a side: a ratio, no interval, no verdict.
	c = Compare([]float64{80}, []float64{100})
	if c.Ratio != 0.8 || c.HasInterval() || c.Verdict(0.02, Faster, Slower) != Undecided {
		t.Errorf("one trial a side: %+v", c)
	}
	// A clear difference inside the noise band is the same.
	a := []float64{100, 100.2, 100.4, 100.6, 100.8}
	b := []float64{101, 101.2, 101.4, 101.6, 101.8}
	c = Compare(b, a)
	if c.P >= 0.05 || c.Verdict(0.02, Faster, Slower) != Same || c.Verdict(0, Faster, Slower) != Faster {
		t.Errorf("1%% apart: %+v: want significant, same at 2%% noise, faster at 0", c)
	}
	// An interval that reaches both inside and outside the band is
	// undecided, whichever side its ratio is on.
	wide := []float64{80, 95, 100, 110, 125}
	c = Compare(wide, a)
	if v := c.Verdict(0.02, Faster, Slower); v != Undecided {
		t.Errorf("wide: %+v: %q, want undecided", c, v)
	}
}

// TestUCDF: the one-pass distribution of U is go-moremath's.
func TestUCDF(t *testing.T) {
	for _, mn := range [][2]int{{1, 1}, {3, 3}, {5, 5}, {4, 7}, {12, 9}} {
		m, n := mn[0], mn[1]
		got := uCDF(m, n)
		d := stats.UDist{N1: m, N2: n}
		for u := range got {
			if want := d.CDF(float64(u)); math.Abs(got[u]-want) > 1e-12 {
				t.Fatalf("m=%d n=%d: P(U <= %d) = %v, want %v", m, n, u, got[u], want)
			}
		}
	}
}
