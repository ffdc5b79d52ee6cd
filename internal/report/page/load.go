package page

import (
	"bytes"
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

// provenance is what a record says about how and where it was made; every
// field is optional (files written before run records have none).
type provenance struct {
	Schema      *float64     `json:"schema"`
	Environment *Environment `json:"environment"`
	StartedAt   float64      `json:"started_at"`
	EndedAt     float64      `json:"ended_at"`
}

// intervals are the keys a result gets with repeated trials.
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
	// Records are the run records of the levels (their provenance only).
	Records []*provenance `json:"records"`
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
	Series            string          `json:"series"`
	Baseline          string          `json:"baseline"`
	File              string          `json:"file"`
	BaselineFile      string          `json:"baseline_file"`
	Concurrency       *int            `json:"concurrency"`
	Metric            string          `json:"metric"`
	Trials            *int            `json:"trials"`
	BaselineTrials    *int            `json:"baseline_trials"`
	Value             *float64        `json:"value"`
	BaselineValue     *float64        `json:"baseline_value"`
	ValueCI95         []float64       `json:"value_ci95"`
	BaselineValueCI95 []float64       `json:"baseline_value_ci95"`
	Ratio             *float64        `json:"ratio"`
	RatioCI95         []float64       `json:"ratio_ci95"`
	PValue            *float64        `json:"p_value"`
	Verdict           string          `json:"verdict"`
	FailedRatio       json.RawMessage `json:"failed_ratio"`
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
	// answers then give one sentence per group.
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

// field is one key of a JSON object, in the file's order.
type field struct {
	key string
	raw json.RawMessage
}

// probeDoc is a probe result: its target, every check in the file's order
// and the summary lines.
type probeDoc struct {
	Target  stats.TargetInfo `json:"target"`
	Timeout float64          `json:"timeout_seconds"`
	Summary []string         `json:"summary"`
	checks  []field
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

// Parse reads one result file: bench, sweep, probe, compare or capacity
// JSON, merged bench and sweep JSON too, through document.Read (which
// tells the kind and checks the saved numbers). A file that is not one of
// them, or whose schema is newer than Schema, gives an error wrapping
// ErrNotResult (or ErrNewerSchema) that names the file.
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
	r := &Result{Name: name}
	r.prov = provenance{Environment: d.Environment, StartedAt: d.StartedAt, EndedAt: d.EndedAt}
	if d.Schema > 0 {
		s := float64(d.Schema)
		r.prov.Schema = &s
	}
	// The page's own views of each kind: keys it shows that the document
	// types leave out (whether an interval is absent, the probe's checks
	// in the file's order).
	var target any
	switch {
	case d.Sweep != nil:
		r.Kind, r.sweep = KindSweep, &sweepDoc{}
		target = r.sweep
	case d.Bench != nil:
		r.Kind, r.bench = KindBench, &benchDoc{}
		target = r.bench
		r.record = d.Bench.Record
	case d.Probe != nil:
		r.Kind, r.probe = KindProbe, &probeDoc{}
		target = r.probe
	case d.Capacity != nil:
		r.Kind, r.cap = KindCapacity, d.Capacity
	case d.Compare != nil:
		r.Kind, r.compare = KindCompare, &compareDoc{}
		target = r.compare
	case d.Study != nil:
		r.Kind, r.study = KindStudy, d.Study
	default:
		return nil, fmt.Errorf("%s: %w (a bare run record: give the bench or sweep JSON that holds it)", name, ErrNotResult)
	}
	if target != nil {
		if err := json.Unmarshal(data, target); err != nil {
			return nil, fmt.Errorf("%s: %w: %s JSON: %v", name, ErrNotResult, r.Kind, err)
		}
	}
	if r.probe != nil {
		fields, err := object(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %v", name, ErrNotResult, err)
		}
		for _, f := range fields {
			if isCheck(f.raw) {
				r.probe.checks = append(r.probe.checks, f)
			}
		}
	}
	return r, nil
}

// isCheck reports whether raw is a probe check: an object with a verdict.
func isCheck(raw json.RawMessage) bool {
	var c struct {
		Verdict *string `json:"verdict"`
	}
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) && json.Unmarshal(raw, &c) == nil && c.Verdict != nil
}

// object returns the keys of a JSON object in order, with their raw values.
func object(data []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, field{key, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON object")
	}
	return out, nil
}
