// Package trials holds the statistics of repeated trials: the median of a
// metric over trials with its 95% confidence interval, the ratio of two
// series' medians with its 95% interval, a rank test, the verdict of a
// comparison under a noise threshold, the precision stopping rule, and the
// interleaved order in which the trials of several series run.
//
// Everything here is distribution-free, because the values of benchmark
// trials are not normal (a shared machine gives them long tails and
// bimodal stretches):
//
//   - The interval of a median comes from order statistics: with n trials,
//     P(x(k) <= median <= x(n-k+1)) = 1 - 2·B(k-1; n, 1/2) whatever the
//     distribution. Those levels jump with k (at 10 trials: 97.9% or
//     89.1%), so from 6 trials the interval is interpolated between the
//     two neighbouring pairs of order statistics (Hettmansperger and
//     Sheather, 1986) to get close to 95%; with 2 to 5 trials it is the
//     range of the trials, of confidence 1 - 2^(1-n) (93.75% at 5), and
//     Estimate.Confidence says so. benchmath's own interval is not used:
//     it picks the narrowest pair at or above 95%, so it stays empty (±∞)
//     below 6 trials and above covers the median up to 99% of the time
//     (99.2% at 8 trials, 97.9% at 10), wider than asked.
//   - The interval of a ratio new/old is the Moses interval of the shift
//     between the logarithms of the two samples (the distribution-free
//     interval that goes with the Mann-Whitney test): order statistics of
//     the n·m pairwise log differences, at the ranks that the exact
//     distribution of U gives (a normal approximation past 50 trials),
//     interpolated between neighbouring ranks in the same way.
//   - The p-value is benchstat's: golang.org/x/perf/benchmath's
//     Mann-Whitney U test (exact for small samples, with ties handled).
//
// TestMedianCoverage, TestRatioCoverage and TestFalsePositives check the
// promises on synthetic samples of known distributions (2,000 experiments
// each).
package trials

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// Confidence is the level of every interval of this package.
const Confidence = 0.95

// Estimate is the median of a metric over trials and its confidence
// interval.
type Estimate struct {
	// Median is the median of the values (the mean of the middle two for
	// an even count).
	Median float64
	// Lo and Hi bound the interval; both NaN with fewer than 2 values.
	Lo, Hi float64
	// Confidence is the interval's level: Confidence from 6 trials,
	// 1 - 2^(1-n) below (the range of the trials), 0 without interval.
	Confidence float64
	// N is the number of values.
	N int
}

// HasInterval reports whether e has an interval (2 values or more).
func (e Estimate) HasInterval() bool { return e.N >= 2 }

// HalfWidth returns the larger distance from the median to a bound, as a
// fraction of the median (0.03 for "± 3%"); +Inf without interval or with
// a median of 0.
func (e Estimate) HalfWidth() float64 {
	if !e.HasInterval() || e.Median == 0 {
		return math.Inf(1)
	}
	return math.Max(e.Hi-e.Median, e.Median-e.Lo) / math.Abs(e.Median)
}

// MinPreciseTrials is the fewest trials whose interval (their range,
// 93.75%) the precision rule accepts: below 5 the range of the trials is
// too weak an interval (75% at 3) to stop on.
const MinPreciseTrials = 5

// Precise reports whether e's interval lies within ±p of its median (p a
// fraction: 0.02 for 2%), from MinPreciseTrials values on.
func (e Estimate) Precise(p float64) bool {
	return e.N >= MinPreciseTrials && e.HalfWidth() <= p
}

// Median returns the median of xs and its interval (see the package doc).
// xs is not modified.
func Median(xs []float64) Estimate {
	s := sorted(xs)
	n := len(s)
	e := Estimate{N: n, Lo: math.NaN(), Hi: math.NaN(), Median: math.NaN()}
	if n == 0 {
		return e
	}
	e.Median = s[n/2]
	if n%2 == 0 {
		e.Median = (s[n/2-1] + s[n/2]) / 2
	}
	if n < 2 {
		return e
	}
	// cover(k) is the confidence of [x(k), x(n-k+1)] (1-based).
	cover := func(k int) float64 { return 1 - 2*binomCDF(k-1, n) }
	k := 1
	for k+1 <= n-k && cover(k+1) >= Confidence {
		k++
	}
	ck := cover(k)
	if ck < Confidence || k+1 > n-k {
		// Not even the range reaches the level: the range, with its own.
		e.Lo, e.Hi, e.Confidence = s[k-1], s[n-k], ck
		return e
	}
	ck1 := cover(k + 1)
	i := (ck - Confidence) / (ck - ck1)
	lambda := float64(n-k) * i / (float64(k) + float64(n-2*k)*i)
	e.Lo = (1-lambda)*s[k-1] + lambda*s[k]
	e.Hi = (1-lambda)*s[n-k] + lambda*s[n-k-1]
	e.Confidence = Confidence
	return e
}

// binomCDF is P(X <= k) for X ~ Binomial(n, 1/2).
func binomCDF(k, n int) float64 {
	if k < 0 {
		return 0
	}
	sum, lg := 0.0, float64(n)*math.Ln2
	for i := 0; i <= k && i <= n; i++ {
		sum += math.Exp(lchoose(n, i) - lg)
	}
	return math.Min(sum, 1)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

func sorted(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// Ratio is the comparison of a metric between a new and an old sample.
type Ratio struct {
	// Ratio is median(new) / median(old); NaN when the old median is 0.
	Ratio float64
	// Lo and Hi bound its interval; NaN without one (fewer than 2 values
	// on a side).
	Lo, Hi float64
	// P is the two-sided p-value of the Mann-Whitney U test (1 when it
	// cannot be computed: a side without values, or all values equal).
	P float64
}

// HasInterval reports whether r has an interval.
func (r Ratio) HasInterval() bool { return !math.IsNaN(r.Lo) && !math.IsNaN(r.Hi) }

// floor stands in for values <= 0 under a logarithm (a series whose every
// request failed has 0 requests/sec): the ratio interval then spans many
// orders of magnitude, on the right side of 1.
const floor = 1e-9

// Compare returns the ratio of the medians of newer over older, its
// interval, and the p-value of the rank test.
func Compare(newer, older []float64) Ratio {
	r := Ratio{Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: 1}
	if len(newer) == 0 || len(older) == 0 {
		return r
	}
	if mo := Median(older).Median; mo != 0 {
		r.Ratio = Median(newer).Median / mo
	}
	a := benchmath.NewSample(slices.Clone(newer), &benchmath.DefaultThresholds)
	b := benchmath.NewSample(slices.Clone(older), &benchmath.DefaultThresholds)
	r.P = benchmath.AssumeNothing.Compare(b, a).P
	if len(newer) < 2 || len(older) < 2 {
		return r
	}
	r.Lo, r.Hi = mosesRatio(newer, older)
	return r
}

// mosesRatio is the Moses interval of exp(shift) between the logarithms
// of y and x: order statistics of the pairwise differences log y_j -
// log x_i at the ranks that the distribution of U gives (no ties assumed),
// interpolated between the two neighbouring ranks as Median does, since
// the exact levels jump (5 trials against 5: 96.8% or 94.4%).
func mosesRatio(y, x []float64) (lo, hi float64) {
	return mosesAt(y, x, mosesRank(len(x), len(y)))
}

// mosesAt is the Moses interval of y over x at rank r.
func mosesAt(y, x []float64, r rank) (lo, hi float64) {
	ln := func(v float64) float64 { return math.Log(math.Max(v, floor)) }
	d := make([]float64, 0, len(x)*len(y))
	for _, yv := range y {
		for _, xv := range x {
			d = append(d, ln(yv)-ln(xv))
		}
	}
	slices.Sort(d)
	c, top := r.c-1, len(d)-r.c
	lo, hi = d[c], d[top]
	if r.lambda > 0 {
		lo += r.lambda * (d[c+1] - d[c])
		hi -= r.lambda * (d[top] - d[top-1])
	}
	return math.Exp(lo), math.Exp(hi)
}

// rank is the position of a Moses interval: the c-th smallest and largest
// differences, moved lambda of the way towards the next ones in.
type rank struct {
	c      int
	lambda float64
}

// rankKey is the key of the ranks cache.
type rankKey struct {
	m, n   int
	conf   float64
	interp bool
}

// ranks caches mosesRankAt by its arguments: the exact U distribution
// costs O(m²n²).
var ranks sync.Map

// mosesRank returns the largest C >= 1 such that [D(C), D(mn+1-C)] is an
// interval of at least Confidence, and how far to move towards
// [D(C+1), D(mn-C)] for Confidence itself (0 when even the whole range is
// less: 3 trials against 3 reach 90%).
func mosesRank(m, n int) rank {
	r, _ := mosesRankAt(m, n, Confidence, true)
	return r
}

// mosesRankAt returns the largest C >= 1 such that [D(C), D(mn+1-C)] is
// an interval of at least conf, and whether one is (ok false: even the
// whole range is less, and C is 1). With interp, lambda says how far to
// move towards [D(C+1), D(mn-C)] for conf itself; without, the interval
// is the conservative one, of at least conf (the sequential rule's).
func mosesRankAt(m, n int, conf float64, interp bool) (rank, bool) {
	key := rankKey{m, n, conf, interp}
	if r, ok := ranks.Load(key); ok {
		if r := r.(rank); r.c > 0 {
			return r, true
		}
		return rank{c: 1}, false
	}
	var cdf func(u int) float64
	if m <= stats.MannWhitneyExactLimit && n <= stats.MannWhitneyExactLimit {
		c := uCDF(m, n)
		cdf = func(u int) float64 { return c[u] }
	} else {
		mean := float64(m*n) / 2
		sd := math.Sqrt(float64(m*n*(m+n+1)) / 12)
		nd := stats.NormalDist{Mu: mean, Sigma: sd}
		cdf = func(u int) float64 { return nd.CDF(float64(u) + 0.5) }
	}
	// cover(c) is the confidence of [D(c), D(mn+1-c)].
	cover := func(c int) float64 { return 1 - 2*cdf(c-1) }
	r := rank{c: 1}
	for r.c+1 < m*n/2 && cover(r.c+1) >= conf {
		r.c++
	}
	cc := cover(r.c)
	if interp && cc >= conf && r.c+1 < m*n/2 {
		r.lambda = (cc - conf) / (cc - cover(r.c+1))
	}
	ok := cc >= conf
	stored := r
	if !ok {
		stored.c = -1 // cached as "none reaches conf"
	}
	ranks.Store(key, stored)
	return r, ok
}

// uCDF returns P(U <= u) for u = 0..m·n, U the Mann-Whitney statistic of
// samples of m and n values without ties: the number of arrangements of
// i x's and j y's with u pairs x < y, N(i, j, u) = N(i-1, j, u-j) +
// N(i, j-1, u), over all C(m+n, m) (one pass, O(m²n²); go-moremath's UDist
// recomputes it for every u asked).
func uCDF(m, n int) []float64 {
	// row[j][u] is N(i, j, u) for the current i.
	row := make([][]float64, n+1)
	for j := range row {
		row[j] = make([]float64, m*n+1)
		row[j][0] = 1 // i = 0: one arrangement, no pair
	}
	for i := 1; i <= m; i++ {
		// N(i, 0, 0) = 1 stays; N(i, j, u) adds N(i, j-1, u) (this row)
		// to N(i-1, j, u-j) (the last row, still in row[j]): walk u
		// downwards so that row[j][u-j] is still the last row's.
		for j := 1; j <= n; j++ {
			r, left := row[j], row[j-1]
			for u := i * j; u >= 0; u-- {
				v := left[u]
				if u >= j {
					v += r[u-j]
				}
				r[u] = v
			}
		}
	}
	c := row[n]
	total := 0.0
	for _, v := range c {
		total += v
	}
	sum := 0.0
	for u, v := range c {
		sum += v
		c[u] = math.Min(sum/total, 1)
	}
	return c
}

// Verdict words: requests/sec is "faster" or "slower", a latency "lower"
// or "higher", the backend's memory and CPU "smaller" or "larger" (a
// direction: the interval lies wholly outside 1 ± noise); "same" when the
// interval lies wholly inside 1 ± noise; "undecided" when it reaches both
// inside and outside the band (more rounds would tell: see
// Comparison.MoreRounds); "none" when the trials cannot decide at all (one
// trial a side, or too few for the test: Comparison.VerdictText says
// which).
const (
	Faster    = "faster"
	Slower    = "slower"
	Lower     = "lower"
	Higher    = "higher"
	Smaller   = "smaller"
	Larger    = "larger"
	Same      = "same"
	Undecided = "undecided"
	NoVerdict = "none"
)

// OldNoDifference is the verdict that versions before "same" and
// "undecided" saved for both; Upgrade reads it as one or the other.
const OldNoDifference = "no difference"

// Directional reports whether v is a direction (Faster, Slower, Lower,
// Higher, Smaller or Larger): a difference found.
func Directional(v string) bool {
	switch v {
	case Faster, Slower, Lower, Higher, Smaller, Larger:
		return true
	}
	return false
}

// Alpha is the significance level of the verdicts.
const Alpha = 0.05

// Verdict decides a comparison against a noise band (noise a fraction,
// 0.02 for 2%): a direction when p < Alpha and the whole ratio interval
// lies outside 1 ± noise; Same when the whole interval lies inside it;
// Undecided otherwise (no interval included). up and down are the words
// for a ratio above and below 1 (Faster and Slower, or Higher and Lower).
func (r Ratio) Verdict(noise float64, up, down string) string {
	return decide(r.Lo, r.Hi, r.P < Alpha, noise, up, down)
}

// decide is the rule of Verdict on an interval [lo, hi]; significant says
// whether the test agrees that there is a difference.
func decide(lo, hi float64, significant bool, noise float64, up, down string) string {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return Undecided
	case lo > 1+noise && significant:
		return up
	case hi < 1-noise && significant:
		return down
	case lo >= 1-noise && hi <= 1+noise:
		return Same
	}
	return Undecided
}

// MedianConfidence is the confidence of the interval that Median gives
// for n values: Confidence from 6 values on; with 2 to 5 the interval is
// the range of the values, of confidence 1 - 2^(1-n) (50% for 2, 93.75%
// for 5); 0 below 2 (no interval).
func MedianConfidence(n int) float64 {
	switch {
	case n < 2:
		return 0
	case n >= 6:
		return Confidence
	}
	return 1 - math.Pow(2, float64(1-n))
}

// RatioConfidence is the confidence of the ratio interval that Compare
// gives for m values against n: Confidence when the exact distribution of
// U reaches it (4 a side and more); below, the interval is the whole range
// of the pairwise ratios, of confidence 1 - 2/C(m+n, m) (66.7% for 2
// against 2, 90% for 3 against 3); 0 with fewer than 2 on a side.
func RatioConfidence(m, n int) float64 {
	if m < 2 || n < 2 {
		return 0
	}
	if _, ok := mosesRankAt(m, n, Confidence, true); ok {
		return Confidence
	}
	return 1 - 2*math.Exp(-lchoose(m+n, m))
}

// ConfidenceText prints a confidence as a percentage with the digits it
// needs: "95%", "93.75%", "66.7%".
func ConfidenceText(c float64) string {
	s := strconv.FormatFloat(100*c, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
}

// IntervalLabel names intervals of the confidences confs (0s, no
// interval, left out): "95% interval" when they share one, "interval,
// 50% to 95%" when they differ, "interval" without any.
func IntervalLabel(confs ...float64) string {
	lo, hi := 2.0, -1.0
	for _, c := range confs {
		if c > 0 {
			lo, hi = min(lo, c), max(hi, c)
		}
	}
	switch {
	case hi < 0:
		return "interval"
	case ConfidenceText(lo) == ConfidenceText(hi):
		return ConfidenceText(lo) + " interval"
	}
	return "interval, " + ConfidenceText(lo) + " to " + ConfidenceText(hi)
}
