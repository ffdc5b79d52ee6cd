// Package driver runs everything that makes more than one record: a set of
// series (one execute.Plan each) over a schedule of steps. bench's
// --repeat and --precision, sweep (with and without trials) and capacity's
// search all run through Run; package main only builds the series and the
// schedule and renders the Result.
//
// What it does, once for every command:
//
//   - The schedule (Schedule) says which step comes next: a fixed list of
//     levels (Levels: sweep, bench --repeat), or a capacity search that
//     picks the next level from the records so far (Capacity).
//   - At each step every active series runs one trial, or with a
//     trials.Plan N trials in interleaved rounds (trial k of every series
//     before trial k+1 of any, the order within a round shuffled by the
//     plan's seed), or rounds until the precision asked (--precision).
//     Without a trials.Plan the series run in the order given.
//   - The warm-up rule: before every trial, an uncounted run of the same
//     plan at the same step, bounded by Warmup (DefaultWarmup: a tenth of
//     the measured requests, or of the time limit), with no more workers
//     than it has requests.
//   - The stop rule, after each step: a series whose backend was lost
//     (StopOnLoss) ends; a series whose failure ratio
//     (stats.Summary.FailureRatio) at the step passes the bound, or that
//     finished no request there, ends (StopOnErrors); when no series
//     reached its target at the first step the run ends (EndUnreachable).
//   - Before a step that asks for it (Step.Settle), the driver waits for
//     the backend to work off the queue the last step left (settle).
//
// Every run, warm-up, measured or settling, goes through execute.Run.
//
// Limits: connections are not carried from one run into the next (each
// run dials its own); the Result keeps every measured record in memory.
package driver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// Series is one line of a multi-run command: a label and the plan of its
// runs (whose concurrency, rate, request budget and time limit each step
// may replace).
type Series struct {
	// Label names the series in reports (e.g. "fcgi-unix ka").
	Label string
	// Plan is what every run of the series sends; the backend it names
	// (Plan.BackendPIDs, Plan.FPMStatus) is sampled during each measured
	// run when Options.Observe is set.
	Plan *execute.Plan
}

// Step is one level of a schedule: what every active series runs there.
type Step struct {
	// Concurrency, when above 0, replaces the plan's concurrency (-c).
	Concurrency int
	// Rate, when above 0, replaces the plan's arrival rate (--rate, in
	// requests per second).
	Rate float64
	// Requests and Duration, when either is not 0, replace the plan's
	// request budget (-n; 0: no count limit) and time limit (-t; 0: none)
	// together.
	Requests int64
	Duration time.Duration
	// Windows is execute.Options.Windows of the step's measured runs.
	Windows int
	// Settle, when above 0, makes the driver wait before the step until
	// the backend answers two requests in a row within Settle each (see
	// settle), for at most SettleFor (0: SettleMax; never more).
	Settle, SettleFor time.Duration
}

// apply returns plan p with the step's settings.
func (st *Step) apply(p execute.Plan) execute.Plan {
	if st.Concurrency > 0 {
		p.Concurrency = st.Concurrency
	}
	if st.Rate > 0 {
		p.Rate = st.Rate
	}
	if st.Requests != 0 || st.Duration != 0 {
		p.Requests, p.Duration = st.Requests, st.Duration
	}
	return p
}

// Schedule picks the steps of a run.
type Schedule interface {
	// Next returns the next step, from the result so far (res.Steps: the
	// steps run; each series' Levels and Records), or false when the
	// schedule is done.
	Next(res *Result) (Step, bool)
	// Len is the number of steps planned, for progress; 0 when not known.
	Len() int
}

// Levels is a schedule of a fixed list of steps.
type Levels []Step

// Next returns the step after those run.
func (l Levels) Next(res *Result) (Step, bool) {
	if i := len(res.Steps); i < len(l) {
		return l[i], true
	}
	return Step{}, false
}

// Len is the number of steps.
func (l Levels) Len() int { return len(l) }

// Concurrencies is the schedule of a sweep: one step per concurrency
// level, each with the request budget requests and the time limit d.
func Concurrencies(levels []int, requests int64, d time.Duration) Levels {
	out := make(Levels, len(levels))
	for i, c := range levels {
		out[i] = Step{Concurrency: c, Requests: requests, Duration: d}
	}
	return out
}

// Warmup bounds the uncounted run before every trial: Requests requests
// (0: no count limit) within Duration (0: none). Both 0: no warm-up.
type Warmup struct {
	Requests int64
	Duration time.Duration
}

// DefaultWarmup is the warm-up of a run of requests requests (0: none)
// within d: a tenth of the requests, at least 1, or with a time limit
// alone a tenth of it.
func DefaultWarmup(requests int64, d time.Duration) Warmup {
	if requests > 0 {
		return Warmup{Requests: max(requests/10, 1)}
	}
	return Warmup{Duration: d / 10}
}

// On reports a warm-up to run.
func (w Warmup) On() bool { return w.Requests > 0 || w.Duration > 0 }

// apply returns plan p cut to the warm-up: its budget, and no more
// workers than it has requests (a worker without a request would only
// make a client).
func (w Warmup) apply(p execute.Plan) execute.Plan {
	p.Requests, p.Duration = w.Requests, w.Duration
	if w.Requests > 0 {
		p.Concurrency = int(min(int64(p.Concurrency), w.Requests))
	}
	return p
}

// Config configures a run of the driver.
type Config struct {
	// Schedule picks the steps (required).
	Schedule Schedule
	// Trials, when not nil, runs every series Trials.Repeat times at
	// every step (or until Trials.Precision), in interleaved rounds
	// shuffled by Trials.Seed; each step's result is then the pooled
	// trials' (Pool). Nil: one run per series and step, in order, whose
	// record is the step's result.
	Trials *trials.Plan
	// Warmup is run before every trial (see Warmup).
	Warmup Warmup
	// StopOnErrors turns the stop rule on: a series ends after the first
	// step whose failure ratio (stats.Summary.FailureRatio) is greater
	// than StopErrorRate (a ratio from 0 to 1; 0 stops at the first
	// failure), or where no request finished.
	StopOnErrors  bool
	StopErrorRate float64
	// StopOnLoss ends a run when its backend is lost (execute.Watch), and the
	// series after that step.
	StopOnLoss bool
	// KeepOnUnreachable keeps the record of a run that reached nothing
	// (its failures are data; SeriesResult.Unreachable says so) instead of
	// returning its execute.UnreachableError.
	KeepOnUnreachable bool
	// EndUnreachable ends the run after the first step when no series
	// reached its target (needs KeepOnUnreachable).
	EndUnreachable bool
	// Options are the executor's options of the measured runs; the
	// warm-ups and settling runs take Stderr, Verbosity, Setup, Version
	// and Privacy from them. Announce and StartAt apply to the first run
	// only; Progress, KeepRows and Raw are not used (one line per trial
	// or step instead).
	Options execute.Options
	// Prepare, when not nil and Options.Setup is nil, makes the setup of
	// every run after the first (which checks the target and makes its
	// own); the driver calls its Done at the end.
	Prepare func() *execute.Setup
	// Progress, if not nil, is called at the start of every run (warm-up
	// or measured).
	Progress func(Progress)
	// OnTrial, if not nil, sees every measured run kept, once it ended.
	OnTrial func(Trial)
}

// Progress describes the run that is starting, for a progress display.
type Progress struct {
	// Series is the label of the series (with " trial K" when trials
	// run); SeriesIndex its index.
	Series      string
	SeriesIndex int
	// Concurrency is the step's concurrency; LevelIndex the step's index.
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
	// drops its remaining steps).
	RunsDone, RunsLeft int
}

// Trial is one measured run, as OnTrial sees it.
type Trial struct {
	// Series is the index of the series, Level the step's index and K
	// the trial's number at that step, from 1.
	Series, Level, K int
	// Record is the run's record and Summary its summary.
	Record  *stats.Record
	Summary *stats.Summary
}

// Stop says where and why the stop rule ended a series.
type Stop struct {
	// Concurrency is the last level the series ran (the one that failed).
	Concurrency int
	// ErrorRate is that level's failure ratio, from 0 to 1 (1 when no
	// request finished, or when the backend was lost in a warm-up).
	ErrorRate float64
	// Reason is a sentence for the user.
	Reason string
}

// SeriesResult is the outcome of one series: a Summary per step it ran,
// in order.
type SeriesResult struct {
	// Label is the series' label.
	Label string
	// Levels holds one Summary per step run (with trials, the pooled
	// trials').
	Levels []stats.Summary
	// Records holds the Record of every step run, beside Levels (with
	// trials, the trials' merged).
	Records []*stats.Record
	// Trials, with trials, holds every step's trials beside Levels: the
	// runs, the pooled run with its own summary and the medians, each
	// kept apart (Levels holds their saved form, Trials.Saved).
	Trials []*Trials
	// Stop is set when the stop rule ended the series early, or when its
	// backend was lost during a step (the step's Summary.BackendLost).
	Stop *Stop
	// Unreachable is the dial error of a series whose runs of the first
	// step made no connection to its target at all (see
	// Config.KeepOnUnreachable).
	Unreachable error
}

// Result is the outcome of a run of the driver.
type Result struct {
	// Series holds one result per series, in the order given.
	Series []SeriesResult
	// Steps are the steps run, in order.
	Steps []Step
	// Orders holds, with trials, the order of the series (their indexes)
	// in every round of every step, in the order run.
	Orders [][]int
	// Elapsed is the run's wall time, warm-ups included.
	Elapsed time.Duration
	// Interrupted reports that ctx was cancelled: with one run per step,
	// the run in progress is kept (its Summary is marked Interrupted);
	// with trials, the trial in progress is dropped and the step's other
	// trials are pooled. Later steps are not run.
	Interrupted bool
	// Notes are what the user should know of the trials (a series whose
	// interval stayed wider than the precision asked).
	Notes []string
	// Until, with trials run until decided (trials.Plan.Until), says how
	// their rounds ended over all the steps: decided when every step's
	// pairs were, else budget when a step's share of the budget was
	// spent, else max_repeat (or no_series, interrupted); its Pairs and
	// Decided are summed over the steps, its Rounds the most at a step.
	Until *trials.Stopping
}

// RunError is a run that could not be made (a bad plan, a client that
// cannot be made, an unreachable target without KeepOnUnreachable): it
// ends the driver.
type RunError struct {
	// Series is the label of the series; Concurrency the step's.
	Series      string
	Concurrency int
	Err         error
}

// Error names the series and the step's concurrency.
func (e *RunError) Error() string {
	return fmt.Sprintf("%s at concurrency %d: %v", e.Series, e.Concurrency, e.Err)
}

// Unwrap returns the run's error (an execute.UnreachableError, a
// SetupError...).
func (e *RunError) Unwrap() error { return e.Err }

// driver is the state of one Run.
type driver struct {
	cfg      Config
	series   []Series
	res      *Result
	first    bool // no run made yet
	setup    *execute.Setup
	runsDone int
}

// Run runs every series over cfg.Schedule. It returns an error (a
// RunError) only when a run cannot be made; failures of the backend are
// data in the summaries (and may trigger the stop rule).
func Run(ctx context.Context, cfg Config, series []Series) (res Result, err error) {
	if cfg.Schedule == nil || len(series) == 0 {
		return res, errors.New("driver: want a schedule and at least one series")
	}
	for i, s := range series {
		if s.Plan == nil {
			return res, fmt.Errorf("driver: series %d (%q) has no plan", i, s.Label)
		}
	}
	if cfg.Trials != nil {
		if err := cfg.Trials.Validate(); err != nil {
			return res, fmt.Errorf("driver: %w", err)
		}
	}
	res = Result{Series: make([]SeriesResult, len(series))}
	for i, s := range series {
		res.Series[i].Label = s.Label
	}
	start := load.Now()
	defer func() {
		res.Elapsed = time.Duration(load.Now() - start)
		if res.Until != nil {
			res.Until.Seconds = res.Elapsed.Seconds()
		}
	}()
	d := &driver{cfg: cfg, series: series, res: &res, first: true, setup: cfg.Options.Setup}
	defer func() {
		if d.setup != nil && cfg.Options.Setup == nil {
			d.setup.Done()
		}
	}()
	var rounds *trials.Rounds
	if cfg.Trials != nil {
		rounds = trials.NewRounds(*cfg.Trials)
	}
	active := make([]int, len(series))
	for i := range active {
		active[i] = i
	}
	for li := 0; len(active) > 0; li++ {
		st, ok := cfg.Schedule.Next(&res)
		if !ok {
			break
		}
		res.Steps = append(res.Steps, st)
		if st.Settle > 0 {
			d.settle(ctx, series[active[0]].Plan, st.Settle, st.SettleFor)
		}
		lv := &level{index: li, step: st, active: active, runs: map[int][]*stats.Run{},
			unreached: map[int]error{}, reached: map[int]bool{}, lost: map[int]*Stop{}}
		var lr trials.LevelResult
		if rounds != nil {
			lr, err = rounds.StepTrials(active, max(cfg.Schedule.Len()-li, 1), func(si int) (trials.Trial, error) { return d.trial(ctx, lv, si) })
			res.Orders = append(res.Orders, lr.Orders...)
			if cfg.Trials.Until != "" {
				d.until(&lr, errors.Is(err, trials.ErrStop))
			}
		} else {
			for _, si := range active {
				if _, err = d.trial(ctx, lv, si); err != nil {
					break
				}
			}
		}
		stopped := errors.Is(err, trials.ErrStop)
		if err != nil && !stopped {
			return res, err
		}
		next, err := d.judge(lv, &lr, stopped)
		if err != nil {
			return res, err
		}
		if stopped {
			res.Interrupted = true
			return res, nil
		}
		active = next
		if li == 0 && cfg.EndUnreachable && allUnreachable(res.Series) {
			break
		}
	}
	return res, nil
}

// until adds the step whose rounds ended as lr says (stopped: by an
// interruption) to the result's Until.
func (d *driver) until(lr *trials.LevelResult, stopped bool) {
	u := d.res.Until
	if u == nil {
		u = &trials.Stopping{Stopped: trials.StoppedDecided, Confidence: d.cfg.Trials.Sequential().LookConfidence()}
		d.res.Until = u
	}
	u.Pairs += lr.Pairs
	u.Decided += lr.Decided
	u.Rounds = max(u.Rounds, lr.Rounds)
	why := lr.Stopped
	if stopped {
		why = trials.StoppedInterrupted
	}
	// The worst reason of any step: interrupted, budget, max_repeat,
	// no_series, decided.
	rank := map[string]int{trials.StoppedDecided: 0, trials.StoppedNoSeries: 1, trials.StoppedMaxRepeat: 2,
		trials.StoppedBudget: 3, trials.StoppedInterrupted: 4}
	if rank[why] > rank[u.Stopped] {
		u.Stopped = why
	}
}

// level is the state of one step of the run.
type level struct {
	index  int
	step   Step
	active []int
	// runs are each series' measured records kept at the step.
	runs map[int][]*stats.Run
	// unreached is the dial error of a series' runs that reached nothing;
	// reached marks a series one of whose measured runs reached its
	// target.
	unreached map[int]error
	reached   map[int]bool
	// lost is the Stop of a series whose backend was lost at the step.
	lost map[int]*Stop
	// done counts the measured runs made at the step.
	done int
}

// trial runs one trial of series si at step lv: its warm-up, then the
// measured run. It returns the run's figures for the rules of the
// rounds (its requests/sec NaN when the series has no trial to give),
// and trials.ErrStop when ctx ended the run.
func (d *driver) trial(ctx context.Context, lv *level, si int) (trials.Trial, error) {
	gone := trials.Trial{RequestsPerSecond: math.NaN()}
	if lv.lost[si] != nil {
		return gone, nil // its backend is gone: no more trials at this step
	}
	s := &d.series[si]
	plan := lv.step.apply(*s.Plan)
	k := len(lv.runs[si]) + 1
	p := Progress{Series: s.Label, SeriesIndex: si, Concurrency: plan.Concurrency, LevelIndex: lv.index,
		RunsDone: d.runsDone, RunsLeft: max(d.runsLeft(lv), 1)}
	if d.cfg.Trials != nil {
		p.Series = fmt.Sprintf("%s trial %d", s.Label, k)
	}
	if w := d.cfg.Warmup; w.On() {
		wp := w.apply(plan)
		p.Warmup, p.Requests, p.Duration = true, wp.Requests, wp.Duration
		o := execute.Options{Stderr: d.cfg.Options.Stderr, Quiet: true, Verbosity: d.cfg.Options.Verbosity,
			Version: d.cfg.Options.Version, Privacy: d.cfg.Options.Privacy, Discard: true}
		run, err := d.run(ctx, &wp, o, p)
		if err != nil {
			return gone, &RunError{Series: s.Label, Concurrency: plan.Concurrency, Err: err}
		}
		if rec := run.Record; rec.Unreachable != nil && lv.index == 0 {
			lv.unreached[si] = rec.Unreachable
		}
		if lost := run.Record.BackendLost; lost != nil && d.cfg.StopOnLoss {
			lv.lost[si] = &Stop{Concurrency: plan.Concurrency, ErrorRate: 1, Reason: lost.String()}
			return gone, nil
		}
		if ctx.Err() != nil {
			return gone, trials.ErrStop
		}
	}
	p.Warmup, p.Requests, p.Duration = false, plan.Requests, plan.Duration
	o := d.cfg.Options
	o.Windows = lv.step.Windows
	run, err := d.run(ctx, &plan, o, p)
	if err != nil {
		return gone, &RunError{Series: s.Label, Concurrency: plan.Concurrency, Err: err}
	}
	rec, sum := run.Record, run.Summary
	d.runsDone++
	lv.done++
	if rec.Unreachable != nil && lv.index == 0 {
		lv.unreached[si] = rec.Unreachable
	} else if rec.Unreachable == nil {
		lv.reached[si] = true
	}
	interrupted := rec.Interrupted || ctx.Err() != nil
	if interrupted && d.cfg.Trials != nil {
		// A trial cut short would drag its median: dropped.
		return gone, trials.ErrStop
	}
	lv.runs[si] = append(lv.runs[si], run)
	if d.cfg.OnTrial != nil && !interrupted {
		d.cfg.OnTrial(Trial{Series: si, Level: lv.index, K: k, Record: rec, Summary: &sum})
	}
	if interrupted {
		return gone, trials.ErrStop
	}
	if lost := rec.BackendLost; lost != nil && d.cfg.StopOnLoss {
		lv.lost[si] = &Stop{Concurrency: plan.Concurrency, ErrorRate: stopRatio(&sum), Reason: lost.String()}
	}
	return stats.TrialOf(&sum), nil
}

// run makes one run of plan with o; the first run of all waits for
// Options.StartAt and announces, and is followed by Prepare.
func (d *driver) run(ctx context.Context, plan *execute.Plan, o execute.Options, p Progress) (*stats.Run, error) {
	o.Setup = d.setup
	o.Progress, o.KeepRows, o.Raw = nil, false, nil
	o.StopOnLoss, o.KeepOnUnreachable = d.cfg.StopOnLoss, d.cfg.KeepOnUnreachable
	o.Announce = d.cfg.Options.Announce && !p.Warmup
	o.StartAt = time.Time{}
	if d.first {
		o.StartAt = d.cfg.Options.StartAt
	}
	o.Started = func(done func() int64) {
		p.Start, p.Done = load.Now(), done
		if d.cfg.Progress != nil {
			d.cfg.Progress(p)
		}
	}
	run, err := execute.Run(ctx, plan, o)
	if err != nil {
		return nil, err
	}
	if d.first {
		d.first = false
		if d.setup == nil && d.cfg.Prepare != nil {
			d.setup = d.cfg.Prepare()
		}
	}
	if !p.Warmup {
		// Announce once: the first measured run that got through.
		d.cfg.Options.Announce = false
	}
	return run, nil
}

// runsLeft is the number of measured runs still planned, the one
// starting included: a trial of every active series at every step left
// (its planned trials), less those done at this step.
func (d *driver) runsLeft(lv *level) int {
	per := 1
	if d.cfg.Trials != nil {
		per = d.cfg.Trials.Repeat
	}
	steps := max(d.cfg.Schedule.Len()-lv.index, 1)
	return len(lv.active)*steps*per - lv.done
}

// judge ends the step: it pools each series' trials (with trials) into
// the step's result and applies the stop rule; it returns the series that
// go on. stopped says the step was interrupted.
func (d *driver) judge(lv *level, lr *trials.LevelResult, stopped bool) ([]int, error) {
	imprecise := map[int]bool{}
	for _, si := range lr.Imprecise {
		imprecise[si] = true
	}
	var next []int
	for _, si := range lv.active {
		sr := &d.res.Series[si]
		if u := lv.unreached[si]; u != nil && !lv.reached[si] && sr.Unreachable == nil {
			sr.Unreachable = u
		}
		runs := lv.runs[si]
		if len(runs) == 0 {
			if st := lv.lost[si]; st != nil {
				sr.Stop = st
			} else if !stopped {
				next = append(next, si)
			}
			continue
		}
		sum, rec := runs[0].Summary, runs[0].Record
		if d.cfg.Trials != nil {
			var precise *bool
			if d.cfg.Trials.Precision > 0 && !stopped {
				ok := !imprecise[si]
				precise = &ok
				if !ok && lv.lost[si] == nil {
					d.res.Notes = append(d.res.Notes, fmt.Sprintf("%s at concurrency %d: the req/s interval is still wider than ±%g%% after %d trials",
						sr.Label, sum.Concurrency, 100*d.cfg.Trials.Precision, lr.Rounds))
				}
			}
			t, err := Pool(runs, precise)
			if err != nil {
				return nil, err
			}
			sum, rec = t.Saved(), t.Pooled.Record
			sr.Trials = append(sr.Trials, t)
		}
		sr.Levels, sr.Records = append(sr.Levels, sum), append(sr.Records, rec)
		if stopped {
			continue
		}
		if st := lv.lost[si]; st != nil {
			sr.Stop = st
			continue
		}
		if d.cfg.StopOnErrors {
			if st := stopRule(&sum, d.cfg.StopErrorRate, len(runs), d.cfg.Trials != nil); st != nil {
				sr.Stop = st
				continue
			}
		}
		next = append(next, si)
	}
	return next, nil
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

// stopRatio is the ratio the stop rule reads of a step: its failure
// ratio, or 1 when no request finished (nothing succeeded: the step is
// judged as failed throughout, where the failure ratio, which counts
// failures, is 0).
func stopRatio(s *stats.Summary) float64 {
	if s.Finished() <= 0 {
		return 1
	}
	return s.FailureRatio()
}

// stopRule returns the Stop of a step whose failure ratio passes bound,
// or where nothing finished, or nil; n is the number of trials pooled in
// s, named when trials runs.
func stopRule(s *stats.Summary, bound float64, n int, trials bool) *Stop {
	rate := stopRatio(s)
	if rate <= bound {
		return nil
	}
	var b strings.Builder
	finished := s.Finished()
	over := ""
	if trials {
		over = fmt.Sprintf(" over %d trials", n)
	}
	if finished <= 0 {
		fmt.Fprintf(&b, "no request finished%s at concurrency %d", over, s.Concurrency)
	} else {
		fmt.Fprintf(&b, "%d of %d requests failed%s at concurrency %d (ratio %.3g > %g)",
			s.Failed, finished, over, s.Concurrency, rate, bound)
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
