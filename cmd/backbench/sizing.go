package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/cli"
	"github.com/backbench/backbench/internal/study/spec"
)

// Settings of study --quick for a capacity study: 1 s steps, a 2 s
// confirmation, one round.
const (
	quickSizingStep    = time.Second
	quickSizingConfirm = 2 * time.Second
)

// addSizingFlags adds the flags of a capacity study (a sizing).
func addSizingFlags(fs *pflag.FlagSet, o *studyOptions) {
	fs.Var(cli.NewSeconds(&o.confirm, 0), "confirm", "capacity study: replace the file's confirmation run of each search (seconds, or a duration)")
	fs.StringVar(&o.memory, "memory", "", "capacity study: replace the file's memory budget (`SIZE`: 2GiB, 512MiB)")
}

// overrideCapacity applies the measurement flags to a capacity study's
// measure: -t is a step's length, -c the most requests in flight, and
// --confirm and --memory its own; -n does not apply.
func (o *studyOptions) overrideCapacity(fs *pflag.FlagSet, m *spec.Measure) error {
	if o.quick {
		m.Duration, m.Confirm, m.Repeat, m.Warmup = quickSizingStep, quickSizingConfirm, 1, 0
	}
	if fs.Changed("requests") {
		return usagef("-n: a capacity study's steps are timed: give -t")
	}
	if err := o.overrideLevels(m, true, "a capacity study takes one level (the most requests in flight)"); err != nil {
		return err
	}
	if fs.Changed("timelimit") {
		if o.seconds <= 0 {
			return usagef("-t: want a positive step length")
		}
		m.Duration = o.seconds
	}
	if err := o.overrideRounds(fs, m); err != nil {
		return err
	}
	if fs.Changed("confirm") {
		if o.confirm < 0 {
			return usagef("--confirm: want 0 or more")
		}
		m.Confirm = o.confirm
		if o.confirm == 0 {
			m.Confirm = -1 // none
		}
	}
	if fs.Changed("memory") {
		b, err := spec.ParseSize(o.memory)
		if err != nil {
			return usagef("--memory: %v", err)
		}
		m.Memory = b
	}
	return nil
}

// refuseSizingFlags refuses --confirm and --memory in a study that is not
// a capacity study.
func refuseSizingFlags(fs *pflag.FlagSet, kind string) error {
	for _, n := range []string{"confirm", "memory"} {
		if fs.Changed(n) {
			return usagef("--%s: only a capacity study (measure kind capacity) takes it, not a %s", n, kind)
		}
	}
	return nil
}
