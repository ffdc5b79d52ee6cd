package plan

import (
	"fmt"
	"time"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/execute"
)

// Defaults of a capacity search.
const (
	// CapacityStepTime is the default length of a step (-t).
	CapacityStepTime = 5 * time.Second
	// CapacityCeiling is the open model's default ceiling of requests in
	// flight (-c).
	CapacityCeiling = 256
	// CapacityOpenStart is the open model's first rate (--start), and
	// CapacityClosedStart the closed model's first concurrency.
	CapacityOpenStart   = 10
	CapacityClosedStart = 1
	// CapacityMaxRate is the open model's highest rate (--max), and its
	// default.
	CapacityMaxRate = 1e7
	// CapacityMaxConc is the closed model's default highest concurrency
	// (--max), within what the file limit allows.
	CapacityMaxConc = 10000
	// CapacityStepOverrun is the time a step takes beyond its length and
	// its warm-up, to decide whether one more fits in --max-time.
	CapacityStepOverrun = 250 * time.Millisecond
	// CapacityConfirmTimes is the default --confirm, in steps, and
	// CapacityConfirmFloor the shortest default: a confirmation of a few
	// seconds holds too few requests past the percentile to meet the
	// machine's stalls, which an hour at the answer would meet.
	CapacityConfirmTimes = 5
	CapacityConfirmFloor = 30 * time.Second
	// capacityMaxWhole bounds the closed model's --start and --max.
	capacityMaxWhole = 1_000_000
)

// CapacityOptions are the options of a capacity search, as capacity's
// flags give them (the flag of each in its comment).
type CapacityOptions struct {
	// Load is the load of every step (bench's load flags): its time limit
	// is a step's length, its concurrency the open model's ceiling. Its
	// RequestsSet, RateSet and StartAt are refused: the search sets them.
	Load Options
	// Raw is --raw, refused: a search makes many runs.
	Raw string
	// Model is --model: capacity.ModelOpen or capacity.ModelClosed.
	Model string
	// Start and Max are --start and --max (0: the model's default).
	Start, Max float64
	// Resolution is --resolution read as a fraction, ResolutionText as
	// given (for the messages).
	Resolution     float64
	ResolutionText string
	// Confirm is --confirm, ConfirmSet whether it was given (default:
	// CapacityConfirmTimes steps, at least CapacityConfirmFloor).
	Confirm    time.Duration
	ConfirmSet bool
	// MaxTime is --max-time, Warmup --warmup (before each step).
	MaxTime, Warmup time.Duration
}

// Capacity is a checked capacity search: the load of its steps and the
// search's configuration.
type Capacity struct {
	// Load is the plan of a step and the objectives every step is judged
	// by; its Concurrency is the open model's ceiling.
	*Load
	// Config is the search's configuration (its OnStep unset).
	Config capacity.Config
	// Warmup is the uncounted warm-up before each step.
	Warmup time.Duration
}

// Build checks the options and builds the search; every error is an
// *Error (a usage error), found before any connection is made.
func (o *CapacityOptions) Build() (*Capacity, error) {
	closed := o.Model == capacity.ModelClosed
	lo := o.Load
	for _, f := range []struct {
		given     bool
		name, why string
	}{
		{lo.RequestsSet, "requests", "each step runs for -t seconds"},
		{lo.RateSet, "rate", "the search sets the rate"},
		{o.Raw != "", "raw", "a search makes many runs"},
		{!lo.StartAt.IsZero(), "start-at", "a search's steps depend on each other, so generators do not merge"},
	} {
		if f.given {
			return nil, errorf("capacity: --%s does not apply: %s", f.name, f.why)
		}
	}
	switch {
	case len(lo.SLO) == 0:
		return nil, errorf("capacity: want at least one --slo objective, e.g. --slo 'p99<=50ms'")
	case closed && lo.ConcurrencySet:
		return nil, errorf("capacity: -c does not apply with --model closed: the search sets it (--start and --max bound it)")
	case lo.Duration <= 0:
		return nil, errorf("capacity: -t must be greater than 0 seconds")
	case o.Start < 0 || o.Max < 0:
		return nil, errorf("capacity: --start and --max must be greater than 0")
	case o.Resolution <= 0 || o.Resolution >= 1:
		return nil, errorf("capacity: bad --resolution %q: want more than 0%% and less than 100%%", o.ResolutionText)
	}
	if !closed && !lo.ConcurrencySet {
		lo.Concurrency = CapacityCeiling
	}
	start, top := o.Start, o.Max
	switch {
	case start == 0 && closed:
		start = CapacityClosedStart
	case start == 0:
		start = CapacityOpenStart
	}
	switch {
	case top == 0 && closed:
		top = CapacityMaxConc
	case top == 0:
		top = CapacityMaxRate
	}
	if closed && (start != float64(int(start)) || top != float64(int(top)) || top > capacityMaxWhole) {
		return nil, errorf("capacity: --start and --max are whole concurrencies in the closed model (at most 1000000)")
	}
	if !closed && top > CapacityMaxRate {
		return nil, errorf("capacity: --max %g: the rate is at most 10000000 req/s", top)
	}
	if closed && o.Max == 0 {
		// The default ceiling of the search stays within what the file
		// limit allows; a --max given above it is refused below.
		top = min(top, float64(execute.MaxConcurrency()))
		start = min(start, top)
	}
	if start > top {
		return nil, errorf("capacity: --start %g is above --max %g", start, top)
	}
	if closed {
		if err := CheckFiles(fmt.Sprintf("capacity: --max %d", int(top)), int(top)); err != nil {
			return nil, err
		}
	}
	l, err := lo.Build()
	if err != nil {
		return nil, err
	}
	confirm := o.Confirm
	if !o.ConfirmSet {
		confirm = max(CapacityConfirmTimes*lo.Duration, CapacityConfirmFloor)
	}
	return &Capacity{Load: l, Warmup: o.Warmup, Config: capacity.Config{
		Objectives: l.Objectives, Start: start, Max: top, Integer: closed, Resolution: o.Resolution,
		Step: lo.Duration, Confirm: confirm, MaxTime: o.MaxTime, Overhead: o.Warmup + CapacityStepOverrun,
	}}, nil
}
