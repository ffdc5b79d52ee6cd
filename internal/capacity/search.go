package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/backbench/backbench/internal/stats"
)

// StepFunc runs one step at a load level (requests per second in the open
// model, a concurrency in the closed model) for length (its counted time,
// warm-up aside) and returns what it measured. An error ends the search; a
// step cut short by ctx should return ctx's error.
type StepFunc func(ctx context.Context, level float64, length time.Duration) (Measure, error)

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
	// passing and failing levels must get (0.05: within 5%). 0: 0.05. A
	// failed confirmation steps down by as much, at least StepDown.
	Resolution float64
	// Step is the length of a step (> 0); a step whose load it cannot
	// tell held (HeldUnsure) is run again twice as long, up to
	// MaxLengthen times Step.
	Step time.Duration
	// Confirm is the length of the run that confirms the answer before it
	// is given; 0: no confirmation. A failed confirmation steps down by
	// Resolution (at least StepDown) and confirms again, at most
	// MaxConfirms levels in all.
	Confirm time.Duration
	// MaxTime bounds the whole search (0: no bound); Overhead is the time
	// a step takes beyond its length (warm-up, settling), to decide
	// whether one more fits.
	MaxTime, Overhead time.Duration
	// Now returns the current time; nil: time.Now.
	Now func() time.Time
	// OnStep, if not nil, sees every step once it is judged.
	OnStep func(Step)
}

// Bounds of a search.
const (
	// MaxLengthen bounds how much longer than Config.Step an unsure step
	// is made (it doubles: 2x, then 4x).
	MaxLengthen = 4
	// StepDown is the least share a failed confirmation steps down by
	// (more when Config.Resolution is coarser).
	StepDown = 0.05
	// MaxConfirms bounds the levels confirmed in one search: the answer
	// and up to three step-downs (each of which may be run twice).
	MaxConfirms = 4
)

// Step is one run of the search.
type Step struct {
	// Level is the rate (open model) or concurrency (closed model) asked.
	Level float64
	// Length is how long the step ran (its counted time).
	Length time.Duration
	Measure
	// Results are the verdicts on the objectives, in order.
	Results []stats.SLOResult
	// Pass reports that every objective held and so did the load
	// (Measure.Held).
	Pass bool
	// Confirm marks a confirmation run of the answer.
	Confirm bool
	// Again marks a second look at a level whose failure contradicted a
	// passing higher level, or at the first level: its verdict replaces
	// the first one's.
	Again bool
	// Longer marks a step run longer because the one before it at the same
	// level could not tell whether its load held.
	Longer bool
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
	// Best is the index in Steps of the step the answer rests on (its
	// confirmation when there was one), -1 if none.
	Best int
	// FirstFail is the index in Steps of the lowest failing level above
	// Capacity, -1 if none.
	FirstFail int
	// LimitedBy is LimitedByBackend or LimitedByClient; Reason says why the
	// client limited it, why the search ended without a failing level, or,
	// for a level confirmed below a failed confirmations' walk, how far it
	// stayed from the resolution.
	LimitedBy, Reason string
	// AtMax reports that Capacity is Config.Max: higher levels were not
	// tried.
	AtMax bool
	// Step and ConfirmLength are Config.Step and Config.Confirm;
	// Confirmed reports that a confirmation run of ConfirmLength passed
	// at Capacity.
	Step, ConfirmLength time.Duration
	Confirmed           bool
	// Unconfirmed reports that every confirmation run failed (Capacity
	// is then 0).
	Unconfirmed bool
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
	if cfg.Start <= 0 || len(cfg.Objectives) == 0 || cfg.Step <= 0 {
		return Result{}, errors.New("capacity: want a start level above 0, a step length and at least one objective")
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
	lo, hi      float64
	confirmed   bool
	unconfirmed bool
	// fallback: every level of the confirmations' walk failed, the last
	// at walkEnd, and lo was confirmed below them (confirm).
	fallback bool
	walkEnd  float64
	limit    string // why the client ended the search
	// quickest is the lowest P50 of a passing step, in ms: the backend's
	// latency with no queue (0 until a step passed).
	quickest float64
	atMax    bool
	early    bool
	stopped  bool // interrupted
}

// round makes v a level: a whole number in the closed model; in the open
// model v rounded down to three significant digits, or more when that is
// needed to stay above above (so that a bisected rate prints exactly as it
// was asked, and never more than was tried).
func (s *searcher) round(v, above float64) float64 {
	if s.cfg.Integer {
		return math.Floor(v)
	}
	return RoundRate(v, above)
}

// RoundRate rounds the rate v down to three significant digits, or to as
// many more (up to nine) as keep it above above.
func RoundRate(v, above float64) float64 {
	if v <= 0 {
		return v
	}
	r := v
	for digits := 3; digits <= 9; digits++ {
		p := math.Pow(10, math.Floor(math.Log10(v))-float64(digits-1))
		// The small nudge keeps 0.3/0.1-style float error from flooring
		// a whole step down.
		r, _ = strconv.ParseFloat(strconv.FormatFloat(math.Floor(v/p+1e-9)*p, 'g', digits, 64), 64)
		if r > above {
			return r
		}
	}
	return r
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
			level = s.round(s.cfg.Start, 0)
		case s.hi == 0 && s.cfg.Max > 0 && s.lo >= s.cfg.Max, s.lo > 0 && s.hi > 0 && s.close():
			s.atMax = s.hi == 0
			return s.confirm(ctx)
		case s.hi == 0:
			level = s.lo * 2
			if s.cfg.Max > 0 {
				level = min(level, s.cfg.Max)
			}
			level = s.round(level, s.lo)
		case s.lo == 0:
			// Even the start failed: halve, at most four times below it.
			level = s.round(s.hi/2, 0)
			if level < s.cfg.Start/16 || level < 1 && s.cfg.Integer || level <= 0 {
				return nil
			}
		default:
			level = s.round((s.lo+s.hi)/2, s.lo)
			if level >= s.hi { // cannot split finer
				return s.confirm(ctx)
			}
		}
		st, err := s.measure(ctx, level)
		if err != nil || s.done() {
			return err
		}
		if st.ClientLimit != "" {
			s.limit = st.ClientLimit
			if st.Pass {
				s.lo = level
				if !s.cfg.Integer {
					s.lo = min(level, RoundRate(st.AchievedRPS, 0))
				}
			}
			if s.lo > 0 {
				// The lower bound is confirmed like any answer.
				return s.confirm(ctx)
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

// measure runs a search step at level and decides it: longer while it
// cannot tell whether the load held (up to MaxLengthen times the step), or
// once twice as long when its objectives held but its load grew; and once
// more when it fails at the first level or below a level that passed at
// the same length or longer, before the search moves below it.
func (s *searcher) measure(ctx context.Context, level float64) (Step, error) {
	first := len(s.steps) == 0
	length := s.cfg.Step
	st, err := s.tryAgain(ctx, level, length, false)
	// A level the client's retries already ran more than once has had its
	// second look.
	again := len(s.steps) > 1 && s.steps[len(s.steps)-2].Level == level && s.steps[len(s.steps)-2].ClientLimit != ""
	for err == nil && !s.done() && st.ClientLimit == "" {
		switch {
		case st.Held.Verdict == HeldUnsure && Passed(st.Results) && length*2 <= s.cfg.Step*MaxLengthen,
			// Growth seen in one step whose objectives held may be a burst
			// of the machine's: a queue that truly grows is seen again,
			// more clearly, in a step twice as long.
			st.Held.Verdict == HeldNo && Passed(st.Results) && length == s.cfg.Step:
			length *= 2
			st, err = s.tryAgain(ctx, level, length, false)
			if err == nil && !s.done() {
				s.steps[len(s.steps)-1].Longer = true
			}
			continue
		case !st.Pass && !again && (first || s.contradicts(level, length)):
			again = true
			st, err = s.tryAgain(ctx, level, length, false)
			if err == nil && !s.done() {
				s.steps[len(s.steps)-1].Again = true
				st.Again = true
			}
			continue
		}
		break
	}
	return st, err
}

// contradicts reports that a step at a level above level, of at least
// length, passed: a failure at level is then measured again. A longer run
// failing where a shorter one passed is no contradiction: it saw more.
func (s *searcher) contradicts(level float64, length time.Duration) bool {
	for _, p := range s.steps {
		if p.Pass && p.Level > level && p.Length >= length {
			return true
		}
	}
	return false
}

// tryAgain runs a step, and again, up to clientRetries times, while the
// client held it back: a passing hiccup of a shared machine should not end
// the search.
func (s *searcher) tryAgain(ctx context.Context, level float64, length time.Duration, confirm bool) (Step, error) {
	st, err := s.try(ctx, level, length, confirm)
	for retry := 0; err == nil && !s.done() && st.ClientLimit != "" && retry < clientRetries; retry++ {
		st, err = s.try(ctx, level, length, confirm)
	}
	return st, err
}

// try runs one step unless it would end past the deadline.
func (s *searcher) try(ctx context.Context, level float64, length time.Duration, confirm bool) (Step, error) {
	if s.cfg.MaxTime > 0 && s.cfg.Now().Add(s.cfg.Overhead+length).After(s.deadline) {
		s.early = true
		return Step{}, nil
	}
	m, err := s.step(ctx, level, length)
	if ctx.Err() != nil {
		s.stopped = true
		return Step{}, nil
	}
	if err != nil {
		return Step{}, err
	}
	st := Step{Level: level, Length: length, Measure: m, Results: Evaluate(s.cfg.Objectives, &m), Confirm: confirm}
	st.Pass = Passed(st.Results) && m.Held.Verdict == HeldYes
	if st.ClientLimit != "" && s.saturated(&st) {
		// The requests the client held back piled up behind a backend
		// that could not serve them: the backend's limit, not the
		// client's; the search bisects below it.
		st.ClientLimit = ""
	}
	if st.Pass && (s.quickest == 0 || st.P50 < s.quickest) {
		s.quickest = st.P50
	}
	s.steps = append(s.steps, st)
	if s.cfg.OnStep != nil {
		s.cfg.OnStep(st)
	}
	return st, nil
}

// Saturation: a step that failed its latency objectives while the
// backend served less than asked, the requests it got waiting in it.
const (
	// QueuedFactor and queuedSlackMs: a step's requests waited in the
	// backend when their median from the actual send (Measure.SentP50) is
	// more than QueuedFactor times the quickest passing step's median plus
	// queuedSlackMs.
	QueuedFactor  = 2.0
	queuedSlackMs = 1.0
)

// saturated reports that st, a failing step of the open model, found the
// backend side saturated: the backend served less than the asked rate and
// the requests it got waited in it (SentP50 well above the quickest
// passing step's median); when either median is unknown, a shortfall with
// a latency objective failed is taken as the backend's. Then whatever
// held requests back in the client (the in-flight ceiling full of
// requests the backend had not answered, the client's goroutines late on
// a machine whose cores the backend took) was the backend's queue: the
// client is the limit only when it held requests back while the backend
// answered as fast as it answers unloaded.
func (s *searcher) saturated(st *Step) bool {
	if s.cfg.Integer || st.Pass {
		return false
	}
	latency := false
	for i, r := range st.Results {
		latency = latency || !r.Pass && s.cfg.Objectives[i].Latency()
	}
	short := st.AchievedRPS < ServedShare*st.Level || st.Held.Verdict == HeldNo
	switch {
	case !short:
		return false
	case st.SentP50 <= 0 || s.quickest <= 0:
		return latency
	}
	return st.SentP50 > QueuedFactor*s.quickest+queuedSlackMs
}

// confirm runs lo once for Config.Confirm. If it fails (a queue the steps
// were too short to see), hi becomes that level and the level below it by
// the resolution (at least StepDown) is confirmed, up to MaxConfirms
// levels in all. A step-down level passed its search step above it, so
// its failure contradicts a passing higher rate: it is measured again
// before the search moves below it. If every one fails (steps too short
// to see a queue passed levels far above what the backend sustains), the
// highest level below them that passed a search step is confirmed the
// same way; when it passes, the levels between it and the lowest failed
// confirmation are bisected with confirmation runs (narrow), and
// Result.Reason says how far the answer stayed from the resolution when
// that bound was reached first. Else no level is confirmed and the answer
// is none. A confirmation that the client still held back after its
// retries ends the search: lo is a lower bound.
func (s *searcher) confirm(ctx context.Context) error {
	if s.cfg.Confirm <= 0 {
		s.confirmed = true
		return nil
	}
	level := s.lo
	for i := range MaxConfirms + 1 {
		if i == MaxConfirms {
			if level = s.passedBelow(s.hi); level <= 0 {
				break
			}
			s.fallback, s.walkEnd = true, s.hi
		}
		st, err := s.confirmAt(ctx, level, i > 0)
		if err != nil || s.done() {
			return err
		}
		if st.ClientLimit != "" {
			s.limit = st.ClientLimit
			if s.fallback {
				s.lo = level
			}
			return nil
		}
		if st.Pass {
			s.lo, s.confirmed = level, true
			if s.fallback {
				return s.narrow(ctx)
			}
			return nil
		}
		s.hi, s.atMax = level, false
		next := s.round(level*(1-max(s.cfg.Resolution, StepDown)), 0)
		if next >= level {
			next = level - 1
		}
		if s.fallback || next <= 0 || next < s.cfg.Start/16 {
			break
		}
		level = next
	}
	s.lo, s.unconfirmed = 0, true
	return nil
}

// narrow bisects between lo, confirmed below the confirmations' walk,
// and hi, the lowest level whose confirmation failed, with confirmation
// runs, up to MaxConfirms levels, until they are within the resolution.
func (s *searcher) narrow(ctx context.Context) error {
	for range MaxConfirms {
		level := s.round((s.lo+s.hi)/2, s.lo)
		if s.close() || level >= s.hi {
			return nil
		}
		st, err := s.confirmAt(ctx, level, false)
		if err != nil || s.done() {
			return err
		}
		switch {
		case st.ClientLimit != "":
			s.limit = st.ClientLimit
			return nil
		case st.Pass:
			s.lo = level
		default:
			s.hi = level
		}
	}
	return nil
}

// confirmAt runs a confirmation of level, and once more when it failed,
// again is set and the client's retries did not already run it twice.
func (s *searcher) confirmAt(ctx context.Context, level float64, again bool) (Step, error) {
	before := len(s.steps)
	st, err := s.tryAgain(ctx, level, s.cfg.Confirm, true)
	if err == nil && !s.done() && st.ClientLimit == "" && !st.Pass && again && len(s.steps) == before+1 {
		st, err = s.tryAgain(ctx, level, s.cfg.Confirm, true)
		if err == nil && !s.done() {
			s.steps[len(s.steps)-1].Again = true
		}
	}
	return st, err
}

// firstConfirm is the index of the first confirmation step (0 if none).
func (s *searcher) firstConfirm() int {
	return max(0, slices.IndexFunc(s.steps, func(st Step) bool { return st.Confirm }))
}

// passedBelow is the highest level below level that passed a search step
// (not a confirmation), 0 when none did.
func (s *searcher) passedBelow(level float64) float64 {
	var l float64
	for _, st := range s.steps {
		if st.Pass && !st.Confirm && st.Level < level {
			l = max(l, st.Level)
		}
	}
	return l
}

func (s *searcher) result() Result {
	r := Result{Steps: s.steps, Capacity: s.lo, Best: -1, FirstFail: -1, LimitedBy: LimitedByBackend,
		AtMax: s.atMax, StoppedEarly: s.early, Interrupted: s.stopped, Step: s.cfg.Step, ConfirmLength: s.cfg.Confirm,
		Confirmed: s.confirmed && s.cfg.Confirm > 0 && s.lo > 0, Unconfirmed: s.unconfirmed}
	if r.Steps == nil {
		r.Steps = []Step{}
	}
	if s.limit != "" {
		r.LimitedBy, r.Reason = LimitedByClient, s.limit
	} else if s.atMax {
		r.Reason = "the highest level allowed passed"
	} else if s.unconfirmed {
		r.Reason = "no confirmation run passed"
	}
	for i, st := range s.steps {
		if st.Pass && (r.Best < 0 || r.Confirmed && st.Confirm) && (st.Level == s.lo || s.limit != "" && i == len(s.steps)-1) {
			r.Best = i
		}
		if !st.Pass && st.Level > s.lo && (r.FirstFail < 0 || st.Level < s.steps[r.FirstFail].Level) {
			r.FirstFail = i
		}
	}
	if s.fallback && r.Confirmed && r.FirstFail >= 0 {
		if fail := s.steps[r.FirstFail].Level; fail > s.lo*(1+s.cfg.Resolution) {
			r.Reason = fmt.Sprintf("the confirmations from %s down to %s failed, and bisecting below them with confirmation runs ended at %s, %.0f%% below the lowest failing rate",
				FormatRate(s.steps[s.firstConfirm()].Level), FormatRate(s.walkEnd), FormatRate(s.lo), 100*(1-s.lo/fail))
		}
	}
	return r
}
