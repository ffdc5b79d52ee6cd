package compare

import (
	"fmt"
	"slices"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/gate"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// Against compares the run d, named name, with the saved baseline base as
// compare compares two files (Files): d is taken in memory as Read takes
// its saved file (Of), which gives the same comparison (TestAgainstAsSaved
// holds the two together), without writing and reading it back. With
// rules (--fail-on) the comparisons are judged (Judge). With q not nil
// (d's trials ran until decided against base: Questions), every verdict
// is the sequential rule's, base's trials taken whole at every look, so
// that the verdicts are those the rounds stopped on. Nothing to pair is
// an error.
func Against(base *File, name string, d document.Result, noise float64, rules []gate.Rule, q *trials.Sequential) (*document.Comparison, error) {
	f, err := Of(name, d)
	if err != nil {
		return nil, fmt.Errorf("the run: %v", err)
	}
	res, err := compareFiles([]*File{base, f}, noise, false, q)
	if err != nil {
		return nil, err
	}
	Judge(res, rules)
	return res, nil
}

// Judge judges the comparisons of res by the gate's rules (--fail-on)
// and keeps the judgement in res.Gate; without rules there is no gate.
func Judge(res *document.Comparison, rules []gate.Rule) {
	if rules == nil {
		return
	}
	g := gate.Judge(rules, append(slices.Clone(res.Comparisons), res.TargetComparisons...))
	res.Gate = &g
}

// Questions returns what trials run until decided ask of a bench run
// against base (bench --repeat --until decided --against FILE), before
// the run, from the run's factors f (sweep.PlanFactors, its backend its
// --label) and concurrency: one question per metric of metrics (Metric
// names) and per level of base that Against will compare the run with,
// as pairFiles pairs them (the series of base that f matches,
// trials.MatchSeries; that series' level at concurrency, its only level
// for a bench result, or every level when the factor's rule makes the
// run the pair's baseline), each of series 0 (the run's one series)
// against that level's trials. None when nothing pairs (a study, a
// series that differs in more than one factor).
func Questions(base *File, f trials.Factors, concurrency int, metrics []string) []trials.SavedPair {
	if base.study != nil {
		return nil
	}
	olds, labels := base.seriesFactors()
	ms, _ := trials.MatchSeries("", f, labels, olds, false)
	var levels []*stats.Summary
	for _, m := range ms {
		s := &base.Series[m.Index]
		if len(s.Levels) == 0 {
			continue
		}
		if m.Swap {
			for i := range s.Levels {
				levels = append(levels, &s.Levels[i])
			}
		} else if l := s.level(concurrency, base.sweep); l != nil {
			levels = append(levels, l)
		}
	}
	var out []trials.SavedPair
	for _, l := range levels {
		ts := stats.TrialsOf(l)
		for _, m := range metrics {
			out = append(out, trials.SavedPair{Series: 0, Metric: m, Baseline: ts})
		}
	}
	return out
}
