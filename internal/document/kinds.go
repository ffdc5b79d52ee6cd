package document

import (
	"slices"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/gate"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/trials"
)

// Result is one saved result of any kind: *Run, *Trials, *Sweep,
// *Capacity, *Comparison, *MergedRun, *MergedSweep, *Probe, *ProbeRange,
// *Study or *Record. Read returns one; Write writes one.
type Result interface {
	// ResultKind returns the kind the result is saved as.
	ResultKind() Kind
	// Saved returns what Read found beside the result's own keys (its
	// name, schema, records, provenance); zero for a result not read.
	Saved() *Meta
	// stamp sets the result's kind field.
	stamp()
}

// Meta is what Read finds in a saved result beside its kind's own
// fields: it is not written.
type Meta struct {
	// Name is the file's name as given to Read.
	Name string
	// Schema is the newest schema among the result's own "schema" key
	// and its records'; 0 when it has none (files made before records).
	Schema int
	// Environment is where it was made: the result's own, else its first
	// record's (nil when neither has one).
	Environment *stats.Environment
	// StartedAt and EndedAt are its earliest start and latest end in Unix
	// seconds, from the result or its records (0 when unknown).
	StartedAt, EndedAt float64
	// Records are every record measured, in the file's order: a run's
	// record, the trials' records, every sweep level's record (its
	// trials' with trials), every capacity step's records, a merge's
	// merged records, a bare record.
	Records []*stats.Record
	// Plan is the plan of its first record (nil without records): the
	// run as data, its target included; each record keeps its own.
	Plan *stats.Plan
	// Notes are the result's notes (a run's, a sweep's of trials, a
	// comparison's).
	Notes []string
	// Raw is the file's content as read.
	Raw []byte
}

// Run is one bench run: ab's Summary of its record, and the record under
// "record". Saved as kind "bench".
type Run struct {
	// Kind is KindBench.
	Kind Kind `json:"kind"`
	*stats.Summary
	// Record is the run's record (nil in files made before records).
	Record *stats.Record `json:"record,omitempty"`
	// Meta is what Read found.
	Meta Meta `json:"-"`
}

// Trials is a bench run of repeated trials (--repeat, --precision).
// Pooled and Medians are its figures, each kept for what it is; Summary
// is its saved form (schema 1), which NewTrials writes from them and Read
// reads: the pooled run's summary with the trials' part (its Repeated:
// the trials' records, the medians and their intervals, the pooled
// requests/sec) and the median requests/sec as its RequestsPerSecond;
// the pooled record is under "record". Saved as kind "bench", as before
// the kinds were types.
type Trials struct {
	// Kind is KindBench.
	Kind Kind `json:"kind"`
	*stats.Summary
	// Record is the trials' records merged.
	Record *stats.Record `json:"record,omitempty"`
	// Pooled is the trials' records merged (stats.InTurn) with that
	// record's own summary: the figures of ab's report. Read gives it
	// back from the saved form (its requests/sec the pooled one, without
	// the trials' part).
	Pooled stats.Run `json:"-"`
	// Medians are the medians of the trials' figures with their
	// intervals, as the trials ran. Read gives them back from the trials'
	// records (mediansOf); zero for trials saved as summaries by earlier
	// versions (OldTrial), whose figures are the saved form's alone.
	Medians trials.Summary `json:"-"`
	// Meta is what Read found.
	Meta Meta `json:"-"`
}

// NewTrials returns the result of a bench run of trials from its typed
// parts: the trials' runs in the order they ran, the pooled run (their
// records merged, with its own summary), the medians of the trials'
// figures, whether the requests/sec interval got within --precision
// (nil without it) and the seed of the rounds. The saved form (Summary)
// is a new value: pooled.Summary is not changed.
func NewTrials(runs []*stats.Run, pooled stats.Run, medians trials.Summary, precise *bool, seed uint64) *Trials {
	s := stats.SavedTrials(pooled.Summary, runs, medians, precise, seed)
	return &Trials{Summary: &s, Record: pooled.Record, Pooled: pooled, Medians: medians}
}

// SetUntil records in t's saved form how its trials ran until decided
// (bench --until decided --against FILE): p's Until, MaxRepeat and
// Budget, and u, how the trials ended. It does nothing without Until.
func (t *Trials) SetUntil(p trials.Plan, u *trials.Stopping) {
	if p.Until == "" || t.Repeated == nil {
		return
	}
	r := t.Repeated
	r.Until, r.MaxRepeat, r.BudgetSeconds, r.Stopping = p.Until, p.MaxRepeat, p.Budget.Seconds(), u
}

// mediansOf returns the medians of the trials of a saved result of
// trials, from the trials' records as the trials' runs gave them
// (stats.TrialsOf, trials.Summarize: what NewTrials was given); zero
// when a trial was saved as a summary by an earlier version (OldTrial).
func mediansOf(s *stats.Summary) trials.Summary {
	if s.Repeated == nil || len(s.Trials) == 0 || slices.ContainsFunc(s.Trials, OldTrial) || slices.Contains(s.Trials, nil) {
		return trials.Summary{}
	}
	return trials.Summarize(stats.TrialsOf(s))
}

// pooledOf returns the pooled run of a saved result of trials: its
// summary without the trials' part and with the pooled requests/sec.
func pooledOf(s *stats.Summary, rec *stats.Record) stats.Run {
	p := *s
	if s.Repeated != nil {
		p.RequestsPerSecond = s.PooledRequestsPerSecond
	}
	p.Repeated = nil
	return stats.Run{Record: rec, Summary: p}
}

// MergedRun is the merge of bench runs made on several generators: the
// merged run, the generators' own figures and how they were merged.
type MergedRun struct {
	// Kind is KindMerge.
	Kind Kind `json:"kind"`
	*stats.Summary
	// Record is the merged record.
	Record *stats.Record `json:"record"`
	// Generators are the inputs, one per file.
	Generators []Generator `json:"generators"`
	// Info says how they were merged.
	Info *MergeInfo `json:"merge"`
	// Meta is what Read found.
	Meta Meta `json:"-"`
}

// MergedSweep is the merge of sweeps made on several generators.
type MergedSweep struct {
	// Kind is KindMerge.
	Kind Kind `json:"kind"`
	*Sweep
	// Generators are the inputs, one per file.
	Generators []Generator `json:"generators"`
	// Info says how they were merged.
	Info *MergeInfo `json:"merge"`
	// Meta is what Read found.
	Meta Meta `json:"-"`
}

// Capacity is a capacity search (backbench capacity).
type Capacity struct {
	// Kind is KindCapacity.
	Kind Kind `json:"kind"`
	*capacity.JSONReport
	// Meta is what Read found.
	Meta Meta `json:"-"`
}

// Comparison is the result of backbench compare.
type Comparison struct {
	// Kind is KindCompare.
	Kind Kind `json:"kind"`
	// Files are the files compared, the baseline first.
	Files []string `json:"files"`
	// Noise is the noise threshold of the verdicts (a fraction); Forced
	// reports files of different load shapes compared with --force.
	Noise  float64 `json:"noise"`
	Forced bool    `json:"forced"`
	// Differences are how the files differ; Notes what the reader should
	// know.
	Differences []string `json:"differences"`
	Notes       []string `json:"notes"`
	// Comparisons are the pairs' comparisons.
	Comparisons []trials.Comparison `json:"comparisons"`
	// TargetComparisons are the comparisons of each target of a mix
	// (--targets) that both sides of a pair ran: its p50 and p99, each
	// with Target set (trials.CompareTarget); absent without mixes.
	TargetComparisons []trials.Comparison `json:"target_comparisons,omitempty"`
	// Gate is the regression gate's judgement (compare --fail-on).
	Gate *gate.Result `json:"gate,omitempty"`
	// Meta is what Read found.
	Meta Meta `json:"-"`
}

// Study is the result of backbench study.
type Study struct {
	// Kind is KindStudy.
	Kind Kind `json:"kind"`
	*study.Result
	// Meta is what Read found.
	Meta Meta `json:"-"`
}

// Record is a bare run record (what a generator may write for merge).
type Record struct {
	// Kind is KindRecord.
	Kind Kind `json:"kind"`
	*stats.Record
	// Meta is what Read found.
	Meta Meta `json:"-"`
}

// ResultKind returns KindBench.
func (r *Run) ResultKind() Kind { return KindBench }

// ResultKind returns KindBench.
func (r *Trials) ResultKind() Kind { return KindBench }

// ResultKind returns KindMerge.
func (r *MergedRun) ResultKind() Kind { return KindMerge }

// ResultKind returns KindMerge.
func (r *MergedSweep) ResultKind() Kind { return KindMerge }

// ResultKind returns KindSweep.
func (r *Sweep) ResultKind() Kind { return KindSweep }

// ResultKind returns KindCapacity.
func (r *Capacity) ResultKind() Kind { return KindCapacity }

// ResultKind returns KindCompare.
func (r *Comparison) ResultKind() Kind { return KindCompare }

// ResultKind returns KindStudy.
func (r *Study) ResultKind() Kind { return KindStudy }

// ResultKind returns KindRecord.
func (r *Record) ResultKind() Kind { return KindRecord }

// ResultKind returns KindProbe.
func (r *Probe) ResultKind() Kind { return KindProbe }

// ResultKind returns KindProbe.
func (r *ProbeRange) ResultKind() Kind { return KindProbe }

// Saved returns what Read found.
func (r *Run) Saved() *Meta { return &r.Meta }

// Saved returns what Read found.
func (r *Trials) Saved() *Meta { return &r.Meta }

// Saved returns what Read found.
func (r *MergedRun) Saved() *Meta { return &r.Meta }

// Saved returns what Read found.
func (r *MergedSweep) Saved() *Meta { return &r.Meta }

// Saved returns what Read found.
func (r *Sweep) Saved() *Meta { return &r.Meta }

// Saved returns what Read found.
func (r *Capacity) Saved() *Meta { return &r.Meta }

// Saved returns what Read found.
func (r *Comparison) Saved() *Meta { return &r.Meta }

// Saved returns what Read found.
func (r *Study) Saved() *Meta { return &r.Meta }

// Saved returns what Read found.
func (r *Record) Saved() *Meta { return &r.Meta }

// Saved returns what Read found.
func (r *Probe) Saved() *Meta { return &r.Meta }

// Saved returns what Read found.
func (r *ProbeRange) Saved() *Meta { return &r.Meta }

func (r *Run) stamp()         { r.Kind = KindBench }
func (r *Trials) stamp()      { r.Kind = KindBench }
func (r *MergedRun) stamp()   { r.Kind = KindMerge }
func (r *MergedSweep) stamp() { r.Kind = KindMerge }
func (r *Sweep) stamp()       { r.Kind = KindSweep }
func (r *Capacity) stamp()    { r.Kind = KindCapacity }
func (r *Comparison) stamp()  { r.Kind = KindCompare }
func (r *Study) stamp()       { r.Kind = KindStudy }
func (r *Record) stamp()      { r.Kind = KindRecord }
func (r *Probe) stamp()       { r.Kind = KindProbe }
func (r *ProbeRange) stamp()  { r.Kind = KindProbe }

// NewRun returns the result of one bench run, *Run, or of repeated
// trials, *Trials, when s has them (s.Repeated): the one place bench
// and report tell them apart.
func NewRun(s *stats.Summary, rec *stats.Record) Result {
	if s.Repeated != nil {
		return &Trials{Summary: s, Record: rec, Pooled: pooledOf(s, rec), Medians: mediansOf(s)}
	}
	return &Run{Summary: s, Record: rec}
}

// Bench returns the summary and record of a bench result (*Run, *Trials
// or *MergedRun); ok is false for any other kind.
func Bench(r Result) (s *stats.Summary, rec *stats.Record, ok bool) {
	switch b := r.(type) {
	case *Run:
		return b.Summary, b.Record, true
	case *Trials:
		return b.Summary, b.Record, true
	case *MergedRun:
		return b.Summary, b.Record, true
	}
	return nil, nil, false
}

// SweepOf returns the sweep of a sweep result (*Sweep or *MergedSweep),
// nil for any other kind.
func SweepOf(r Result) *Sweep {
	switch s := r.(type) {
	case *Sweep:
		return s
	case *MergedSweep:
		return s.Sweep
	}
	return nil
}
