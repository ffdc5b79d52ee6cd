package stats

import (
	"github.com/backbench/backbench/internal/trials"
)

// Repeated is what a result of repeated trials (--repeat) adds to its
// Summary, which is then the pooled trials' with the median requests/sec.
// Its fields appear in the result's own JSON object; without trials it is
// nil and none of them do.
type Repeated struct {
	// Trials are the trials' own records, in the order they ran (each
	// with its started_at); the result is their Merge.
	Trials []*Record `json:"trials"`
	// RequestsPerSecondCI95 is the interval of the median requests/sec
	// (Summary.RequestsPerSecond), [low, high]; null with one trial.
	// Despite the name, this and every _CI95 interval here is of 95% only
	// from 6 trials: with 2 to 5 it is the range of the trials, of
	// confidence 1 - 2^(1-n) (50% for 2, 93.75% for 5;
	// trials.MedianConfidence).
	RequestsPerSecondCI95 []float64 `json:"requests_per_second_ci95"`
	// PooledRequestsPerSecond is the pooled trials' complete requests
	// over their time added up: the figure of the ab report.
	PooledRequestsPerSecond float64 `json:"pooled_requests_per_second"`
	// P50Ms and P99Ms are the medians of the trials' p50 and p99 of the
	// total request time, in ms; the _CI95 fields their intervals.
	P50Ms     float64   `json:"p50_ms"`
	P50MsCI95 []float64 `json:"p50_ms_ci95"`
	P99Ms     float64   `json:"p99_ms"`
	P99MsCI95 []float64 `json:"p99_ms_ci95"`
	// MeanMs and MaxMs are the medians of the trials' mean and maximum
	// total request time, in ms, with their intervals: the figures the
	// comparisons judge, shown by every table of trials.
	MeanMs     float64   `json:"mean_ms,omitempty"`
	MeanMsCI95 []float64 `json:"mean_ms_ci95,omitempty"`
	MaxMs      float64   `json:"max_ms,omitempty"`
	MaxMsCI95  []float64 `json:"max_ms_ci95,omitempty"`
	// Confidence is the level of the intervals: 0.95 from 6 trials, less
	// with fewer (the range of the trials: 0.9375 with 5).
	Confidence float64 `json:"ci_confidence"`
	// Seed, in a bench result, seeded the trials' rounds (a sweep says it
	// once, at the top).
	Seed uint64 `json:"seed,omitempty"`
	// Precise, with --precision, reports whether the requests/sec
	// interval got within the precision asked before --max-repeat.
	Precise *bool `json:"precise,omitempty"`
	// Until, in a bench result, is "decided" when the trials ran until
	// their comparisons against a saved run were decided (--until decided
	// --against FILE; "" for a fixed count): MaxRepeat is then the most
	// trials, BudgetSeconds the --budget (0 for none), and Stopping says
	// how the trials ended (the keys of a sweep's).
	Until         string           `json:"until,omitempty"`
	MaxRepeat     int              `json:"max_repeat,omitempty"`
	BudgetSeconds float64          `json:"budget_seconds,omitempty"`
	Stopping      *trials.Stopping `json:"stopping,omitempty"`
}

// SavedTrials returns the saved form (schema 1) of a result of trials: the
// pooled run's summary with the trials' part (their records, in the order
// they ran; the medians and their intervals; the pooled requests/sec) and
// the median requests/sec as its RequestsPerSecond. It is a new value:
// pooled is not changed. The one writer of that shape, for bench's
// trials (the result model's codec) and a sweep's levels (the driver).
func SavedTrials(pooled Summary, runs []*Run, m trials.Summary, precise *bool, seed uint64) Summary {
	s := pooled
	recs := make([]*Record, len(runs))
	for i, r := range runs {
		recs[i] = r.Record
	}
	s.Repeated = &Repeated{Trials: recs, Precise: precise, Seed: seed,
		PooledRequestsPerSecond: pooled.RequestsPerSecond,
		RequestsPerSecondCI95:   m.RequestsPerSecond.Interval(),
		P50Ms:                   m.P50Ms.Median, P50MsCI95: m.P50Ms.Interval(),
		P99Ms: m.P99Ms.Median, P99MsCI95: m.P99Ms.Interval(),
		MeanMs: m.MeanMs.Median, MeanMsCI95: m.MeanMs.Interval(),
		MaxMs: m.MaxMs.Median, MaxMsCI95: m.MaxMs.Interval(),
		Confidence: m.RequestsPerSecond.Confidence}
	s.RequestsPerSecond = m.RequestsPerSecond.Median
	return s
}

// TrialOf is what the statistics read of a trial's result (its own
// summary): the figures internal/trials takes the medians of and compares.
func TrialOf(s *Summary) trials.Trial {
	t := trials.Trial{RequestsPerSecond: s.RequestsPerSecond, MeanMs: s.ConnectionTimes.Total.Mean,
		P50Ms: s.Percentiles["50"], P99Ms: s.Percentiles["99"], MaxMs: s.ConnectionTimes.Total.Max,
		Failed: s.Failed, Finished: s.Finished(), Seconds: s.TimeTaken,
		ClientCPUMeasured: s.Client.CPUPercent > 0 && s.Client.CPUUserSeconds+s.Client.CPUSysSeconds > 0}
	if b := s.Backend; b != nil && b.Samples > 0 && s.Complete > 0 {
		t.BackendSampled = true
		t.BackendCPUPerRequest = b.CPUSeconds / float64(s.Complete)
		t.BackendPSSBytes = float64(b.MeanPSSBytes)
	}
	return t
}

// TrialsOf returns the trials of a result (each trial's record's own
// summary, SummaryOf), or the result as one trial when it has none.
func TrialsOf(s *Summary) []trials.Trial {
	if s.Repeated == nil {
		return []trials.Trial{TrialOf(s)}
	}
	out := make([]trials.Trial, len(s.Trials))
	for i, r := range s.Trials {
		ts := SummaryOf(r)
		out[i] = TrialOf(&ts)
	}
	return out
}

// SeriesOf returns the series labelled label whose levels' results are
// levels as the pairing walk takes it (trials.ComparePairs): each level's
// concurrency and trials (TrialsOf).
func SeriesOf(label string, levels []Summary) trials.Series {
	s := trials.Series{Label: label, Levels: make([]trials.Level, len(levels))}
	for i := range levels {
		s.Levels[i] = trials.Level{Concurrency: levels[i].Concurrency, Trials: TrialsOf(&levels[i])}
	}
	return s
}

// TargetTrialsOf returns, for a result of a mix (--targets), its targets
// ("METHOD URL", in the targets file's order) and each target's trials:
// each trial's figures those of the target's own requests in that trial
// (its p50, p99 and max, its failed and finished requests; the trial's
// time), or the result as one trial when it has none. Nil when the
// result is of one request, or some trial lacks the per-target parts.
func TargetTrialsOf(s *Summary) (targets []string, per [][]trials.Trial) {
	if len(s.Targets) == 0 {
		return nil, nil
	}
	sums := []*Summary{s}
	if s.Repeated != nil {
		sums = sums[:0]
		for _, r := range s.Trials {
			ts := SummaryOf(r)
			sums = append(sums, &ts)
		}
	}
	for _, t := range s.Targets {
		targets = append(targets, t.Target)
	}
	per = make([][]trials.Trial, len(targets))
	for _, x := range sums {
		if len(x.Targets) != len(targets) {
			return nil, nil
		}
		whole := TrialOf(x)
		for i, t := range x.Targets {
			if t.Target != targets[i] {
				return nil, nil
			}
			per[i] = append(per[i], trials.Trial{P50Ms: t.P50Ms, P99Ms: t.P99Ms, MaxMs: t.MaxMs,
				Failed: t.Failed, Finished: t.Requests, Seconds: whole.Seconds, ClientCPUMeasured: whole.ClientCPUMeasured})
		}
	}
	return targets, per
}
