package page

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/summary"
	"github.com/backbench/backbench/internal/trials"
)

// Schema is the newest record schema this package reads (the `schema` key
// of bench and sweep JSON), the one backbench writes; files without the
// key are the records of earlier backbench versions and are read too.
const Schema = document.Schema

// Kind names what a result file holds.
type Kind string

// The kinds of result files.
const (
	KindBench    Kind = "bench"
	KindSweep    Kind = "sweep"
	KindProbe    Kind = "probe"
	KindCompare  Kind = "compare"
	KindCapacity Kind = "capacity"
	KindStudy    Kind = "study"
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

// provenance is what a result says about how and where it was made; every
// field is optional (files written before run records have none).
type provenance struct {
	Schema      *float64
	Environment *Environment
	StartedAt   float64
	EndedAt     float64
}

// intervals are what a result gets with repeated trials: the 95%
// intervals of the median req/s and p99, and one entry per trial (the
// page counts them).
type intervals struct {
	RPSCI95 []float64         `json:"requests_per_second_ci95"`
	P99CI95 []float64         `json:"p99_ms_ci95"`
	Trials  []json.RawMessage `json:"trials"`
}

// benchDoc is a bench result (and a sweep level): the Summary plus the
// keys of run records and trials.
type benchDoc struct {
	summary.Summary
	intervals
}

// seriesDoc is one series of a sweep.
type seriesDoc struct {
	Label     string            `json:"label"`
	Target    stats.TargetInfo  `json:"target"`
	KeepAlive bool              `json:"keep_alive"`
	Levels    []benchDoc        `json:"levels"`
	Stop      *report.SweepStop `json:"stopped"`
}

// sweepDoc is a sweep result.
type sweepDoc struct {
	Levels           []int       `json:"levels"`
	RequestsPerLevel int64       `json:"requests_per_level"`
	SecondsPerLevel  float64     `json:"seconds_per_level"`
	StopErrorRate    *float64    `json:"stop_error_rate"`
	TimeTaken        float64     `json:"time_taken_seconds"`
	Series           []seriesDoc `json:"series"`
	Interrupted      bool        `json:"interrupted"`
	// The keys of repeated trials (--repeat, --precision).
	Repeat      int          `json:"repeat"`
	Precision   float64      `json:"precision"`
	MaxRepeat   int          `json:"max_repeat"`
	Seed        *uint64      `json:"seed"`
	Noise       float64      `json:"noise"`
	Baseline    string       `json:"baseline"`
	Comparisons []comparison `json:"comparisons"`
	Notes       []string     `json:"notes"`
}

// comparison is one row of a sweep's or compare's `comparisons`.
type comparison struct {
	Series            string        `json:"series"`
	Baseline          string        `json:"baseline"`
	File              string        `json:"file"`
	BaselineFile      string        `json:"baseline_file"`
	Concurrency       *int          `json:"concurrency"`
	Metric            string        `json:"metric"`
	Trials            *int          `json:"trials"`
	BaselineTrials    *int          `json:"baseline_trials"`
	Value             *float64      `json:"value"`
	BaselineValue     *float64      `json:"baseline_value"`
	ValueCI95         []float64     `json:"value_ci95"`
	BaselineValueCI95 []float64     `json:"baseline_value_ci95"`
	Ratio             *float64      `json:"ratio"`
	RatioCI95         []float64     `json:"ratio_ci95"`
	PValue            *float64      `json:"p_value"`
	Verdict           string        `json:"verdict"`
	FailedRatio       *trials.Sides `json:"failed_ratio"`
	// Unanswered names the side whose every request failed (so no
	// verdict), Why what they failed on.
	Unanswered string `json:"unanswered"`
	Why        string `json:"why"`
	// FactorTitle says what differs ("transport: unix vs tcp");
	// ShortTrials counts the trials too short to trust.
	FactorTitle string `json:"factor_title"`
	ShortTrials int    `json:"short_trials"`
	// Group or Factor names the comparison group a row belongs to (the
	// one factor its two series differ in), when the file has it; the
	// answers then give one sentence per group. Group is set by no
	// saved file today (Factor is).
	Group  string `json:"group"`
	Factor string `json:"factor"`
}

// compareDoc is the JSON of backbench compare.
type compareDoc struct {
	Files       []string     `json:"files"`
	Noise       float64      `json:"noise"`
	Forced      bool         `json:"forced"`
	Notes       []string     `json:"notes"`
	Comparisons []comparison `json:"comparisons"`
}

// probeDoc is a probe result: its target, every check in the file's order
// and the summary lines.
type probeDoc struct {
	Target  document.ProbeTarget
	Timeout float64
	Summary []string
	checks  []document.ProbeField
}

// Result is one parsed result file.
type Result struct {
	// Name is the file's name as given.
	Name string
	// Kind is what it holds.
	Kind Kind
	// ModTime is when the file was written (zero if unknown); the page
	// shows it when the record has no start time.
	ModTime time.Time

	prov  provenance
	bench *benchDoc
	// record is a bench result's run record (nil: none), for its timeline.
	record  *stats.Record
	sweep   *sweepDoc
	probe   *probeDoc
	compare *compareDoc
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
// result named name: the page's own views of each kind, built from the
// model's types (whether an interval is absent, the probe's checks in the
// file's order). A bare run record gives an error wrapping ErrNotResult.
func From(name string, d document.Result) (*Result, error) {
	r := &Result{Name: name}
	m := d.Saved()
	r.prov = provenance{Environment: m.Environment, StartedAt: m.StartedAt, EndedAt: m.EndedAt}
	if m.Schema > 0 {
		s := float64(m.Schema)
		r.prov.Schema = &s
	}
	if sw := document.SweepOf(d); sw != nil {
		r.Kind, r.sweep = KindSweep, sweepView(sw)
		return r, nil
	}
	if s, rec, ok := document.Bench(d); ok {
		b := benchView(s)
		r.Kind, r.bench, r.record = KindBench, &b, rec
		return r, nil
	}
	switch v := d.(type) {
	case *document.Probe:
		r.Kind, r.probe = KindProbe, &probeDoc{Target: v.Target, Timeout: v.TimeoutSeconds, Summary: v.Summary}
		for _, f := range v.Checks {
			if f.Check != nil {
				r.probe.checks = append(r.probe.checks, f)
			}
		}
	case *document.ProbeRange:
		// A port range's first address probed stands for the file.
		r.Kind, r.probe = KindProbe, &probeDoc{}
		for _, a := range v.Addresses {
			if a.Probe != nil {
				return From(name, a.Probe)
			}
		}
	case *document.Capacity:
		r.Kind, r.cap = KindCapacity, v.JSONReport
	case *document.Comparison:
		r.Kind, r.compare = KindCompare, &compareDoc{Files: v.Files, Noise: v.Noise, Forced: v.Forced, Notes: v.Notes,
			Comparisons: savedComparisons(v.Comparisons)}
	case *document.Study:
		r.Kind, r.study = KindStudy, v.Result
	default:
		return nil, fmt.Errorf("%s: %w (a bare run record: give the bench or sweep JSON that holds it)", name, ErrNotResult)
	}
	return r, nil
}

// benchView is a run's (or a level's) summary with its trials' intervals.
func benchView(s *summary.Summary) benchDoc {
	b := benchDoc{Summary: *s}
	if t := s.Repeated; t != nil {
		b.RPSCI95, b.P99CI95 = t.RequestsPerSecondCI95, t.P99MsCI95
		b.Trials = make([]json.RawMessage, len(t.Trials))
		if t.P50Ms == 0 && t.P99Ms == 0 && t.PooledRequestsPerSecond == 0 && t.Confidence == 0 {
			// Files of earlier versions gave a level of trials no
			// medians of their own: its figures are the level's.
			b.Repeated = nil
		}
	}
	return b
}

// sweepView is a sweep as the page reads it.
func sweepView(sw *document.Sweep) *sweepDoc {
	v := &sweepDoc{Levels: sw.Levels, RequestsPerLevel: sw.RequestsPerLevel, SecondsPerLevel: sw.SecondsPerLevel,
		StopErrorRate: sw.StopErrorRate, TimeTaken: sw.TimeTaken, Interrupted: sw.Interrupted}
	for i := range sw.Series {
		se := &sw.Series[i]
		sv := seriesDoc{Label: se.Label, Target: se.Target, KeepAlive: se.KeepAlive, Stop: se.Stop}
		for k := range se.Levels {
			sv.Levels = append(sv.Levels, benchView(&se.Levels[k]))
		}
		v.Series = append(v.Series, sv)
	}
	if t := sw.SweepTrials; t != nil {
		seed := t.Seed
		v.Repeat, v.Precision, v.MaxRepeat, v.Seed, v.Noise, v.Baseline = t.Repeat, t.Precision, t.MaxRepeat, &seed, t.Noise, t.Baseline
		v.Comparisons, v.Notes = savedComparisons(t.Comparisons), t.Notes
	}
	return v
}

// savedComparisons gives a sweep's or a comparison's rows the page's row
// type: a study's (studyComparisons) with the failed shares and the
// sides left unanswered.
func savedComparisons(cs []trials.Comparison) []comparison {
	out := studyComparisons(cs)
	for i := range cs {
		out[i].FailedRatio, out[i].Unanswered, out[i].Why = cs[i].FailedRatio, cs[i].Unanswered, cs[i].Why
	}
	return out
}
