package studyfile

import (
	"errors"
	"fmt"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/trials"
)

// Settings of study --quick for a capacity study: 1 s steps, a 2 s
// confirmation, one round.
const (
	quickSizingStep    = time.Second
	quickSizingConfirm = 2 * time.Second
)

// Overrides are the command line's replacements of a study's measure (a
// short try of a long study): study's -c, -n, -t, --repeat, --warmup,
// --quick, and a capacity study's --confirm and --memory. A nil field was
// not given and keeps the file's value; the errors name the flags.
type Overrides struct {
	// Quick is --quick: a try in seconds, its first 2 levels, 100
	// requests a level, 2 rounds, no warm-up (a capacity study: 1 s
	// steps, a 2 s confirmation, one round), unless the others say
	// otherwise.
	Quick bool
	// Levels is -c, a level spec (1,4 or 1:500:10); "" keeps the file's.
	Levels string
	// Requests is -n, the requests per level and trial; Duration is -t,
	// the time per level and trial (a capacity study: a step's length).
	Requests *int64
	Duration *time.Duration
	// Repeat is --repeat, the trials per level; Warmup is --warmup, the
	// requests before each trial.
	Repeat *int
	Warmup *int64
	// Confirm is --confirm, a capacity search's confirmation run (0:
	// none); Memory is --memory, its memory budget (2GiB, 512MiB).
	Confirm *time.Duration
	Memory  *string
	// Noise is --noise, the verdicts' noise threshold as a fraction
	// (read by load.ParsePercent, as every --noise), for every kind.
	Noise *float64
	// Until is --until (decided: rounds run until every pair is
	// decided), Budget --budget (the rounds' most time) and MaxRepeat
	// --max-repeat (the most rounds); a sweep or a bench study only.
	Until     *string
	Budget    *time.Duration
	MaxRepeat *int
}

// Override applies o to m, by m's kind: a capacity study takes -t as a
// step's length and -c as the most requests in flight, and not -n; the
// others do not take --confirm and --memory. An error is the command
// line's and names its flag.
func (m *Measure) Override(o Overrides) error {
	if o.Noise != nil {
		m.Noise, m.NoiseSet = *o.Noise, true
	}
	if m.Kind == MeasureCapacity {
		if o.Until != nil || o.Budget != nil || o.MaxRepeat != nil {
			return errors.New("--until, --budget, --max-repeat: a capacity study runs its repeat searches; rounds until decided are for a sweep or a bench study")
		}
		return m.overrideCapacity(o)
	}
	if o.Confirm != nil {
		return fmt.Errorf("--confirm: only a capacity study (measure kind capacity) takes it, not a %s", m.Kind)
	}
	if o.Memory != nil {
		return fmt.Errorf("--memory: only a capacity study (measure kind capacity) takes it, not a %s", m.Kind)
	}
	return m.overrideLoad(o)
}

// overrideLevels applies -c to m; one says that m takes one level, and
// why says so when -c gives more.
func (m *Measure) overrideLevels(o Overrides, one bool, why string) error {
	if o.Levels == "" {
		return nil
	}
	lv, err := load.ParseLevels(o.Levels)
	if err != nil {
		return fmt.Errorf("-c %s: %v", o.Levels, err)
	}
	if one && len(lv) != 1 {
		return fmt.Errorf("-c %s: %s", o.Levels, why)
	}
	m.Levels = lv
	return nil
}

// overrideRounds applies --repeat and --warmup to m, for every kind of
// study.
func (m *Measure) overrideRounds(o Overrides) error {
	if o.Repeat != nil {
		if *o.Repeat < 1 || *o.Repeat > trials.MaxRepeat {
			return fmt.Errorf("--repeat %d: want 1 to %d trials", *o.Repeat, trials.MaxRepeat)
		}
		m.Repeat = *o.Repeat
	}
	if o.Warmup != nil {
		if *o.Warmup < 0 {
			return fmt.Errorf("--warmup %d: want 0 or more", *o.Warmup)
		}
		m.Warmup = *o.Warmup
	}
	return nil
}

// overrideLoad applies o to the measure of a sweep or a bench study.
func (m *Measure) overrideLoad(o Overrides) error {
	if o.Quick {
		m.Levels = m.Levels[:min(len(m.Levels), 2)]
		m.Requests, m.Duration, m.Repeat, m.Warmup = 100, 0, 2, 0
		if top := m.Levels[len(m.Levels)-1]; top > 100 {
			m.Requests = int64(top)
		}
	}
	if err := m.overrideLevels(o, m.Kind == MeasureBench, "a bench study takes one level"); err != nil {
		return err
	}
	if o.Requests != nil || o.Duration != nil {
		var n int64
		var t time.Duration
		if o.Requests != nil {
			n = *o.Requests
		}
		if o.Duration != nil {
			t = *o.Duration
		}
		if n < 0 || t < 0 || (n == 0 && t == 0) {
			return errors.New("-n and -t: want a positive request count or time")
		}
		m.Requests, m.Duration = n, t
	}
	if err := m.overrideRounds(o); err != nil {
		return err
	}
	if err := m.overrideUntil(o); err != nil {
		return err
	}
	if top := m.Levels[len(m.Levels)-1]; m.Requests > 0 && int64(top) > m.Requests {
		return fmt.Errorf("the highest level (%d) is above the requests per level (%d)", top, m.Requests)
	}
	return nil
}

// overrideCapacity applies o to a capacity study's measure: -t is a
// step's length, -c the most requests in flight, and --confirm and
// --memory its own; -n does not apply.
func (m *Measure) overrideCapacity(o Overrides) error {
	if o.Quick {
		m.Duration, m.Confirm, m.Repeat, m.Warmup = quickSizingStep, quickSizingConfirm, 1, 0
	}
	if o.Requests != nil {
		return errors.New("-n: a capacity study's steps are timed: give -t")
	}
	if err := m.overrideLevels(o, true, "a capacity study takes one level (the most requests in flight)"); err != nil {
		return err
	}
	if o.Duration != nil {
		if *o.Duration <= 0 {
			return errors.New("-t: want a positive step length")
		}
		m.Duration = *o.Duration
	}
	if err := m.overrideRounds(o); err != nil {
		return err
	}
	if o.Confirm != nil {
		if *o.Confirm < 0 {
			return errors.New("--confirm: want 0 or more")
		}
		m.Confirm = *o.Confirm
		if *o.Confirm == 0 {
			m.Confirm = -1 // none
		}
	}
	if o.Memory != nil {
		b, err := load.ParseSize(*o.Memory)
		if err != nil {
			return fmt.Errorf("--memory: %v", err)
		}
		m.Memory = b
	}
	return nil
}

// overrideUntil applies --until, --budget and --max-repeat to m.
func (m *Measure) overrideUntil(o Overrides) error {
	if o.Until != nil {
		switch *o.Until {
		case UntilDecided:
			m.Until = UntilDecided
		case "":
			m.Until, m.Budget, m.MaxRepeat = "", 0, 0
		default:
			return fmt.Errorf("--until %q: want decided", *o.Until)
		}
	}
	if o.Budget != nil {
		if *o.Budget <= 0 {
			return errors.New("--budget: want a positive time (seconds, or a duration: 2m)")
		}
		m.Budget = *o.Budget
	}
	if o.MaxRepeat != nil {
		if *o.MaxRepeat < trials.DefaultMinRounds || *o.MaxRepeat > trials.MaxRepeat {
			return fmt.Errorf("--max-repeat %d: want %d to %d rounds", *o.MaxRepeat, trials.DefaultMinRounds, trials.MaxRepeat)
		}
		m.MaxRepeat = *o.MaxRepeat
	}
	if m.Until == "" && (o.Budget != nil || o.MaxRepeat != nil) {
		return errors.New("--budget and --max-repeat: only with --until decided (or until: decided in the file)")
	}
	return nil
}
