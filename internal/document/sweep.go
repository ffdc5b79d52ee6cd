package document

import (
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// Sweep is the result of a concurrency sweep as the sweep renderers see it:
// one SweepSeries per series, each with a Summary per level it ran.
type Sweep struct {
	// Kind is KindSweep (set by Write).
	Kind Kind `json:"kind"`
	// Levels are the concurrency levels asked for, in order.
	Levels []int `json:"levels"`
	// RequestsPerLevel is -n (0 with a time limit alone).
	RequestsPerLevel int64 `json:"requests_per_level"`
	// SecondsPerLevel is -t in seconds (0 if none).
	SecondsPerLevel float64 `json:"seconds_per_level"`
	// StopErrorRate is the stop rule's bound, a ratio from 0 to 1; absent
	// (null) when there is no stop rule.
	StopErrorRate *float64 `json:"stop_error_rate"`
	// TimeTaken is the sweep's wall time, warm-ups included, in seconds.
	TimeTaken float64 `json:"time_taken_seconds"`
	// Series holds the series in the order they were given.
	Series []SweepSeries `json:"series"`
	// Interrupted reports a sweep stopped by a signal.
	Interrupted bool `json:"interrupted"`
	// SweepTrials is set for a sweep of repeated trials.
	*SweepTrials
	// Meta is what Read found (not saved).
	Meta Meta `json:"-"`
}

// SweepSeries is one series of a sweep.
type SweepSeries struct {
	// Label names the series.
	Label string `json:"label"`
	// Backend names the series' backend, the LABEL of LABEL=URL (absent
	// for an unlabelled URL): series of one backend differ in how they
	// reach it, and are compared by what differs.
	Backend string `json:"backend,omitempty"`
	// Target is what the series measured.
	Target stats.TargetInfo `json:"target"`
	// KeepAlive reports whether the series kept connections open.
	KeepAlive bool `json:"keep_alive"`
	// Levels holds one Summary per level run, in order.
	Levels []stats.Summary `json:"levels"`
	// Records holds the run record of every level, in the order of
	// Levels (absent when not known).
	Records []*stats.Record `json:"records,omitempty"`
	// Stop is set when the stop rule ended the series early.
	Stop *SweepStop `json:"stopped,omitempty"`
	// SLOHighestPass is the highest level at which every --slo objective
	// held (each level's verdicts are its Summary's SLO); 0 when none did,
	// absent without objectives.
	SLOHighestPass *int `json:"slo_highest_passing_level,omitempty"`
}

// SweepStop says where and why a series was stopped.
type SweepStop struct {
	// Concurrency is the level at which the rule fired (the last one run).
	Concurrency int `json:"concurrency"`
	// ErrorRate is the failure ratio of that level, from 0 to 1.
	ErrorRate float64 `json:"error_rate"`
	// Reason is a sentence for the user.
	Reason string `json:"reason"`
}

// Comparison returns the requests/sec comparison of series label against
// the baseline at a level, or nil.
func (sw *Sweep) Comparison(label string, level int) *trials.Comparison {
	if sw.SweepTrials == nil {
		return nil
	}
	for i := range sw.Comparisons {
		c := &sw.Comparisons[i]
		if c.Series == label && c.Baseline == sw.Baseline && c.Concurrency == level && c.Metric == trials.MetricRequestsPerSecond {
			return c
		}
	}
	return nil
}
