package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/summary"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
)

// Files compares every file after the first with the first: what
// differs, the comparisons of their pairs and the notes, as the
// comparison document (without its gate: --fail-on judges it after).
// Nothing to pair is an error, which names the files and why.
func Files(files []*File, noise float64, forced bool) (*document.Comparison, error) {
	res := &document.Comparison{Noise: noise, Forced: forced, Notes: []string{}, Differences: []string{}, Comparisons: []trials.Comparison{}}
	old := files[0]
	for _, f := range files {
		res.Files = append(res.Files, f.Path)
	}
	for _, f := range files[1:] {
		// What differs is shown, not refused: it is what the pairs
		// compare (or, for load shapes, what to keep in mind).
		for _, d := range f.differences(old) {
			if len(files) > 2 {
				d = f.Path + ": " + d
			}
			res.Differences = append(res.Differences, d)
		}
		cs, tcs := pairFiles(old, f, noise, &res.Notes)
		res.Comparisons = append(res.Comparisons, cs...)
		res.TargetComparisons = append(res.TargetComparisons, tcs...)
	}
	if slices.ContainsFunc(res.TargetComparisons, func(c trials.Comparison) bool {
		return c.Trials < 2 || c.BaselineTrials < 2
	}) {
		res.Notes = append(res.Notes, "the targets are compared on one run a side (no trials): their ratios have no interval, and so no verdict; run with --repeat N")
	}
	for _, f := range files {
		if !f.hasTrials() {
			res.Notes = append(res.Notes, fmt.Sprintf("%s has no trials (one run per level): there is no interval, and so no verdict; run with --repeat N", f.Path))
		}
	}
	res.Notes = append(res.Notes, trials.VerdictNotes(res.Comparisons)...)
	if len(res.Comparisons) == 0 {
		why := "no series and level in common"
		for _, n := range res.Notes {
			if strings.Contains(n, "more than one factor") {
				why = n
				break
			}
		}
		return nil, fmt.Errorf("nothing to pair between %s: %s", strings.Join(res.Files, ", "), why)
	}
	return res, nil
}

// factors returns the factors of s (from its first level's result).
func (s *Series) factors() trials.Factors {
	return sweep.FactorsOf(s.Backend, &s.Levels[0])
}

// pairFiles pairs every series of f with the series of old it is to be
// compared with (trials.MatchSeries, the factors' rule across two runs)
// and compares them at every level in common; the notes say which series
// found no partner. It returns too the comparisons of each target of a
// mix that both sides of a pair ran (compareTargets).
func pairFiles(old, f *File, noise float64, notes *[]string) (out, targets []trials.Comparison) {
	if old.study != nil || f.study != nil {
		if old.study == nil || f.study == nil {
			*notes = append(*notes, fmt.Sprintf("%s and %s: a study compares with a study only", old.Path, f.Path))
			return nil, nil
		}
		cs, n := study.CompareRuns(old.study, f.study, noise)
		for i := range cs {
			cs[i].File, cs[i].BaselineFile = f.Path, old.Path
		}
		*notes = append(*notes, n...)
		return cs, nil
	}
	var olds []trials.Factors
	var oldLabels []string
	for i := range old.Series {
		if len(old.Series[i].Levels) > 0 {
			olds = append(olds, old.Series[i].factors())
		} else {
			olds = append(olds, trials.Factors{})
		}
		oldLabels = append(oldLabels, old.Series[i].Label)
	}
	bothSweeps := f.sweep && old.sweep
	// The series walked: old's, then f's; a side's level pairs with the
	// other's of the same concurrency when either file is a sweep, else
	// with its one level.
	var walked []trials.Series
	var saved []*Series
	for _, file := range []*File{old, f} {
		for i := range file.Series {
			s := &file.Series[i]
			w := summary.SeriesOf(s.Label, s.Levels)
			w.AnyLevel = !(f.sweep || old.sweep) || s.anyLevel
			walked, saved = append(walked, w), append(saved, s)
		}
	}
	var pairs []trials.SeriesPair
	for si := range f.Series {
		s := &f.Series[si]
		if len(s.Levels) == 0 {
			continue
		}
		fs := s.factors()
		matches, why := trials.MatchSeries(s.Label, fs, oldLabels, olds, bothSweeps)
		if len(matches) == 0 {
			*notes = append(*notes, fmt.Sprintf("series %q of %s: %s of %s: not compared", s.Label, f.Path, why, old.Path))
			continue
		}
		for _, m := range matches {
			// The pair's sides: the factor's rule decides (TCP, keep-alive
			// off... is the baseline); the old file is the baseline of a
			// pair that differs in the backend or in nothing.
			p := trials.SeriesPair{Series: len(old.Series) + si, Baseline: m.Index, Factor: m.Factor, Title: m.Title}
			if m.Swap {
				p.Series, p.Baseline = p.Baseline, p.Series
			}
			pairs = append(pairs, p)
		}
	}
	pathOf := func(i int) string {
		if i < len(old.Series) {
			return old.Path
		}
		return f.Path
	}
	out = trials.ComparePairs(walked, pairs, noise, nil, func(at trials.LevelPair, cs []trials.Comparison) {
		sd, bd := saved[at.Series], saved[at.Baseline]
		l, bl := &sd.Levels[at.Level], &bd.Levels[at.BaselineLevel]
		for k := range cs {
			cs[k].File, cs[k].BaselineFile = pathOf(at.Series), pathOf(at.Baseline)
			cs[k].Why = sweep.UnansweredWhy(&cs[k], sd.Label, bd.Label, l, bl)
		}
		for _, c := range compareTargets(sd.Label, bd.Label, l, bl, noise) {
			c.File, c.BaselineFile = pathOf(at.Series), pathOf(at.Baseline)
			c.Factor, c.FactorTitle = at.Factor, at.Title
			targets = append(targets, c)
		}
	})
	return out, targets
}

// compareTargets compares, target by target, the mixes (--targets) of
// two levels: every target both ran (the same "METHOD URL"), on its p50
// and p99 (trials.CompareTarget), from the trials' own per-target
// figures. None when either level is of one request.
func compareTargets(series, baseline string, l, bl *summary.Summary, noise float64) []trials.Comparison {
	st, sp := summary.TargetTrialsOf(l)
	bt, bp := summary.TargetTrialsOf(bl)
	var out []trials.Comparison
	for i, t := range st {
		j := slices.Index(bt, t)
		if j < 0 {
			continue
		}
		out = append(out, trials.CompareTarget(series, baseline, t, l.Concurrency, sp[i], bp[j], noise)...)
	}
	return out
}
