// Package document is backbench's saved result: one Document type for
// every JSON file a command writes (bench, sweep, capacity, compare,
// probe, merge), one reader (Read) that every later command (compare,
// merge, report) takes, and one writer (Write).
//
// A document has a kind and holds every record it measured (a bench run's
// record or its trials, every sweep level's trials, every capacity step's
// records), the environment and the notes, plus what its kind adds (a
// sweep's series and levels, a capacity search's steps and answer, a
// comparison's rows, a merge's generators, a study's configurations,
// series, trials and answers). The JSON of each kind keeps
// the keys it had before this package existed, so that the reader reads
// every file of schema 1: files that carry a "kind" key are read by it,
// older ones by their keys (the only place that looks at keys to tell
// kinds apart).
//
// The reader checks what it reads as saved numbers must be checked: every
// record's schema (stats.CheckSchema) and counts (stats.Record.Validate),
// every summary's figures (summary.Summary.CheckSummary). Limits: a probe
// document is kept as its target, timeout and summary lines plus its raw
// bytes (its checks are an open set of keys, read by the page).
package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/gate"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/summary"
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

// Bench is a bench result (and a merged one): ab's Summary, with the
// trials' records when it has trials, and the run record under "record".
type Bench struct {
	*summary.Summary
	Record *stats.Record `json:"record,omitempty"`
}

// Compare is the JSON of backbench compare.
type Compare struct {
	Files       []string            `json:"files"`
	Noise       float64             `json:"noise"`
	Forced      bool                `json:"forced"`
	Differences []string            `json:"differences"`
	Notes       []string            `json:"notes"`
	Comparisons []trials.Comparison `json:"comparisons"`
	// Gate is the regression gate's judgement (compare --fail-on).
	Gate *gate.Result `json:"gate,omitempty"`
}

// Merge is what a merged result adds to its bench or sweep JSON.
type Merge struct {
	Generators []report.Generator `json:"generators"`
	Info       *report.MergeInfo  `json:"merge"`
}

// Probe is what the reader keeps of a probe result: its target, the
// timeout of one exchange in seconds and the summary lines; its checks
// are in Document.Raw.
type Probe struct {
	Target         stats.TargetInfo `json:"target"`
	TimeoutSeconds float64          `json:"timeout_seconds"`
	Summary        []string         `json:"summary"`
}

// Document is one saved result.
type Document struct {
	// Name is the file's name as given to Read.
	Name string
	// Kind is what it holds.
	Kind Kind
	// Schema is the newest schema among the document's own "schema" key
	// and its records'; 0 when it has none (files made before records).
	Schema int
	// Environment is where it was made: the document's own, else its
	// first record's (nil when neither has one).
	Environment *stats.Environment
	// StartedAt and EndedAt are its earliest start and latest end in Unix
	// seconds, from the document or its records (0 when unknown).
	StartedAt, EndedAt float64
	// Records are every record measured, in the file's order: a bench
	// run's record (its trials' records, with trials), every sweep
	// level's record (its trials' with trials), every capacity step's
	// records, a merge's merged records, a bare record.
	Records []*stats.Record
	// Plan is the plan of its first record (nil without records): the
	// run as data, its target included; each record keeps its own.
	Plan *stats.Plan
	// Notes are the document's notes (a bench run's, a sweep's of trials,
	// a comparison's).
	Notes []string

	// What each kind adds: Bench for bench and merge of bench runs, Sweep
	// for sweep and merge of sweeps, Merge for merge, Capacity, Compare,
	// Probe; Record for a bare record.
	Bench    *Bench
	Sweep    *report.Sweep
	Merge    *Merge
	Capacity *capacity.JSONReport
	Compare  *Compare
	Probe    *Probe
	Record   *stats.Record
	Study    *study.Result

	// Raw is the file's content as read.
	Raw []byte
}

// notDocument is the error of a file that is no result.
func notDocument(name, why string) error {
	return fmt.Errorf("%s: %w (%s)", name, ErrNotDocument, why)
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
// wrote. A file that is no result gives an error wrapping ErrNotDocument
// (and ErrBadContent when its content is refused), one of a newer schema
// ErrNewerSchema; every error starts with name.
func Read(name string, data []byte) (*Document, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, notDocument(name, "not a JSON object: "+err.Error())
	}
	if keys == nil {
		return nil, notDocument(name, "not a JSON object")
	}
	d := &Document{Name: name, Kind: KindOf(keys), Raw: data}
	if d.Kind == "" {
		return nil, notDocument(name, "no bench, sweep, capacity, compare, probe or merge keys")
	}
	if raw, ok := keys["schema"]; ok && d.Kind != KindRecord {
		if err := d.schema(raw); err != nil {
			return nil, err
		}
	}
	if err := d.decode(keys); err != nil {
		return nil, err
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	d.provenance(keys)
	return d, nil
}

// schema checks one raw "schema" value and keeps the newest.
func (d *Document) schema(raw json.RawMessage) error {
	if v, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64); err == nil && v > Schema {
		return fmt.Errorf("%s: %w: schema %d is newer than this backbench reads (%d); use a newer backbench", d.Name, ErrNewerSchema, v, Schema)
	}
	if err := stats.CheckSchema(raw); err != nil {
		return bad(d.Name, err)
	}
	v, _ := strconv.Atoi(string(bytes.TrimSpace(raw)))
	d.Schema = max(d.Schema, v)
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

// decode reads the document's kind, after checking every record's schema
// (so that a newer record is named as such, and a schema that is no
// schema by its value).
func (d *Document) decode(keys map[string]json.RawMessage) error {
	var raws []json.RawMessage
	switch d.Kind {
	case KindRecord:
		raws = append(raws, d.Raw)
	case KindBench, KindSweep, KindCapacity, KindMerge:
		var rr rawRecords
		if err := json.Unmarshal(d.Raw, &rr); err != nil {
			return bad(d.Name, fmt.Errorf("%s JSON: %v", d.Kind, err))
		}
		// The trials' records are checked with their summary
		// (summary.Summary.CheckSummary), as they always were.
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
				return fmt.Errorf("%s: %w: record: schema %d is newer than this backbench reads (%d); use a newer backbench", d.Name, ErrNewerSchema, v, Schema)
			}
		}
		if err := ReadRecord(raw, &stats.Record{}); err != nil {
			return bad(d.Name, err)
		}
	}
	var target any
	bench := func() any {
		d.Bench = &Bench{Summary: &summary.Summary{}}
		return d.Bench
	}
	switch d.Kind {
	case KindRecord:
		d.Record = &stats.Record{}
		target = d.Record
	case KindBench:
		target = bench()
	case KindSweep:
		d.Sweep = &report.Sweep{}
		target = d.Sweep
	case KindMerge:
		d.Merge = &Merge{}
		if err := json.Unmarshal(d.Raw, d.Merge); err != nil {
			return bad(d.Name, fmt.Errorf("merge JSON: %v", err))
		}
		if keys["series"] != nil {
			d.Sweep = &report.Sweep{}
			target = d.Sweep
		} else {
			target = bench()
		}
	case KindCapacity:
		d.Capacity = &capacity.JSONReport{}
		target = d.Capacity
	case KindCompare:
		d.Compare = &Compare{}
		target = d.Compare
	case KindProbe:
		d.Probe = &Probe{}
		target = d.Probe
	case KindStudy:
		d.Study = &study.Result{}
		target = d.Study
	}
	if err := json.Unmarshal(d.Raw, target); err != nil {
		return bad(d.Name, fmt.Errorf("%s JSON: %v", d.Kind, err))
	}
	return nil
}

// check checks every summary's figures and every record's numbers, and
// gathers the records measured into Records.
func (d *Document) check() error {
	checkSum := func(s *summary.Summary) error {
		if s.Repeated != nil && (len(s.Trials) == 0 || slices.Contains(s.Trials, nil)) {
			return bad(d.Name, errors.New("trials: a result of trials without them"))
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
			return bad(d.Name, err)
		}
		return nil
	}
	// measured adds a level's or a run's records: its trials when it has
	// some (and they are records), else its record.
	measured := func(s *summary.Summary, rec *stats.Record) {
		switch {
		case s != nil && s.Repeated != nil && !slices.ContainsFunc(s.Trials, OldTrial):
			d.Records = append(d.Records, s.Trials...)
		case rec != nil:
			d.Records = append(d.Records, rec)
		}
	}
	if b := d.Bench; b != nil {
		if err := checkSum(b.Summary); err != nil {
			return err
		}
		measured(b.Summary, b.Record)
		d.Notes = b.Notes
	}
	if sw := d.Sweep; sw != nil {
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
			d.Notes = sw.Notes
		}
	}
	if c := d.Capacity; c != nil {
		for _, st := range c.Steps {
			d.Records = append(d.Records, st.Records...)
		}
	}
	if c := d.Compare; c != nil {
		d.Notes = c.Notes
	}
	if d.Record != nil {
		d.Records = append(d.Records, d.Record)
	}
	if slices.Contains(d.Records, nil) {
		return bad(d.Name, errors.New("record: null"))
	}
	if len(d.Records) > 0 {
		d.Plan = &d.Records[0].Plan
	}
	return nil
}

// OldTrial reports whether a trial was saved without its record (by a
// version that saved trials as summaries): it has no schema, and its
// figures are not a record's.
func OldTrial(r *stats.Record) bool { return r != nil && r.Schema == 0 }

// provenance sets the schema, environment, start and end from the
// document's own keys and its records.
func (d *Document) provenance(keys map[string]json.RawMessage) {
	var own struct {
		Environment *stats.Environment `json:"environment"`
		StartedAt   float64            `json:"started_at"`
		EndedAt     float64            `json:"ended_at"`
	}
	if d.Kind != KindRecord {
		// A value of another type is no provenance (the page shows none).
		_ = json.Unmarshal(d.Raw, &own)
	}
	d.Environment, d.StartedAt, d.EndedAt = own.Environment, own.StartedAt, own.EndedAt
	recs := d.Records
	if d.Bench != nil && d.Bench.Record != nil {
		recs = append([]*stats.Record{d.Bench.Record}, recs...)
	}
	fromRecords := d.StartedAt == 0
	for _, r := range recs {
		d.Schema = max(d.Schema, r.Schema)
		if d.Environment == nil && r.Environment.Version != "" {
			env := r.Environment
			d.Environment = &env
		}
		if !fromRecords || r.StartedAt.IsZero() {
			continue
		}
		s, e := unix(r.StartedAt.Time.UnixNano()), unix(r.EndedAt.Time.UnixNano())
		if d.StartedAt == 0 || s < d.StartedAt {
			d.StartedAt = s
		}
		d.EndedAt = max(d.EndedAt, e)
	}
}

func unix(ns int64) float64 { return float64(ns) / 1e9 }

// Encode writes v, the JSON value of a document of kind k, as one
// indented object (stats.EncodeJSON) with "kind" as its first key: the
// one encoder of every command that writes JSON.
func Encode(w io.Writer, k Kind, v any) error {
	return encode(w, k, func(w io.Writer) error { return stats.EncodeJSON(w, v) })
}

// encode writes what enc writes, a JSON object, with "kind" put first. The
// key is put in the encoded bytes rather than in each kind's type, so that
// every kind keeps its type and its writer in internal/report (and the
// keys it had before the key existed), and a command's own output type
// (probe's) needs no field of it. stats.EncodeJSON, which every writer
// uses, starts an object with "{\n" and indents its keys by two spaces.
func encode(w io.Writer, k Kind, enc func(io.Writer) error) error {
	var b bytes.Buffer
	if err := enc(&b); err != nil {
		return err
	}
	out := b.Bytes()
	kind, _ := json.Marshal(k)
	switch {
	case bytes.HasPrefix(out, []byte("{\n  \"kind\": ")):
		// A probe's raw object, read with its kind.
	case bytes.HasPrefix(out, []byte("{\n  ")):
		out = slices.Concat([]byte("{\n  \"kind\": "), kind, []byte(",\n"), out[2:])
	case bytes.HasPrefix(out, []byte("{}")):
		out = slices.Concat([]byte("{\n  \"kind\": "), kind, []byte("\n}"), out[2:])
	default:
		return fmt.Errorf("document: a %s document is not a JSON object", k)
	}
	_, err := w.Write(out)
	return err
}

// Write writes d as the JSON of its kind, through the kind's writer in
// internal/report where it has one, with its kind first (Encode).
func Write(w io.Writer, d *Document) error {
	var enc func(io.Writer) error
	switch {
	case d.Merge != nil && d.Sweep != nil:
		enc = func(w io.Writer) error { return report.MergeSweepJSON(w, d.Sweep, d.Merge.Generators, d.Merge.Info) }
	case d.Merge != nil && d.Bench != nil:
		enc = func(w io.Writer) error {
			return report.MergeJSON(w, d.Bench.Summary, d.Bench.Record, d.Merge.Generators, d.Merge.Info)
		}
	case d.Bench != nil:
		enc = func(w io.Writer) error { return report.JSON(w, d.Bench.Summary, d.Bench.Record) }
	case d.Sweep != nil:
		enc = func(w io.Writer) error { return report.SweepJSON(w, d.Sweep) }
	case d.Capacity != nil:
		return Encode(w, d.Kind, d.Capacity)
	case d.Compare != nil:
		return Encode(w, d.Kind, d.Compare)
	case d.Record != nil:
		return Encode(w, d.Kind, d.Record)
	case d.Study != nil:
		return Encode(w, KindStudy, d.Study)
	case d.Kind == KindProbe && d.Raw != nil:
		// A probe's checks are kept as read.
		return Encode(w, d.Kind, json.RawMessage(d.Raw))
	default:
		return fmt.Errorf("document: nothing to write for kind %q", d.Kind)
	}
	return encode(w, d.Kind, enc)
}
