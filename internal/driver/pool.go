package driver

import (
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/summary"
	"github.com/backbench/backbench/internal/trials"
)

// TrialOf is what the statistics read of a trial's result.
func TrialOf(s *summary.Summary) trials.Trial {
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

// TrialsOf returns the trials of a result, or the result as one trial.
func TrialsOf(s *summary.Summary) []trials.Trial {
	if s.Repeated == nil {
		return []trials.Trial{TrialOf(s)}
	}
	out := make([]trials.Trial, len(s.Trials))
	for i, r := range s.Trials {
		ts := summary.Of(r)
		out[i] = TrialOf(&ts)
	}
	return out
}

// Pool is the result of a series at a step over its trials: the trials'
// records merged as trials that ran in turn (stats.InTurn: their times
// add up, the concurrency is a trial's), its Summary with the median
// requests/sec and the intervals, from the trials' own summaries. precise,
// with --precision, says whether the interval got within the precision
// asked.
func Pool(runs []*summary.Run, precise *bool) (summary.Summary, *stats.Record, error) {
	recs := make([]*stats.Record, len(runs))
	ts := make([]trials.Trial, len(runs))
	for i, r := range runs {
		recs[i], ts[i] = r.Record, TrialOf(&r.Summary)
	}
	m, err := stats.MergeAs(stats.InTurn, recs...)
	if err != nil {
		return summary.Summary{}, nil, err
	}
	s := summary.Of(m)
	s.Repeated = &summary.Repeated{Trials: recs, Precise: precise, PooledRequestsPerSecond: s.RequestsPerSecond}
	sum := trials.Summarize(ts)
	s.RequestsPerSecond = sum.RequestsPerSecond.Median
	s.RequestsPerSecondCI95 = sum.RequestsPerSecond.Interval()
	s.P50Ms, s.P50MsCI95 = sum.P50Ms.Median, sum.P50Ms.Interval()
	s.P99Ms, s.P99MsCI95 = sum.P99Ms.Median, sum.P99Ms.Interval()
	s.MeanMs, s.MeanMsCI95 = sum.MeanMs.Median, sum.MeanMs.Interval()
	s.MaxMs, s.MaxMsCI95 = sum.MaxMs.Median, sum.MaxMs.Interval()
	s.Confidence = sum.RequestsPerSecond.Confidence
	return s, m, nil
}
