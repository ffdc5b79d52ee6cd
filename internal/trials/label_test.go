package trials

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestIntervalConfidence: the confidence a label gives is the interval's
// own: Median's with n values (50% for 2, 93.75% for 5, 95% from 6) and
// the ratio's (66.7% for 2 against 2, 90% for 3 against 3, 95% from 4);
// and on synthetic samples the range of 2 and of 5 trials covers the true
// median about as often as the label says.
func TestIntervalConfidence(t *testing.T) {
	for n := 0; n <= 12; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i)
		}
		if got, want := MedianConfidence(n), Median(xs).Confidence; math.Abs(got-want) > 1e-12 {
			t.Errorf("n=%d: MedianConfidence %g, Median says %g", n, got, want)
		}
	}
	for _, c := range []struct {
		m, n int
		want float64
	}{{1, 5, 0}, {2, 2, 2.0 / 3}, {3, 3, 0.9}, {4, 4, Confidence}, {5, 5, Confidence}, {2, 20, Confidence}} {
		if got := RatioConfidence(c.m, c.n); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("RatioConfidence(%d, %d) = %g, want %g", c.m, c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		confs []float64
		want  string
	}{{[]float64{0.95, 0.95}, "95% interval"}, {[]float64{0.9375}, "93.75% interval"}, {[]float64{0.5, 0.95, 0}, "interval, 50% to 95%"},
		{nil, "interval"}, {[]float64{2.0 / 3}, "66.67% interval"}} {
		if got := IntervalLabel(c.confs...); got != c.want {
			t.Errorf("IntervalLabel(%v) = %q, want %q", c.confs, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(2, 5))
	for _, n := range []int{2, 5} {
		covered := 0
		for range experiments {
			xs := sample(r, dists[0], n, 1)
			if e := Median(xs); e.Lo <= dists[0].median && dists[0].median <= e.Hi {
				covered++
			}
		}
		got, want := float64(covered)/experiments, MedianConfidence(n)
		if math.Abs(got-want) > 0.03 {
			t.Errorf("%d trials: the range covered the median in %.1f%%, the label says %s", n, 100*got, ConfidenceText(want))
		}
	}
}
