// Package sweep runs concurrency sweeps: the same load against several
// series (targets, or one target with and without keep-alive) at a rising
// list of concurrency levels, as the 2008 study this tool descends from did
// (concurrency 1 to 500 in steps of 10, 1000 requests per level).
//
// What it does:
//
//   - Levels of all series are interleaved: level 1 of every series, then
//     the next level of every series, so that drift of the machine (thermal
//     throttling, a noisy neighbour) hits all series alike.
//   - Each level of each series is one closed-model run (package run) with
//     its own Recorder and fresh clients, preceded by a short warm-up run at
//     the same concurrency whose results are thrown away.
//   - A stop rule ends a series after a level whose failure ratio passes a
//     bound; the result says at which level and why. The other series go on.
//
// The package knows no protocol and reads no flags: series arrive as
// execute.Plan values, every run (warm-up or measured) goes through
// execute.Run like bench's, and results leave as one stats.Record and its
// summary.Summary per series and level.
//
// Limits: connections are not carried from the warm-up into the measured run
// (each run dials its own), so with keep-alive the first request of every
// worker pays a connect; every level keeps its histograms only until its
// Summary is made, so memory does not grow with the number of levels.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/summary"
)

// Series is one line of the sweep: a label and the plan of its runs (whose
// concurrency, request budget and time limit each level replaces).
type Series struct {
	// Label names the series in reports (e.g. "fcgi-unix ka").
	Label string
	// Plan is what every run of the series sends; the backend it names
	// (Plan.BackendPIDs, Plan.FPMStatus) is sampled during each measured
	// level.
	Plan *execute.Plan
}

// Config configures a sweep.
type Config struct {
	// Levels are the concurrency levels, strictly increasing (see
	// ParseLevels).
	Levels []int
	// Requests is the number of measured requests per level; 0 means no
	// count limit (Duration is then required).
	Requests int64
	// Duration is the time limit of one level; 0 means none.
	Duration time.Duration
	// WarmupRequests and WarmupDuration bound the warm-up run before each
	// level (not counted). Both 0: no warm-up.
	WarmupRequests int64
	WarmupDuration time.Duration
	// StopOnErrors turns the stop rule on: a series ends after the first
	// level whose failure ratio (failed / finished requests) is greater
	// than StopErrorRate (a ratio from 0 to 1; 0 stops at the first
	// failure).
	StopOnErrors  bool
	StopErrorRate float64
	// EndUnreachable ends the sweep after the first level when no series
	// could reach its target (SeriesResult.Unreachable).
	EndUnreachable bool
	// Progress, if not nil, is called from the sweep's goroutine at the
	// start of every run (warm-up or measured).
	Progress func(Progress)
	// Options are the executor's options for every run (Stderr,
	// Verbosity, Version, Setup). Without a Setup, Run makes one (the file
	// limit for the highest level) and checks no target.
	Options execute.Options
}

// Progress describes the run that is starting, for a progress display.
type Progress struct {
	// Series is the label of the series; SeriesIndex its index.
	Series      string
	SeriesIndex int
	// Concurrency is the level; LevelIndex its index in Config.Levels.
	Concurrency int
	LevelIndex  int
	// Warmup reports a warm-up run.
	Warmup bool
	// Requests is the run's request budget (0 with a time limit alone) and
	// Duration its time limit (0 if none).
	Requests int64
	Duration time.Duration
	// Start is when the run started, in load.Now nanoseconds.
	Start int64
	// Done returns how many requests the run has finished so far; it may
	// be called from any goroutine until the next Progress call.
	Done func() int64
	// RunsDone counts the measured runs finished so far; RunsLeft the
	// measured runs still planned, this one included (a stopped series
	// drops its remaining levels).
	RunsDone, RunsLeft int
}

// Stop says where and why the stop rule ended a series.
type Stop struct {
	// Concurrency is the last level the series ran (the one that failed).
	Concurrency int
	// ErrorRate is that level's failure ratio, from 0 to 1.
	ErrorRate float64
	// Reason is a sentence for the user.
	Reason string
}

// SeriesResult is the outcome of one series: a Summary per level it ran, in
// level order.
type SeriesResult struct {
	// Label is the series' label.
	Label string
	// Levels holds one Summary per level run.
	Levels []summary.Summary
	// Records holds the Record of every level run, beside Levels.
	Records []*stats.Record
	// Stop is set when the stop rule ended the series early, or when its
	// backend was lost during a level (the level's Summary.BackendLost).
	Stop *Stop
	// Unreachable is the dial error of a series whose first level made no
	// connection to its target at all (see Config.EndUnreachable).
	Unreachable error
}

// Result is the outcome of a sweep.
type Result struct {
	// Series holds one result per series, in the order given.
	Series []SeriesResult
	// Elapsed is the sweep's wall time, warm-ups included.
	Elapsed time.Duration

	// Interrupted reports that ctx was cancelled: the level in progress is
	// kept (its Summary is marked Interrupted) and later ones are not run.
	Interrupted bool
}

// Validate checks cfg and series without running anything.
func (cfg *Config) Validate(series []Series) error {
	if len(series) == 0 {
		return errors.New("sweep: no series")
	}
	if len(cfg.Levels) == 0 {
		return errors.New("sweep: no levels")
	}
	for i, v := range cfg.Levels {
		if v < 1 || v > MaxLevel || (i > 0 && v <= cfg.Levels[i-1]) {
			return fmt.Errorf("sweep: levels must increase from 1 to %d: %v", MaxLevel, cfg.Levels)
		}
	}
	if cfg.Requests <= 0 && cfg.Duration <= 0 {
		return errors.New("sweep: need a request count or a duration per level")
	}
	if cfg.Requests < 0 || cfg.WarmupRequests < 0 || cfg.Duration < 0 || cfg.WarmupDuration < 0 {
		return errors.New("sweep: negative request count or duration")
	}
	if cfg.StopOnErrors && !(cfg.StopErrorRate >= 0 && cfg.StopErrorRate <= 1) {
		return fmt.Errorf("sweep: stop error rate %v is not a ratio from 0 to 1", cfg.StopErrorRate)
	}
	for i, s := range series {
		if s.Plan == nil {
			return fmt.Errorf("sweep: series %d (%q) has no plan, so no client factory", i, s.Label)
		}
	}
	return nil
}

// Run runs the sweep. It returns an error only for a bad configuration or
// when a client cannot be made; failures of the backend are data in the
// summaries (and may trigger the stop rule).
func Run(ctx context.Context, cfg Config, series []Series) (res Result, err error) {
	if err := cfg.Validate(series); err != nil {
		return Result{}, err
	}
	res = Result{Series: make([]SeriesResult, len(series))}
	for i, s := range series {
		res.Series[i].Label = s.Label
	}
	start := load.Now()
	defer func() { res.Elapsed = time.Duration(load.Now() - start) }()
	if cfg.Options.Setup == nil {
		setup := execute.Prepare(series[0].Plan, cfg.Levels[len(cfg.Levels)-1], true, nil)
		defer setup.Done()
		cfg.Options.Setup = setup
	}
	active := make([]bool, len(series))
	for i := range active {
		active[i] = true
	}
	nActive := len(series)
	runsDone := 0
	for li, level := range cfg.Levels {
		for si := range series {
			if !active[si] {
				continue
			}
			s := &series[si]
			p := Progress{Series: s.Label, SeriesIndex: si, Concurrency: level, LevelIndex: li,
				RunsDone: runsDone, RunsLeft: nActive*(len(cfg.Levels)-li) - countBefore(active, si)}
			if cfg.WarmupRequests > 0 || cfg.WarmupDuration > 0 {
				p.Warmup, p.Requests, p.Duration = true, cfg.WarmupRequests, cfg.WarmupDuration
				w, err := runOnce(ctx, &cfg, p, s)
				if err != nil {
					return res, fmt.Errorf("sweep: %s at concurrency %d: %w", s.Label, level, err)
				}
				if stopLost(&res.Series[si], w, nil, level, li) {
					active[si] = false
					nActive--
					continue
				}
				if ctx.Err() != nil {
					res.Interrupted = true
					return res, nil
				}
			}
			p.Warmup, p.Requests, p.Duration = false, cfg.Requests, cfg.Duration
			rec, err := runOnce(ctx, &cfg, p, s)
			if err != nil {
				return res, fmt.Errorf("sweep: %s at concurrency %d: %w", s.Label, level, err)
			}
			runsDone++
			sr := &res.Series[si]
			sum := summary.Of(rec)
			sr.Levels = append(sr.Levels, sum)
			sr.Records = append(sr.Records, rec)
			if sum.Interrupted || ctx.Err() != nil {
				res.Interrupted = true
				return res, nil
			}
			if stopLost(sr, rec, &sum, level, li) {
				active[si] = false
				nActive--
				continue
			}
			if cfg.StopOnErrors {
				if st := stopRule(&sum, cfg.StopErrorRate); st != nil {
					sr.Stop = st
					active[si] = false
					nActive--
				}
			}
		}
		if nActive == 0 || li == 0 && cfg.EndUnreachable && allUnreachable(res.Series) {
			break
		}
	}
	return res, nil
}

// countBefore counts the active series before index si: their runs at the
// current level are already done.
func countBefore(active []bool, si int) int {
	n := 0
	for _, a := range active[:si] {
		if a {
			n++
		}
	}
	return n
}

// allUnreachable reports whether no series could reach its target.
func allUnreachable(series []SeriesResult) bool {
	for _, sr := range series {
		if sr.Unreachable == nil {
			return false
		}
	}
	return true
}

// stopLost ends series sr after a run at level (index li, its record w)
// whose target was lost (sum, nil for a warm-up, is the level's Summary);
// false when it was
// not. A target that no dial of the first level reached is noted in
// sr.Unreachable, and the series goes on (its failures are data).
func stopLost(sr *SeriesResult, w *stats.Record, sum *summary.Summary, level, li int) bool {
	if err := w.Unreachable; err != nil && li == 0 && sr.Unreachable == nil {
		sr.Unreachable = err
	}
	lost := w.BackendLost
	if lost == nil {
		return false
	}
	st := &Stop{Concurrency: level, ErrorRate: 1, Reason: lost.String()}
	if sum != nil {
		st.ErrorRate = ErrorRate(sum)
	}
	sr.Stop = st
	return true
}

// runOnce runs one run of series s as p describes and returns its Record
// (with counts only for a warm-up).
func runOnce(ctx context.Context, cfg *Config, p Progress, s *Series) (*stats.Record, error) {
	plan := *s.Plan
	plan.Concurrency, plan.Requests, plan.Duration = p.Concurrency, p.Requests, p.Duration
	o := cfg.Options
	o.Observe, o.Discard = !p.Warmup, p.Warmup
	o.Announce, o.Progress, o.KeepRows, o.Raw = false, nil, false, nil
	// A lost backend ends the series; an unreachable one is data for the
	// sweep to judge (Config.EndUnreachable).
	o.StopOnLoss, o.KeepOnUnreachable = true, true
	o.Started = func(done func() int64) {
		p.Start, p.Done = load.Now(), done
		if cfg.Progress != nil {
			cfg.Progress(p)
		}
	}
	return execute.Run(ctx, &plan, o)
}

// ErrorRate returns the failure ratio of a level: failed requests over the
// requests that finished (a Length failure is also complete, so it is
// counted once). It is 1 when no request finished at all.
func ErrorRate(s *summary.Summary) float64 {
	finished := s.Finished()
	if finished <= 0 {
		return 1
	}
	return float64(s.Failed) / float64(finished)
}

// stopRule returns the Stop of a level whose failure ratio passes bound, or
// nil.
func stopRule(s *summary.Summary, bound float64) *Stop {
	rate := ErrorRate(s)
	if rate <= bound {
		return nil
	}
	var b strings.Builder
	finished := s.Finished()
	if finished <= 0 {
		fmt.Fprintf(&b, "no request finished at concurrency %d", s.Concurrency)
	} else {
		fmt.Fprintf(&b, "%d of %d requests failed at concurrency %d (ratio %.3g > %g)",
			s.Failed, finished, s.Concurrency, rate, bound)
	}
	f := s.Failures.ByClass()
	var kinds []string
	for c := load.ErrClass(1); c < load.NumClasses; c++ {
		if f[c] > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d", c, f[c]))
		}
	}
	if len(kinds) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(kinds, ", "))
	}
	if len(s.ErrorSamples) > 0 {
		fmt.Fprintf(&b, " (%s)", s.ErrorSamples[0].Message)
	}
	return &Stop{Concurrency: s.Concurrency, ErrorRate: rate, Reason: b.String()}
}
