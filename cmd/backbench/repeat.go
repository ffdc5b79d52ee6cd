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
	"time"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
)

// repeatOptions are the flags of repeated trials, shared by bench and
// sweep (--baseline is sweep's only).
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
		fs.StringVar(&o.baseline, "baseline", "", "compare every other series with the series of this `LABEL` (default: the first)")
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
	noise, err := parsePercent("--noise", o.noise)
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

// describe is the line that says how the trials ran, seed included; a
// sweep's run at every level.
func (tp *trialPlan) describe(sweep bool) string {
	p := tp.plan
	s := fmt.Sprintf("%d trials", p.Repeat)
	if sweep {
		s += " per level"
	}
	if p.Precision > 0 {
		s = fmt.Sprintf("trials until the req/s interval is within ±%g%% (from %d, at most %d)", 100*p.Precision, p.Repeat, p.MaxRepeat)
	}
	return fmt.Sprintf("Trials: %s, in rounds shuffled with --seed %d", s, p.Seed)
}

// trialOf is what the statistics read of a trial's result.
func trialOf(s *stats.Summary) trials.Trial {
	return trials.Trial{RequestsPerSecond: s.RequestsPerSecond, P50Ms: s.Percentiles["50"], P99Ms: s.Percentiles["99"],
		Failed: s.Failed, Finished: s.Complete + s.Failed - s.Failures.Length}
}

// trialsOf returns the trials of a result, or the result as one trial.
func trialsOf(s *stats.Summary) []trials.Trial {
	if s.Repeated == nil {
		return []trials.Trial{trialOf(s)}
	}
	out := make([]trials.Trial, len(s.Trials))
	for i, r := range s.Trials {
		ts := r.Summary()
		out[i] = trialOf(&ts)
	}
	return out
}

// pooled is the result of a series at a level over its trials: the
// trials' records merged (as if run back to back: their times add up, the
// concurrency is a trial's), its Summary with the median requests/sec
// and the intervals. precise, with --precision, says whether the interval
// got within the precision asked.
func pooled(recs []*stats.Record, precise *bool) (stats.Summary, *stats.Record, error) {
	m, err := stats.Merge(recs...)
	if err != nil {
		return stats.Summary{}, nil, err
	}
	m.Plan.Concurrency, m.Elapsed = recs[0].Plan.Concurrency, 0
	for _, r := range recs {
		m.Elapsed += r.Elapsed
	}
	s := m.Summary()
	s.Repeated = &stats.Repeated{Trials: recs, Precise: precise, PooledRequestsPerSecond: s.RequestsPerSecond}
	sum := trials.Summarize(trialsOf(&s))
	s.RequestsPerSecond = sum.RequestsPerSecond.Median
	s.RequestsPerSecondCI95 = sum.RequestsPerSecond.Interval()
	s.P50Ms, s.P50MsCI95 = sum.P50Ms.Median, sum.P50Ms.Interval()
	s.P99Ms, s.P99MsCI95 = sum.P99Ms.Median, sum.P99Ms.Interval()
	s.Confidence = sum.RequestsPerSecond.Confidence
	return s, m, nil
}

// sweepTrials runs the sweep in rounds of trials: at each level, trial k
// of every active series (in a shuffled order) before trial k+1 of any,
// each trial one run of sweep.Run with its own warm-up. The stop rule
// applies to a level's pooled trials.
func (p *sweepPlan) sweepTrials(ctx context.Context, tp *trialPlan) (res sweep.Result, notes []string, err error) {
	res = sweep.Result{Series: make([]sweep.SeriesResult, len(p.series))}
	for i, s := range p.series {
		res.Series[i].Label = s.Label
	}
	start := load.Now()
	defer func() { res.Elapsed = time.Duration(load.Now() - start) }()
	rounds := trials.NewRounds(tp.plan)
	active := make([]int, len(p.series))
	for i := range active {
		active[i] = i
	}
	runsDone := 0
	for li, level := range p.cfg.Levels {
		runs := map[int][]*stats.Record{}
		unreachable, unreached, lost := map[int]error{}, map[int]int{}, map[int]*sweep.Stop{}
		one := p.cfg
		one.Levels, one.StopOnErrors = []int{level}, false
		lr, err := rounds.Level(active, func(si int) (float64, error) {
			if progress := p.cfg.Progress; progress != nil {
				k := len(runs[si]) + 1
				left := len(active)*(len(p.cfg.Levels)-li)*tp.plan.Repeat - runsDone
				one.Progress = func(pr sweep.Progress) {
					pr.LevelIndex, pr.RunsDone, pr.RunsLeft = li, runsDone, max(left, 1)
					pr.Series = fmt.Sprintf("%s trial %d", pr.Series, k)
					progress(pr)
				}
			}
			r, err := sweep.Run(ctx, one, p.series[si:si+1])
			if err != nil {
				return 0, err
			}
			runsDone++
			// A target that no trial of the first level reached, or a
			// backend lost during a trial, ends the series after the
			// level, as it ends a sweep's series after a run.
			if u := r.Series[0].Unreachable; u != nil && li == 0 {
				unreachable[si] = u
				unreached[si]++
			} else if st := r.Series[0].Stop; st != nil {
				lost[si] = st
			}
			n := len(runs[si])
			if lv := r.Series[0].Levels; len(lv) > 0 && !lv[0].Interrupted {
				runs[si] = append(runs[si], r.Series[0].Records[0])
			}
			if r.Interrupted || len(runs[si]) == n {
				return 0, trials.ErrStop
			}
			return r.Series[0].Levels[0].RequestsPerSecond, nil
		})
		stopped := errors.Is(err, trials.ErrStop)
		if err != nil && !stopped {
			return res, notes, err
		}
		imprecise := map[int]bool{}
		for _, si := range lr.Imprecise {
			imprecise[si] = true
		}
		var next []int
		for _, si := range active {
			if len(runs[si]) == 0 {
				continue
			}
			var precise *bool
			if tp.plan.Precision > 0 && !stopped {
				ok := !imprecise[si]
				precise = &ok
				if !ok {
					notes = append(notes, fmt.Sprintf("%s at concurrency %d: the req/s interval is still wider than ±%g%% after %d trials",
						p.series[si].Label, level, 100*tp.plan.Precision, lr.Rounds))
				}
			}
			sum, rec, err := pooled(runs[si], precise)
			if err != nil {
				return res, notes, err
			}
			sr := &res.Series[si]
			sr.Levels, sr.Records = append(sr.Levels, sum), append(sr.Records, rec)
			if u := unreachable[si]; u != nil && unreached[si] == len(runs[si]) {
				sr.Unreachable = u
				continue
			}
			if st := lost[si]; st != nil {
				sr.Stop = st
				continue
			}
			if p.cfg.StopOnErrors {
				if rate := sweep.ErrorRate(&sum); rate > p.cfg.StopErrorRate {
					sr.Stop = &sweep.Stop{Concurrency: level, ErrorRate: rate,
						Reason: fmt.Sprintf("%d of %d requests failed over %d trials at concurrency %d (ratio %.3g > %g)",
							sum.Failed, sum.Complete+sum.Failed-sum.Failures.Length, len(runs[si]), level, rate, p.cfg.StopErrorRate)}
					continue
				}
			}
			next = append(next, si)
		}
		if stopped {
			res.Interrupted = true
			return res, notes, nil
		}
		active = next
		if len(active) == 0 {
			break
		}
	}
	return res, notes, nil
}

// sweepComparisons compares, at every level, every series with the baseline,
// and with --keepalive-modes on,off each series' ka with its no-ka.
func sweepComparisons(series []sweep.SeriesResult, baseline string, noise float64) []trials.Comparison {
	out := []trials.Comparison{}
	base := 0
	for i, s := range series {
		if s.Label == baseline {
			base = i
		}
	}
	type pair struct{ s, b int }
	var pairs []pair
	seen := map[pair]bool{}
	add := func(s, b int) {
		if s != b && !seen[pair{s, b}] && !seen[pair{b, s}] {
			seen[pair{s, b}] = true
			pairs = append(pairs, pair{s, b})
		}
	}
	for i := range series {
		add(i, base)
	}
	for i, s := range series {
		if stem, ok := strings.CutSuffix(s.Label, " ka"); ok {
			for j, o := range series {
				if o.Label == stem+" no-ka" {
					add(i, j)
				}
			}
		}
	}
	for _, pr := range pairs {
		s, b := &series[pr.s], &series[pr.b]
		for k := range s.Levels {
			sl := &s.Levels[k]
			for m := range b.Levels {
				if bl := &b.Levels[m]; bl.Concurrency == sl.Concurrency {
					out = append(out, trials.CompareLevel(s.Label, b.Label, sl.Concurrency, trialsOf(sl), trialsOf(bl), noise)...)
				}
			}
		}
	}
	return out
}

// report is what the trials add to a sweep's report: the plan, the
// comparisons of series (see sweepComparisons) and the notes.
func (tp *trialPlan) report(series []sweep.SeriesResult, notes []string) *report.SweepTrials {
	st := &report.SweepTrials{Repeat: tp.plan.Repeat, Precision: tp.plan.Precision, MaxRepeat: tp.plan.MaxRepeat,
		Seed: tp.plan.Seed, Noise: tp.noise, Baseline: tp.baseline,
		Comparisons: sweepComparisons(series, tp.baseline, tp.noise), Notes: append([]string{}, notes...)}
	st.Notes = append(st.Notes, fewTrialsNotes(st.Comparisons)...)
	return st
}

// writeComparisons prints a sweep's comparisons table under a title, and
// its notes; nothing without trials.
func writeComparisons(w io.Writer, st *report.SweepTrials) {
	if st == nil {
		return
	}
	if len(st.Comparisons) > 0 {
		fmt.Fprintf(w, "\nComparisons (ratio series / baseline, 95%% interval, Mann-Whitney p, noise threshold ±%g%%):\n", 100*st.Noise)
		report.ComparisonTable(w, st.Comparisons)
	}
	for _, n := range st.Notes {
		fmt.Fprintf(w, "Note: %s\n", n)
	}
}

// executeTrials runs bench's trials of plan: each a fresh run with its own
// warm-up (a tenth of -n, or of -t), one after the other, as many as tp
// says, through the executor with o. It returns the pooled result and the
// merged record.
func executeTrials(ctx context.Context, plan *execute.Plan, tp *trialPlan, o execute.Options) (stats.Summary, *stats.Record, error) {
	stderr := o.Stderr
	warm := *plan
	if plan.Requests > 0 {
		warm.Requests = max(plan.Requests/10, 1)
		warm.Concurrency = int(min(int64(plan.Concurrency), warm.Requests))
	} else {
		warm.Duration = plan.Duration / 10
	}
	// The first warm-up waits for --start-at; every later run follows it.
	wo := execute.Options{Stderr: stderr, Quiet: true, Discard: true, StartAt: o.StartAt}
	o.StartAt = time.Time{}
	o.Progress, o.KeepRows, o.Raw = nil, false, nil // one line per trial instead
	var runs []*stats.Record
	lr, err := trials.NewRounds(tp.plan).Level([]int{0}, func(int) (float64, error) {
		// The first warm-up checks that the target answers and prepares
		// the process (file limit, scheduling, threads) for every run.
		if _, err := execute.Run(ctx, &warm, wo); err != nil {
			return 0, err
		}
		wo.StartAt = time.Time{}
		if wo.Setup == nil {
			wo.Setup = execute.Prepare(plan, plan.Concurrency, o.Quiet, stderr)
			o.Setup = wo.Setup
		}
		if ctx.Err() != nil {
			return 0, trials.ErrStop
		}
		rec, err := execute.Run(ctx, plan, o)
		if err != nil {
			return 0, err
		}
		if rec.Interrupted {
			return 0, trials.ErrStop
		}
		o.Announce = false
		runs = append(runs, rec)
		sum := rec.Summary()
		if !o.Quiet {
			fmt.Fprintf(stderr, "Trial %d: %.2f requests/sec, p99 %.3f ms, %d failed\n", len(runs), sum.RequestsPerSecond, sum.Percentiles["99"], sum.Failed)
		}
		return sum.RequestsPerSecond, nil
	})
	if wo.Setup != nil {
		wo.Setup.Done()
	}
	stopped := errors.Is(err, trials.ErrStop)
	if err != nil && !stopped {
		return stats.Summary{}, nil, err
	}
	if len(runs) == 0 {
		return stats.Summary{}, nil, errInterrupted
	}
	var precise *bool
	if tp.plan.Precision > 0 && !stopped {
		ok := len(lr.Imprecise) == 0
		precise = &ok
	}
	sum, rec, err := pooled(runs, precise)
	if err != nil {
		return sum, nil, err
	}
	sum.Interrupted, sum.Seed = stopped, tp.plan.Seed
	return sum, rec, nil
}

// writeTrials prints what bench's trials add to the ab report: the
// medians with their intervals, and whether the precision was reached.
func writeTrials(w io.Writer, s *stats.Summary, tp *trialPlan) {
	t := s.Repeated
	fmt.Fprintf(w, "\n%s\n", tp.describe(false))
	conf := "no interval with one trial"
	if t.Confidence > 0 {
		conf = fmt.Sprintf("%.4g%% interval", 100*t.Confidence)
	}
	fmt.Fprintf(w, "Median of %d trials (%s):\n", len(t.Trials), conf)
	line := func(name string, med float64, ci []float64, unit string) {
		if ci == nil {
			fmt.Fprintf(w, "  %-20s %.3f %s\n", name, med, unit)
			return
		}
		e := trials.Estimate{Median: med, Lo: ci[0], Hi: ci[1], N: 2}
		fmt.Fprintf(w, "  %-20s %.3f %s %s [%.3f, %.3f]\n", name, med, unit, e.PlusMinus(), ci[0], ci[1])
	}
	line("Requests per second:", s.RequestsPerSecond, t.RequestsPerSecondCI95, "[#/sec]")
	line("p50:", t.P50Ms, t.P50MsCI95, "[ms]")
	line("p99:", t.P99Ms, t.P99MsCI95, "[ms]")
	if t.Precise != nil && !*t.Precise {
		fmt.Fprintf(w, "Note: the requests/sec interval is still wider than ±%g%% after %d trials (--max-repeat)\n", 100*tp.plan.Precision, len(t.Trials))
	}
}

// fewTrialsNotes warns once when a comparison has trials on both sides but
// fewer than 4 on one: the rank test cannot then reach p < 0.05 (3 against
// 3 gives p = 0.1 at best), so no verdict can be anything but "no
// difference".
func fewTrialsNotes(cs []trials.Comparison) []string {
	for _, c := range cs {
		if n := min(c.Trials, c.BaselineTrials); n > 1 && n < 4 {
			return []string{fmt.Sprintf("%d trials on a side cannot give p < %g: every verdict is %q; use 4 or more (--repeat 5)",
				n, trials.Alpha, trials.NoDifference)}
		}
	}
	return nil
}
