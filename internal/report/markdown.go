package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/backbench/backbench/internal/gate"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// The Markdown renderers (--format markdown) write what is pasted into
// an issue or a pull request: GitHub-flavoured Markdown, the answers as
// sentences first, then a table whose number columns are right-aligned
// (their cells of one column with the same decimals), then the command
// that made the result in a code span.

// mdTable writes a GFM table: head, the alignment row (right for the
// columns right says), rows; cells are escaped.
func mdTable(w *bufio.Writer, head []string, right []bool, rows [][]string) {
	row := func(cells []string) {
		w.WriteString("|")
		for _, c := range cells {
			w.WriteString(" " + mdCell(c) + " |")
		}
		w.WriteString("\n")
	}
	row(head)
	w.WriteString("|")
	for i := range head {
		if i < len(right) && right[i] {
			w.WriteString("---:|")
		} else {
			w.WriteString("---|")
		}
	}
	w.WriteString("\n")
	for _, r := range rows {
		row(r)
	}
}

// mdCell escapes a table cell as inline text (mdText), line breaks as
// spaces.
func mdCell(s string) string {
	return mdText(strings.TrimSpace(strings.ReplaceAll(s, "\n", " ")))
}

// mdText escapes inline text: the characters that would start emphasis,
// code or HTML, and pipes (cells). Brackets stay: "[0.77, 0.79]" is no
// link without a "(" or a reference after it.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_<>|", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// CodeSpan is s as a Markdown code span, with a fence of backticks longer
// than any run of them in s.
func CodeSpan(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 || strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// madeWith is the last line: the command that made the result.
func madeWith(w *bufio.Writer, command string) {
	if command != "" {
		fmt.Fprintf(w, "\nMade with %s.\n", CodeSpan(command))
	}
}

// num formats f with the given decimals, "-" for NaN.
func mdNum(f float64, decimals int) string {
	if f != f {
		return "-"
	}
	return strconv.FormatFloat(f, 'f', decimals, 64)
}

// mdInterval is "[lo, hi]" with the given decimals, "" without one.
func mdInterval(ci []float64, decimals int) string {
	if len(ci) != 2 {
		return ""
	}
	return "[" + mdNum(ci[0], decimals) + ", " + mdNum(ci[1], decimals) + "]"
}

// BenchMarkdown writes a bench result's headline figures as Markdown: a
// sentence with the answer (req/s, p99, failures), a table of req/s, the
// mean, p50, p99 and max of the request time (with trials: the medians
// of the trials' figures and their 95% intervals), the requests and the
// time, then command in a code span.
func BenchMarkdown(w io.Writer, s *stats.Summary, command string) error {
	bw := bufio.NewWriter(w)
	name := s.Target.URL
	if s.Label != "" {
		name = s.Label + " (" + s.Target.URL + ")"
	}
	fmt.Fprintf(bw, "**%s**: **%s req/s** at concurrency %d, p99 %s ms; %d requests complete, %d failed",
		mdText(name), mdNum(s.RequestsPerSecond, 1), s.Concurrency, mdNum(LatencyOf(s).P99, 2), s.Complete, s.Failed)
	if s.Repeated != nil {
		fmt.Fprintf(bw, " (medians of %d trials)", len(s.Trials))
	}
	bw.WriteString(".\n\n")
	var ci func([]float64) string
	head := []string{"figure", "value"}
	right := []bool{false, true}
	if s.Repeated != nil {
		head = append(head, fmt.Sprintf("%.4g%% interval", 100*s.Confidence))
		right = append(right, true)
		ci = func(c []float64) string { return mdInterval(c, 2) }
	}
	rows := [][]string{}
	add := func(figure, value string, interval []float64) {
		r := []string{figure, value}
		if ci != nil {
			r = append(r, ci(interval))
		}
		rows = append(rows, r)
	}
	var rpsCI, meanCI, p50CI, p99CI, maxCI []float64
	if s.Repeated != nil {
		rpsCI, meanCI, p50CI, p99CI, maxCI = s.RequestsPerSecondCI95, s.MeanMsCI95, s.P50MsCI95, s.P99MsCI95, s.MaxMsCI95
	}
	add("requests per second", mdNum(s.RequestsPerSecond, 2), rpsCI)
	add("mean ms", mdNum(LatencyOf(s).Mean, 2), meanCI)
	add("p50 ms", mdNum(LatencyOf(s).P50, 2), p50CI)
	add("p99 ms", mdNum(LatencyOf(s).P99, 2), p99CI)
	add("max ms", mdNum(LatencyOf(s).Max, 2), maxCI)
	add("complete requests", strconv.FormatInt(s.Complete, 10), nil)
	add("failed requests", strconv.FormatInt(s.Failed, 10), nil)
	add("time taken s", mdNum(s.TimeTaken, 2), nil)
	mdTable(bw, head, right, rows)
	madeWith(bw, command)
	return bw.Flush()
}

// SweepMarkdown writes a sweep as Markdown: a sentence per series (its
// highest req/s, at which level, and its p99 there; with trials, its
// req/s verdicts against the baseline), then one table row per series
// and level (req/s, with trials its ± and verdict, p99 ms, failed), then
// command in a code span. One row per series and level keeps the table
// narrow however many series there are.
func SweepMarkdown(w io.Writer, sw *Sweep, command string) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Sweep of %d series at concurrency %s", len(sw.Series), joinInts(sw.Levels))
	if sw.SweepTrials != nil {
		fmt.Fprintf(bw, ", %d trials a level (medians)", sw.SweepTrials.Repeat)
	}
	bw.WriteString(":\n\n")
	for _, se := range sw.Series {
		var best *stats.Summary
		for i := range se.Levels {
			if best == nil || se.Levels[i].RequestsPerSecond > best.RequestsPerSecond {
				best = &se.Levels[i]
			}
		}
		if best == nil {
			fmt.Fprintf(bw, "- **%s** ran no level.\n", mdText(se.Label))
			continue
		}
		fmt.Fprintf(bw, "- **%s** peaks at **%s req/s** at concurrency %d (p99 %s ms)", mdText(se.Label),
			mdNum(best.RequestsPerSecond, 1), best.Concurrency, mdNum(LatencyOf(best).P99, 1))
		if v := sweepVerdicts(sw, se.Label); v != "" {
			bw.WriteString("; against " + mdText(sw.Baseline) + ": " + v)
		}
		if se.Stop != nil {
			fmt.Fprintf(bw, "; stopped after concurrency %d", se.Stop.Concurrency)
		}
		bw.WriteString(".\n")
	}
	bw.WriteString("\n")
	head := []string{"series", "c", "req/s"}
	right := []bool{false, true, true}
	if sw.SweepTrials != nil {
		head = append(head, "±")
		right = append(right, true)
	}
	head = append(head, "p99 ms", "failed")
	right = append(right, true, true)
	if sw.SweepTrials != nil {
		head = append(head, "vs "+sw.Baseline)
		right = append(right, false)
	}
	var rows [][]string
	for _, se := range sw.Series {
		for i := range se.Levels {
			s := &se.Levels[i]
			r := []string{se.Label, strconv.Itoa(s.Concurrency), mdNum(s.RequestsPerSecond, 1)}
			if sw.SweepTrials != nil {
				pm := ""
				if s.Repeated != nil && s.RequestsPerSecondCI95 != nil {
					e := trials.Estimate{Median: s.RequestsPerSecond, Lo: s.RequestsPerSecondCI95[0], Hi: s.RequestsPerSecondCI95[1], N: 2}
					pm = e.PlusMinus()
				}
				r = append(r, pm)
			}
			p99 := "-"
			if s.Complete > 0 {
				p99 = mdNum(LatencyOf(s).P99, 1)
			}
			r = append(r, p99, strconv.FormatInt(s.Failed, 10))
			if sw.SweepTrials != nil {
				v := ""
				if c := sw.Comparison(se.Label, s.Concurrency); c != nil {
					v = c.VerdictText()
				}
				r = append(r, v)
			}
			rows = append(rows, r)
		}
	}
	mdTable(bw, head, right, rows)
	madeWith(bw, command)
	return bw.Flush()
}

// sweepVerdicts is a series' req/s verdicts against the baseline, by
// level: "slower at c=1, 3; same at c=8", "" without any.
func sweepVerdicts(sw *Sweep, label string) string {
	if sw.SweepTrials == nil || label == sw.Baseline {
		return ""
	}
	var order []string
	at := map[string][]string{}
	for _, l := range sw.Levels {
		c := sw.Comparison(label, l)
		if c == nil {
			continue
		}
		v := c.VerdictText()
		if at[v] == nil {
			order = append(order, v)
		}
		at[v] = append(at[v], strconv.Itoa(l))
	}
	var parts []string
	for _, v := range order {
		parts = append(parts, v+" at c="+strings.Join(at[v], ", "))
	}
	return strings.Join(parts, "; ")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// MarkdownCompare is what CompareMarkdown renders: compare's result and
// the command that made it.
type MarkdownCompare struct {
	// Command is the command line.
	Command string
	// Files are the files compared, the first the baseline.
	Files []string
	// Noise is the noise threshold, a fraction.
	Noise float64
	// Differences and Notes are compare's lines.
	Differences, Notes []string
	// Comparisons are the rows.
	Comparisons []trials.Comparison
	// TargetComparisons are the rows of each target of a mix, in the
	// table after Comparisons' (no sentences of their own).
	TargetComparisons []trials.Comparison
	// Gate is the gate's judgement, nil without --fail-on.
	Gate *gate.Result
}

// CompareMarkdown writes compare's verdicts as Markdown: the gate's
// judgement (with --fail-on) and one sentence per pair and level (what
// differs, by metric), then a table of every comparison (both medians,
// the ratio with its interval at its real confidence, p, the verdict), the differences and
// notes, and the command in a code span.
func CompareMarkdown(w io.Writer, m MarkdownCompare) error {
	bw := bufio.NewWriter(w)
	if len(m.Files) > 0 {
		fmt.Fprintf(bw, "Compared with %s", CodeSpan(m.Files[0]))
		if len(m.Files) > 1 {
			quoted := make([]string, len(m.Files)-1)
			for i, f := range m.Files[1:] {
				quoted[i] = CodeSpan(f)
			}
			fmt.Fprintf(bw, ": %s", strings.Join(quoted, ", "))
		}
		fmt.Fprintf(bw, " (noise threshold ±%g%%).\n\n", 100*m.Noise)
	}
	if g := m.Gate; g != nil {
		fmt.Fprintf(bw, "**Gate: %s.**\n\n", mdText(g.Summary()))
		for _, f := range g.Tripped {
			fmt.Fprintf(bw, "- tripped: %s\n", mdText(f.Line()))
		}
		for _, f := range g.Unjudged {
			fmt.Fprintf(bw, "- cannot judge: %s\n", mdText(f.Line()))
		}
		if len(g.Tripped)+len(g.Unjudged) > 0 {
			bw.WriteString("\n")
		}
	}
	// One sentence per pair and level, in the order of the rows.
	type key struct {
		series, baseline, file, baseFile string
		c                                int
	}
	var order []key
	byKey := map[key][]trials.Comparison{}
	for _, c := range m.Comparisons {
		k := key{c.Series, c.Baseline, c.File, c.BaselineFile, c.Concurrency}
		if byKey[k] == nil {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], c)
	}
	for _, k := range order {
		cs := byKey[k]
		who := k.series
		if k.series != k.baseline {
			who += " against " + k.baseline
		}
		if k.file != "" && len(m.Files) > 2 {
			who += " (" + k.file + ")"
		}
		var said []string
		same := []string{}
		for _, c := range cs {
			switch c.Verdict {
			case trials.Same:
				same = append(same, metricName(c.Metric))
			default:
				said = append(said, metricName(c.Metric)+" "+c.VerdictText()+" ("+c.RatioText()+")")
			}
		}
		if len(same) > 0 {
			said = append(said, "same "+strings.Join(same, ", ")+" (within the noise)")
		}
		fmt.Fprintf(bw, "- **%s** at c=%d: %s.\n", mdText(who), k.c, mdText(strings.Join(said, "; ")))
	}
	bw.WriteString("\n")
	head := []string{"series", "baseline", "c", "metric", "baseline value", "value", "ratio [" + trials.RatioLabel(m.Comparisons) + "]", "p", "verdict"}
	right := []bool{false, false, true, false, true, true, true, true, false}
	var rows [][]string
	all := append(slices.Clone(m.Comparisons), m.TargetComparisons...)
	for i := range all {
		c := &all[i]
		series, baseline := c.Series, c.Baseline
		if c.File != "" && len(m.Files) > 2 {
			series, baseline = c.Series+" ("+c.File+")", c.Baseline+" ("+c.BaselineFile+")"
		}
		p := "-"
		if c.RatioCI95 != nil {
			p = fmt.Sprintf("%.3f", c.PValue)
		}
		rows = append(rows, []string{series, baseline, strconv.Itoa(c.Concurrency), comparisonMetric(c),
			valueText(c.BaselineValue, c.BaselineValueCI95), valueText(c.Value, c.ValueCI95), c.RatioText(), p, c.VerdictText()})
	}
	mdTable(bw, head, right, rows)
	if len(m.Differences)+len(m.Notes) > 0 {
		bw.WriteString("\n")
	}
	for _, d := range m.Differences {
		fmt.Fprintf(bw, "- Differs: %s\n", mdText(d))
	}
	for _, n := range m.Notes {
		fmt.Fprintf(bw, "- Note: %s\n", mdText(n))
	}
	madeWith(bw, m.Command)
	return bw.Flush()
}
