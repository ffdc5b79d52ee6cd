package driver

import (
	"context"
	"iter"
	"time"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/execute"
)

// Capacity is the schedule of a capacity search (capacity.Search): its
// next step is the level the search asks for after judging the records
// of the steps before. Run it with one series; then Result gives the
// search's outcome.
//
// The search is written as a loop that calls a step function; the
// schedule runs it as a coroutine (iter.Pull): the step function hands
// its level to Next and waits for the record of that step, which Next
// judges (capacity.FromSummary, capacity.Judge over the step's windows)
// when the driver asks for the step after it. So capacity.Search keeps
// its bisection, and the driver runs every step.
type Capacity struct {
	cfg  capacity.Config
	next func() (Step, bool)
	stop func()
	// pending says a step was handed out and its measure is due.
	pending bool
	// measure and measureErr are what the pending step's function returns.
	measure    capacity.Measure
	measureErr error
	result     capacity.Result
	err        error
	// quickest is the lowest median seen in a step, in ms: the backend's
	// latency when it has no queue, for settle's bound.
	quickest float64
	// settle is the Settle of the next step: set after a failing step.
	settle time.Duration
}

// settleSlack is added to twice the quickest median to bound a settled
// request.
const settleSlack = 2 * time.Millisecond

// NewCapacity returns the schedule of a search of cfg. ctx must be the
// driver's: the search reads it to tell an interruption from a failure.
func NewCapacity(ctx context.Context, cfg capacity.Config) *Capacity {
	c := &Capacity{cfg: cfg}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	deadline := now().Add(cfg.MaxTime)
	seq := func(yield func(Step) bool) {
		c.result, c.err = capacity.Search(ctx, cfg, func(ctx context.Context, level float64, length time.Duration) (capacity.Measure, error) {
			st := Step{Duration: length, Windows: capacity.StepWindows, Settle: c.settle}
			if cfg.MaxTime > 0 && st.Settle > 0 {
				// The search let the step start within --max-time: the
				// wait for the backend's queue has what is left beyond
				// the step itself, and none when nothing is.
				st.SettleFor = deadline.Sub(now().Add(cfg.Overhead + length))
				if st.SettleFor <= 0 {
					st.Settle = 0
				}
			}
			if cfg.Integer {
				st.Concurrency = int(level)
			} else {
				st.Rate = level
			}
			if !yield(st) {
				return capacity.Measure{}, context.Canceled
			}
			return c.measure, c.measureErr
		})
	}
	c.next, c.stop = iter.Pull(seq)
	return c
}

// Next judges the step just run (the last of res.Series[0]) and returns
// the level the search asks for next.
func (c *Capacity) Next(res *Result) (Step, bool) {
	if c.pending {
		c.pending = false
		c.measure, c.measureErr = c.judge(res)
	}
	st, ok := c.next()
	c.pending = ok
	return st, ok
}

// Len is not known ahead.
func (c *Capacity) Len() int { return 0 }

// judge measures the last step of res.
func (c *Capacity) judge(res *Result) (capacity.Measure, error) {
	sr := &res.Series[0]
	if len(sr.Levels) < len(res.Steps) {
		return capacity.Measure{}, context.Canceled // the step made no record
	}
	sum, rec, st := &sr.Levels[len(sr.Levels)-1], sr.Records[len(sr.Records)-1], res.Steps[len(res.Steps)-1]
	if sum.Interrupted {
		return capacity.Measure{}, context.Canceled
	}
	m := capacity.FromSummary(sum, c.cfg.Objectives)
	m.Held = capacity.Judge(rec.Windows, rec.WindowWidth, rec.Elapsed, st.Rate)
	m.Record = rec // saved with the step in capacity.json
	if sum.Complete > 0 && (c.quickest == 0 || m.P50 < c.quickest) {
		c.quickest = m.P50
	}
	c.settle = 0
	if c.quickest > 0 && (!capacity.Passed(capacity.Evaluate(c.cfg.Objectives, &m)) || m.Held.Verdict != capacity.HeldYes) {
		// The step may have left a queue in the backend: the next one
		// waits for it to drain. A backend that never answered has no
		// latency to wait for: its failures are no queue.
		c.settle = time.Duration(2*c.quickest*1e6) + settleSlack
	}
	return m, nil
}

// Result ends the search and returns its outcome: after the driver
// returned, interrupted or not (a step left pending is told it was cut
// short).
func (c *Capacity) Result() (capacity.Result, error) {
	if c.pending {
		c.pending = false
		c.measure, c.measureErr = capacity.Measure{}, context.Canceled
		for _, ok := c.next(); ok; _, ok = c.next() {
			// The search asked for another step: not run, so cut short.
			c.measureErr = context.Canceled
		}
	}
	c.stop()
	return c.result, c.err
}

// SettleMax bounds the wait of a step's Settle.
const SettleMax = 30 * time.Second

// settlePause is the pause after a settling run with a failure (a refused
// or reset connection), so as not to spin.
const settlePause = 50 * time.Millisecond

// settle waits, before a step, until the backend has worked off the queue
// the step before left behind (requests the client gave up on at the end
// of the step still wait in the backend's listen backlog): it runs plan
// one request at a time, two a run on one worker, until both of a run
// answer within bound, for at most limit (0: SettleMax; never more).
func (d *driver) settle(ctx context.Context, p *execute.Plan, bound, limit time.Duration) {
	if limit <= 0 || limit > SettleMax {
		limit = SettleMax
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	plan := *p
	plan.Concurrency, plan.Requests, plan.Duration, plan.Rate = 1, 2, 0, 0
	plan.BackendPIDs, plan.FPMStatus = nil, ""
	o := execute.Options{Stderr: d.cfg.Options.Stderr, Quiet: true, Setup: d.setup, Discard: true, KeepOnUnreachable: true,
		Version: d.cfg.Options.Version, Privacy: d.cfg.Options.Privacy}
	for ctx.Err() == nil {
		run, err := execute.Run(ctx, &plan, o)
		if err != nil {
			return
		}
		s := &run.Summary
		if s.Complete == 2 && s.Failed == 0 && s.ConnectionTimes.Total.Max <= float64(bound)/1e6 {
			return
		}
		if s.Failed > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(settlePause):
			}
		}
	}
}
