package page

import (
	"errors"
	"fmt"
	"time"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/trials"
)

// Schema is the newest record schema this package reads (the `schema` key
// of bench and sweep JSON), the one backbench writes; files without the
// key are the records of earlier backbench versions and are read too.
const Schema = document.Schema

// Kind names what a result file holds: the model's kind (document.Kind).
type Kind = document.Kind

// The kinds of result files the page draws (a merged run is a bench, a
// merged sweep a sweep).
const (
	KindBench    = document.KindBench
	KindSweep    = document.KindSweep
	KindProbe    = document.KindProbe
	KindCompare  = document.KindCompare
	KindCapacity = document.KindCapacity
	KindStudy    = document.KindStudy
)

// ErrNotResult is returned (wrapped, with the file's name) for a file that
// is not a backbench result; ErrNewerSchema for a result of a newer schema
// than this package reads.
var (
	ErrNotResult   = document.ErrNotDocument
	ErrNewerSchema = document.ErrNewerSchema
)

// Environment is where a record was made (the run record's `environment`).
type Environment = stats.Environment

// Result is one result the page draws: the model's own result
// (document.Result), drawn from its types as they are so that a key the
// model gains reaches the page with it, and the little the page shows
// beside it that the model does not hold.
type Result struct {
	// Name is the file's name as given.
	Name string
	// ModTime is when the file was written (zero if unknown); the page
	// shows it when the result has no start time.
	ModTime time.Time
	// Doc is the result as the model holds it: a bench run, its trials or
	// a merged run (drawn as a bench, its record as a timeline), a sweep
	// or a merged sweep (as a sweep), a probe or a probe of a port range
	// (drawn as its first address reached), a capacity search, a
	// comparison or a study. Its Meta (Saved) gives the schema,
	// environment, start and end the page shows. From refuses any other.
	Doc document.Result
}

// Parse reads one result file: bench, sweep, probe, compare, capacity or
// study JSON, merged bench and sweep JSON too, through document.Read
// (which tells the kind and checks the saved numbers), then takes it as
// From does. A file that is not one of them, or whose schema is newer
// than Schema, gives an error wrapping ErrNotResult (or ErrNewerSchema)
// that names the file.
func Parse(name string, data []byte) (*Result, error) {
	d, err := document.Read(name, data)
	var ce *document.ContentError
	switch {
	case errors.As(err, &ce):
		// The page says what the file is not before what is wrong.
		return nil, fmt.Errorf("%s: %w: %v", ce.Name, ErrNotResult, ce.Err)
	case err != nil:
		return nil, err
	}
	return From(name, d)
}

// From takes a result of the model (document.Read) as the page's result
// named name: d itself, not copied or changed. A bare run record (or no
// result) gives an error wrapping ErrNotResult.
func From(name string, d document.Result) (*Result, error) {
	switch d.(type) {
	case *document.Run, *document.Trials, *document.MergedRun, *document.Sweep, *document.MergedSweep,
		*document.Probe, *document.ProbeRange, *document.Capacity, *document.Comparison, *document.Study:
		return &Result{Name: name, Doc: d}, nil
	}
	return nil, fmt.Errorf("%s: %w (a bare run record: give the bench or sweep JSON that holds it)", name, ErrNotResult)
}

// Kind returns what the page draws r as: its model's kind, but a merged
// run is a bench and a merged sweep a sweep.
func (r *Result) Kind() Kind {
	switch {
	case document.SweepOf(r.Doc) != nil:
		return KindSweep
	}
	if _, _, ok := document.Bench(r.Doc); ok {
		return KindBench
	}
	return r.Doc.ResultKind()
}

// meta is what the model read beside r's own keys (zero for a result
// not read).
func (r *Result) meta() *document.Meta { return r.Doc.Saved() }

// sweep is r's sweep (nil: r is no sweep).
func (r *Result) sweep() *document.Sweep { return document.SweepOf(r.Doc) }

// bench is the summary of a bench result (a run's, the saved form of
// trials, a merged run's); nil: r is no bench.
func (r *Result) bench() *stats.Summary {
	s, _, _ := document.Bench(r.Doc)
	return s
}

// record is a bench result's run record, for its timeline (nil: none).
func (r *Result) record() *stats.Record {
	_, rec, _ := document.Bench(r.Doc)
	return rec
}

// probe is r's probe: a probe of a port range stands for its first
// address reached (an empty probe when none was).
func (r *Result) probe() *document.Probe {
	switch v := r.Doc.(type) {
	case *document.Probe:
		return v
	case *document.ProbeRange:
		for _, a := range v.Addresses {
			if a.Probe != nil {
				return a.Probe
			}
		}
		return &document.Probe{}
	}
	return nil
}

// capacity is r's capacity search (nil: r is none).
func (r *Result) capacity() *capacity.JSONReport {
	if c, ok := r.Doc.(*document.Capacity); ok {
		return c.JSONReport
	}
	return nil
}

// compare is r's comparison (nil: r is none).
func (r *Result) compare() *document.Comparison {
	c, _ := r.Doc.(*document.Comparison)
	return c
}

// study is r's study (nil: r is none).
func (r *Result) study() *study.Result {
	if s, ok := r.Doc.(*document.Study); ok {
		return s.Result
	}
	return nil
}

// rpsCI95 is the interval of a run's or a level's median req/s (nil
// without trials or without an interval), of the confidence ciLabel
// names.
func rpsCI95(s *stats.Summary) []float64 {
	if s.Repeated == nil {
		return nil
	}
	return s.RequestsPerSecondCI95
}

// p99CI95 is the interval of a run's or a level's median p99 (nil
// without trials or without an interval).
func p99CI95(s *stats.Summary) []float64 {
	if s.Repeated == nil {
		return nil
	}
	return s.P99MsCI95
}

// ciLabel is "95% interval", "93.75% interval": the real confidence of
// the intervals of the trials of the runs or levels ss (those with an
// interval), trials.IntervalLabel.
func ciLabel(ss ...*stats.Summary) string {
	var confs []float64
	for _, s := range ss {
		if len(rpsCI95(s)) == 2 || len(p99CI95(s)) == 2 {
			confs = append(confs, trials.MedianConfidence(trialCount(s)))
		}
	}
	return trials.IntervalLabel(confs...)
}

// sweepCILabel is ciLabel over every level of sw.
func sweepCILabel(sw *document.Sweep) string {
	var ss []*stats.Summary
	for _, se := range sw.Series {
		for k := range se.Levels {
			ss = append(ss, &se.Levels[k])
		}
	}
	return ciLabel(ss...)
}

// trialCount is the number of trials of a run or a level (0 without).
func trialCount(s *stats.Summary) int {
	if s.Repeated == nil {
		return 0
	}
	return len(s.Trials)
}

// studyComparisons are a study's rows as its section draws them: without
// the failed shares and the sides left unanswered (its series table
// gives the failed requests of every step).
func studyComparisons(cs []trials.Comparison) []trials.Comparison {
	out := make([]trials.Comparison, len(cs))
	for i, c := range cs {
		c.FailedRatio, c.Unanswered, c.Why = nil, "", ""
		out[i] = c
	}
	return out
}

// sweepTrials is what a sweep of trials adds (its notes, comparisons,
// baseline, seed); zero for a sweep without trials.
func sweepTrials(sw *document.Sweep) *document.SweepTrials {
	if sw.SweepTrials == nil {
		return &document.SweepTrials{}
	}
	return sw.SweepTrials
}
