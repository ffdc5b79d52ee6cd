package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/compare"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/gate"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
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

// againstOptions are bench's and sweep's flags of a check against a
// saved baseline: --against FILE and --fail-on RULES.
type againstOptions struct {
	against string
	failOn  string
	wide    bool
}

// addAgainstFlags adds --against and --fail-on. (--baseline is taken:
// sweep's --baseline LABEL names the series its verdicts are against.)
func addAgainstFlags(fs *pflag.FlagSet, o *againstOptions) {
	fs.StringVar(&o.against, "against", "", "after the run, compare it with the saved result `FILE` (bench JSON, sweep.json, capacity.json), as compare does")
	fs.BoolVar(&o.wide, "wide", false, "print the comparisons (and sweep's table) as wide as they are, not fitted to 100 columns (or the terminal's width)")
	fs.StringVar(&o.failOn, "fail-on", "", "with --against, a regression gate: exit status 4 when a verdict of these `RULES` shows (req/s slower, p99 higher by 10%), 5 when some comparison has no verdict")
}

// againstPlan is a validated --against: the saved baseline, read before
// the run, the gate's rules (none without --fail-on) and the noise
// threshold of the verdicts.
type againstPlan struct {
	base  *compare.File
	rules []gate.Rule
	noise float64
	// wide is --wide: the comparisons not fitted to the width.
	wide bool
	// decided, with bench's trials run until decided (untilDecided), is
	// the sequential rule of every verdict against the baseline.
	decided *trials.Sequential
}

// validateAgainst reads --against's file and --fail-on's rules before
// the run (nil without --against); a file that is not a saved result, or
// --fail-on without --against, is a usage error.
func validateAgainst(fs *pflag.FlagSet, o *againstOptions, noise float64) (*againstPlan, error) {
	rules, err := parseFailOn(fs, o.failOn)
	if err != nil {
		return nil, err
	}
	if o.against == "" {
		if rules != nil {
			return nil, usagef("--fail-on judges a comparison: give the saved baseline with --against FILE (or use backbench compare --fail-on)")
		}
		return nil, nil
	}
	base, err := loadSaved(o.against)
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			return nil, usagef("--against: %s", strings.TrimPrefix(ue.Error(), "compare: "))
		}
		return nil, err
	}
	return &againstPlan{base: base, rules: rules, noise: noise, wide: o.wide}, nil
}

// check compares the run d, named name, with the baseline and writes
// the comparisons (and the gate's judgement) under the report: compare's
// text with format "text", its Markdown with "markdown", nothing with
// "json" (stdout keeps one document). It returns the gate's outcome (a
// gateError when it tripped or could not judge), or a usage error when
// nothing pairs.
func (a *againstPlan) check(w io.Writer, format, name string, d document.Result) error {
	if a == nil {
		return nil
	}
	res, err := compare.Against(a.base, name, d, a.noise, a.rules, a.decided)
	if err != nil {
		return usagef("--against: %v", err)
	}
	switch format {
	case "text":
		fmt.Fprintf(w, "\nAgainst %s:\n", a.base.Path)
		if err := report.CompareText(w, res, tableWidth(a.wide, w)); err != nil {
			return err
		}
	case "markdown":
		fmt.Fprintln(w)
		if err := report.CompareMarkdown(w, report.MarkdownCompare{Files: res.Files, Noise: res.Noise,
			Differences: res.Differences, Notes: res.Notes, Comparisons: res.Comparisons, TargetComparisons: res.TargetComparisons, Gate: res.Gate}); err != nil {
			return err
		}
	}
	return gateOutcome(res.Gate)
}

// untilDecided sets up bench's trials run until decided (tp's Until)
// against the saved baseline a: the questions of the rounds
// (compare.Questions), on the metrics of --fail-on's rules (req/s without
// any), for the run of plan, labelled label; and the sequential rule of
// the verdicts after the run. Without --against, a baseline nothing of
// the run pairs with, or saved trials too few for the rule to decide
// within --max-repeat, it is a usage error, before any connection.
func (a *againstPlan) untilDecided(tp *trialPlan, plan *execute.Plan, label string) error {
	if a == nil {
		return usagef("bench: --until decided decides the comparison with a saved run: give the run with --against FILE (or stop on the interval's width with --precision P)")
	}
	metrics := gate.Metrics(a.rules)
	if len(metrics) == 0 {
		metrics = []string{trials.MetricRequestsPerSecond}
	}
	f := sweep.PlanFactors(plan)
	f.Backend = label
	qs := compare.Questions(a.base, f, plan.Concurrency, metrics)
	if len(qs) == 0 {
		return usagef("bench: --until decided: nothing in %s pairs with this run (compare pairs a run with a saved one of the same setup, or one that differs in one factor, at its concurrency): nothing to decide", a.base.Path)
	}
	q := tp.plan.Sequential()
	q.Saved = trials.SavedBaseline
	most := 0
	for _, s := range qs {
		if q.FirstLook(len(s.Baseline)) > 0 {
			tp.plan.Saved = qs
			a.decided = &q
			return nil
		}
		most = max(most, len(s.Baseline))
	}
	has := fmt.Sprintf("%d trials", most)
	if most == 1 {
		has = "one run (no trials)"
	}
	return usagef("bench: --until decided: %s has %s at the level compared, too few for the sequential rule to decide against within --max-repeat %d: save it with --repeat %d or more (or raise --max-repeat)",
		a.base.Path, has, tp.plan.MaxRepeat, trials.DefaultMinRounds+2)
}

// gateOutcome is the error a gate's judgement exits with: a gateError
// when it tripped or could not judge, nil when it passed or there was no
// gate.
func gateOutcome(g *gate.Result) error {
	if g == nil || g.Status == gate.Passed {
		return nil
	}
	return &gateError{g}
}

// commandLine is the command line "backbench CMD ARGS..." as a shell
// would take it back, credentials redacted unless p keeps them
// (stats.Privacy.CommandLine).
func commandLine(cmd string, args []string, p stats.Privacy) string { return p.CommandLine(cmd, args) }

// sloError is a run that failed a --slo objective: exit status 3.
type sloError struct{ failed []string }

func (e *sloError) Error() string { return "objective failed: " + strings.Join(e.failed, "; ") }

// sloGate prints the verdict on each objective (with text, after the
// report) and returns a sloError if one failed.
func sloGate(stdout io.Writer, text bool, objs []capacity.Objective, rs []stats.SLOResult) error {
	if len(objs) == 0 {
		return nil
	}
	lines, failed := capacity.Judged(objs, rs)
	if text {
		fmt.Fprintln(stdout, "\nObjectives:")
		for _, l := range lines {
			fmt.Fprintln(stdout, "  "+l)
		}
	}
	if failed != nil {
		return &sloError{failed}
	}
	return nil
}

// parseFailOn reads --fail-on (nil rules when not given); a bad rule is a
// usage error.
func parseFailOn(fs *pflag.FlagSet, spec string) ([]gate.Rule, error) {
	if !fs.Changed("fail-on") {
		return nil, nil
	}
	rules, err := gate.Parse(spec)
	if err != nil {
		return nil, usagef("bad --fail-on: %v", err)
	}
	return rules, nil
}
