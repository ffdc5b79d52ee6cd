package study

import (
	"fmt"

	"github.com/backbench/backbench/internal/trials"
)

// CompareRuns compares two runs of a study (before and after a change of
// the application, say): every series of newer with the series of older of
// the same label (the same levels of every factor), at every concurrency
// level both measured, on every metric (trials.CompareLevel, factor
// trials.FactorNone). notes name the series found in one run only and the
// declarations that differ.
func CompareRuns(older, newer *Result, noise float64) (out []trials.Comparison, notes []string) {
	if older.Question != newer.Question {
		notes = append(notes, fmt.Sprintf("the two studies ask different questions (%q, %q): their series are paired by label", older.Question, newer.Question))
	}
	byLabel := map[string]*Series{}
	for i := range older.Series {
		byLabel[older.Series[i].Label] = &older.Series[i]
	}
	for i := range newer.Series {
		s := &newer.Series[i]
		o := byLabel[s.Label]
		if o == nil {
			notes = append(notes, fmt.Sprintf("series %q is in the newer study only: not compared", s.Label))
			continue
		}
		delete(byLabel, s.Label)
		for _, st := range s.Steps {
			ot := o.step(st.Concurrency)
			if ot == nil || len(ot.Trials) == 0 || len(st.Trials) == 0 {
				continue
			}
			if ot.Complete == 0 || st.Complete == 0 {
				notes = append(notes, fmt.Sprintf("series %q at concurrency %d: every request failed in one run: no verdict", s.Label, st.Concurrency))
				continue
			}
			for _, c := range trials.CompareLevel(s.Label, o.Label, st.Concurrency, st.Trials, ot.Trials, noise) {
				c.Factor = trials.FactorNone
				out = append(out, c)
			}
		}
	}
	for _, s := range older.Series {
		if byLabel[s.Label] != nil {
			notes = append(notes, fmt.Sprintf("series %q is in the older study only: not compared", s.Label))
		}
	}
	return out, notes
}
