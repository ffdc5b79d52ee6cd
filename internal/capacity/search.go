package capacity

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/backbench/backbench/internal/stats"
)

// StepFunc runs one step at a load level (requests per second in the open
// model, a concurrency in the closed model) and returns what it measured.
// An error ends the search; a step cut short by ctx should return ctx's
// error.
type StepFunc func(ctx context.Context, level float64) (Measure, error)

// Config configures a search.
type Config struct {
	// Objectives must all hold for a step to pass.
	Objectives []Objective
	// Start is the first level tried (> 0).
	Start float64
	// Max is the highest level tried; a search that passes there answers
	// "at least Max". 0: no bound.
	Max float64
	// Integer makes every level a whole number (the closed model's
	// concurrency).
	Integer bool
	// Resolution is how close, as a fraction of the passing level, the
	// passing and failing levels must get (0.05: within 5%). 0: 0.05.
	Resolution float64
	// Confirm is how many times the answer is run again; every run must
	// pass.
	Confirm int
	// MaxTime bounds the whole search (0: no bound); StepTime is how long
	// one step takes, warm-up included, to decide whether one more fits.
	MaxTime, StepTime time.Duration
	// Now returns the current time; nil: time.Now.
	Now func() time.Time
	// OnStep, if not nil, sees every step once it is judged.
	OnStep func(Step)
}

// Step is one run of the search.
type Step struct {
	// Level is the rate (open model) or concurrency (closed model) asked.
	Level float64
	Measure
	// Results are the verdicts on the objectives, in order.
	Results []stats.SLOResult
	// Pass reports that every objective held.
	Pass bool
	// Confirm marks a confirmation run of the answer.
	Confirm bool
}

// Limited-by values of a Result.
const (
	LimitedByBackend = "backend"
	LimitedByClient  = "client"
)

// Result is the outcome of a search.
type Result struct {
	// Steps are every step in the order run.
	Steps []Step
	// Capacity is the highest level that passed (and was confirmed); 0
	// when none passed. When the client limited the search, the backend
	// sustains at least this much.
	Capacity float64
	// Best is the index in Steps of the first step at Capacity, -1 if none.
	Best int
	// FirstFail is the index in Steps of the lowest failing level above
	// Capacity, -1 if none.
	FirstFail int
	// LimitedBy is LimitedByBackend or LimitedByClient; Reason says why the
	// client limited it, or why the search ended without a failing level.
	LimitedBy, Reason string
	// AtMax reports that Capacity is Config.Max: higher levels were not
	// tried.
	AtMax bool
	// StoppedEarly reports that Config.MaxTime ended the search.
	StoppedEarly bool
	// Interrupted reports that the context ended the search.
	Interrupted bool
}

// maxSteps bounds a search whatever its configuration.
const maxSteps = 200

// clientRetries is how many more times a step that the client held back
// is run before the search ends on it.
const clientRetries = 2

// Search runs the capacity search with step. It returns the steps run so
// far with an error from step; an interruption (ctx) is a Result with
// Interrupted set, not an error.
func Search(ctx context.Context, cfg Config, step StepFunc) (Result, error) {
	if cfg.Start <= 0 || len(cfg.Objectives) == 0 {
		return Result{}, errors.New("capacity: want a start level above 0 and at least one objective")
	}
	if cfg.Resolution <= 0 {
		cfg.Resolution = 0.05
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &searcher{cfg: cfg, step: step, deadline: cfg.Now().Add(cfg.MaxTime)}
	err := s.run(ctx)
	return s.result(), err
}

type searcher struct {
	cfg      Config
	step     StepFunc
	deadline time.Time
	steps    []Step
	// lo is the highest passing level not refuted by a confirmation, hi
	// the lowest failing one; 0 while unknown.
	lo, hi    float64
	confirmed bool
	limit     string // why the client ended the search
	atMax     bool
	early     bool
	stopped   bool // interrupted
}

func (s *searcher) round(v float64) float64 {
	if s.cfg.Integer {
		return math.Floor(v)
	}
	return v
}

// close reports that lo and hi are within the resolution.
func (s *searcher) close() bool {
	d := s.hi - s.lo
	return d <= s.lo*s.cfg.Resolution || (s.cfg.Integer && d <= 1)
}

func (s *searcher) run(ctx context.Context) error {
	for len(s.steps) < maxSteps {
		var level float64
		switch {
		case s.lo == 0 && s.hi == 0:
			level = s.round(s.cfg.Start)
		case s.hi == 0 && s.cfg.Max > 0 && s.lo >= s.cfg.Max, s.lo > 0 && s.hi > 0 && s.close():
			s.atMax = s.hi == 0
			if s.confirmed {
				return nil
			}
			if err := s.confirm(ctx); err != nil || s.confirmed || s.done() || s.limit != "" {
				return err
			}
			continue
		case s.hi == 0:
			level = s.lo * 2
			if s.cfg.Max > 0 {
				level = min(level, s.cfg.Max)
			}
			level = s.round(level)
		case s.lo == 0:
			// Even the start failed: halve, at most four times below it.
			level = s.round(s.hi / 2)
			if level < s.cfg.Start/16 || level < 1 && s.cfg.Integer || level <= 0 {
				return nil
			}
		default:
			level = s.round((s.lo + s.hi) / 2)
		}
		st, err := s.tryAgain(ctx, level, false)
		if err != nil || s.done() {
			return err
		}
		if st.ClientLimit != "" {
			s.limit = st.ClientLimit
			if st.Pass {
				s.lo = level
				if !s.cfg.Integer {
					s.lo = min(level, st.AchievedRPS)
				}
			}
			return nil
		}
		if st.Pass {
			s.lo = level
		} else {
			s.hi = level
		}
	}
	return nil
}

// done reports that the search must stop: interrupted or out of time.
func (s *searcher) done() bool { return s.stopped || s.early }

// tryAgain runs a step, and again, up to clientRetries times, while the
// client held it back: a passing hiccup of a shared machine should not end
// the search.
func (s *searcher) tryAgain(ctx context.Context, level float64, confirm bool) (Step, error) {
	st, err := s.try(ctx, level, confirm)
	for retry := 0; err == nil && !s.done() && st.ClientLimit != "" && retry < clientRetries; retry++ {
		st, err = s.try(ctx, level, confirm)
	}
	return st, err
}

// try runs one step unless it would end past the deadline.
func (s *searcher) try(ctx context.Context, level float64, confirm bool) (Step, error) {
	if s.cfg.MaxTime > 0 && s.cfg.Now().Add(s.cfg.StepTime).After(s.deadline) {
		s.early = true
		return Step{}, nil
	}
	m, err := s.step(ctx, level)
	if ctx.Err() != nil {
		s.stopped = true
		return Step{}, nil
	}
	if err != nil {
		return Step{}, err
	}
	st := Step{Level: level, Measure: m, Results: Evaluate(s.cfg.Objectives, &m), Confirm: confirm}
	st.Pass = Passed(st.Results)
	s.steps = append(s.steps, st)
	if s.cfg.OnStep != nil {
		s.cfg.OnStep(st)
	}
	return st, nil
}

// confirm runs lo Config.Confirm more times. If one fails, lo becomes the
// lowest failing level and the highest passing level below it the new lo
// (0 if none), and the search goes on. A confirmation that the client
// still held back after its retries ends the search: lo is a lower bound.
func (s *searcher) confirm(ctx context.Context) error {
	for range s.cfg.Confirm {
		st, err := s.tryAgain(ctx, s.lo, true)
		if err != nil || s.done() {
			return err
		}
		if st.ClientLimit != "" {
			s.limit = st.ClientLimit
			return nil
		}
		if !st.Pass {
			s.hi, s.lo, s.atMax = s.lo, 0, false
			for _, p := range s.steps {
				if p.Pass && p.Level < s.hi {
					s.lo = max(s.lo, p.Level)
				}
			}
			return nil
		}
	}
	s.confirmed = true
	return nil
}

func (s *searcher) result() Result {
	r := Result{Steps: s.steps, Capacity: s.lo, Best: -1, FirstFail: -1, LimitedBy: LimitedByBackend,
		AtMax: s.atMax, StoppedEarly: s.early, Interrupted: s.stopped}
	if r.Steps == nil {
		r.Steps = []Step{}
	}
	if s.limit != "" {
		r.LimitedBy, r.Reason = LimitedByClient, s.limit
	} else if s.atMax {
		r.Reason = "the highest level allowed passed"
	}
	for i, st := range s.steps {
		if st.Pass && r.Best < 0 && (st.Level == s.lo || s.limit != "" && i == len(s.steps)-1) {
			r.Best = i
		}
		if !st.Pass && st.Level > s.lo && (r.FirstFail < 0 || st.Level < s.steps[r.FirstFail].Level) {
			r.FirstFail = i
		}
	}
	return r
}
