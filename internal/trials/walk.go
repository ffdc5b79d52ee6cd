package trials

// Series is one series of a comparison, as the pairing walk
// (ComparePairs) sees it: a series of a run (sweep), of one of two saved
// files (compare) or of a study.
type Series struct {
	// Label names the series in the comparisons (Comparison.Series,
	// Comparison.Baseline).
	Label string
	// Levels are the series' levels, each with its trials, in the order
	// the comparisons are made.
	Levels []Level
	// AnyLevel, as a baseline, makes the series' first level stand for
	// every level of the other side: a bench's one level compared with
	// a saved run's.
	AnyLevel bool
}

// Level is one level of a series: its concurrency and its trials.
type Level struct {
	Concurrency int
	Trials      []Trial
}

// SeriesPair is two series to compare, as a pairing rule gives them
// (Pairs within a run, MatchSeries across two, a study's declared
// factors within a study): Series against Baseline, indexes into the
// series walked.
type SeriesPair struct {
	Series, Baseline int
	// Factor and Title are the factor compared and the group heading
	// (Comparison.Factor, Comparison.FactorTitle); either may be "".
	Factor, Title string
}

// LevelPair is a pair at one level, as the walk reaches it: Level and
// BaselineLevel index the levels of the pair's two series.
type LevelPair struct {
	SeriesPair
	Level, BaselineLevel int
	// Concurrency is the series side's level.
	Concurrency int
}

// ComparePairs is the one pairing loop: it walks pairs in their order,
// for each the series side's levels in their order, each with the
// baseline's first level of the same concurrency (its first level
// whatever the concurrency when the baseline is AnyLevel; a level without
// one is left out), and compares them (CompareLevel at noise), with the
// pair's Factor and Title set. skip, if not nil, leaves a level out
// before it is compared (a side that did not answer, say); each, if not
// nil, sees every level's comparisons before they are added and may
// change them (the file of each side, why a side failed, a verdict of
// another rule). It returns the comparisons of every level, in the walk's
// order.
func ComparePairs(series []Series, pairs []SeriesPair, noise float64, skip func(LevelPair) bool, each func(LevelPair, []Comparison)) []Comparison {
	var out []Comparison
	for _, p := range pairs {
		s, b := &series[p.Series], &series[p.Baseline]
		for i := range s.Levels {
			at := LevelPair{SeriesPair: p, Level: i, BaselineLevel: b.levelAt(s.Levels[i].Concurrency), Concurrency: s.Levels[i].Concurrency}
			if at.BaselineLevel < 0 || skip != nil && skip(at) {
				continue
			}
			cs := CompareLevel(s.Label, b.Label, at.Concurrency, s.Levels[i].Trials, b.Levels[at.BaselineLevel].Trials, noise)
			for k := range cs {
				cs[k].Factor, cs[k].FactorTitle = p.Factor, p.Title
			}
			if each != nil {
				each(at, cs)
			}
			out = append(out, cs...)
		}
	}
	return out
}

// levelAt returns the index of s's level that pairs with a level of
// concurrency c, or -1 for none.
func (s *Series) levelAt(c int) int {
	if s.AnyLevel && len(s.Levels) > 0 {
		return 0
	}
	for i := range s.Levels {
		if s.Levels[i].Concurrency == c {
			return i
		}
	}
	return -1
}
