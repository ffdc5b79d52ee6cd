package page

import (
	"fmt"
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
	fmt.Fprintf(b, "<p>Factors: %s (a chart's legend names a series by its levels in this order). %d configurations, %s; %s; %d rounds, series order seeded with %d; noise threshold %g%%; %.1f s in all.",
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
		rps := &chart{id: p.id("c"), title: "requests per second against concurrency, by " + a.Factor, xLabel: "concurrency (connections)", yLabel: "requests / second", levelTicks: true}
		p99 := &chart{id: p.id("c"), title: "99th percentile of the request time against concurrency, by " + a.Factor, xLabel: "concurrency (connections)", yLabel: "p99 latency (ms)", levelTicks: true}
		for i, se := range st.Series {
			name := levelsLabel(st, &se)
			lr, lp := &line{label: name, style: i}, &line{label: name, style: i}
			for _, s := range se.Steps {
				x := float64(s.Concurrency)
				at := fmt.Sprintf("%s, c=%d: ", se.Label, s.Concurrency)
				lr.pts = append(lr.pts, point{x, s.RequestsPerSecond.Median, at + figureTip(s.RequestsPerSecond, "req/s", len(s.Trials)), s.Failed > 0})
				if len(s.RequestsPerSecond.CI95) == 2 {
					lr.band = append(lr.band, band{x, s.RequestsPerSecond.CI95[0], s.RequestsPerSecond.CI95[1]})
					rps.confs = append(rps.confs, trials.MedianConfidence(len(s.Trials)))
				}
				if s.Complete > 0 {
					lp.pts = append(lp.pts, point{x, s.P99Ms.Median, at + figureTip(s.P99Ms, "ms p99", len(s.Trials)), s.Failed > 0})
					if len(s.P99Ms.CI95) == 2 {
						lp.band = append(lp.band, band{x, s.P99Ms.CI95[0], s.P99Ms.CI95[1]})
						p99.confs = append(p99.confs, trials.MedianConfidence(len(s.Trials)))
					}
				}
			}
			rps.lines, p99.lines = append(rps.lines, lr), append(p99.lines, lp)
		}
		rps.svg(b)
		p99.svg(b)
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
		[]string{"configuration", "backend", "command", "address", "starts", "PSS mean / peak", "processes", "status"}, rows)
	rows = nil
	for _, se := range st.Series {
		for _, s := range se.Steps {
			failed := "0"
			if s.Failed > 0 {
				failed = fmt.Sprintf("%d (%s)", s.Failed, s.FailureClass)
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
	p.table("Series: medians of the trials with their intervals ("+trials.IntervalLabel(confs...)+")", []string{"series", "concurrency", "trials", "req/s", "mean ms", "p99 ms", "max ms", "failed"}, rows)
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
