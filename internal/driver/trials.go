package driver

import (
	"context"
	"errors"
	"fmt"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// ErrNoTrial is RunTrials' error when it was interrupted before any trial
// ended.
var ErrNoTrial = errors.New("driver: interrupted before a trial ended")

// RunTrials runs trials of plan, one series alone (bench's --repeat): each
// a fresh run after its own warm-up (DefaultWarmup), as many as tp says,
// with o. Every trial too short to trust gets a note (trials.ShortTrialNote);
// unless o.Quiet, each trial's figures and its note are printed on
// o.Stderr as it ends. It returns the trials: their runs, the pooled run
// (whose summary carries the notes and whether the run was interrupted)
// and the medians; with trials run until their comparisons against a
// saved run are decided (tp.Until, tp.Saved), how they ended, in a note
// too. An error of the run is the executor's, unwrapped.
func RunTrials(ctx context.Context, plan *execute.Plan, tp *trials.Plan, o execute.Options) (*Trials, error) {
	stderr := o.Stderr
	var shortNotes []string
	kept := 0
	res, err := Run(ctx, Config{
		Schedule: Levels{{}},
		Trials:   tp,
		Warmup:   DefaultWarmup(plan.Requests, plan.Duration),
		Options:  o,
		// The first warm-up checks that the target answers and prepares
		// the process (file limit, scheduling, threads) for every run.
		Prepare: func() *execute.Setup { return execute.Prepare(plan, plan.Concurrency, o.Quiet, stderr) },
		OnTrial: func(t Trial) {
			kept++
			note := trials.ShortTrialNote(fmt.Sprintf("trial %d", t.K), stats.TrialOf(t.Summary))
			if note != "" {
				shortNotes = append(shortNotes, note)
			}
			if !o.Quiet {
				fmt.Fprintf(stderr, "Trial %d: %.2f requests/sec, p99 %.3f ms, %d failed\n", t.K, t.Summary.RequestsPerSecond, t.Summary.Percentiles["99"], t.Summary.Failed)
				if note != "" {
					fmt.Fprintf(stderr, "Note: %s\n", note)
				}
			}
		},
	}, []Series{{Plan: plan}})
	if re := (*RunError)(nil); errors.As(err, &re) {
		err = re.Err // one series, unnamed
	}
	if err != nil {
		return nil, err
	}
	sr := &res.Series[0]
	if len(sr.Trials) == 0 {
		return nil, ErrNoTrial
	}
	t := sr.Trials[0]
	pooled := &t.Pooled.Summary
	pooled.Interrupted = res.Interrupted
	if len(shortNotes) > 0 {
		n := shortNotes[0]
		if len(shortNotes) > 1 {
			n = fmt.Sprintf("%d of %d trials were too short to trust (the first: %s)", len(shortNotes), kept, n)
		}
		pooled.Notes = append(pooled.Notes, n)
	}
	if t.Until = res.Until; t.Until != nil {
		pooled.Notes = append(pooled.Notes, t.Until.SavedText(tp.Budget.Seconds(), tp.MaxRepeat, tp.SavedMetrics()))
	}
	return t, nil
}

// JudgeSLO adds to the pooled run's summary the verdicts of objectives
// objs (capacity.JudgeSummary), the achieved requests/sec of a closed run
// being the trials' median.
func (t *Trials) JudgeSLO(objs []capacity.Objective) {
	capacity.JudgeSummary(&t.Pooled.Summary, t.Medians.RequestsPerSecond.Median, objs)
}
