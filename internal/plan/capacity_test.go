package plan

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/capacity"
)

// capacityDefaults are the options of a capacity search without flags but
// its URL and one objective.
func capacityDefaults() CapacityOptions {
	l := Defaults(httpURL)
	l.Duration, l.SLO = CapacityStepTime, []string{"p99<=50ms"}
	return CapacityOptions{Load: l, Model: capacity.ModelOpen, Resolution: 0.02, ResolutionText: "2%",
		MaxTime: 5 * time.Minute, Warmup: time.Second}
}

// TestCapacityConfirmDefault: the default confirmation is 5 times -t, at
// least 30 s; --confirm given is kept as given.
func TestCapacityConfirmDefault(t *testing.T) {
	for _, c := range []struct {
		step, confirm time.Duration
		set           bool
		want          time.Duration
	}{
		{5 * time.Second, 0, false, 30 * time.Second}, // -t 5: 25 s, below the floor
		{2 * time.Second, 0, false, 30 * time.Second},
		{6 * time.Second, 0, false, 30 * time.Second},
		{10 * time.Second, 0, false, 50 * time.Second},
		{2 * time.Second, 4 * time.Second, true, 4 * time.Second},
		{10 * time.Second, 0, true, 0},
	} {
		o := capacityDefaults()
		o.Load.Duration, o.Confirm, o.ConfirmSet = c.step, c.confirm, c.set
		p, err := o.Build()
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if p.Config.Confirm != c.want {
			t.Errorf("%+v: confirmation %v, want %v", c, p.Config.Confirm, c.want)
		}
	}
}

// TestCapacityBuild: the model's defaults of --start, --max and -c, and
// every refusal a usage error (*Error) with its message.
func TestCapacityBuild(t *testing.T) {
	o := capacityDefaults()
	p, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	if p.Config.Start != 10 || p.Config.Max != CapacityMaxRate || p.Concurrency != CapacityCeiling || p.Config.Integer ||
		p.Config.Overhead != time.Second+CapacityStepOverrun {
		t.Errorf("open defaults: %+v, -c %d", p.Config, p.Concurrency)
	}
	o.Model = capacity.ModelClosed
	if p, err = o.Build(); err != nil {
		t.Fatal(err)
	}
	if p.Config.Start != 1 || p.Config.Max < 1 || p.Config.Max > CapacityMaxConc || !p.Config.Integer {
		t.Errorf("closed defaults: %+v", p.Config)
	}
	for _, c := range []struct {
		change func(*CapacityOptions)
		want   string
	}{
		{func(o *CapacityOptions) { o.Load.RequestsSet = true }, "--requests does not apply"},
		{func(o *CapacityOptions) { o.Load.RateSet = true }, "--rate does not apply"},
		{func(o *CapacityOptions) { o.Raw = "x.csv" }, "--raw does not apply"},
		{func(o *CapacityOptions) { o.Load.StartAt = time.Now() }, "--start-at does not apply"},
		{func(o *CapacityOptions) { o.Load.SLO = nil }, "want at least one --slo"},
		{func(o *CapacityOptions) { o.Model, o.Load.ConcurrencySet = capacity.ModelClosed, true }, "-c does not apply with --model closed"},
		{func(o *CapacityOptions) { o.Load.Duration = 0 }, "-t must be greater than 0"},
		{func(o *CapacityOptions) { o.Start = -1 }, "must be greater than 0"},
		{func(o *CapacityOptions) { o.Resolution, o.ResolutionText = 1, "100%" }, `bad --resolution "100%"`},
		{func(o *CapacityOptions) { o.Model, o.Start = capacity.ModelClosed, 1.5 }, "whole concurrencies"},
		{func(o *CapacityOptions) { o.Max = 2e7 }, "the rate is at most 10000000 req/s"},
		{func(o *CapacityOptions) { o.Start, o.Max = 100, 50 }, "--start 100 is above --max 50"},
	} {
		o := capacityDefaults()
		c.change(&o)
		_, err := o.Build()
		var pe *Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want a usage error with %q", c.want, err, c.want)
		}
	}
}
