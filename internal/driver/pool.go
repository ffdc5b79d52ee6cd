package driver

import (
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// Trials is a series' result at a step over its trials, each figure kept
// for what it is: the trials' runs (each record with its own summary),
// the pooled run (their records merged as trials that ran in turn,
// stats.InTurn, with that record's own summary, never overwritten) and
// the trials' medians with their intervals.
type Trials struct {
	// Runs are the trials, in the order they ran.
	Runs []*stats.Run
	// Pooled is the trials' records merged and its own summary: the
	// figures of ab's report.
	Pooled stats.Run
	// Medians are the medians of the trials' figures with their 95%
	// intervals: the figures the comparisons judge.
	Medians trials.Summary
	// Precise, with --precision, says whether the requests/sec interval
	// got within the precision asked.
	Precise *bool
	// Until, with bench's trials run until decided (RunTrials), says how
	// they ended.
	Until *trials.Stopping
}

// Pool pools a series' trials at a step (see Trials). precise, with
// --precision, says whether the interval got within the precision asked.
func Pool(runs []*stats.Run, precise *bool) (*Trials, error) {
	recs := make([]*stats.Record, len(runs))
	ts := make([]trials.Trial, len(runs))
	for i, r := range runs {
		recs[i], ts[i] = r.Record, stats.TrialOf(&r.Summary)
	}
	m, err := stats.MergeAs(stats.InTurn, recs...)
	if err != nil {
		return nil, err
	}
	return &Trials{Runs: runs, Pooled: stats.Run{Record: m, Summary: stats.SummaryOf(m)}, Medians: trials.Summarize(ts), Precise: precise}, nil
}

// Saved returns the result as a result of trials is saved (schema 1): the
// pooled summary with the trials' part (stats.Repeated: the trials'
// records, the medians and their intervals, the pooled requests/sec) and
// the median requests/sec as its RequestsPerSecond. It is a new value:
// t.Pooled.Summary stays the pooled run's own. A sweep's levels of trials
// (SeriesResult.Levels) are still saved in this form; bench's result of
// trials is written by the result model's codec (document.NewTrials);
// both through stats.SavedTrials.
func (t *Trials) Saved() stats.Summary {
	return stats.SavedTrials(t.Pooled.Summary, t.Runs, t.Medians, t.Precise, 0)
}
