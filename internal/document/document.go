// Package document is backbench's result model and its codec: one type
// per kind of result a command writes (a bench run, Run; repeated trials,
// Trials; a sweep, Sweep; a capacity search, Capacity; a comparison,
// Comparison; a merged run or sweep, MergedRun and MergedSweep; a probe,
// Probe and ProbeRange; a study, Study; a bare run record, Record), each
// with one JSON shape that carries its kind as a field of its own; one
// reader (Read) that every later command (compare, merge, report) takes,
// returning the typed result; and one writer (Write).
//
// A result holds every record it measured (a run's record or its trials,
// every sweep level's trials, every capacity step's records), the
// environment and the notes, plus what its kind adds (a sweep's series
// and levels, a capacity search's steps and answer, a comparison's rows,
// a merge's generators, a study's configurations, series, trials and
// answers). What Read finds beside the kind's own keys (the file's name,
// its schema, its records in order, where and when it was made) is the
// result's Meta, never written. The JSON of each kind keeps the keys it
// had before the kinds were types, so that the reader reads every file of
// schema 1: files that carry a "kind" key are read by it, older ones by
// their keys (KindOf: the only place that looks at keys to tell kinds
// apart).
//
// The reader checks what it reads as saved numbers must be checked: every
// record's schema (stats.CheckSchema) and counts (stats.Record.Validate),
// every summary's figures (stats.Summary.CheckSummary). This package is
// the only one that decodes JSON (with the record's own unmarshalers in
// internal/stats); renderers, compare and merge take its types. Limits: a
// probe's checks are an open set of keys, one per check of its protocol,
// kept in the protocol's order (Probe.Checks) with their JSON as written.
package document

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/trials"
)

// Schema is the newest schema this package reads and writes: the record
// schema (stats.Schema). A new key keeps it; changing or removing one
// raises it.
const Schema = stats.Schema

// Kind names what a document holds.
type Kind string

// The kinds of documents. KindRecord is a bare run record (what merge
// reads from several generators' outputs in one file).
const (
	KindBench    Kind = "bench"
	KindSweep    Kind = "sweep"
	KindCapacity Kind = "capacity"
	KindCompare  Kind = "compare"
	KindProbe    Kind = "probe"
	KindMerge    Kind = "merge"
	KindRecord   Kind = "record"
	KindStudy    Kind = "study"
)

// kinds are the kinds a "kind" key may name.
var kinds = []Kind{KindBench, KindSweep, KindCapacity, KindCompare, KindProbe, KindMerge, KindRecord, KindStudy}

// ErrNotDocument is wrapped by every error of Read: the file is not a
// backbench result (not JSON, no kind found) or holds what a result must
// not (a *ContentError). ErrNewerSchema: a result of a newer schema than
// Schema.
var (
	ErrNotDocument = errors.New("not a backbench result")
	ErrNewerSchema = errors.New("a result of a newer backbench")
	// ErrBadContent is matched (errors.Is) by every *ContentError.
	ErrBadContent = errors.New("a backbench result refused for its content")
)

// ContentError is a result of a known kind whose content is refused (a
// value of the wrong type, a negative count, a schema that is no schema).
// Its text is the file's name and what is wrong, as the commands print it;
// errors.Is matches it to ErrBadContent and ErrNotDocument.
type ContentError struct {
	// Name is the file's name; Err says what is wrong.
	Name string
	Err  error
}

// Error returns the file's name and what is wrong with it.
func (e *ContentError) Error() string { return e.Name + ": " + e.Err.Error() }

// Is matches ErrBadContent and ErrNotDocument.
func (e *ContentError) Is(target error) bool {
	return target == ErrBadContent || target == ErrNotDocument
}

// Unwrap returns what is wrong.
func (e *ContentError) Unwrap() error { return e.Err }

// notDocument is the error of a file that is no result.
func notDocument(name, why string) error {
	return fmt.Errorf("%s: %w (%s)", name, ErrNotDocument, why)
}

// notJSON is the error of bytes that are no JSON value: it wraps
// ErrNotDocument and the *json.SyntaxError.
func notJSON(name string, err error) error {
	return fmt.Errorf("%s: %w (not a JSON object: %w)", name, ErrNotDocument, err)
}

// bad is the error of a result whose content is refused.
func bad(name string, err error) error {
	return &ContentError{Name: name, Err: err}
}

// KindOf returns the kind of the JSON object whose top-level keys are
// keys: its "kind" when it has one, else what its keys say (files written
// before the "kind" key); "" when neither says.
func KindOf(keys map[string]json.RawMessage) Kind {
	if raw, ok := keys["kind"]; ok {
		var k Kind
		if json.Unmarshal(raw, &k) == nil && slices.Contains(kinds, k) {
			return k
		}
		return ""
	}
	has := func(ks ...string) bool {
		for _, k := range ks {
			if keys[k] == nil {
				return false
			}
		}
		return true
	}
	merged := has("generators", "merge")
	switch {
	case has("series", "levels") && merged:
		return KindMerge
	case has("series", "levels"):
		return KindSweep
	case has("target", "summary", "timeout_seconds"):
		return KindProbe
	case has("steps", "slo") && (has("capacity_rps") || has("capacity_concurrency")):
		return KindCapacity
	case has("target") && (has("requests_per_second") || has("complete_requests")) && merged:
		return KindMerge
	case has("target") && (has("requests_per_second") || has("complete_requests")):
		return KindBench
	case has("comparisons"):
		return KindCompare
	case has("schema") && !has("target"):
		return KindRecord
	}
	return ""
}

// Read reads one saved result, named name (for its errors), from data:
// any JSON file a command of this version or an earlier one of schema 1
// wrote, as its type (see Result). A file that is no result gives an
// error wrapping ErrNotDocument (and ErrBadContent when its content is
// refused), one of a newer schema ErrNewerSchema; every error starts with
// name.
func Read(name string, data []byte) (Result, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, notJSON(name, se)
		}
		return nil, notDocument(name, "not a JSON object: "+err.Error())
	}
	if keys == nil {
		return nil, notDocument(name, "not a JSON object")
	}
	kind := KindOf(keys)
	if kind == "" {
		return nil, notDocument(name, "no bench, sweep, capacity, compare, probe or merge keys")
	}
	m := &Meta{Name: name, Raw: data}
	if raw, ok := keys["schema"]; ok && kind != KindRecord {
		if err := m.schema(raw); err != nil {
			return nil, err
		}
	}
	if err := checkRecords(m, kind, data); err != nil {
		return nil, err
	}
	r, err := decode(name, kind, keys, data)
	if err != nil {
		return nil, err
	}
	r.stamp()
	*r.Saved() = *m
	if err := check(r); err != nil {
		return nil, err
	}
	if t, ok := r.(*Trials); ok {
		// From the trials' records, once they are checked.
		t.Medians = mediansOf(t.Summary)
	}
	provenance(r, kind)
	return r, nil
}

// schema checks one raw "schema" value and keeps the newest.
func (m *Meta) schema(raw json.RawMessage) error {
	if v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64); err == nil && v > Schema {
		return fmt.Errorf("%s: %w: schema %d is newer than this backbench reads (%d); use a newer backbench", m.Name, ErrNewerSchema, v, Schema)
	}
	if err := stats.CheckSchema(raw); err != nil {
		return bad(m.Name, err)
	}
	v, _ := strconv.Atoi(string(bytes.TrimSpace(raw)))
	m.Schema = max(m.Schema, v)
	return nil
}

// ReadRecord reads a saved run record into r after checking its schema
// (stats.CheckSchema), and checks its numbers (stats.Record.Validate):
// the one way every record is read.
func ReadRecord(raw json.RawMessage, r *stats.Record) error {
	var head struct {
		Schema json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return fmt.Errorf("record: %v", err)
	}
	if err := stats.CheckSchema(head.Schema); err != nil {
		return fmt.Errorf("record: %v", err)
	}
	if err := json.Unmarshal(raw, r); err != nil {
		return fmt.Errorf("record: %v", err)
	}
	if err := r.Validate(); err != nil {
		return fmt.Errorf("record: %v", err)
	}
	return nil
}

// rawRecords are where records sit in each kind, as raw JSON, for their
// schema to be checked before they are read.
type rawRecords struct {
	Record json.RawMessage `json:"record"`
	Series []struct {
		Records []json.RawMessage `json:"records"`
	} `json:"series"`
	Steps []struct {
		Records []json.RawMessage `json:"records"`
	} `json:"steps"`
}

// checkRecords checks every record's schema and numbers before the result
// is read (so that a newer record is named as such, and a schema that is
// no schema by its value).
func checkRecords(m *Meta, kind Kind, data []byte) error {
	var raws []json.RawMessage
	switch kind {
	case KindRecord:
		raws = append(raws, data)
	case KindBench, KindSweep, KindCapacity, KindMerge:
		var rr rawRecords
		if err := json.Unmarshal(data, &rr); err != nil {
			return bad(m.Name, fmt.Errorf("%s JSON: %v", kind, err))
		}
		// The trials' records are checked with their summary
		// (stats.Summary.CheckSummary), as they always were.
		if rr.Record != nil {
			raws = append(raws, rr.Record)
		}
		for _, se := range rr.Series {
			raws = append(raws, se.Records...)
		}
		for _, st := range rr.Steps {
			raws = append(raws, st.Records...)
		}
	}
	for _, raw := range raws {
		var head struct {
			Schema json.RawMessage `json:"schema"`
		}
		if json.Unmarshal(raw, &head) == nil && head.Schema != nil {
			if v, err := strconv.ParseInt(string(bytes.TrimSpace(head.Schema)), 10, 64); err == nil && v > Schema {
				return fmt.Errorf("%s: %w: record: schema %d is newer than this backbench reads (%d); use a newer backbench", m.Name, ErrNewerSchema, v, Schema)
			}
		}
		if err := ReadRecord(raw, &stats.Record{}); err != nil {
			return bad(m.Name, err)
		}
	}
	return nil
}

// decode reads data as the type of its kind.
func decode(name string, kind Kind, keys map[string]json.RawMessage, data []byte) (Result, error) {
	var r Result
	switch kind {
	case KindRecord:
		r = &Record{Record: &stats.Record{}}
	case KindBench:
		r = &Run{Summary: &stats.Summary{}}
	case KindSweep:
		r = &Sweep{}
	case KindMerge:
		if keys["series"] != nil {
			r = &MergedSweep{Sweep: &Sweep{}}
		} else {
			r = &MergedRun{Summary: &stats.Summary{}}
		}
	case KindCapacity:
		r = &Capacity{JSONReport: &capacity.JSONReport{}}
	case KindCompare:
		r = &Comparison{}
	case KindProbe:
		if keys["addresses"] != nil {
			r = &ProbeRange{}
		} else {
			r = &Probe{}
		}
	case KindStudy:
		r = &Study{Result: &study.Result{}}
	}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, bad(name, fmt.Errorf("%s JSON: %v", kind, err))
	}
	if run, ok := r.(*Run); ok && run.Repeated != nil {
		r = &Trials{Summary: run.Summary, Record: run.Record, Pooled: pooledOf(run.Summary, run.Record)}
	}
	upgradeVerdicts(r)
	return r, nil
}

// upgradeVerdicts reads the verdicts of older versions' comparisons in
// today's words (trials.Comparison.Upgrade): a saved "no difference" is
// "same" when its interval lies inside the noise band the file was
// judged with, else "undecided".
func upgradeVerdicts(r Result) {
	if sw := SweepOf(r); sw != nil && sw.SweepTrials != nil {
		trials.UpgradeAll(sw.Comparisons, sw.Noise)
	}
	switch c := r.(type) {
	case *Comparison:
		trials.UpgradeAll(c.Comparisons, c.Noise)
	case *Study:
		if c.Result != nil {
			trials.UpgradeAll(c.Comparisons, c.Noise)
		}
	}
}

// check checks every summary's figures and every record's numbers, and
// gathers the records measured and the notes into the result's Meta.
func check(r Result) error {
	m := r.Saved()
	checkSum := func(s *stats.Summary) error {
		if s.Repeated != nil && (len(s.Trials) == 0 || slices.Contains(s.Trials, nil)) {
			return bad(m.Name, errors.New("trials: a result of trials without them"))
		}
		c := *s
		if t := s.Repeated; t != nil && slices.ContainsFunc(t.Trials, OldTrial) {
			// Trials saved as summaries by earlier versions are no
			// records: only the records among them are checked as such.
			r := *t
			r.Trials = slices.DeleteFunc(slices.Clone(t.Trials), OldTrial)
			c.Repeated = &r
		}
		if err := c.CheckSummary(); err != nil {
			return bad(m.Name, err)
		}
		return nil
	}
	// measured adds a level's or a run's records: its trials when it has
	// some (and they are records), else its record.
	measured := func(s *stats.Summary, rec *stats.Record) {
		switch {
		case s != nil && s.Repeated != nil && !slices.ContainsFunc(s.Trials, OldTrial):
			m.Records = append(m.Records, s.Trials...)
		case rec != nil:
			m.Records = append(m.Records, rec)
		}
	}
	if s, rec, ok := Bench(r); ok {
		if err := checkSum(s); err != nil {
			return err
		}
		measured(s, rec)
		m.Notes = s.Notes
	}
	if sw := SweepOf(r); sw != nil {
		for i := range sw.Series {
			se := &sw.Series[i]
			for k := range se.Levels {
				if err := checkSum(&se.Levels[k]); err != nil {
					return err
				}
				var rec *stats.Record
				if k < len(se.Records) {
					rec = se.Records[k]
				}
				measured(&se.Levels[k], rec)
			}
		}
		if sw.SweepTrials != nil {
			m.Notes = sw.Notes
		}
	}
	switch c := r.(type) {
	case *Capacity:
		for _, st := range c.Steps {
			m.Records = append(m.Records, st.Records...)
		}
	case *Comparison:
		m.Notes = c.Notes
	case *Record:
		m.Records = append(m.Records, c.Record)
	}
	if slices.Contains(m.Records, nil) {
		return bad(m.Name, errors.New("record: null"))
	}
	if len(m.Records) > 0 {
		m.Plan = &m.Records[0].Plan
	}
	return nil
}

// OldTrial reports whether a trial was saved without its record (by a
// version that saved trials as summaries): it has no schema, and its
// figures are not a record's.
func OldTrial(r *stats.Record) bool { return r != nil && r.Schema == 0 }

// provenance sets the schema, environment, start and end from the
// result's own keys and its records.
func provenance(r Result, kind Kind) {
	m := r.Saved()
	var own struct {
		Environment *stats.Environment `json:"environment"`
		StartedAt   float64            `json:"started_at"`
		EndedAt     float64            `json:"ended_at"`
	}
	if kind != KindRecord {
		// A value of another type is no provenance (the page shows none).
		_ = json.Unmarshal(m.Raw, &own)
	}
	m.Environment, m.StartedAt, m.EndedAt = own.Environment, own.StartedAt, own.EndedAt
	recs := m.Records
	if _, rec, ok := Bench(r); ok && rec != nil {
		recs = append([]*stats.Record{rec}, recs...)
	}
	fromRecords := m.StartedAt == 0
	for _, r := range recs {
		m.Schema = max(m.Schema, r.Schema)
		if m.Environment == nil && r.Environment.Version != "" {
			env := r.Environment
			m.Environment = &env
		}
		if !fromRecords || r.StartedAt.IsZero() {
			continue
		}
		s, e := unix(r.StartedAt.Time.UnixNano()), unix(r.EndedAt.Time.UnixNano())
		if m.StartedAt == 0 || s < m.StartedAt {
			m.StartedAt = s
		}
		m.EndedAt = max(m.EndedAt, e)
	}
}

func unix(ns int64) float64 { return float64(ns) / 1e9 }

// Write writes r as the one JSON shape of its type: one indented object
// (stats.EncodeJSON) whose first key is its kind, a field of the type
// that Write sets.
func Write(w io.Writer, r Result) error {
	if r == nil {
		return errors.New("document: nothing to write")
	}
	r.stamp()
	return stats.EncodeJSON(w, r)
}

// ErrNotJSON is Stream.Next's error for bytes that are no JSON value
// (wrapped with the decoder's error).
var ErrNotJSON = errors.New("not JSON")

// Stream reads the JSON values of one input one after the other (several
// generators' outputs in one file: GNU parallel's or kubectl logs'
// output), so that a file of many results is never held whole; each
// value is then read with Read.
type Stream struct {
	dec *json.Decoder
}

// NewStream returns a Stream of r's values.
func NewStream(r io.Reader) *Stream {
	return &Stream{dec: json.NewDecoder(bufio.NewReaderSize(r, 64<<10))}
}

// Next returns the next value's bytes, io.EOF after the last one, or an
// error wrapping ErrNotJSON.
func (s *Stream) Next() ([]byte, error) {
	var raw json.RawMessage
	if err := s.dec.Decode(&raw); err == io.EOF {
		return nil, io.EOF
	} else if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	return raw, nil
}
