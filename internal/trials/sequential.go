package trials

import "math"

// Judge replaces the verdict of c, a comparison of s against b made by
// CompareLevel, with the sequential rule's (Decide) on c's metric, the
// trials of each side taken as its rounds in order (a saved side, with
// q.Saved, taken whole): its verdict, its
// ratio and interval at the look that decided (the last look, undecided),
// the interval's confidence (LookConfidence, in c.Confidence) and the
// round of that look (c.DecidedAt, 0 when undecided). A comparison
// without a verdict (NoVerdict: too few trials, a side unanswered or
// mostly failed) is left as it is.
func (q Sequential) Judge(c *Comparison, s, b []Trial, noise float64) {
	if c.Verdict == NoVerdict || c.Verdict == "" {
		return
	}
	d, ok := q.DecideMetric(c.Metric, s, b)
	if !ok {
		return
	}
	c.Verdict, c.Ratio, c.RatioCI95 = d.Verdict, num(d.Ratio), nil
	if !math.IsNaN(d.Lo) && !math.IsNaN(d.Hi) {
		c.RatioCI95 = []float64{d.Lo, d.Hi}
	}
	c.Confidence, c.DecidedAt = q.LookConfidence(), 0
	if d.Verdict != Undecided {
		c.DecidedAt = d.Rounds
	}
	c.estimate(noise, roundSeconds(s, b))
	if c.MoreRounds != 0 && q.Saved != "" {
		// Only the side that runs grows.
		n, m := c.Trials, c.BaselineTrials
		if q.Saved == SavedSeries {
			n, m = m, n
		}
		c.MoreRounds = RoundsToDecideSaved(c.RatioCI95[0], c.RatioCI95[1], n, m, noise)
		c.MoreSeconds = 0
		if rs := roundSeconds(s, b); c.MoreRounds > 0 && rs > 0 {
			c.MoreSeconds = float64(c.MoreRounds) * rs
		}
	}
}

// RoundsDecided applies the sequential rule to the requests per second
// of s against b (their trials as rounds in order) and reports whether it
// decided (a direction or Same): the question rounds run until decided
// ask of a pair at a level.
func (q Sequential) RoundsDecided(s, b []Trial) bool {
	get := metrics[0].get // requests per second
	return q.Decide(values(s, get), values(b, get), Faster, Slower).Verdict != Undecided
}

// DecideMetric applies the rule to metric (a Metric name) of s against
// b, their trials taken as rounds in order (a saved side, with q.Saved,
// whole); ok is false for a metric that is not one.
func (q Sequential) DecideMetric(metric string, s, b []Trial) (d Decision, ok bool) {
	for _, m := range metrics {
		if m.name == metric {
			return q.Decide(values(s, m.get), values(b, m.get), m.up, m.down), true
		}
	}
	return Decision{}, false
}
