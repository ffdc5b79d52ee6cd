package study

import (
	"fmt"
	"math"

	"github.com/backbench/backbench/internal/trials"
)

// CompareRuns compares two runs of a study (before and after a change of
// the application, say): every series of newer with the series of older of
// the same label (the same levels of every factor), at every concurrency
// level both measured, on every metric (trials.CompareLevel, factor
// trials.FactorNone). notes name the series found in one run only and the
// declarations that differ.
//
// Two sizing studies (capacity studies) are compared by their searches,
// each pool size's capacity being its series' requests per second: with
// too few searches a side for the Mann-Whitney test (fewer than 4), the
// capacity still gets a verdict from what the searches measured
// (SizingVerdict), and a note says so.
func CompareRuns(older, newer *Result, noise float64) (out []trials.Comparison, notes []string) {
	if older.Question != newer.Question {
		notes = append(notes, fmt.Sprintf("the two studies ask different questions (%q, %q): their series are paired by label", older.Question, newer.Question))
	}
	bracketed := false
	// The series walked: older's, then newer's, each paired with the
	// older series of its label.
	var walked []trials.Series
	var all []*Series
	for _, r := range []*Result{older, newer} {
		for i := range r.Series {
			walked, all = append(walked, r.Series[i].walked()), append(all, &r.Series[i])
		}
	}
	byLabel := map[string]int{}
	for i := range older.Series {
		byLabel[older.Series[i].Label] = i
	}
	skip := func(at trials.LevelPair) bool {
		st, ot := &all[at.Series].Steps[at.Level], &all[at.Baseline].Steps[at.BaselineLevel]
		if len(ot.Trials) == 0 || len(st.Trials) == 0 {
			return true
		}
		if ot.Complete == 0 || st.Complete == 0 {
			notes = append(notes, fmt.Sprintf("series %q at concurrency %d: every request failed in one run: no verdict", all[at.Series].Label, st.Concurrency))
			return true
		}
		return false
	}
	each := func(at trials.LevelPair, cs []trials.Comparison) {
		s, o := all[at.Series], all[at.Baseline]
		for k := range cs {
			c := &cs[k]
			if c.Metric == trials.MetricRequestsPerSecond && c.Verdict == trials.NoVerdict && c.Unanswered == "" {
				if p, b := newer.Sizing.point(s.Label), older.Sizing.point(o.Label); p != nil && b != nil {
					if v := SizingVerdict(p, b); v != trials.NoVerdict {
						c.Verdict = v
						bracketed = true
					}
				}
			}
		}
	}
	for i := range newer.Series {
		s := &newer.Series[i]
		o, ok := byLabel[s.Label]
		if !ok {
			notes = append(notes, fmt.Sprintf("series %q is in the newer study only: not compared", s.Label))
			continue
		}
		delete(byLabel, s.Label)
		// One pair at a time: its notes come in the order of the series.
		pair := trials.SeriesPair{Series: len(older.Series) + i, Baseline: o, Factor: trials.FactorNone}
		out = append(out, trials.ComparePairs(walked, []trials.SeriesPair{pair}, noise, skip, each)...)
	}
	for _, s := range older.Series {
		if _, ok := byLabel[s.Label]; ok {
			notes = append(notes, fmt.Sprintf("series %q is in the older study only: not compared", s.Label))
		}
	}
	if bracketed {
		notes = append(notes, fmt.Sprintf("a sizing's req/s is each pool size's capacity within its objectives; where too few searches a side "+
			"give no test, the verdict is the searches': faster or slower when every search of one side failed at a rate that "+
			"every search of the other sustained, and their median capacities differ by more than %.0f%% (the knee's noise)", 100*KneeTolerance))
	}
	return out, notes
}

// walked is s as the pairing walk takes it (trials.ComparePairs): each
// step's concurrency and trials, in the order of its steps.
func (s *Series) walked() trials.Series {
	w := trials.Series{Label: s.Label, Levels: make([]trials.Level, len(s.Steps))}
	for i, st := range s.Steps {
		w.Levels[i] = trials.Level{Concurrency: st.Concurrency, Trials: st.Trials}
	}
	return w
}

// point returns the point of the series labelled label (nil when s is nil
// or has none).
func (s *Sizing) point(label string) *SizingPoint {
	if s == nil {
		return nil
	}
	for i := range s.Points {
		if s.Points[i].Label == label {
			return &s.Points[i]
		}
	}
	return nil
}

// FailedAt returns the lowest rate above the search's capacity at which a
// step failed the objectives or did not hold its load, in req/s, and
// false when none did (the client's limit, or the highest rate allowed,
// ended the search). A step the client held back says nothing of the
// backend and is left out.
func (se *SizingSearch) FailedAt() (float64, bool) {
	low := math.Inf(1)
	for _, st := range se.Steps {
		if !st.Pass && st.ClientLimit == "" && st.Rate > se.Capacity {
			low = min(low, st.Rate)
		}
	}
	return low, !math.IsInf(low, 1)
}

// SizingVerdict is the verdict on p's capacity against base's from their
// searches, for pool sizes searched too few times for a test: Slower when
// every search of p failed at a rate that every search of base sustained
// (passed, and confirmed when confirmations ran), and p's median capacity
// is below base's by more than KneeTolerance, the noise the sizing answer
// allows; Faster the other way round; else NoVerdict. The search's
// bracket (a passing rate and a failing one within its resolution, 5%)
// rules out that the two capacities are the same; the margin rules out a
// difference that a search of the same pool could show on a shared
// machine.
func SizingVerdict(p, base *SizingPoint) string {
	if p.Capacity.Median <= 0 || base.Capacity.Median <= 0 {
		return trials.NoVerdict
	}
	switch {
	case p.Capacity.Median < base.Capacity.Median*(1-KneeTolerance) && failsBelow(p, base):
		return trials.Slower
	case base.Capacity.Median < p.Capacity.Median*(1-KneeTolerance) && failsBelow(base, p):
		return trials.Faster
	}
	return trials.NoVerdict
}

// failsBelow reports whether every search of p failed at a rate that
// every search of q sustained.
func failsBelow(p, q *SizingPoint) bool {
	if len(p.Searches) == 0 || len(q.Searches) == 0 {
		return false
	}
	sustained := math.Inf(1)
	for _, se := range q.Searches {
		if se.Capacity <= 0 {
			return false
		}
		sustained = min(sustained, se.Capacity)
	}
	for i := range p.Searches {
		if f, ok := p.Searches[i].FailedAt(); !ok || f > sustained {
			return false
		}
	}
	return true
}
