package page

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/summary"
)

// Schema is the newest record schema this package reads (the `schema` key
// of bench and sweep JSON), the one backbench writes; files without the
// key are the records of earlier backbench versions and are read too.
const Schema = stats.Schema

// Kind names what a result file holds.
type Kind string

// The kinds of result files.
const (
	KindBench    Kind = "bench"
	KindSweep    Kind = "sweep"
	KindProbe    Kind = "probe"
	KindCompare  Kind = "compare"
	KindCapacity Kind = "capacity"
)

// ErrNotResult is returned (wrapped, with the file's name) for a file that
// is not a backbench result; ErrNewerSchema for a result of a newer schema
// than this package reads.
var (
	ErrNotResult   = errors.New("not a backbench result")
	ErrNewerSchema = errors.New("a result of a newer backbench")
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

// withRecord is a result that may carry its run record under "record".
type withRecord struct {
	provenance
	Record *provenance `json:"record"`
}

// merged returns the record's provenance, the top level's first.
func (w withRecord) merged() provenance {
	p := w.provenance
	if r := w.Record; r != nil {
		if p.Schema == nil {
			p.Schema = r.Schema
		}
		if p.Environment == nil {
			p.Environment = r.Environment
		}
		if p.StartedAt == 0 {
			p.StartedAt, p.EndedAt = r.StartedAt, r.EndedAt
		}
	}
	return p
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

	prov    provenance
	bench   *benchDoc
	sweep   *sweepDoc
	probe   *probeDoc
	compare *compareDoc
	cap     *capacity.JSONReport
}

// Parse reads one result file: bench, sweep, probe, compare or capacity
// JSON. A file
// that is not one of them, or whose schema is newer than Schema, gives an
// error wrapping ErrNotResult that names the file.
func Parse(name string, data []byte) (*Result, error) {
	fields, err := object(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrNotResult, err)
	}
	keys := map[string]bool{}
	for _, f := range fields {
		keys[f.key] = true
	}
	r := &Result{Name: name}
	var wr withRecord
	if err := json.Unmarshal(data, &wr); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrNotResult, err)
	}
	r.prov = wr.merged()
	if err := r.checkSchema(); err != nil {
		return nil, err
	}
	var target any
	switch {
	case keys["series"] && keys["levels"]:
		r.Kind, r.sweep = KindSweep, &sweepDoc{}
		target = r.sweep
	case keys["target"] && keys["summary"] && keys["timeout_seconds"]:
		r.Kind, r.probe = KindProbe, &probeDoc{}
		target = r.probe
	case keys["target"] && keys["complete_requests"] && keys["percentiles_ms"]:
		r.Kind, r.bench = KindBench, &benchDoc{}
		target = r.bench
	case keys["steps"] && keys["slo"] && (keys["capacity_rps"] || keys["capacity_concurrency"]):
		r.Kind, r.cap = KindCapacity, &capacity.JSONReport{}
		target = r.cap
	case keys["comparisons"]:
		r.Kind, r.compare = KindCompare, &compareDoc{}
		target = r.compare
	default:
		return nil, fmt.Errorf("%s: %w (no bench, sweep, probe, compare or capacity keys)", name, ErrNotResult)
	}
	if err := json.Unmarshal(data, target); err != nil {
		return nil, fmt.Errorf("%s: %w: %s JSON: %v", name, ErrNotResult, r.Kind, err)
	}
	if r.sweep != nil {
		r.prov = sweepProvenance(r.prov, r.sweep)
		if err := r.checkSchema(); err != nil {
			return nil, err
		}
	}
	if err := r.checkFigures(); err != nil {
		return nil, err
	}
	if r.probe != nil {
		for _, f := range fields {
			if isCheck(f.raw) {
				r.probe.checks = append(r.probe.checks, f)
			}
		}
	}
	return r, nil
}

// checkFigures refuses a bench result or sweep level whose counts are
// negative or whose times, rates and percentiles are negative, NaN or
// infinite (summary.Summary.CheckSummary), naming the field.
func (r *Result) checkFigures() error {
	var docs []*benchDoc
	if r.bench != nil {
		docs = append(docs, r.bench)
	}
	if r.sweep != nil {
		for i := range r.sweep.Series {
			for j := range r.sweep.Series[i].Levels {
				docs = append(docs, &r.sweep.Series[i].Levels[j])
			}
		}
	}
	for _, d := range docs {
		if err := d.Summary.CheckSummary(); err != nil {
			return fmt.Errorf("%s: %w: %v", r.Name, ErrNotResult, err)
		}
	}
	return nil
}

// checkSchema refuses a record of a newer schema than Schema, and a
// schema that is no schema (below 1, or not a whole number).
func (r *Result) checkSchema() error {
	return checkSchema(r.Name, r.prov.Schema)
}

func checkSchema(name string, s *float64) error {
	switch {
	case s == nil:
		return nil
	case *s > Schema:
		return fmt.Errorf("%s: %w: schema %g is newer than this backbench reads (%d); use a newer backbench", name, ErrNewerSchema, *s, Schema)
	case *s < 1 || *s != math.Trunc(*s):
		return fmt.Errorf("%s: %w: schema %g is not a record schema (want a whole number from 1 to %d)", name, ErrNotResult, *s, Schema)
	}
	return nil
}

// sweepProvenance completes a sweep's provenance from the records of its
// levels: the newest schema, the first environment, the earliest start and
// the latest end.
func sweepProvenance(p provenance, sw *sweepDoc) provenance {
	// A level whose schema is no schema (or newer) makes the sweep's, so
	// that checkSchema refuses it even beside good levels.
	var bad *float64
	for _, se := range sw.Series {
		for _, rec := range se.Records {
			if rec == nil {
				continue
			}
			if bad == nil && checkSchema("", rec.Schema) != nil {
				bad = rec.Schema
			}
			if rec.Schema != nil && (p.Schema == nil || *rec.Schema > *p.Schema) {
				p.Schema = rec.Schema
			}
			if p.Environment == nil {
				p.Environment = rec.Environment
			}
			if rec.StartedAt > 0 && (p.StartedAt == 0 || rec.StartedAt < p.StartedAt) {
				p.StartedAt = rec.StartedAt
			}
			p.EndedAt = max(p.EndedAt, rec.EndedAt)
		}
	}
	if bad != nil {
		p.Schema = bad
	}
	return p
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
