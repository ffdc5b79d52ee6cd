package plan_test

import (
	"errors"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/plan"
)

// TestStagesAndWindowRefused: stages that cannot be run, or that
// contradict other options, and a timeline window that is not positive
// or longer than the run, are refused by Build with a usage error
// (*plan.Error: bench's exit status 2), before any connection.
func TestStagesAndWindowRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(o *plan.Options)
	}{
		{"--stages 0s:4", func(o *plan.Options) { o.StageSpec = "0s:4" }},
		{"--stages -1s:4", func(o *plan.Options) { o.StageSpec = "-1s:4" }},
		{"--stages 1s:-4", func(o *plan.Options) { o.StageSpec = "1s:-4" }},
		{"--stages 1s:0", func(o *plan.Options) { o.StageSpec = "1s:0" }},
		{"--rate-stages 1s:0", func(o *plan.Options) { o.RateStageSpec = "1s:0" }},
		{"--stages and --rate-stages", func(o *plan.Options) { o.StageSpec, o.RateStageSpec = "1s:4", "1s:4" }},
		{"--stages with -n", func(o *plan.Options) { o.StageSpec, o.Requests, o.RequestsSet = "1s:4", 10, true }},
		{"--stages with -t", func(o *plan.Options) { o.StageSpec, o.Duration, o.TimeLimitSet = "1s:4", 2*time.Second, true }},
		{"--stages with --rate", func(o *plan.Options) { o.StageSpec, o.Rate, o.RateSet = "1s:4", 10, true }},
		{"--stages with -c", func(o *plan.Options) { o.StageSpec, o.Concurrency, o.ConcurrencySet = "1s:4", 2, true }},
		{"--ramp alone", func(o *plan.Options) { o.Ramp = true }},
		{"--rate-stages 1s:100 --window 2s", func(o *plan.Options) { o.RateStageSpec, o.Window, o.WindowSet = "1s:100", 2*time.Second, true }},
		{"--window 0", func(o *plan.Options) { o.Window, o.WindowSet = 0, true }},
		{"--window -1", func(o *plan.Options) { o.Window, o.WindowSet = -time.Second, true }},
		{"-t 1 --window 2s", func(o *plan.Options) {
			o.Duration, o.TimeLimitSet, o.Window, o.WindowSet = time.Second, true, 2*time.Second, true
		}},
	} {
		o := plan.Defaults("http://unix:/nonexistent.sock:/")
		c.set(&o)
		l, err := o.Build()
		var pe *plan.Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: plan %+v, error %v: want a *plan.Error", c.name, l, err)
		}
	}
	// The same options, well formed, are taken.
	o := plan.Defaults("http://unix:/nonexistent.sock:/")
	o.RateStageSpec, o.Ramp, o.Window, o.WindowSet = "1s:100,1s:200", true, 250*time.Millisecond, true
	if _, err := o.Build(); err != nil {
		t.Errorf("well-formed rate stages: %v", err)
	}
}
