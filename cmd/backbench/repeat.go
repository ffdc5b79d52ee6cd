package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/protocol"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/summary"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
	"github.com/backbench/backbench/sockets"
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

// factorsOf returns the factors of a series from what its result says of
// its plan (target, keep-alive, HTTP version, upstreams), and backend, the
// label the user gave it ("" for none).
func factorsOf(backend string, s *summary.Summary) trials.Factors {
	f := trials.Factors{Protocol: s.Target.Protocol, Transport: s.Target.Network, KeepAlive: s.KeepAlive,
		HTTPVersion: s.HTTPVersion, Upstreams: max(len(s.Upstreams), 1), Backend: backend}
	var tls bool
	f.Protocol, tls = protocolFactor(s.Target.Protocol)
	if tls || s.TLS != nil || sockets.SchemeUsesTLS(sockets.SchemeOf(s.Target.URL)) {
		f.TLS = true
	}
	return f
}

// sweepComparisons pairs the series (trials.Pairs: transport at each
// keep-alive mode, keep-alive on each transport, every backend against
// the baseline's, a deployment apart against the baseline's with what
// else differs named...) and compares each pair at every level both
// ran, grouped by factor. The notes say how labels were read, which
// backend pairs differ in more than the backend, why a series that never
// answered has no verdict, and which series nothing could be paired
// with.
func sweepComparisons(series []sweep.SeriesResult, backends []string, baseline string, noise float64) ([]trials.Comparison, []string) {
	out := []trials.Comparison{}
	var idx []int
	var fs []trials.Factors
	baseBackend := ""
	for i, s := range series {
		if len(s.Levels) == 0 {
			continue
		}
		idx = append(idx, i)
		fs = append(fs, factorsOf(backends[i], &s.Levels[0]))
		if s.Label == baseline || backends[i] == baseline {
			baseBackend = backends[i]
		}
	}
	pairs, unpaired := trials.Pairs(fs, baseBackend)
	var notes []string
	var unanswered failedSeries
	for _, pr := range pairs {
		s, b := &series[idx[pr.Series]], &series[idx[pr.Baseline]]
		title := pr.Title(fs)
		for k := range s.Levels {
			sl := &s.Levels[k]
			for m := range b.Levels {
				bl := &b.Levels[m]
				if bl.Concurrency != sl.Concurrency {
					continue
				}
				for _, c := range trials.CompareLevel(s.Label, b.Label, sl.Concurrency, driver.TrialsOf(sl), driver.TrialsOf(bl), noise) {
					c.Factor, c.FactorTitle = pr.Factor, title
					c.Why = unansweredWhy(&c, s.Label, b.Label, sl, bl, &unanswered)
					out = append(out, c)
				}
			}
		}
	}
	if trials.LabelsAreNames(fs) {
		for _, pr := range pairs {
			if pr.Factor != trials.FactorBackend {
				notes = append(notes, "every URL has a label of its own, so the labels are taken as names of one backend reached in different ways: "+
					"series that differ in one setting are compared on it (a protocol apart, they are two backends); "+
					"if they are different backends, each such verdict is on the two deployments as a whole; "+
					"give the URLs of one backend the same label (LABEL=URL) to say which share a backend")
				break
			}
		}
	}
	said := map[string]bool{}
	for _, pr := range pairs {
		s, b := series[idx[pr.Series]], series[idx[pr.Baseline]]
		if len(pr.Also) == 0 {
			continue
		}
		key := backends[idx[pr.Series]] + "\x00" + pr.AlsoText(fs)
		if said[key] {
			continue
		}
		said[key] = true
		notes = append(notes, fmt.Sprintf("%s differs from %s in more than the backend (%s): nothing else pairs them, so they are compared as two deployments, "+
			"and the backend verdicts are on the whole of each, not on the backend alone", s.Label, b.Label, pr.AlsoText(fs)))
	}
	for _, f := range unanswered {
		slices.Sort(f.levels)
		levels := make([]string, len(f.levels))
		for i, l := range f.levels {
			levels[i] = strconv.Itoa(l)
		}
		notes = append(notes, fmt.Sprintf("%s: every request failed at c=%s (%s): no verdict on a series that never answered",
			f.label, strings.Join(levels, ", "), f.why))
	}
	for _, u := range unpaired {
		var d []string
		for j := range fs {
			if j != u {
				d = append(d, fmt.Sprintf("from %s in %s", series[idx[j]].Label, trials.DescribeDifferences(fs[u], fs[j])))
			}
		}
		notes = append(notes, fmt.Sprintf("%s differs from every other series in more than one factor (%s), and no label makes it a backend to compare: not compared",
			series[idx[u]].Label, strings.Join(d, "; ")))
	}
	return out, notes
}

// unansweredWhy returns why the side of c that never answered
// (c.Unanswered: series, baseline or both) failed, from the results of
// the levels compared, s of series and b of baseline: "tls: every
// request failed (connect: the server's TLS certificate does not verify:
// ...)"; "" when both answered. It records the failures in failed, if
// not nil, for the notes.
func unansweredWhy(c *trials.Comparison, series, baseline string, s, b *summary.Summary, failed *failedSeries) string {
	if c.Unanswered == "" {
		return ""
	}
	var whys []string
	for _, side := range []struct {
		label string
		s     *summary.Summary
		on    bool
	}{{series, s, c.Unanswered != trials.UnansweredBaseline}, {baseline, b, c.Unanswered != trials.UnansweredSeries}} {
		if side.on {
			w := failureWords(side.s)
			whys = append(whys, fmt.Sprintf("%s: every request failed (%s)", side.label, w))
			if failed != nil {
				failed.add(side.label, w, side.s.Concurrency)
			}
		}
	}
	return strings.Join(whys, "; ")
}

// failedSeries are the series whose every request failed at some
// levels, each with the words of its failures, for one note each.
type failedSeries []failedAt

// failedAt is a series whose every request failed, why, at levels.
type failedAt struct {
	label, why string
	levels     []int
}

// add records that series label's every request failed at level c, for
// why.
func (fs *failedSeries) add(label, why string, c int) {
	for i := range *fs {
		if f := &(*fs)[i]; f.label == label && f.why == why {
			if !slices.Contains(f.levels, c) {
				f.levels = append(f.levels, c)
			}
			return
		}
	}
	*fs = append(*fs, failedAt{label, why, []int{c}})
}

// failureWords names the failures of s: its most frequent error sample
// ("connect: connection refused", "connect: the server's TLS certificate
// does not verify: ..."), or its failure classes without one.
func failureWords(s *summary.Summary) string {
	best := -1
	for i, e := range s.ErrorSamples {
		if best < 0 || e.Count > s.ErrorSamples[best].Count {
			best = i
		}
	}
	if best >= 0 {
		return s.ErrorSamples[best].Message
	}
	var cls []string
	for c, n := range s.Failures.ByClass() {
		if n > 0 {
			cls = append(cls, load.ErrClass(c).String())
		}
	}
	return strings.Join(cls, ", ") + " failures"
}

// report is what the trials add to a sweep's report: the plan, the
// comparisons of series (see sweepComparisons) and the notes.
func (tp *trialPlan) report(series []sweep.SeriesResult, backends []string, notes []string) *report.SweepTrials {
	cs, pairNotes := sweepComparisons(series, backends, tp.baseline, tp.noise)
	st := &report.SweepTrials{Repeat: tp.plan.Repeat, Precision: tp.plan.Precision, MaxRepeat: tp.plan.MaxRepeat,
		Seed: tp.plan.Seed, Noise: tp.noise, Baseline: tp.baseline,
		Comparisons: cs, Notes: append([]string{}, notes...)}
	st.Notes = append(st.Notes, pairNotes...)
	st.Notes = append(st.Notes, verdictNotes(st.Comparisons)...)
	return st
}

// writeComparisons prints a sweep's comparisons table under a title, and
// its notes; nothing without trials.
//
// width is the columns they fit (0: as wide as they are).
func writeComparisons(w io.Writer, st *report.SweepTrials, width int) {
	if st == nil {
		return
	}
	if len(st.Comparisons) > 0 {
		fmt.Fprintf(w, "\nComparisons (ratio series / baseline, 95%% interval, Mann-Whitney p, noise threshold ±%g%%):\n", 100*st.Noise)
		report.ComparisonTableFit(w, st.Comparisons, width)
	}
	for _, n := range st.Notes {
		fmt.Fprintln(w, report.Wrap("Note: "+n, width, "  "))
	}
}

// shortTrials counts the trials too short to trust (trials.Trial.Short)
// of a sweep, for one note.
type shortTrials struct {
	n, all   int
	shortest float64
	labels   []string
}

func (st *shortTrials) add(label string, s *summary.Summary) {
	st.all++
	if t := driver.TrialOf(s); t.Short() {
		if st.n == 0 || t.Seconds < st.shortest {
			st.shortest = t.Seconds
		}
		st.n++
		if !slices.Contains(st.labels, label) {
			st.labels = append(st.labels, label)
		}
	}
}

// note is the sweep's note of its short trials, "" without any.
func (st *shortTrials) note() string {
	if st.n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d trials (of %s) lasted less than %g s (the shortest %.3g s) or had no measurable client CPU time: too short to trust; lengthen them with -n (more requests per level) or -t (seconds per level)",
		st.n, st.all, strings.Join(st.labels, ", "), trials.MinTrialSeconds, st.shortest)
}

// executeTrials runs bench's trials of plan through the driver: each a
// fresh run after its own warm-up (driver.DefaultWarmup), as many as tp
// says, with o. It returns the pooled result and the merged record.
func executeTrials(ctx context.Context, plan *execute.Plan, tp *trialPlan, o execute.Options) (summary.Summary, *stats.Record, error) {
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
			note := shortTrialNote(fmt.Sprintf("trial %d", t.K), t.Summary)
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
		return summary.Summary{}, nil, err
	}
	sr := &res.Series[0]
	if len(sr.Levels) == 0 {
		return summary.Summary{}, nil, errInterrupted
	}
	sum, rec := sr.Levels[0], sr.Records[0]
	sum.Interrupted, sum.Seed = res.Interrupted, tp.plan.Seed
	if len(shortNotes) > 0 {
		n := shortNotes[0]
		if len(shortNotes) > 1 {
			n = fmt.Sprintf("%d of %d trials were too short to trust (the first: %s)", len(shortNotes), kept, n)
		}
		sum.Notes = append(sum.Notes, n)
	}
	return sum, rec, nil
}

// writeTrials prints what bench's trials add to the ab report: the
// medians with their intervals, and whether the precision was reached.
func writeTrials(w io.Writer, s *summary.Summary, tp *trialPlan) {
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
	line("mean:", t.MeanMs, t.MeanMsCI95, "[ms]")
	line("p50:", t.P50Ms, t.P50MsCI95, "[ms]")
	line("p99:", t.P99Ms, t.P99MsCI95, "[ms]")
	line("max:", t.MaxMs, t.MaxMsCI95, "[ms]")
	if t.Precise != nil && !*t.Precise {
		fmt.Fprintf(w, "Note: the requests/sec interval is still wider than ±%g%% after %d trials (--max-repeat)\n", 100*tp.plan.Precision, len(t.Trials))
	}
}

// verdictNotes explains, once each, the verdicts the comparisons could
// not give (too few trials for the test) and the marker of short trials.
func verdictNotes(cs []trials.Comparison) []string {
	var notes []string
	few, short := false, false
	for _, c := range cs {
		if n := min(c.Trials, c.BaselineTrials); c.Verdict == trials.NoVerdict && c.Unanswered == "" && !few {
			few = true
			if n <= 1 {
				notes = append(notes, fmt.Sprintf("\u2013, 1 trial: a side has one trial, so there is no interval and no verdict; run with --repeat %d or more",
					trials.MinTrialsForVerdict()+1))
			} else {
				notes = append(notes, fmt.Sprintf("\u2013, %d trials: %d trials against %d cannot give p < %g (Mann-Whitney, two-sided), so there is no verdict; use %d or more a side (--repeat %d)",
					n, c.Trials, c.BaselineTrials, trials.Alpha, trials.MinTrialsForVerdict(), trials.MinTrialsForVerdict()+1))
			}
		}
		short = short || c.ShortTrials > 0
	}
	if short {
		notes = append(notes, trials.ShortNote)
	}
	return notes
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
	if trials.CanReach(n, n) {
		return false
	}
	need := trials.MinTrialsForVerdict()
	what := fmt.Sprintf("%d trials a side cannot give p < %g (Mann-Whitney, two-sided: at best p = %.3g)", n, trials.Alpha, 2/binom(2*n, n))
	if n == 1 {
		what = "1 trial a side has no interval and no test"
	}
	fmt.Fprintf(stderr, "backbench: warning: %s, so no comparison of this run can have a verdict; the smallest count that can is %d (--repeat %d; 5 gives an interval of 93.75%%)\n",
		what, need, need)
	return true
}

// binom is C(n, k).
func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// shortTrialNote is the note of a trial too short to trust, naming the
// flags that lengthen it; "" for a trial long enough.
func shortTrialNote(what string, s *summary.Summary) string {
	t := driver.TrialOf(s)
	if !t.Short() {
		return ""
	}
	why := fmt.Sprintf("lasted %.3g s, less than %g s", t.Seconds, trials.MinTrialSeconds)
	if t.Seconds >= trials.MinTrialSeconds {
		why = "had no measurable client CPU time"
	}
	return fmt.Sprintf("%s %s: too short to trust; lengthen it with -n (more requests) or -t (more seconds)", what, why)
}

// protocolFactor returns the protocol factor of a recorded scheme: its
// protocol's name (https is HTTP, over TLS) and whether the scheme is TLS.
// A scheme without a protocol is its own value.
func protocolFactor(scheme string) (name string, tls bool) {
	pr, err := protocol.Lookup(scheme)
	if err != nil {
		return scheme, false
	}
	return pr.Name(), sockets.Target{Scheme: scheme}.UsesTLS()
}

// planFactors returns the factors of a plan (the backend left unnamed).
func planFactors(p *execute.Plan) trials.Factors {
	r := p.Record()
	f := trials.Factors{Protocol: r.Target.Protocol, Transport: r.Target.Network, KeepAlive: p.KeepAlive,
		HTTPVersion: r.HTTPVersion, TLS: p.TLS != nil, Upstreams: max(len(r.Upstreams), 1)}
	var tls bool
	if f.Protocol, tls = protocolFactor(r.Target.Protocol); tls {
		f.TLS = true
	}
	return f
}

// factorWords is what tells f apart among fs, the factors of the URLs of
// one label: " unix", " fcgi HTTP/1.0", " tls", " 3 upstreams" (keep-alive
// is --keepalive-modes' own suffix).
func factorWords(f trials.Factors, fs []trials.Factors) string {
	var words []string
	for _, name := range []string{trials.FactorTransport, trials.FactorProtocol, trials.FactorHTTPVersion, trials.FactorTLS, trials.FactorUpstreams} {
		differ := false
		for _, o := range fs {
			differ = differ || slices.Contains(trials.Differences(f, o), name)
		}
		if !differ {
			continue
		}
		switch w := f.Level(name); name {
		case trials.FactorTLS:
			words = append(words, map[bool]string{true: "tls", false: "no-tls"}[f.TLS])
		case trials.FactorUpstreams:
			words = append(words, w+" upstreams")
		default:
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return ""
	}
	return " " + strings.Join(words, " ")
}
