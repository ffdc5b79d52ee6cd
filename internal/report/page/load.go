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

// Result is one parsed result file: the model's types (document), drawn
// as they are, so that a key the model gains reaches the page with it.
type Result struct {
	// Name is the file's name as given.
	Name string
	// Kind is what it holds.
	Kind Kind
	// ModTime is when the file was written (zero if unknown); the page
	// shows it when the record has no start time.
	ModTime time.Time

	// meta is what the model read beside the kind's own keys: the
	// schema, environment, start and end the page shows.
	meta document.Meta
	// bench is a bench result's summary (a run's, the saved form of
	// trials, a merged run's) and record its run record (nil: none), for
	// its timeline.
	bench   *stats.Summary
	record  *stats.Record
	sweep   *document.Sweep
	probe   *document.Probe
	compare *document.Comparison
	cap     *capacity.JSONReport
	study   *study.Result
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

// From takes a saved result of the model (document.Read) as the page's
// result named name, holding the model's own types; d is not changed. A
// probe of a port range stands for its first address probed. A bare run
// record gives an error wrapping ErrNotResult.
func From(name string, d document.Result) (*Result, error) {
	r := &Result{Name: name, meta: *d.Saved()}
	if sw := document.SweepOf(d); sw != nil {
		r.Kind, r.sweep = KindSweep, sw
		return r, nil
	}
	if s, rec, ok := document.Bench(d); ok {
		r.Kind, r.bench, r.record = KindBench, s, rec
		return r, nil
	}
	switch v := d.(type) {
	case *document.Probe:
		r.Kind, r.probe = KindProbe, v
	case *document.ProbeRange:
		r.Kind, r.probe = KindProbe, &document.Probe{}
		for _, a := range v.Addresses {
			if a.Probe != nil {
				return From(name, a.Probe)
			}
		}
	case *document.Capacity:
		r.Kind, r.cap = KindCapacity, v.JSONReport
	case *document.Comparison:
		r.Kind, r.compare = KindCompare, v
	case *document.Study:
		r.Kind, r.study = KindStudy, v.Result
	default:
		return nil, fmt.Errorf("%s: %w (a bare run record: give the bench or sweep JSON that holds it)", name, ErrNotResult)
	}
	return r, nil
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
