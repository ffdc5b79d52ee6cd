package trials

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Plan says how many trials each series runs at a level.
type Plan struct {
	// Repeat is the number of trials of every series before the precision
	// rule is looked at (at least 1).
	Repeat int
	// Precision, if above 0, adds rounds until every series' requests/sec
	// interval lies within ±Precision of its median (a fraction: 0.02 for
	// 2%), or MaxRepeat trials have run.
	Precision float64
	// MaxRepeat bounds the trials with Precision.
	MaxRepeat int
	// Seed seeds the order of the series within each round.
	Seed uint64
}

// Limits of a Plan.
const (
	// DefaultRepeat is the number of trials with --precision alone.
	DefaultRepeat = 5
	// DefaultMaxRepeat bounds the trials of --precision by default.
	DefaultMaxRepeat = 20
	// MaxRepeat is the largest --repeat or --max-repeat.
	MaxRepeat = 100
	// MinPrecisionRepeat is the fewest first trials with --precision.
	MinPrecisionRepeat = 3
)

// Validate checks p; its errors are one line for the command line.
func (p Plan) Validate() error {
	switch {
	case p.Repeat < 1 || p.Repeat > MaxRepeat:
		return fmt.Errorf("--repeat %d: want 1 to %d trials", p.Repeat, MaxRepeat)
	case p.Precision < 0 || p.Precision >= 1:
		return fmt.Errorf("--precision %g%%: want more than 0%% and less than 100%%", 100*p.Precision)
	case p.Precision > 0 && p.Repeat < MinPrecisionRepeat:
		return fmt.Errorf("--repeat %d with --precision: want at least %d first trials", p.Repeat, MinPrecisionRepeat)
	case p.Precision > 0 && (p.MaxRepeat < p.Repeat || p.MaxRepeat > MaxRepeat):
		return fmt.Errorf("--max-repeat %d: want from --repeat (%d) to %d", p.MaxRepeat, p.Repeat, MaxRepeat)
	}
	return nil
}

// Options are the trial flags as given (--repeat and --precision, one
// of which at least was).
type Options struct {
	// Repeat is --repeat, RepeatSet whether it was given (with
	// --precision alone: DefaultRepeat).
	Repeat    int
	RepeatSet bool
	// Precision is --precision as given: a percentage ("2%"), or "".
	Precision string
	// MaxRepeat is --max-repeat, MaxRepeatSet whether it was given (it
	// needs --precision).
	MaxRepeat    int
	MaxRepeatSet bool
	// Seed is --seed, SeedSet whether it was given (if not, a random
	// seed).
	Seed    uint64
	SeedSet bool
}

// Build checks the options and makes the plan (Validate); its errors are
// one line for the command line.
func (o Options) Build() (Plan, error) {
	p := Plan{Repeat: o.Repeat, MaxRepeat: o.MaxRepeat, Seed: o.Seed}
	if o.Precision != "" {
		v, ok := strings.CutSuffix(strings.TrimSpace(o.Precision), "%")
		f, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || !(f > 0 && f < 100) {
			return p, fmt.Errorf("bad --precision %q: want a percentage above 0%% and below 100%% (2%%)", o.Precision)
		}
		p.Precision = f / 100
		if !o.RepeatSet {
			p.Repeat = DefaultRepeat
		}
	} else if o.MaxRepeatSet {
		return p, errors.New("--max-repeat needs --precision P")
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	if !o.SeedSet {
		p.Seed = rand.Uint64() >> 1
	}
	return p, nil
}

// Rounds runs the trials of every level of a command in interleaved
// rounds: trial k of every series before trial k+1 of any, the order of
// the series within a round shuffled (seeded by Plan.Seed) so that no
// series always runs first.
type Rounds struct {
	plan Plan
	rng  *rand.Rand
}

// NewRounds returns the rounds of plan, which must be valid.
func NewRounds(plan Plan) *Rounds {
	return &Rounds{plan: plan, rng: rand.New(rand.NewPCG(plan.Seed, 0x6261636b62656e63))}
}

// ErrStop, returned by a trial function, ends the level and the command
// (an interruption): Level returns it after what ran so far.
var ErrStop = errors.New("trials: stopped")

// LevelResult says how the rounds of one level went.
type LevelResult struct {
	// Rounds is the number of rounds run.
	Rounds int
	// Orders holds the order of the series (their indexes) in each round.
	Orders [][]int
	// Imprecise lists the series (indexes) whose interval was still wider
	// than the precision asked when MaxRepeat trials had run; nil without
	// Precision.
	Imprecise []int
}

// Level runs the rounds of one level over the given series (indexes).
// trial runs one trial of a series and returns its requests/sec, which
// the precision rule reads; an error ends the level (ErrStop after an
// interruption).
func (r *Rounds) Level(series []int, trial func(s int) (float64, error)) (LevelResult, error) {
	var res LevelResult
	values := map[int][]float64{}
	most := r.plan.Repeat
	if r.plan.Precision > 0 {
		most = r.plan.MaxRepeat
	}
	pending := append([]int(nil), series...)
	for res.Rounds < most && len(pending) > 0 {
		order := append([]int(nil), pending...)
		r.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		res.Orders = append(res.Orders, order)
		res.Rounds++
		for _, s := range order {
			v, err := trial(s)
			if err != nil {
				return res, err
			}
			values[s] = append(values[s], v)
		}
		if res.Rounds < r.plan.Repeat {
			continue
		}
		if r.plan.Precision <= 0 {
			break
		}
		// Every series still runs every round while one is imprecise:
		// the rounds stay interleaved, and a precise series only gets
		// more precise.
		done := true
		for _, s := range pending {
			if !Median(values[s]).Precise(r.plan.Precision) {
				done = false
			}
		}
		if done {
			pending = nil
		}
	}
	if r.plan.Precision > 0 {
		for _, s := range series {
			if !Median(values[s]).Precise(r.plan.Precision) {
				res.Imprecise = append(res.Imprecise, s)
			}
		}
	}
	return res, nil
}
