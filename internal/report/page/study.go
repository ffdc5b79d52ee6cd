package page

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/trials"
)

// studyAnswers are a study's sentences: each factor's conclusion.
func studyAnswers(st *study.Result) []string {
	var ss []string
	for _, a := range st.Answers {
		ss = append(ss, a.Conclusion)
	}
	return ss
}

// study writes a study's section: the question and design, the answers'
// details per factor, the charts per factor (req/s and p99 against
// concurrency, a line per series) or a sizing study's (capacity and
// memory against the pool size), the configurations with their commands
// and memory, the series' table, the comparisons and the notes.
func (p *pager) study(st *study.Result) {
	b := &p.b
	var factors []string
	for _, f := range st.Factors {
		factors = append(factors, fmt.Sprintf("%s (%s; baseline %s; %s side)", f.Name, strings.Join(f.Levels, ", "), f.Baseline, f.Kind))
	}
	fmt.Fprintf(b, "<p>Factors: %s (a legend names a series by its levels in this order, or by the one level that differs). %d configurations, %s; %s; %d rounds, series order seeded with %d; noise threshold %g%%; %.1f s in all.",
		esc(strings.Join(factors, "; ")), len(st.Configurations), fmt.Sprintf("%d series", len(st.Series)), esc(measureText(st)),
		st.Rounds, st.Seed, 100*st.Noise, st.Seconds)
	if st.Incomplete {
		b.WriteString(" <strong>Incomplete</strong>: the study was interrupted; what finished is shown.")
	}
	b.WriteString("</p>\n")
	perFactor := map[string]int{}
	for _, a := range st.Answers {
		perFactor[a.Factor]++
	}
	for i, a := range st.Answers {
		head := "Factor " + a.Factor
		if perFactor[a.Factor] > 1 {
			head += ": " + a.Level
		}
		fmt.Fprintf(b, "<h3>%s</h3>\n<p>%s</p>\n<ul class=\"details\">\n", esc(head), esc(a.Conclusion))
		for _, d := range a.Details {
			fmt.Fprintf(b, "<li>%s</li>\n", esc(d))
		}
		b.WriteString("</ul>\n")
		// A factor's charts once, after its last level's answer.
		last := i+1 == len(st.Answers) || st.Answers[i+1].Factor != a.Factor
		if len(st.Measure.Levels) < 2 || !last {
			continue
		}
		for fi := range st.Factors {
			if st.Factors[fi].Name == a.Factor {
				p.factorCharts(st, fi)
			}
		}
	}
	// A sizing study's charts right after its answers.
	p.sizingCharts(st)
	var rows [][]cell
	for _, c := range st.Configurations {
		status := "ok"
		if c.Failure != "" {
			status = c.FailureKind + ": " + c.Failure
		} else if c.Lost > 0 {
			status = fmt.Sprintf("lost %d×", c.Lost)
		}
		if c.Killed > 0 {
			status += fmt.Sprintf("; needed SIGKILL %d×", c.Killed)
		}
		mem := "-"
		if c.MeanPSSBytes > 0 {
			mem = fmt.Sprintf("%.1f / %.1f", c.MeanPSSBytes/(1<<20), float64(c.PeakPSSBytes)/(1<<20))
		}
		argv := c.Command
		if !p.keepSecrets {
			argv = load.RedactArgs(argv, "")
		}
		cmd := shellJoin(argv)
		rows = append(rows, []cell{{text: esc(c.Name), th: true}, txt(c.Backend), {text: "<code>" + esc(cmd) + "</code>"},
			txt(c.Network + " " + c.Address), num(fmt.Sprint(c.Starts)), num(mem), num(fmt.Sprint(c.MaxProcs)), txt(status)})
	}
	p.table("Configurations: what each ran, where, and its memory (PSS of its process tree, MiB)",
		[]string{"configuration", "backend", "command", "address", "starts", "PSS mean / peak", "processes, master included", "status"}, rows)
	rows = nil
	for _, se := range st.Series {
		for _, s := range se.Steps {
			failed := "0"
			if s.Failed > 0 {
				failed = fmt.Sprintf("%d (%s)", s.Failed, s.FailureClass)
			}
			if st.Sizing != nil {
				// A capacity search has no concurrency of its own (the
				// ceiling of requests in flight) and no mean (the step it
				// rests on keeps its percentiles).
				rows = append(rows, []cell{{text: esc(se.Label), th: true}, num(fmt.Sprint(len(s.Trials))),
					num(figureText(s.RequestsPerSecond, 1)), num(figureText(s.P99Ms, 2)), num(figureText(s.MaxMs, 2)), num(failed)})
				continue
			}
			rows = append(rows, []cell{{text: esc(se.Label), th: true}, num(fmt.Sprint(s.Concurrency)), num(fmt.Sprint(len(s.Trials))),
				num(figureText(s.RequestsPerSecond, 1)), num(figureText(s.MeanMs, 2)), num(figureText(s.P99Ms, 2)), num(figureText(s.MaxMs, 2)), num(failed)})
		}
	}
	var confs []float64
	for _, se := range st.Series {
		for _, s := range se.Steps {
			confs = append(confs, trials.MedianConfidence(len(s.Trials)))
		}
	}
	if st.Sizing != nil {
		p.table("Series: medians of the searches with their intervals ("+trials.IntervalLabel(confs...)+"); the latencies and failures of the step each capacity rests on",
			[]string{"series", "searches", "capacity req/s", "p99 ms", "max ms", "failed"}, rows)
	} else {
		p.table("Series: medians of the trials with their intervals ("+trials.IntervalLabel(confs...)+")", []string{"series", "concurrency", "trials", "req/s", "mean ms", "p99 ms", "max ms", "failed"}, rows)
	}
	p.comparisons(studyComparisons(st.Comparisons))
	var notes []string
	notes = append(notes, st.Notes...)
	for _, c := range st.Configurations {
		for _, n := range c.Notes {
			notes = append(notes, c.Name+": "+n)
		}
	}
	p.notes("Notes", notes)
}

// levelsLabel is a series' name in a legend: its levels alone, in the
// factors' order ("unix off"), shorter than its label.
func levelsLabel(st *study.Result, se *study.Series) string {
	var parts []string
	for _, f := range st.Factors {
		parts = append(parts, se.Levels[f.Name])
	}
	return strings.Join(parts, " ")
}

// measureText is "sweep at concurrency 1, 11, 21, 1000 requests a level
// and trial, 5 trials", or a sizing study's "capacity searches within
// p99<=100ms, steps of 2 s, confirmations of 10 s, 3 searches per pool
// size".
func measureText(st *study.Result) string {
	m := st.Measure
	if sz := st.Sizing; sz != nil {
		s := fmt.Sprintf("capacity searches within %s, steps of %g s", strings.Join(sz.Objectives, ", "), sz.StepSeconds)
		if sz.ConfirmSeconds > 0 {
			s += fmt.Sprintf(", confirmations of %g s", sz.ConfirmSeconds)
		}
		s += ", " + searches(m.Repeat) + " per pool size"
		if sz.MemoryBudgetBytes > 0 {
			s += ", a memory budget of " + study.Bytes(sz.MemoryBudgetBytes)
		}
		return s
	}
	per := fmt.Sprintf("%d requests a level and trial", m.Requests)
	if m.Requests == 0 {
		per = fmt.Sprintf("%g s a level and trial", m.Seconds)
	}
	return fmt.Sprintf("%s at concurrency %s, %s, %s", m.Kind, levelsText(m.Levels), per, plural(m.Repeat, "trial"))
}

// figureText is "1234.5 [1200.0, 1250.1]".
func figureText(f study.Figure, dec int) string {
	s := fnumDec(f.Median, dec)
	if len(f.CI95) == 2 {
		s += " [" + ci(f.CI95, dec) + "]"
	}
	return s
}

// figureTip is a point's tooltip: the median of the trials and its
// interval.
func figureTip(f study.Figure, unit string, n int) string {
	s := fmt.Sprintf("%s %s", fnumDec(f.Median, 2), unit)
	if len(f.CI95) == 2 {
		s += fmt.Sprintf(" (median of %d trials; %s %s)", n, trials.IntervalLabel(trials.MedianConfidence(n)), ci(f.CI95, 2))
	}
	return s
}

// fnumDec formats v with dec decimals.
func fnumDec(v float64, dec int) string { return fmt.Sprintf("%.*f", dec, v) }

// studyMetric is one figure a factor's charts draw against concurrency.
type studyMetric struct {
	title, short, yLabel, unit string
	figure                     func(s *study.Step) (study.Figure, bool)
}

// studyMetrics are the figures drawn per factor: requests per second and
// the 99th percentile (where requests completed).
var studyMetrics = []studyMetric{
	{"requests per second against concurrency", "req/s", "requests / second", "req/s",
		func(s *study.Step) (study.Figure, bool) { return s.RequestsPerSecond, true }},
	{"99th percentile of the request time against concurrency", "p99", "p99 latency (ms)", "ms p99",
		func(s *study.Step) (study.Figure, bool) { return s.P99Ms, s.Complete > 0 }},
}

// studyLine is series se's line of metric m, named label, in style; the
// confidences of its bands are added to c's.
func studyLine(c *chart, m studyMetric, se *study.Series, label string, style int) *line {
	l := &line{label: label, style: style}
	for i := range se.Steps {
		s := &se.Steps[i]
		f, ok := m.figure(s)
		if !ok {
			continue
		}
		x := float64(s.Concurrency)
		at := fmt.Sprintf("%s, c=%d: ", se.Label, s.Concurrency)
		l.pts = append(l.pts, point{x, f.Median, at + figureTip(f, m.unit, len(s.Trials)), s.Failed > 0})
		if len(f.CI95) == 2 {
			l.band = append(l.band, band{x, f.CI95[0], f.CI95[1]})
			c.confs = append(c.confs, trials.MedianConfidence(len(s.Trials)))
		}
	}
	return l
}

// factorGroup is the series that share every other factor's level: the
// ones a chart of the factor compares.
type factorGroup struct {
	// key is the other factors' levels, "transport=tcp, keepalive=off"
	// ("" with one factor); rank orders groups by the levels' order.
	key    string
	rank   []int
	series []int
}

// factorGroups groups st's series by the levels of every factor but
// fi's, in the factors' and levels' order; within a group, the series
// are in the order of factor fi's levels.
func factorGroups(st *study.Result, fi int) []*factorGroup {
	levelIndex := func(f study.Factor, level string) int {
		for i, l := range f.Levels {
			if l == level {
				return i
			}
		}
		return len(f.Levels)
	}
	byKey := map[string]*factorGroup{}
	var groups []*factorGroup
	for i := range st.Series {
		se := &st.Series[i]
		var parts []string
		var rank []int
		for j, o := range st.Factors {
			if j != fi {
				parts = append(parts, o.Name+"="+se.Levels[o.Name])
				rank = append(rank, levelIndex(o, se.Levels[o.Name]))
			}
		}
		k := strings.Join(parts, ", ")
		g := byKey[k]
		if g == nil {
			g = &factorGroup{key: k, rank: rank}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.series = append(g.series, i)
	}
	f := st.Factors[fi]
	sort.SliceStable(groups, func(a, b int) bool { return slices.Compare(groups[a].rank, groups[b].rank) < 0 })
	for _, g := range groups {
		sort.SliceStable(g.series, func(a, b int) bool {
			return levelIndex(f, st.Series[g.series[a]].Levels[f.Name]) < levelIndex(f, st.Series[g.series[b]].Levels[f.Name])
		})
	}
	return groups
}

// factorCharts writes factor fi's charts, for each metric: one chart per
// combination of the other factors' levels, each with one line per level
// of the factor (coloured by that level in every chart of the set), as
// small multiples on one y scale titled by the other factors' levels;
// with one factor, one chart; with a factor of two levels compared in at
// most two combinations (one comparison a chart), one chart holding every
// series, its legend naming each by all its levels.
func (p *pager) factorCharts(st *study.Result, fi int) {
	f := st.Factors[fi]
	groups := factorGroups(st, fi)
	merge := len(groups) > 1 && len(f.Levels) == 2 && len(st.Series) <= 4
	b := &p.b
	fmt.Fprintf(b, "<div class=\"factor-charts\" data-factor=\"%s\">\n", esc(f.Name))
	defer b.WriteString("</div>\n")
	style := func(se *study.Series) int {
		for i, l := range f.Levels {
			if l == se.Levels[f.Name] {
				return i
			}
		}
		return len(f.Levels)
	}
	for _, m := range studyMetrics {
		title := m.title + ", by " + f.Name
		switch {
		case len(groups) == 1 || merge:
			c := &chart{id: p.id("c"), title: title, xLabel: "concurrency (connections)", yLabel: m.yLabel, levelTicks: true}
			n := 0
			for _, g := range groups {
				for _, i := range g.series {
					se := &st.Series[i]
					if merge {
						c.lines = append(c.lines, studyLine(c, m, se, levelsLabel(st, se), n))
					} else {
						c.lines = append(c.lines, studyLine(c, m, se, se.Levels[f.Name], style(se)))
					}
					n++
				}
			}
			c.svg(b)
		default:
			var charts []*chart
			var legend []*line
			for i, l := range f.Levels {
				legend = append(legend, &line{label: l, style: i})
			}
			for _, g := range groups {
				c := &chart{id: p.id("c"), title: g.key + ": " + m.short + " by " + f.Name, xLabel: "concurrency (connections)", yLabel: m.yLabel, levelTicks: true}
				for _, i := range g.series {
					se := &st.Series[i]
					c.lines = append(c.lines, studyLine(c, m, se, se.Levels[f.Name], style(se)))
				}
				charts = append(charts, c)
			}
			sharedMultiples(b, p.id("c"), title+", one chart per combination of the other factors' levels", f.Name, charts, legend)
		}
	}
}
