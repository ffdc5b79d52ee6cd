package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/load"
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
	// until and budget are --until and --budget (sweep's and bench's).
	until  string
	budget time.Duration
}

// addRepeatFlags adds the trial flags to fs; withBaseline adds sweep's
// --until (pairs of series) and --baseline, and bench's --until (the run
// against --against's saved run) otherwise.
func addRepeatFlags(fs *pflag.FlagSet, o *repeatOptions, withBaseline bool) {
	fs.IntVar(&o.repeat, "repeat", 1, "run `N` trials of every series at every level (fresh connections, own warm-up each), interleaved in rounds; medians with their intervals (95% from 6 trials)")
	fs.StringVar(&o.precision, "precision", "", "add rounds until the interval of each series' req/s is within ±`P` of its median (2%), from --repeat (default 5) trials up to --max-repeat")
	fs.IntVar(&o.maxRepeat, "max-repeat", trials.DefaultMaxRepeat, "with --precision or --until decided, at most `N` trials")
	fs.Uint64Var(&o.seed, "seed", 0, "seed of the order of the series within each round (default: a random one, printed)")
	fs.StringVar(&o.noise, "noise", "2%", "noise threshold `P`: a ratio interval wholly inside 1 ± P is \"same\", wholly outside a direction, else \"undecided\"")
	if withBaseline {
		fs.StringVar(&o.until, "until", "", "`decided`: after the first rounds (--repeat, default and at least 4), run at each level only the series an undecided pair needs, until every pair is decided, the --budget is spent or --max-repeat rounds ran; verdicts from the sequential rule")
		fs.Var(load.NewSeconds(&o.budget, 0), "budget", "with --until decided: the most time all the rounds may take (seconds, or a duration: 10m), each level's added rounds getting an equal share of what is left; default: none")
		fs.StringVar(&o.baseline, "baseline", "", "the backend `LABEL` (or series label) the other backends are compared with, and the table's verdict column (default: the first series)")
		return
	}
	fs.StringVar(&o.until, "until", "", "`decided`: with --against FILE, after the first trials (--repeat, default and at least 4) add trials until the comparisons with the saved run (req/s, or --fail-on's metrics) are decided, the --budget is spent or --max-repeat trials ran; verdicts from the sequential rule")
	fs.Var(load.NewSeconds(&o.budget, 0), "budget", "with --until decided: the most time all the trials may take (seconds, or a duration: 1m); default: none")
}

// trialPlan is a validated set of trial flags.
type trialPlan struct {
	// on reports trials: --repeat or --precision given.
	on    bool
	plan  trials.Plan
	noise float64
}

// validateRepeat checks the trial flags; every error is a usage error.
func validateRepeat(fs *pflag.FlagSet, o *repeatOptions) (trialPlan, error) {
	tp := trialPlan{}
	noise, err := ParsePercent("--noise", o.noise)
	if err != nil {
		return tp, err
	}
	tp.noise = noise
	tp.on = fs.Changed("repeat") || fs.Changed("precision") || fs.Changed("until")
	if !tp.on {
		if fs.Changed("budget") {
			return tp, usagef("--budget needs --until decided")
		}
		if fs.Changed("max-repeat") && fs.Lookup("until") != nil {
			return tp, usagef("--max-repeat needs --precision P or --until decided")
		}
		for _, f := range []string{"max-repeat", "seed", "noise", "baseline"} {
			if fs.Changed(f) {
				return tp, usagef("--%s needs --repeat N or --precision P", f)
			}
		}
		return tp, nil
	}
	p, err := trials.Options{Repeat: o.repeat, RepeatSet: fs.Changed("repeat"), Precision: o.precision, MaxRepeat: o.maxRepeat,
		MaxRepeatSet: fs.Changed("max-repeat"), Seed: o.seed, SeedSet: fs.Changed("seed"),
		Until: o.until, Budget: o.budget, BudgetSet: fs.Changed("budget")}.Build()
	if err != nil {
		return tp, usagef("%v", err)
	}
	p.Noise = noise
	tp.plan = p
	return tp, nil
}

// warnDesign writes one line on stderr, before any request, when the
// trials asked for cannot give a verdict (trials.Plan.Warning).
func (tp *trialPlan) warnDesign(stderr io.Writer) {
	if !tp.on {
		return
	}
	if w := tp.plan.Warning(); w != "" {
		fmt.Fprintf(stderr, "backbench: warning: %s\n", w)
	}
}
