package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
)

// Files compares every file after the first with the first: what
// differs, the comparisons of their pairs and the notes, as the
// comparison document (without its gate: --fail-on judges it after).
// Nothing to pair is an error, which names the files and why.
func Files(files []*File, noise float64, forced bool) (*document.Comparison, error) {
	return compareFiles(files, noise, forced, nil)
}

// compareFiles is Files; with q not nil (a run whose trials ran until
// decided against the first file: Against), every verdict between the
// first file and another is the sequential rule's, the first file's
// side taken whole (q.Judge with Saved).
func compareFiles(files []*File, noise float64, forced bool, q *trials.Sequential) (*document.Comparison, error) {
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
		cs, tcs := pairFiles(old, f, noise, &res.Notes, q)
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

// seriesFactors returns the factors of f's series (none for a series
// without a level) and their labels, as a newer run's series are matched
// with them (trials.MatchSeries).
func (f *File) seriesFactors() (fs []trials.Factors, labels []string) {
	for i := range f.Series {
		if len(f.Series[i].Levels) > 0 {
			fs = append(fs, f.Series[i].factors())
		} else {
			fs = append(fs, trials.Factors{})
		}
		labels = append(labels, f.Series[i].Label)
	}
	return fs, labels
}

// factors returns the factors of s (from its first level's result).
func (s *Series) factors() trials.Factors {
	return sweep.FactorsOf(s.Backend, &s.Levels[0])
}

// pairFiles pairs every series of f with the series of old it is to be
// compared with (trials.MatchSeries, the factors' rule across two runs)
// and compares them at every level in common; the notes say which series
// found no partner. It returns too the comparisons of each target of a
// mix that both sides of a pair ran (compareTargets). With q not nil,
// every verdict is the sequential rule's, old's side taken as saved
// (whole at every look).
func pairFiles(old, f *File, noise float64, notes *[]string, q *trials.Sequential) (out, targets []trials.Comparison) {
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
	olds, oldLabels := old.seriesFactors()
	bothSweeps := f.sweep && old.sweep
	// The series walked: old's, then f's; a side's level pairs with the
	// other's of the same concurrency when either file is a sweep, else
	// with its one level.
	var walked []trials.Series
	var saved []*Series
	for _, file := range []*File{old, f} {
		for i := range file.Series {
			s := &file.Series[i]
			w := stats.SeriesOf(s.Label, s.Levels)
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
		var sq *trials.Sequential
		if q != nil {
			s := *q
			s.Saved = trials.SavedBaseline
			if at.Series < len(old.Series) {
				s.Saved = trials.SavedSeries
			}
			sq = &s
			st, bt := stats.TrialsOf(l), stats.TrialsOf(bl)
			for k := range cs {
				sq.Judge(&cs[k], st, bt, noise)
			}
		}
		for k := range cs {
			cs[k].File, cs[k].BaselineFile = pathOf(at.Series), pathOf(at.Baseline)
			cs[k].Why = sweep.UnansweredWhy(&cs[k], sd.Label, bd.Label, l, bl)
		}
		for _, c := range compareTargets(sd.Label, bd.Label, l, bl, noise, sq) {
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
// figures. None when either level is of one request. With q not nil,
// every verdict is the sequential rule's (q.Judge).
func compareTargets(series, baseline string, l, bl *stats.Summary, noise float64, q *trials.Sequential) []trials.Comparison {
	st, sp := stats.TargetTrialsOf(l)
	bt, bp := stats.TargetTrialsOf(bl)
	var out []trials.Comparison
	for i, t := range st {
		j := slices.Index(bt, t)
		if j < 0 {
			continue
		}
		cs := trials.CompareTarget(series, baseline, t, l.Concurrency, sp[i], bp[j], noise)
		for k := range cs {
			if q != nil {
				q.Judge(&cs[k], sp[i], bp[j], noise)
			}
		}
		out = append(out, cs...)
	}
	return out
}
