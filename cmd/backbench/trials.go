package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/cli"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
)

// repeatOptions are the flags of repeated trials (--repeat, --precision
// and the rest), shared by bench and sweep (--baseline is sweep's only).
type repeatOptions struct {
	repeat    int
	precision string
	maxRepeat int
	seed      uint64
	noise     string
	baseline  string
}

// addRepeatFlags adds the trial flags to fs; withBaseline adds sweep's
// --baseline.
func addRepeatFlags(fs *pflag.FlagSet, o *repeatOptions, withBaseline bool) {
	fs.IntVar(&o.repeat, "repeat", 1, "run `N` trials of every series at every level (fresh connections, own warm-up each), interleaved in rounds; medians with 95% intervals")
	fs.StringVar(&o.precision, "precision", "", "add rounds until the 95% interval of each series' req/s is within ±`P` of its median (2%), from --repeat (default 5) trials up to --max-repeat")
	fs.IntVar(&o.maxRepeat, "max-repeat", trials.DefaultMaxRepeat, "with --precision, at most `N` trials")
	fs.Uint64Var(&o.seed, "seed", 0, "seed of the order of the series within each round (default: a random one, printed)")
	fs.StringVar(&o.noise, "noise", "2%", "noise threshold `P`: a difference whose ratio interval reaches within 1 ± P is no difference")
	if withBaseline {
		fs.StringVar(&o.baseline, "baseline", "", "the backend `LABEL` (or series label) the other backends are compared with, and the table's verdict column (default: the first series)")
	}
}

// trialPlan is a validated set of trial flags.
type trialPlan struct {
	// on reports trials: --repeat or --precision given.
	on       bool
	plan     trials.Plan
	noise    float64
	baseline string
}

// validateRepeat checks the trial flags; every error is a usage error.
func validateRepeat(fs *pflag.FlagSet, o *repeatOptions) (trialPlan, error) {
	tp := trialPlan{baseline: o.baseline}
	noise, err := cli.ParsePercent("--noise", o.noise)
	if err != nil {
		return tp, err
	}
	tp.noise = noise
	tp.on = fs.Changed("repeat") || fs.Changed("precision")
	if !tp.on {
		for _, f := range []string{"max-repeat", "seed", "noise", "baseline"} {
			if fs.Changed(f) {
				return tp, usagef("--%s needs --repeat N or --precision P", f)
			}
		}
		return tp, nil
	}
	p := trials.Plan{Repeat: o.repeat, MaxRepeat: o.maxRepeat, Seed: o.seed}
	if o.precision != "" {
		v, ok := strings.CutSuffix(strings.TrimSpace(o.precision), "%")
		f, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || !(f > 0 && f < 100) {
			return tp, usagef("bad --precision %q: want a percentage above 0%% and below 100%% (2%%)", o.precision)
		}
		p.Precision = f / 100
		if !fs.Changed("repeat") {
			p.Repeat = trials.DefaultRepeat
		}
	} else if fs.Changed("max-repeat") {
		return tp, usagef("--max-repeat needs --precision P")
	}
	if err := p.Validate(); err != nil {
		return tp, usagef("%v", err)
	}
	if !fs.Changed("seed") {
		var b [8]byte
		rand.Read(b[:])
		p.Seed = binary.LittleEndian.Uint64(b[:]) >> 1
	}
	tp.plan = p
	return tp, nil
}

// report is what the trials add to a sweep's report: the plan, the
// comparisons of series (see sweep.Comparisons) and the notes.
func (tp *trialPlan) report(series []sweep.SeriesResult, backends []string, notes []string) *report.SweepTrials {
	cs, pairNotes := sweep.Comparisons(series, backends, tp.baseline, tp.noise)
	st := &report.SweepTrials{Repeat: tp.plan.Repeat, Precision: tp.plan.Precision, MaxRepeat: tp.plan.MaxRepeat,
		Seed: tp.plan.Seed, Noise: tp.noise, Baseline: tp.baseline,
		Comparisons: cs, Notes: append([]string{}, notes...)}
	st.Notes = append(st.Notes, pairNotes...)
	st.Notes = append(st.Notes, trials.VerdictNotes(st.Comparisons)...)
	return st
}

// executeTrials runs bench's trials of plan through the driver: each a
// fresh run after its own warm-up (driver.DefaultWarmup), as many as tp
// says, with o. It returns the trials: their runs, the pooled run (whose
// summary carries the run's notes and whether it was interrupted) and
// the medians.
func executeTrials(ctx context.Context, plan *execute.Plan, tp *trialPlan, o execute.Options) (*driver.Trials, error) {
	stderr := o.Stderr
	var shortNotes []string
	kept := 0
	res, err := driver.Run(ctx, driver.Config{
		Schedule: driver.Levels{{}},
		Trials:   &tp.plan,
		Warmup:   driver.DefaultWarmup(plan.Requests, plan.Duration),
		Options:  o,
		// The first warm-up checks that the target answers and prepares
		// the process (file limit, scheduling, threads) for every run.
		Prepare: func() *execute.Setup { return execute.Prepare(plan, plan.Concurrency, o.Quiet, stderr) },
		OnTrial: func(t driver.Trial) {
			kept++
			note := trials.ShortTrialNote(fmt.Sprintf("trial %d", t.K), driver.TrialOf(t.Summary))
			if note != "" {
				shortNotes = append(shortNotes, note)
			}
			if !o.Quiet {
				fmt.Fprintf(stderr, "Trial %d: %.2f requests/sec, p99 %.3f ms, %d failed\n", t.K, t.Summary.RequestsPerSecond, t.Summary.Percentiles["99"], t.Summary.Failed)
				if note != "" {
					fmt.Fprintf(stderr, "Note: %s\n", note)
				}
			}
		},
	}, []driver.Series{{Plan: plan}})
	if re := (*driver.RunError)(nil); errors.As(err, &re) {
		err = re.Err // bench names no series
	}
	if err != nil {
		return nil, err
	}
	sr := &res.Series[0]
	if len(sr.Trials) == 0 {
		return nil, errInterrupted
	}
	t := sr.Trials[0]
	pooled := &t.Pooled.Summary
	pooled.Interrupted = res.Interrupted
	if len(shortNotes) > 0 {
		n := shortNotes[0]
		if len(shortNotes) > 1 {
			n = fmt.Sprintf("%d of %d trials were too short to trust (the first: %s)", len(shortNotes), kept, n)
		}
		pooled.Notes = append(pooled.Notes, n)
	}
	return t, nil
}

// writeTrialsText writes bench's text report of trials: ab's report of
// the pooled run's own summary (its requests/sec the pooled one), then
// the trials' medians (writeTrials).
func writeTrialsText(w io.Writer, t *driver.Trials, tp *trialPlan, o report.TextOptions) error {
	if err := report.Text(w, &t.Pooled.Summary, o); err != nil {
		return err
	}
	writeTrials(w, t, tp)
	return nil
}

// writeTrials prints what bench's trials add to the ab report (which is
// the pooled run's): the medians of the trials' figures with their
// intervals, and whether the precision was reached.
func writeTrials(w io.Writer, t *driver.Trials, tp *trialPlan) {
	m := &t.Medians
	fmt.Fprintf(w, "\n%s\n", tp.plan.Describe(false))
	conf := "no interval with one trial"
	if c := m.RequestsPerSecond.Confidence; c > 0 {
		conf = fmt.Sprintf("%.4g%% interval", 100*c)
	}
	fmt.Fprintf(w, "Median of %d trials (%s):\n", len(t.Runs), conf)
	line := func(name string, e trials.Estimate, unit string) {
		ci := e.Interval()
		if ci == nil {
			fmt.Fprintf(w, "  %-20s %.3f %s\n", name, e.Median, unit)
			return
		}
		e = trials.Estimate{Median: e.Median, Lo: ci[0], Hi: ci[1], N: 2}
		fmt.Fprintf(w, "  %-20s %.3f %s %s [%.3f, %.3f]\n", name, e.Median, unit, e.PlusMinus(), ci[0], ci[1])
	}
	line("Requests per second:", m.RequestsPerSecond, "[#/sec]")
	line("mean:", m.MeanMs, "[ms]")
	line("p50:", m.P50Ms, "[ms]")
	line("p99:", m.P99Ms, "[ms]")
	line("max:", m.MaxMs, "[ms]")
	if t.Precise != nil && !*t.Precise {
		fmt.Fprintf(w, "Note: the requests/sec interval is still wider than ±%g%% after %d trials (--max-repeat)\n", 100*tp.plan.Precision, len(t.Runs))
	}
}

// judgeDesign writes one line on stderr, before any request, when the
// trials asked for cannot give a verdict: fewer trials a side than the
// rank test needs to reach p < Alpha. It returns whether it did.
func (tp *trialPlan) judgeDesign(stderr io.Writer) bool {
	if !tp.on {
		return false
	}
	n := tp.plan.Repeat
	if tp.plan.Precision > 0 {
		n = tp.plan.MaxRepeat
	}
	w := trials.DesignWarning(n)
	if w == "" {
		return false
	}
	fmt.Fprintf(stderr, "backbench: warning: %s\n", w)
	return true
}
