package trials

import "math"

// Judge replaces the verdict of c, a comparison of s against b made by
// CompareLevel, with the sequential rule's (Decide) on c's metric, the
// trials of each side taken as its rounds in order: its verdict, its
// ratio and interval at the look that decided (the last look, undecided),
// the interval's confidence (LookConfidence, in c.Confidence) and the
// round of that look (c.DecidedAt, 0 when undecided). A comparison
// without a verdict (NoVerdict: too few trials, a side unanswered or
// mostly failed) is left as it is.
func (q Sequential) Judge(c *Comparison, s, b []Trial, noise float64) {
	if c.Verdict == NoVerdict || c.Verdict == "" {
		return
	}
	i := -1
	for k := range metrics {
		if metrics[k].name == c.Metric {
			i = k
		}
	}
	if i < 0 {
		return
	}
	m := metrics[i]
	d := q.Decide(values(s, m.get), values(b, m.get), m.up, m.down)
	c.Verdict, c.Ratio, c.RatioCI95 = d.Verdict, num(d.Ratio), nil
	if !math.IsNaN(d.Lo) && !math.IsNaN(d.Hi) {
		c.RatioCI95 = []float64{d.Lo, d.Hi}
	}
	c.Confidence, c.DecidedAt = q.LookConfidence(), 0
	if d.Verdict != Undecided {
		c.DecidedAt = d.Rounds
	}
	c.estimate(noise, roundSeconds(s, b))
}

// RoundsDecided applies the sequential rule to the requests per second
// of s against b (their trials as rounds in order) and reports whether it
// decided (a direction or Same): the question rounds run until decided
// ask of a pair at a level.
func (q Sequential) RoundsDecided(s, b []Trial) bool {
	get := metrics[0].get // requests per second
	return q.Decide(values(s, get), values(b, get), Faster, Slower).Verdict != Undecided
}
