package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/gate"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/summary"
	"github.com/backbench/backbench/internal/trials"
)

const compareUsage = `Usage: backbench compare [flags] OLD.json NEW.json [MORE.json...]

Compares saved results: bench JSON (--format json) or sweep.json, with or
without trials (--repeat). Every file after the first is compared with the
first. Each series is paired with the series of the first file that differs
from it in at most one factor (transport, keep-alive, protocol, HTTP
version, TLS, upstreams, backend = bench --label or sweep's LABEL; a sweep's
series of the same label first), levels by concurrency; the usual setting
is the baseline of a pair (TCP, keep-alive off, HTTP/1.1...), the first
file's of a pair that differs in the backend or in nothing. What differs
(targets, load shapes) is printed at the top. Per pair, level and metric
(req/s, mean, p50, p99, max; the backend's CPU per request and PSS where
sampled): both medians with their 95% intervals, the ratio with its 95%
interval, the Mann-Whitney p-value and a verdict (faster/slower,
lower/higher, smaller/larger, no difference; "–" without enough trials).

Nothing to pair (no level in common, or every series more than one factor
apart) exits 2.

--fail-on RULES is a regression gate for CI: "req/s slower, p99 higher by
10%" (metrics req/s, mean, p50, p99, max, cpu, pss; the directions of
their verdicts; "by N%": the whole ratio interval beyond 1 ± N%). It judges
the pairs of one series in two files (or of two backends): exit status 4
when one tripped it, 5 when some comparison has no verdict (runs without
--repeat 4 or more), never a silent pass. The text and the JSON's "gate"
name what tripped it.

Flags:
`

// compareOptions are the flags of compare.
type compareOptions struct {
	format string
	noise  string
	force  bool
	failOn string
	wide   bool
}

// runRequests is the request budget of one run of a saved result (of a
// trial, for a result of trials, whose Requests add up).
func runRequests(s *summary.Summary) int64 {
	if s.Repeated != nil && len(s.Trials) > 0 {
		return s.Trials[0].Plan.Requests
	}
	return s.Requests
}

// savedSeries is a series of a saved file: a bench result is one series
// with one level; a capacity search is one series of its steps by
// concurrency (closed model) or one series per rate (open model), each
// level a step's records as its trials.
type savedSeries struct {
	Label     string
	Backend   string
	KeepAlive bool
	Levels    []summary.Summary
	Target    struct {
		URL string
	}
	// anyLevel: the series' one level matches any (a bench result, a
	// step of an open-model search, whose concurrency is the ceiling).
	anyLevel bool
}

// savedFile is a saved bench, sweep or capacity result.
type savedFile struct {
	path  string
	kind  document.Kind
	sweep bool
	// The sweep's load shape.
	Levels           []int
	RequestsPerLevel int64
	SecondsPerLevel  float64
	Series           []savedSeries
	// study is a study's result (compared by internal/study).
	study *study.Result
}

// loadSaved reads a saved result (document.Read); anything else is a
// usage error.
func loadSaved(path string) (*savedFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("compare: %v", err)
	}
	return parseSaved(path, b)
}

// parseSaved reads the saved result b, named path (document.Read);
// anything else is a usage error.
func parseSaved(path string, b []byte) (*savedFile, error) {
	notResult := notSaved(path)
	d, err := document.Read(path, b)
	switch {
	case errors.Is(err, document.ErrBadContent) || errors.Is(err, document.ErrNewerSchema):
		return nil, usagef("compare: %v", err)
	case err != nil:
		return nil, notResult
	}
	return savedOf(path, d)
}

// notSaved is compare's error for a file that it cannot compare.
func notSaved(path string) error {
	return usagef("compare: %s is not a bench or sweep result, a capacity search nor a study (want the JSON of bench --format json, a sweep.json, a capacity.json or a study.json)", path)
}

// savedOf takes the saved result d, named path, as compare pairs it: a
// bench result, a sweep, a capacity search or a study; anything else is
// a usage error.
func savedOf(path string, d document.Result) (*savedFile, error) {
	notResult := notSaved(path)
	for _, l := range levelsOf(d) {
		if l.Repeated != nil && slices.ContainsFunc(l.Trials, document.OldTrial) {
			return nil, usagef("compare: %s: trials saved without their run records (made by an older backbench): nothing to compare", path)
		}
	}
	f := &savedFile{path: path, kind: d.ResultKind()}
	bench, _, _ := document.Bench(d)
	switch d := d.(type) {
	case *document.Sweep, *document.MergedSweep:
		f.sweep = true
		sw := document.SweepOf(d)
		f.Levels, f.RequestsPerLevel, f.SecondsPerLevel = sw.Levels, sw.RequestsPerLevel, sw.SecondsPerLevel
		for _, se := range sw.Series {
			s := savedSeries{Label: se.Label, Backend: se.Backend, KeepAlive: se.KeepAlive, Levels: se.Levels}
			s.Target.URL = se.Target.URL
			f.Series = append(f.Series, s)
		}
		if len(f.Series) == 0 {
			return nil, notResult
		}
	case *document.Run, *document.Trials, *document.MergedRun:
		r := bench
		s := savedSeries{Label: r.Target.URL, Backend: r.Label, KeepAlive: r.KeepAlive, Levels: []summary.Summary{*r}, anyLevel: true}
		if r.Label != "" {
			s.Label = r.Label
		}
		s.Target.URL = r.Target.URL
		f.Series = []savedSeries{s}
	case *document.Study:
		f.study = d.Result
	case *document.Capacity:
		f.sweep = true
		f.Series = capacitySeries(d.JSONReport)
		if len(f.Series) == 0 {
			return nil, usagef("compare: %s: a capacity search without the steps' records (made by an older backbench): nothing to compare", path)
		}
	default:
		return nil, notResult
	}
	return f, nil
}

// levelsOf returns the summaries of a bench result or a sweep's levels.
func levelsOf(d document.Result) []*summary.Summary {
	var out []*summary.Summary
	if s, _, ok := document.Bench(d); ok {
		out = append(out, s)
	}
	if sw := document.SweepOf(d); sw != nil {
		for i := range sw.Series {
			for k := range sw.Series[i].Levels {
				out = append(out, &sw.Series[i].Levels[k])
			}
		}
	}
	return out
}

// capacitySeries makes series of a capacity search's steps that kept
// their records: steps at one level are that level's trials (a step
// measured again, run longer or confirmed is another run of it). The
// closed model is one series, its levels by concurrency; the open model
// one series per rate ("40 req/s"), so that two searches pair their
// steps by rate. A last series, "capacity answer", holds the step(s) at
// the answer, so that two searches whose rates differ compare there.
func capacitySeries(c *capacity.JSONReport) []savedSeries {
	closed := c.CapacityConcurrency != nil || c.Model == capacity.ModelClosed
	var answer float64
	if c.CapacityRPS != nil {
		answer = *c.CapacityRPS
	} else if c.CapacityConcurrency != nil {
		answer = float64(*c.CapacityConcurrency)
	}
	byLevel := map[float64][]*stats.Record{}
	var order []float64
	for _, st := range c.Steps {
		if len(st.Records) == 0 {
			continue
		}
		lv := st.Rate
		if closed {
			lv = float64(st.Concurrency)
		}
		if byLevel[lv] == nil {
			order = append(order, lv)
		}
		byLevel[lv] = append(byLevel[lv], st.Records...)
	}
	slices.Sort(order)
	level := func(recs []*stats.Record) summary.Summary {
		s := summary.Of(recs[len(recs)-1])
		if len(recs) > 1 {
			s.Repeated = &summary.Repeated{Trials: recs}
		}
		return s
	}
	series := func(label string, s summary.Summary, anyLevel bool) savedSeries {
		se := savedSeries{Label: label, KeepAlive: s.KeepAlive, Levels: []summary.Summary{s}, anyLevel: anyLevel}
		se.Target.URL = s.Target.URL
		return se
	}
	var out []savedSeries
	if closed && len(order) > 0 {
		se := series("", level(byLevel[order[0]]), false)
		se.Label, se.Levels = se.Target.URL, nil
		for _, lv := range order {
			se.Levels = append(se.Levels, level(byLevel[lv]))
		}
		out = append(out, se)
	} else {
		for _, lv := range order {
			out = append(out, series(capacity.FormatRate(lv)+" req/s", level(byLevel[lv]), true))
		}
	}
	if recs := byLevel[answer]; len(recs) > 0 {
		out = append(out, series("capacity answer", level(recs), true))
	}
	return out
}

// differences lists how f differs from other in what it measured and how
// (targets and load shapes), shown above the comparisons.
func (f *savedFile) differences(other *savedFile) []string {
	var d []string
	if f.study != nil || other.study != nil {
		return nil
	}
	if f.kind == document.KindCapacity || other.kind == document.KindCapacity {
		if f.kind != other.kind {
			k := f.kind
			if k == document.KindCapacity {
				k = other.kind
			}
			d = append(d, fmt.Sprintf("one is a capacity search, the other a %s result", k))
		}
	} else if f.sweep != other.sweep {
		d = append(d, "one is a bench result, the other a sweep")
	}
	if f.sweep && other.sweep && f.kind != document.KindCapacity && other.kind != document.KindCapacity {
		if !slices.Equal(f.Levels, other.Levels) {
			d = append(d, fmt.Sprintf("levels %v and %v", other.Levels, f.Levels))
		}
		if f.RequestsPerLevel != other.RequestsPerLevel || f.SecondsPerLevel != other.SecondsPerLevel {
			d = append(d, fmt.Sprintf("%s and %s per level", budget(other.RequestsPerLevel, other.SecondsPerLevel),
				budget(f.RequestsPerLevel, f.SecondsPerLevel)))
		}
	}
	for _, s := range f.Series {
		o := other.series(s.Label, f.sweep)
		if o == nil {
			continue
		}
		name := ""
		if f.sweep {
			name = "series " + s.Label + ": "
		}
		if s.Target.URL != o.Target.URL {
			d = append(d, fmt.Sprintf("%stargets %s and %s", name, o.Target.URL, s.Target.URL))
		}
		if s.KeepAlive != o.KeepAlive {
			d = append(d, name+"keep-alive on one side only")
		}
		if !f.sweep {
			a, b := &o.Levels[0], &s.Levels[0]
			if a.Concurrency != b.Concurrency {
				d = append(d, fmt.Sprintf("concurrency %d and %d", a.Concurrency, b.Concurrency))
			}
			if na, nb := runRequests(a), runRequests(b); na != nb {
				d = append(d, fmt.Sprintf("%d and %d requests", na, nb))
			}
			if a.Method != b.Method || a.HTTPVersion != b.HTTPVersion {
				d = append(d, "the request method or HTTP version")
			}
			if (a.Open == nil) != (b.Open == nil) || a.Open != nil && a.Open.RateAsked != b.Open.RateAsked {
				d = append(d, "the load model (--rate)")
			}
		}
	}
	return d
}

func budget(n int64, secs float64) string {
	switch {
	case n > 0 && secs > 0:
		return fmt.Sprintf("%d requests or %g s", n, secs)
	case n > 0:
		return fmt.Sprintf("%d requests", n)
	}
	return fmt.Sprintf("%g s", secs)
}

// series finds a series by label; a bench result's only series matches any
// label.
func (f *savedFile) series(label string, sweep bool) *savedSeries {
	if !sweep {
		return &f.Series[0]
	}
	for i := range f.Series {
		if f.Series[i].Label == label {
			return &f.Series[i]
		}
	}
	return nil
}

// level finds a level by concurrency; a bench result's only level matches
// any (their difference is a shape difference).
func (s *savedSeries) level(c int, sweep bool) *summary.Summary {
	if !sweep || s.anyLevel {
		return &s.Levels[0]
	}
	for i := range s.Levels {
		if s.Levels[i].Concurrency == c {
			return &s.Levels[i]
		}
	}
	return nil
}

// compareResult is compare's JSON output, a document of kind compare.
type compareResult = document.Comparison

func newCompareFlags(o *compareOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Var(newChoice(&o.format, "text", "text", "json", "markdown"), "format", "output: text (a table), json, or markdown (the verdicts as a GitHub table, for a pull request)")
	fs.StringVar(&o.noise, "noise", "2%", "noise threshold `P`: a difference whose interval reaches within 1 ± P is no difference")
	fs.StringVar(&o.failOn, "fail-on", "", "regression gate: exit status 4 when a verdict of these `RULES` shows (req/s slower, p99 higher by 10%: METRIC DIRECTION [by N%], comma-separated); 5 when some comparison has no verdict to judge")
	fs.BoolVar(&o.wide, "wide", false, "print the table as wide as it is (one row per metric with every column), not fitted to 100 columns (or the terminal's width)")
	fs.BoolVar(&o.force, "force", false, "no longer needed: files of different targets or load shapes compare by what differs")
	return fs
}

// parsePercent reads "2%" or "0.02" as a fraction from 0 to below 1.
func parsePercent(flag, s string) (float64, error) {
	f, err := parseStopRate(s)
	if err != nil || f >= 1 {
		return 0, usagef("bad %s %q: want a percentage from 0%% to below 100%% (2%%) or a fraction (0.02)", flag, s)
	}
	return f, nil
}

func compareCmd(_ context.Context, args []string, stdout, _ io.Writer) error {
	var o compareOptions
	fs := newCompareFlags(&o)
	if err := parseFlags(fs, compareUsage, args, stdout); err != nil {
		return err
	}
	noise, err := parsePercent("--noise", o.noise)
	if err != nil {
		return err
	}
	rules, err := parseFailOn(fs, o.failOn)
	if err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return usagef("compare: want at least two files, OLD.json NEW.json (see backbench compare --help)")
	}
	var files []*savedFile
	for _, p := range fs.Args() {
		f, err := loadSaved(p)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	res, err := compareSaved(files, noise, o.force)
	if err != nil {
		return err
	}
	if rules != nil {
		g := gate.Judge(rules, res.Comparisons)
		res.Gate = &g
	}
	switch o.format {
	case "json":
		if err := document.Write(stdout, res); err != nil {
			return err
		}
	case "markdown":
		if err := report.CompareMarkdown(stdout, report.MarkdownCompare{Command: commandLine("compare", args, stats.Privacy{}), Files: res.Files,
			Noise: res.Noise, Differences: res.Differences, Notes: res.Notes, Comparisons: res.Comparisons, Gate: res.Gate}); err != nil {
			return err
		}
	default:
		if err := compareText(stdout, res, files, tableWidth(o.wide, stdout)); err != nil {
			return err
		}
	}
	return gateOutcome(res.Gate)
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

// gateOutcome is the error a gate's judgement exits with: a gateError
// when it tripped or could not judge, nil when it passed or there was no
// gate.
func gateOutcome(g *gate.Result) error {
	if g == nil || g.Status == gate.Passed {
		return nil
	}
	return &gateError{g}
}

// compareSaved compares every file after the first with the first: what
// differs, the comparisons of their pairs and the notes. Nothing to pair
// is a usage error.
func compareSaved(files []*savedFile, noise float64, forced bool) (*compareResult, error) {
	res := &compareResult{Noise: noise, Forced: forced, Notes: []string{}, Differences: []string{}, Comparisons: []trials.Comparison{}}
	old := files[0]
	for _, f := range files {
		res.Files = append(res.Files, f.path)
	}
	for _, f := range files[1:] {
		// What differs is shown, not refused: it is what the pairs
		// compare (or, for load shapes, what to keep in mind).
		for _, d := range f.differences(old) {
			if len(files) > 2 {
				d = f.path + ": " + d
			}
			res.Differences = append(res.Differences, d)
		}
		res.Comparisons = append(res.Comparisons, compareFiles(old, f, noise, &res.Notes)...)
	}
	for _, f := range files {
		if !f.hasTrials() {
			res.Notes = append(res.Notes, fmt.Sprintf("%s has no trials (one run per level): there is no interval, and so no verdict; run with --repeat N", f.path))
		}
	}
	res.Notes = append(res.Notes, verdictNotes(res.Comparisons)...)
	if len(res.Comparisons) == 0 {
		why := "no series and level in common"
		for _, n := range res.Notes {
			if strings.Contains(n, "more than one factor") {
				why = n
				break
			}
		}
		return nil, usagef("compare: nothing to pair between %s: %s", strings.Join(res.Files, ", "), why)
	}
	return res, nil
}

// compareText writes compare's text: the files, what differs, the noise
// threshold, the table, the notes and the gate's judgement.
//
// width is the columns the table and the lines fit (0: as wide as they
// are, --wide).
func compareText(stdout io.Writer, res *compareResult, files []*savedFile, width int) error {
	old := files[0]
	rows := res.Comparisons
	swapped := slices.ContainsFunc(rows, func(c trials.Comparison) bool { return c.BaselineFile != old.path })
	if len(files) == 2 && !swapped {
		// One pair of files: named once, above the table.
		fmt.Fprintf(stdout, "Baseline: %s\nNew:      %s\n", old.path, files[1].path)
		rows = slices.Clone(rows)
		for i := range rows {
			rows[i].File, rows[i].BaselineFile = "", ""
		}
	} else if swapped {
		// The factor's rule chose some baselines (TCP, keep-alive off...)
		// in later files: each row names its files.
		fmt.Fprintf(stdout, "Files:    %s (each pair's baseline by its factor's rule)\n", strings.Join(res.Files, ", "))
	} else {
		fmt.Fprintf(stdout, "Baseline: %s\n", old.path)
	}
	for _, d := range res.Differences {
		fmt.Fprintln(stdout, report.Wrap("Differs:  "+d, width, "          "))
	}
	fmt.Fprintf(stdout, "Noise threshold: ±%g%%\n\n", 100*res.Noise)
	if err := report.ComparisonTableFit(stdout, rows, width); err != nil {
		return err
	}
	for _, n := range res.Notes {
		fmt.Fprintf(stdout, "\n%s", report.Wrap("Note: "+n, width, "  "))
	}
	if len(res.Notes) > 0 {
		fmt.Fprintln(stdout)
	}
	gateText(stdout, res.Gate, width)
	return nil
}

// gateText writes a gate's judgement under a report: its summary and a
// line per comparison that tripped it or that it could not judge.
func gateText(w io.Writer, g *gate.Result, width int) {
	if g == nil {
		return
	}
	fmt.Fprintf(w, "\n%s\n", report.Wrap("Gate: "+g.Summary(), width, "  "))
	for _, f := range g.Tripped {
		fmt.Fprintln(w, report.Wrap("  tripped: "+f.Line(), width, "    "))
	}
	for _, f := range g.Unjudged {
		fmt.Fprintln(w, report.Wrap("  cannot judge: "+f.Line(), width, "    "))
	}
}

// tableWidth is the columns text tables fit: none with --wide (today's
// layout), the terminal's when stdout is a terminal wider than
// report.DefaultWidth, else report.DefaultWidth.
func tableWidth(wide bool, stdout io.Writer) int {
	if wide {
		return 0
	}
	if f, ok := stdout.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > report.DefaultWidth {
			return w
		}
	}
	return report.DefaultWidth
}

// hasTrials reports whether every level of f has trials.
func (f *savedFile) hasTrials() bool {
	if f.study != nil {
		// A sizing study's searches give its capacities a verdict even
		// one a side (study.SizingVerdict).
		return f.study.Measure.Repeat > 1 || f.study.Sizing != nil
	}
	for _, s := range f.Series {
		for _, l := range s.Levels {
			if l.Repeated == nil {
				return false
			}
		}
	}
	return true
}

// factors returns the factors of s (from its first level's result).
func (s *savedSeries) factors() trials.Factors {
	return factorsOf(s.Backend, &s.Levels[0])
}

// compareFiles pairs every series of f with the series of old it is to
// be compared with (see trials.MatchSeries) and compares them at every level in
// common; the notes say which series found no partner.
func compareFiles(old, f *savedFile, noise float64, notes *[]string) []trials.Comparison {
	if old.study != nil || f.study != nil {
		if old.study == nil || f.study == nil {
			*notes = append(*notes, fmt.Sprintf("%s and %s: a study compares with a study only", old.path, f.path))
			return nil
		}
		cs, n := study.CompareRuns(old.study, f.study, noise)
		for i := range cs {
			cs[i].File, cs[i].BaselineFile = f.path, old.path
		}
		*notes = append(*notes, n...)
		return cs
	}
	var out []trials.Comparison
	var olds []trials.Factors
	var oldLabels []string
	for i := range old.Series {
		if len(old.Series[i].Levels) > 0 {
			olds = append(olds, old.Series[i].factors())
		} else {
			olds = append(olds, trials.Factors{})
		}
		oldLabels = append(oldLabels, old.Series[i].Label)
	}
	bothSweeps := f.sweep && old.sweep
	for si := range f.Series {
		s := &f.Series[si]
		if len(s.Levels) == 0 {
			continue
		}
		fs := s.factors()
		matches, why := trials.MatchSeries(s.Label, fs, oldLabels, olds, bothSweeps)
		if len(matches) == 0 {
			*notes = append(*notes, fmt.Sprintf("series %q of %s: %s of %s: not compared", s.Label, f.path, why, old.path))
			continue
		}
		for _, m := range matches {
			o := &old.Series[m.Index]
			// The pair's sides: the factor's rule decides (TCP, keep-alive
			// off... is the baseline); the old file is the baseline of a
			// pair that differs in the backend or in nothing.
			sd, bd, sf, bf := s, o, f, old
			if m.Swap {
				sd, bd, sf, bf = o, s, old, f
			}
			for i := range sd.Levels {
				l := &sd.Levels[i]
				bl := bd.level(l.Concurrency, f.sweep || old.sweep)
				if bl == nil {
					continue
				}
				for _, c := range trials.CompareLevel(sd.Label, bd.Label, l.Concurrency, driver.TrialsOf(l), driver.TrialsOf(bl), noise) {
					c.File, c.BaselineFile = sf.path, bf.path
					c.Factor, c.FactorTitle = m.Factor, m.Title
					c.Why = unansweredWhy(&c, sd.Label, bd.Label, l, bl, nil)
					out = append(out, c)
				}
			}
		}
	}
	return out
}
