package trials

import (
	"fmt"
	"math"
	"slices"
)

// RoundsToDecide estimates how many more rounds (trials a side) would
// decide a comparison whose ratio interval [lo, hi] after n rounds is
// undecided against the band 1 ± noise: the interval's half-width, on a
// log scale, shrinks as 1/sqrt(n), its centre held where it is; the
// rounds needed are those at which it fits wholly outside the band (a
// direction) or wholly inside it (Same), whichever comes first. It is at
// least 1, and -1 when more than MaxRepeat trials in all would be needed
// (the interval's centre sits on the band's edge) or there is no interval.
func RoundsToDecide(lo, hi float64, n int, noise float64) int {
	f, ok := shrink(lo, hi, noise)
	switch {
	case !ok || n < 1:
		return -1
	case f >= 1:
		return 1 // decided by its width; a round more settles the test
	}
	return roundsFor(float64(n)/(f*f), n)
}

// RoundsToDecideSaved is RoundsToDecide when only one side grows: n
// trials that run against m saved ones, which no round adds to. An
// interval's width goes as √(1/n + 1/m), so the saved side's share of it
// stays whatever the rounds: -1 when even endless rounds would leave it
// too wide (or more than MaxRepeat trials would be needed).
func RoundsToDecideSaved(lo, hi float64, n, m int, noise float64) int {
	f, ok := shrink(lo, hi, noise)
	switch {
	case !ok || n < 1 || m < 1:
		return -1
	case f >= 1:
		return 1
	}
	inv := f*f*(1/float64(n)+1/float64(m)) - 1/float64(m)
	if inv <= 0 {
		return -1
	}
	return roundsFor(1/inv, n)
}

// shrink is how far the interval [lo, hi] must narrow, its centre held
// on a log scale, to decide against 1 ± noise: the largest half-width
// that decides over its half-width now (at least 1: decided by its
// width); ok is false without an interval or with its centre on the
// band's edge.
func shrink(lo, hi, noise float64) (f float64, ok bool) {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return 0, false
	}
	l, h := math.Log(lo), math.Log(hi)
	mid, half := (l+h)/2, (h-l)/2
	up, down := math.Log1p(noise), math.Log1p(-noise)
	// target is the largest half-width that decides, the centre held.
	target := 0.0
	switch {
	case mid > up:
		target = mid - up
	case mid < down:
		target = down - mid
	default:
		target = min(up-mid, mid-down)
	}
	if half <= target {
		return 1, true
	}
	if target <= 0 {
		return 0, false
	}
	return target / half, true
}

// roundsFor is the rounds past n to need trials a side: at least 1, -1
// past MaxRepeat.
func roundsFor(need float64, n int) int {
	if need > MaxRepeat {
		return -1
	}
	return max(int(math.Ceil(need))-n, 1)
}

// estimate sets c's MoreRounds (and MoreSeconds, a round lasting
// roundSeconds; 0 when unknown) when c is Undecided.
func (c *Comparison) estimate(noise, roundSeconds float64) {
	c.MoreRounds, c.MoreSeconds = 0, 0
	if c.Verdict != Undecided || c.RatioCI95 == nil {
		return
	}
	c.MoreRounds = RoundsToDecide(c.RatioCI95[0], c.RatioCI95[1], min(c.Trials, c.BaselineTrials), noise)
	if c.MoreRounds > 0 && roundSeconds > 0 {
		c.MoreSeconds = float64(c.MoreRounds) * roundSeconds
	}
}

// roundSeconds is how long a round of the two sides lasts: the sum of
// their median trial times (0 when unknown).
func roundSeconds(s, b []Trial) float64 {
	sec := func(t Trial) float64 { return t.Seconds }
	a, z := Median(values(s, sec)).Median, Median(values(b, sec)).Median
	if !(a > 0) || !(z > 0) {
		return 0
	}
	return a + z
}

// MoreText says what would decide an undecided comparison: "~6 more
// rounds, ~40 s", "more than 100 rounds"; "" for any other.
func (c *Comparison) MoreText() string {
	switch {
	case c.Verdict != Undecided || c.MoreRounds == 0:
		return ""
	case c.MoreRounds < 0:
		return fmt.Sprintf("more than %d rounds", MaxRepeat)
	}
	s := fmt.Sprintf("~%d more round", c.MoreRounds)
	if c.MoreRounds != 1 {
		s += "s"
	}
	if c.MoreSeconds > 0 {
		s += ", ~" + Duration(c.MoreSeconds)
	}
	return s
}

// Duration prints seconds briefly: "40 s", "3.2 min", "1.5 h".
func Duration(sec float64) string {
	switch {
	case sec < 90:
		return fmt.Sprintf("%.2g s", sec)
	case sec < 90*60:
		return fmt.Sprintf("%.2g min", sec/60)
	}
	return fmt.Sprintf("%.2g h", sec/3600)
}

// Upgrade reads a verdict saved by an older version: OldNoDifference
// becomes Same when c's ratio interval lies inside 1 ± noise (the noise
// the file was judged with), else Undecided, with its estimate of more
// rounds (trial times unknown).
func (c *Comparison) Upgrade(noise float64) {
	if c.Verdict != OldNoDifference {
		return
	}
	c.Verdict = Undecided
	if ci := c.RatioCI95; len(ci) == 2 && ci[0] >= 1-noise && ci[1] <= 1+noise {
		c.Verdict = Same
	}
	c.estimate(noise, 0)
}

// UpgradeAll upgrades every comparison of cs (Upgrade).
func UpgradeAll(cs []Comparison, noise float64) {
	for i := range cs {
		cs[i].Upgrade(noise)
	}
}

// Sequential is the rule of rounds run until decided: at planned looks,
// from about MinRounds to MaxRounds, it looks at the ratio interval of the
// two sides and stops with a direction when the interval lies wholly
// outside 1 ± Noise, with Same when it lies wholly inside, and goes on
// otherwise, until MaxRounds, where what is still undecided stays
// Undecided.
//
// Looking again and again would inflate a fixed-sample interval's error (a
// 95% interval looked at 17 times misses more than 5% of the time), so
// each look spends an equal share of Alpha (Bonferroni over the planned
// looks): the interval at every look is the conservative Moses interval
// (no interpolation between ranks) of confidence 1 - Alpha/Looks. The
// chance that any of the looks' intervals misses the true ratio is then at
// most Alpha, whatever the dependence between looks, and so are the false
// directions on identical sides, the false Same on sides a band apart,
// and the miss rate of the interval reported at the stop
// (TestSequentialTruth measures them).
//
// The looks are spaced geometrically (each about 1.4 times the round of
// the one before, MaxRounds the last: 5, 7, 10, 14 and 20 for 4 to 20)
// rather than after every round: fewer looks leave each a larger share of
// Alpha (99% rather than 99.7% for 4 to 20), so that a clear difference
// is decided at the first look, 5 rounds a side, and every later interval
// is narrower. The first look is the first round from MinRounds whose
// exact rank distribution reaches the looks' confidence: no share of
// Alpha is spent on a look that could not decide.
type Sequential struct {
	// MinRounds is the first look (at least DefaultMinRounds); MaxRounds
	// the last, where the rule stops.
	MinRounds, MaxRounds int
	// Noise is the band: 0.02 for 1 ± 2%.
	Noise float64
	// Saved, when set, says which side is a saved run's trials, which no
	// round adds to (bench --until decided --against FILE): SavedBaseline
	// or SavedSeries. Every look then takes all of that side's trials
	// and the first k of the other's (k the look's round, up to
	// MaxRounds); "" for two sides that both run in rounds, the first k
	// of each.
	Saved string
}

// The sides of a comparison that a saved run may be (Sequential.Saved).
const (
	SavedBaseline = "baseline"
	SavedSeries   = "series"
)

// DefaultMinRounds is the first round the sequential rule looks at.
const DefaultMinRounds = 4

// lookGrowth is the ratio of a look's round to the one before it.
const lookGrowth = 1.4

// LookRounds is the rounds at which the rule looks, in order: from the
// first round k of MinRounds on whose interval of two sides of k trials
// reaches the confidence the schedule from k gives, each about
// lookGrowth times the one before, and MaxRounds last.
func (q Sequential) LookRounds() []int {
	first, last := max(q.MinRounds, 1), max(q.MaxRounds, 1)
	for k := first; k <= last; k++ {
		ls := schedule(k, last)
		if _, ok := mosesRankAt(k, k, 1-Alpha/float64(len(ls)), false); ok || k == last {
			return ls
		}
	}
	return []int{last}
}

// schedule is the looks from round first to last, each about lookGrowth
// times the one before; a look just short of last (within half a step)
// gives way to it.
func schedule(first, last int) []int {
	ls := []int{min(first, last)}
	for k := first; k < last; {
		k = min(max(int(math.Ceil(float64(k)*lookGrowth)), k+1), last)
		if n := len(ls); k == last && n > 1 && float64(last-ls[n-1]) < float64(ls[n-1])*(lookGrowth-1)/2 {
			ls = ls[:n-1]
		}
		ls = append(ls, k)
	}
	return ls
}

// Looks is the number of looks the rule plans (LookRounds).
func (q Sequential) Looks() int { return len(q.LookRounds()) }

// LookConfidence is the confidence of the interval at each look: 1 -
// Alpha/Looks.
func (q Sequential) LookConfidence() float64 { return 1 - Alpha/float64(q.Looks()) }

// Decision is what the sequential rule decided.
type Decision struct {
	// Verdict is a direction, Same or Undecided.
	Verdict string
	// Ratio is the ratio of the medians at the look that decided (the
	// last look, undecided); Lo and Hi its interval at LookConfidence
	// (NaN where the rounds were too few for one).
	Ratio, Lo, Hi float64
	// Rounds is the number of rounds at the look that decided; undecided,
	// the rounds so far.
	Rounds int
	// Final says that no more rounds are wanted: decided, or MaxRounds
	// reached.
	Final bool
}

// Decide applies the rule to the per-round values of both sides so far
// (value i of each from round i; the rounds counted are the fewer of the
// two, at most MaxRounds; with Saved, those of the side that runs, the
// saved side taken whole at every look): it replays the looks
// (LookRounds) that the rounds so far reach, in order, and returns the
// first decision, so that calling it after every round gives what the
// planned looks give. up and down are the words for a ratio above and
// below 1.
func (q Sequential) Decide(newer, older []float64, up, down string) Decision {
	n := min(len(newer), len(older), q.MaxRounds)
	switch {
	case q.Saved == SavedBaseline && len(older) > 0:
		n = min(len(newer), q.MaxRounds)
	case q.Saved == SavedSeries && len(newer) > 0:
		n = min(len(older), q.MaxRounds)
	}
	d := Decision{Verdict: Undecided, Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Rounds: n}
	looks := q.LookRounds()
	conf := 1 - Alpha/float64(len(looks))
	for _, k := range looks {
		if k > n {
			break
		}
		y, x := q.look(newer, older, k)
		d.Rounds = k
		d.Ratio = math.NaN()
		if mo := Median(x).Median; mo != 0 {
			d.Ratio = Median(y).Median / mo
		}
		r, ok := mosesRankAt(len(x), len(y), conf, false)
		if !ok {
			d.Lo, d.Hi = math.NaN(), math.NaN()
			continue
		}
		d.Lo, d.Hi = mosesAt(y, x, r)
		if v := decide(d.Lo, d.Hi, true, q.Noise, up, down); v != Undecided {
			d.Verdict, d.Final = v, true
			return d
		}
	}
	// Undecided: the rounds so far, the interval of the last look.
	d.Rounds = n
	d.Final = n >= q.MaxRounds
	return d
}

// look returns the values of each side at the look of round k: the first
// k of a side that runs in rounds, every one of a saved side.
func (q Sequential) look(newer, older []float64, k int) (y, x []float64) {
	y, x = newer, older
	if q.Saved != SavedSeries {
		y = newer[:k]
	}
	if q.Saved != SavedBaseline {
		x = older[:k]
	}
	return y, x
}

// FirstLook returns the first round, from MinRounds to MaxRounds, at
// whose look the rule has an interval (and so may decide) against a
// saved side of saved trials (Saved set), or of a side that runs in
// rounds too when saved is 0; 0 when none has: the saved trials are too
// few for the looks' confidence (a saved run of 4 trials is first
// looked at with an interval at round 9 of 4 to 20, of 6 at round 6).
func (q Sequential) FirstLook(saved int) int {
	looks := q.LookRounds()
	conf := 1 - Alpha/float64(len(looks))
	for _, k := range looks {
		m := saved
		if m == 0 {
			m = k
		}
		if _, ok := mosesRankAt(m, k, conf, false); ok {
			return k
		}
	}
	return 0
}

// BenjaminiHochberg returns which of the p-values ps are discoveries at a
// false-discovery rate q (Benjamini and Hochberg, 1995): with the
// p-values sorted, p(1) <= ... <= p(m), the k smallest for the largest k
// with p(k) <= k·q/m. Among the discoveries, the expected share of false
// ones is then at most q (for independent or positively dependent tests).
func BenjaminiHochberg(ps []float64, q float64) []bool {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case ps[a] < ps[b]:
			return -1
		case ps[a] > ps[b]:
			return 1
		}
		return 0
	})
	k := 0
	for r, i := range idx {
		if ps[i] <= float64(r+1)*q/float64(m) {
			k = r + 1
		}
	}
	out := make([]bool, m)
	for _, i := range idx[:k] {
		out[i] = true
	}
	return out
}

// FDRMethod names the false-discovery control.
const FDRMethod = "Benjamini-Hochberg"

// FDR says how the false discoveries of many comparisons were controlled:
// the JSON object "false_discoveries" of a sweep of trials and a study.
type FDR struct {
	// Method is FDRMethod; Rate the rate it controls (Alpha).
	Method string  `json:"method"`
	Rate   float64 `json:"rate"`
	// Comparisons counts the comparisons with a test (a verdict other
	// than NoVerdict); Directions the directions kept; Withdrawn the
	// directions the control made Undecided.
	Comparisons int `json:"comparisons"`
	Directions  int `json:"directions"`
	Withdrawn   int `json:"withdrawn"`
}

// ControlFDR applies BenjaminiHochberg at Alpha to the p-values of the
// comparisons of cs with a test: a direction whose p-value is not among
// the discoveries becomes Undecided (Comparison.Withdrawn), with its
// estimate of more rounds. It returns what it did; cs is changed in place.
func ControlFDR(cs []Comparison, noise float64) FDR {
	f := FDR{Method: FDRMethod, Rate: Alpha}
	var ps []float64
	var at []int
	for i := range cs {
		if cs[i].Verdict == NoVerdict || cs[i].Verdict == "" {
			continue
		}
		ps = append(ps, cs[i].PValue)
		at = append(at, i)
	}
	f.Comparisons = len(ps)
	keep := BenjaminiHochberg(ps, Alpha)
	for j, i := range at {
		c := &cs[i]
		if !Directional(c.Verdict) {
			continue
		}
		if keep[j] {
			f.Directions++
			continue
		}
		f.Withdrawn++
		c.Verdict, c.Withdrawn = Undecided, true
		c.estimate(noise, 0)
	}
	return f
}

// Text is "false discoveries controlled at 5% (Benjamini-Hochberg) over
// 204 comparisons", with the directions withdrawn when some were.
func (f FDR) Text() string {
	s := fmt.Sprintf("false discoveries controlled at %g%% (%s) over %d comparison", 100*f.Rate, f.Method, f.Comparisons)
	if f.Comparisons != 1 {
		s += "s"
	}
	if f.Withdrawn > 0 {
		s += fmt.Sprintf("; %d direction", f.Withdrawn)
		if f.Withdrawn != 1 {
			s += "s"
		}
		s += " it did not keep read undecided"
	}
	return s
}
