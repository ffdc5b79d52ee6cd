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
//   - Each level of each series is one closed-model run (package execute) with
//     its own Recorder and fresh clients, preceded by a short warm-up run at
//     the same concurrency whose results are thrown away.
//   - A stop rule ends a series after a level whose failure ratio passes a
//     bound; the result says at which level and why. The other series go on.
//
// The package knows no protocol and reads no flags: series arrive as
// execute.Plan values, and results leave as one stats.Record and its
// stats.Summary per series and level. The runs are the driver's
// (internal/driver): this package holds what is a sweep's own and turns a
// Config into the driver's schedule (driver.Concurrencies) and rules; the
// warm-up, the interleaving, the trials and the stop rule are the
// driver's. A sweep's own: its Config (its levels read by
// load.ParseLevels, the grammar a study file's shares) and its one
// preparation of the process (Config.Prepare), which targets can be
// reached (CheckSockets before, Unreachable after), the factors of its
// series (FactorsOf, PlanFactors, FactorWords) and their comparisons
// (Comparisons: the one-factor pairs of trials.Pairs at every level,
// with their notes), the note of its short trials (ShortTrials), and
// --slo's judgement of every level (Judge).
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
	"io"
	"time"

	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/trials"
)

// Series is one line of the sweep: a label and the plan of its runs (whose
// concurrency, request budget and time limit each level replaces).
type Series = driver.Series

// Config configures a sweep.
type Config struct {
	// Levels are the concurrency levels, strictly increasing (see
	// load.ParseLevels).
	Levels []int
	// Requests is the number of measured requests per level; 0 means no
	// count limit (Duration is then required).
	Requests int64
	// Duration is the time limit of one level; 0 means none.
	Duration time.Duration
	// Warmup bounds the warm-up run before each level (not counted);
	// the zero Warmup: none (driver.DefaultWarmup is the usual one).
	Warmup driver.Warmup
	// StopOnErrors turns the stop rule on: a series ends after the first
	// level whose failure ratio (stats.Summary.FailureRatio) is greater
	// than StopErrorRate (a ratio from 0 to 1; 0 stops at the first
	// failure), or where no request finished.
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
	// Trials, when not nil, runs every series Trials.Repeat times at
	// every level (or until Trials.Precision) in interleaved rounds, and
	// each level's result is the pooled trials' (driver.Pool).
	Trials *trials.Plan
	// OnTrial, if not nil, sees every measured run kept, once it ended.
	OnTrial func(driver.Trial)
}

// Progress describes the run that is starting, for a progress display.
type Progress = driver.Progress

// Stop says where and why the stop rule ended a series.
type Stop = driver.Stop

// SeriesResult is the outcome of one series: a Summary per level it ran,
// in level order.
type SeriesResult = driver.SeriesResult

// Result is the outcome of a sweep.
type Result = driver.Result

// Validate checks cfg and series without running anything.
func (cfg *Config) Validate(series []Series) error {
	if len(series) == 0 {
		return errors.New("sweep: no series")
	}
	if len(cfg.Levels) == 0 {
		return errors.New("sweep: no levels")
	}
	for i, v := range cfg.Levels {
		if v < 1 || v > load.MaxLevel || (i > 0 && v <= cfg.Levels[i-1]) {
			return fmt.Errorf("sweep: levels must increase from 1 to %d: %v", load.MaxLevel, cfg.Levels)
		}
	}
	if cfg.Requests <= 0 && cfg.Duration <= 0 {
		return errors.New("sweep: need a request count or a duration per level")
	}
	if cfg.Requests < 0 || cfg.Warmup.Requests < 0 || cfg.Duration < 0 || cfg.Warmup.Duration < 0 {
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

// Prepare prepares the process for every run of the sweep (the file
// limit for its highest level, scheduling, threads: execute.Prepare, from
// the first series' plan), saying what it did on stderr unless quiet. The
// caller calls its Done once the sweep ended, and passes it as
// cfg.Options.Setup (Run prepares quietly when it has none).
func (cfg *Config) Prepare(series []Series, quiet bool, stderr io.Writer) *execute.Setup {
	return execute.Prepare(series[0].Plan, cfg.Levels[len(cfg.Levels)-1], quiet, stderr)
}

// Run runs the sweep. It returns an error only for a bad configuration or
// when a client cannot be made; failures of the backend are data in the
// summaries (and may trigger the stop rule).
func Run(ctx context.Context, cfg Config, series []Series) (Result, error) {
	if err := cfg.Validate(series); err != nil {
		return Result{}, err
	}
	if cfg.Options.Setup == nil {
		setup := cfg.Prepare(series, true, nil)
		defer setup.Done()
		cfg.Options.Setup = setup
	}
	// Measured levels sample the backend; a lost backend ends its series;
	// an unreachable one is data for the sweep to judge.
	cfg.Options.Observe = true
	cfg.Options.Announce = false
	res, err := driver.Run(ctx, driver.Config{
		Schedule:     driver.Concurrencies(cfg.Levels, cfg.Requests, cfg.Duration),
		Trials:       cfg.Trials,
		Warmup:       cfg.Warmup,
		StopOnErrors: cfg.StopOnErrors, StopErrorRate: cfg.StopErrorRate,
		StopOnLoss: true, KeepOnUnreachable: true, EndUnreachable: cfg.EndUnreachable,
		Options: cfg.Options, Progress: cfg.Progress, OnTrial: cfg.OnTrial,
	}, series)
	var re *driver.RunError
	if errors.As(err, &re) {
		err = fmt.Errorf("sweep: %w", err)
	}
	return res, err
}
