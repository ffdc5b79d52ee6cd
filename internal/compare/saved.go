// Package compare is compare's model: the saved results it reads (a
// bench result, a sweep, a capacity search or a study, each as series of
// levels), the pairing of two files' series and the comparison document
// it builds (document.Comparison), which the renderers and --fail-on's
// gate take. It reads saved results through document.Read only; the
// rules it applies are those of internal/trials (factors, pairs,
// verdicts) and internal/sweep (the factors of a result), so that
// compare, sweep and bench --repeat judge alike.
package compare

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/study"
)

// Series is a series of a saved file: a bench result is one series with
// one level; a capacity search is one series of its steps by concurrency
// (closed model) or one series per rate (open model), each level a
// step's records as its trials.
type Series struct {
	// Label names the series (a bench result's label, else its URL);
	// Backend is the label the user gave it ("" for none).
	Label   string
	Backend string
	// KeepAlive says whether the series kept its connections.
	KeepAlive bool
	// Levels are the series' results, by concurrency.
	Levels []stats.Summary
	// URL is the series' target.
	URL string
	// anyLevel: the series' one level matches any (a bench result, a
	// step of an open-model search, whose concurrency is the ceiling).
	anyLevel bool
}

// File is a saved bench, sweep, capacity or study result as compare
// pairs it.
type File struct {
	// Path names the file.
	Path  string
	kind  document.Kind
	sweep bool
	// The sweep's load shape.
	levels           []int
	requestsPerLevel int64
	secondsPerLevel  float64
	// Series are the file's series.
	Series []Series
	// study is a study's result (compared by internal/study).
	study *study.Result
}

// Kind is the kind of the saved result (document.KindStudy for a
// study.json).
func (f *File) Kind() document.Kind { return f.kind }

// Load reads the saved result at path (Read). Every error is a file
// compare cannot take.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Read(path, b)
}

// Read reads the saved result b, named path, through document.Read;
// anything else than a bench, sweep, capacity or study result is an
// error.
func Read(path string, b []byte) (*File, error) {
	d, err := document.Read(path, b)
	switch {
	case errors.Is(err, document.ErrBadContent) || errors.Is(err, document.ErrNewerSchema):
		return nil, err
	case err != nil:
		return nil, notSaved(path)
	}
	return Of(path, d)
}

// notSaved is the error for a file that compare cannot take.
func notSaved(path string) error {
	return fmt.Errorf("%s is not a bench or sweep result, a capacity search nor a study (want the JSON of bench --format json, a sweep.json, a capacity.json or a study.json)", path)
}

// Of takes the saved result d, named path, as compare pairs it: a bench
// result, a sweep, a capacity search or a study; anything else is an
// error. A result in memory, not read, is taken as its saved file would
// be (Read): its records as saved (stats.Record.AsSaved), so that a run
// and its file compare alike (Against).
func Of(path string, d document.Result) (*File, error) {
	notResult := notSaved(path)
	for _, l := range levelsOf(d) {
		if l.Repeated != nil && slices.ContainsFunc(l.Trials, document.OldTrial) {
			return nil, fmt.Errorf("%s: trials saved without their run records (made by an older backbench): nothing to compare", path)
		}
	}
	f := &File{Path: path, kind: d.ResultKind()}
	bench, _, _ := document.Bench(d)
	switch d := d.(type) {
	case *document.Sweep, *document.MergedSweep:
		f.sweep = true
		sw := document.SweepOf(d)
		f.levels, f.requestsPerLevel, f.secondsPerLevel = sw.Levels, sw.RequestsPerLevel, sw.SecondsPerLevel
		for _, se := range sw.Series {
			f.Series = append(f.Series, Series{Label: se.Label, Backend: se.Backend, KeepAlive: se.KeepAlive, Levels: asSaved(se.Levels), URL: se.Target.URL})
		}
		if len(f.Series) == 0 {
			return nil, notResult
		}
	case *document.Run, *document.Trials, *document.MergedRun:
		r := bench
		s := Series{Label: r.Target.URL, Backend: r.Label, KeepAlive: r.KeepAlive, Levels: asSaved([]stats.Summary{*r}), URL: r.Target.URL, anyLevel: true}
		if r.Label != "" {
			s.Label = r.Label
		}
		f.Series = []Series{s}
	case *document.Study:
		f.study = d.Result
	case *document.Capacity:
		f.sweep = true
		f.Series = capacitySeries(d.JSONReport)
		if len(f.Series) == 0 {
			return nil, fmt.Errorf("%s: a capacity search without the steps' records (made by an older backbench): nothing to compare", path)
		}
	default:
		return nil, notResult
	}
	return f, nil
}

// asSaved returns levels with their trials' records as saved
// (stats.Record.AsSaved): the trials' figures are derived from the
// records (stats.TrialsOf), and a record in memory may keep what its file
// does not (ab's rows with --ab-compat, which SummaryOf would take over
// the histograms). levels is not changed.
func asSaved(levels []stats.Summary) []stats.Summary {
	out := slices.Clone(levels)
	for i := range out {
		if r := out[i].Repeated; r != nil {
			c := *r
			c.Trials = make([]*stats.Record, len(r.Trials))
			for k, t := range r.Trials {
				c.Trials[k] = t.AsSaved()
			}
			out[i].Repeated = &c
		}
	}
	return out
}

// levelsOf returns the summaries of a bench result or a sweep's levels.
func levelsOf(d document.Result) []*stats.Summary {
	var out []*stats.Summary
	if s, _, ok := document.Bench(d); ok {
		out = append(out, s)
	}
	if sw := document.SweepOf(d); sw != nil {
		for i := range sw.Series {
			for k := range sw.Series[i].Levels {
				out = append(out, &sw.Series[i].Levels[k])
			}
		}
	}
	return out
}

// capacitySeries makes series of a capacity search's steps that kept
// their records: steps at one level are that level's trials (a step
// measured again, run longer or confirmed is another run of it). The
// closed model is one series, its levels by concurrency; the open model
// one series per rate ("40 req/s"), so that two searches pair their
// steps by rate. A last series, "capacity answer", holds the step(s) at
// the answer, so that two searches whose rates differ compare there.
func capacitySeries(c *capacity.JSONReport) []Series {
	closed := c.CapacityConcurrency != nil || c.Model == capacity.ModelClosed
	var answer float64
	if c.CapacityRPS != nil {
		answer = *c.CapacityRPS
	} else if c.CapacityConcurrency != nil {
		answer = float64(*c.CapacityConcurrency)
	}
	byLevel := map[float64][]*stats.Record{}
	var order []float64
	for _, st := range c.Steps {
		if len(st.Records) == 0 {
			continue
		}
		lv := st.Rate
		if closed {
			lv = float64(st.Concurrency)
		}
		if byLevel[lv] == nil {
			order = append(order, lv)
		}
		for _, r := range st.Records {
			byLevel[lv] = append(byLevel[lv], r.AsSaved())
		}
	}
	slices.Sort(order)
	level := func(recs []*stats.Record) stats.Summary {
		s := stats.SummaryOf(recs[len(recs)-1])
		if len(recs) > 1 {
			s.Repeated = &stats.Repeated{Trials: recs}
		}
		return s
	}
	series := func(label string, s stats.Summary, anyLevel bool) Series {
		return Series{Label: label, KeepAlive: s.KeepAlive, Levels: []stats.Summary{s}, URL: s.Target.URL, anyLevel: anyLevel}
	}
	var out []Series
	if closed && len(order) > 0 {
		se := series("", level(byLevel[order[0]]), false)
		se.Label, se.Levels = se.URL, nil
		for _, lv := range order {
			se.Levels = append(se.Levels, level(byLevel[lv]))
		}
		out = append(out, se)
	} else {
		for _, lv := range order {
			out = append(out, series(capacity.FormatRate(lv)+" req/s", level(byLevel[lv]), true))
		}
	}
	if recs := byLevel[answer]; len(recs) > 0 {
		out = append(out, series("capacity answer", level(recs), true))
	}
	return out
}

// runRequests is the request budget of one run of a saved result (of a
// trial, for a result of trials, whose Requests add up).
func runRequests(s *stats.Summary) int64 {
	if s.Repeated != nil && len(s.Trials) > 0 {
		return s.Trials[0].Plan.Requests
	}
	return s.Requests
}

// differences lists how f differs from other in what it measured and how
// (targets and load shapes), shown above the comparisons.
func (f *File) differences(other *File) []string {
	var d []string
	if f.study != nil || other.study != nil {
		return nil
	}
	if f.kind == document.KindCapacity || other.kind == document.KindCapacity {
		if f.kind != other.kind {
			k := f.kind
			if k == document.KindCapacity {
				k = other.kind
			}
			d = append(d, fmt.Sprintf("one is a capacity search, the other a %s result", k))
		}
	} else if f.sweep != other.sweep {
		d = append(d, "one is a bench result, the other a sweep")
	}
	if f.sweep && other.sweep && f.kind != document.KindCapacity && other.kind != document.KindCapacity {
		if !slices.Equal(f.levels, other.levels) {
			d = append(d, fmt.Sprintf("levels %v and %v", other.levels, f.levels))
		}
		if f.requestsPerLevel != other.requestsPerLevel || f.secondsPerLevel != other.secondsPerLevel {
			d = append(d, fmt.Sprintf("%s and %s per level", budget(other.requestsPerLevel, other.secondsPerLevel),
				budget(f.requestsPerLevel, f.secondsPerLevel)))
		}
	}
	for _, s := range f.Series {
		o := other.series(s.Label, f.sweep)
		if o == nil {
			continue
		}
		name := ""
		if f.sweep {
			name = "series " + s.Label + ": "
		}
		if s.URL != o.URL {
			d = append(d, fmt.Sprintf("%stargets %s and %s", name, o.URL, s.URL))
		}
		if s.KeepAlive != o.KeepAlive {
			d = append(d, name+"keep-alive on one side only")
		}
		if !f.sweep {
			a, b := &o.Levels[0], &s.Levels[0]
			if a.Concurrency != b.Concurrency {
				d = append(d, fmt.Sprintf("concurrency %d and %d", a.Concurrency, b.Concurrency))
			}
			if na, nb := runRequests(a), runRequests(b); na != nb {
				d = append(d, fmt.Sprintf("%d and %d requests", na, nb))
			}
			if a.Method != b.Method || a.HTTPVersion != b.HTTPVersion {
				d = append(d, "the request method or HTTP version")
			}
			if (a.Open == nil) != (b.Open == nil) || a.Open != nil && a.Open.RateAsked != b.Open.RateAsked {
				d = append(d, "the load model (--rate)")
			}
		}
	}
	return d
}

// budget is a level's budget: "N requests", "S s" or both.
func budget(n int64, secs float64) string {
	switch {
	case n > 0 && secs > 0:
		return fmt.Sprintf("%d requests or %g s", n, secs)
	case n > 0:
		return fmt.Sprintf("%d requests", n)
	}
	return fmt.Sprintf("%g s", secs)
}

// series finds a series by label; a bench result's only series matches any
// label.
func (f *File) series(label string, sweep bool) *Series {
	if !sweep {
		return &f.Series[0]
	}
	for i := range f.Series {
		if f.Series[i].Label == label {
			return &f.Series[i]
		}
	}
	return nil
}

// level finds a level by concurrency; a bench result's only level matches
// any (their difference is a shape difference).
func (s *Series) level(c int, sweep bool) *stats.Summary {
	if !sweep || s.anyLevel {
		return &s.Levels[0]
	}
	for i := range s.Levels {
		if s.Levels[i].Concurrency == c {
			return &s.Levels[i]
		}
	}
	return nil
}

// hasTrials reports whether every level of f has trials.
func (f *File) hasTrials() bool {
	if f.study != nil {
		// A sizing study's searches give its capacities a verdict even
		// one a side (study.SizingVerdict).
		return f.study.Measure.Repeat > 1 || f.study.Sizing != nil
	}
	for _, s := range f.Series {
		for _, l := range s.Levels {
			if l.Repeated == nil {
				return false
			}
		}
	}
	return true
}
