package study

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/backbench/backbench/internal/grammar"

	"github.com/backbench/backbench/internal/trials"
)

// WriteText writes the study's text report as wide as its lines are
// (WriteTextWidth with no width: --wide).
func WriteText(w io.Writer, res *Result) error { return WriteTextWidth(w, res, 0) }

// WriteTextWidth writes the study's text report: the configurations, a
// table of every series at every level (medians of the trials with their
// intervals, labelled with their real confidence), for a mix every
// series' targets at every level (writeTargetsFit), the notes, and the
// answers last, where a terminal leaves them in sight. With width > 0
// (columns) every line fits it but a word longer than a line: sentences
// wrap with a hanging indent, and a table wider than width is written
// grouped (a series' label on a line of its own, its levels under it; a
// configuration's or a pool size's figures on indented lines). width <= 0
// writes every line whole, as wide as it is.
func WriteTextWidth(w io.Writer, res *Result, width int) error {
	fmt.Fprintln(w, wrap(fmt.Sprintf("Study: %s", res.Question), width, "    "))
	what := fmt.Sprintf("%d configurations, %d series, %s, %d round", len(res.Configurations), len(res.Series), res.Measure.describe(), res.Rounds)
	if res.Rounds != 1 {
		what += "s"
	}
	what += fmt.Sprintf(", %.1f s in all", res.Seconds)
	if res.Incomplete {
		what += " (INCOMPLETE: interrupted)"
	}
	fmt.Fprintln(w, wrap(what, width, "    "))
	if len(res.Measure.ClientCPUs) > 0 {
		fmt.Fprintf(w, "client pinned to CPU %s\n", grammar.FormatCPUs(res.Measure.ClientCPUs))
	}
	fmt.Fprintln(w)
	writeConfigurations(w, res, width)
	fmt.Fprintln(w)
	if res.Sizing != nil {
		res.Sizing.writeTableFit(w, width)
	} else {
		writeSeriesFit(w, res, width)
		writeTargetsFit(w, res, width)
	}
	if len(res.Notes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Notes:")
		for _, n := range res.Notes {
			fmt.Fprintln(w, wrap("  - "+n, width, "    "))
		}
	}
	fmt.Fprintln(w)
	WriteAnswersWidth(w, res, width)
	return nil
}

// WriteAnswers writes the answers block as wide as its lines are
// (WriteAnswersWidth with no width).
func WriteAnswers(w io.Writer, res *Result) { WriteAnswersWidth(w, res, 0) }

// WriteAnswersWidth writes the answers block: each factor's conclusion,
// then its details indented; with width > 0 (columns) each wraps to it
// with a hanging indent (a conclusion's lines after the first under its
// text, a detail's 2 columns further in).
func WriteAnswersWidth(w io.Writer, res *Result, width int) {
	head := fmt.Sprintf("%s; verdicts on ratio intervals of %s, noise %.0f%%", res.Question,
		strings.TrimSuffix(trials.RatioLabel(res.Comparisons), " interval"), 100*res.Noise)
	if f := res.FalseDiscoveries; f != nil {
		head += "; " + f.Text()
	}
	fmt.Fprintln(w, wrap(fmt.Sprintf("Answers (%s):", head), width, "  "))
	for _, a := range res.Answers {
		fmt.Fprintln(w, wrap("  "+a.Conclusion, width, "    "))
		for _, d := range a.Details {
			fmt.Fprintln(w, wrap("      "+d, width, "        "))
		}
	}
	if res.Incomplete {
		fmt.Fprintln(w, wrap("  The study was interrupted: these answers rest on the rounds that finished.", width, "    "))
	}
}

// writeConfigurations writes the table of the configurations; wider than
// width (> 0), each configuration's name on a line, its starts, address
// and status on the next, indented.
func writeConfigurations(w io.Writer, res *Result, width int) {
	rows := [][]string{{"configuration", "starts", "address", "status"}}
	for _, c := range res.Configurations {
		status := "ok"
		switch {
		case c.Failure != "":
			status = c.FailureKind
		case c.Lost > 0:
			status = fmt.Sprintf("lost %d×", c.Lost)
		}
		if c.Killed > 0 {
			status += fmt.Sprintf(", SIGKILL %d×", c.Killed)
		}
		if c.MeanPSSBytes > 0 {
			status += fmt.Sprintf(", PSS %.1f MiB", c.MeanPSSBytes/(1<<20))
		}
		if len(c.CPUs) > 0 {
			status += ", on CPU " + grammar.FormatCPUs(c.CPUs)
		}
		rows = append(rows, []string{c.Name, fmt.Sprint(c.Starts), c.Network + " " + c.Address, status})
	}
	lines := columns(rows)
	if fits(lines, width) {
		fmt.Fprint(w, strings.Join(lines, "\n")+"\n")
		return
	}
	fmt.Fprintln(w, "configurations:")
	for _, r := range rows[1:] {
		fmt.Fprintln(w, wrap("  "+r[0], width, "    "))
		fmt.Fprintln(w, wrap(fmt.Sprintf("    %s starts, %s, %s", r[1], r[2], r[3]), width, "      "))
	}
}

// describe is "levels 1, 4; 200 requests a level; 5 trials".
func (m Measure) describe() string {
	if m.Kind == "capacity" {
		return fmt.Sprintf("a capacity search of %g s steps, %d searches each", m.Seconds, m.Repeat)
	}
	var parts []string
	lv := make([]string, len(m.Levels))
	for i, l := range m.Levels {
		lv[i] = fmt.Sprint(l)
	}
	parts = append(parts, "c "+strings.Join(lv, ","))
	if m.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d requests", m.Requests))
	}
	if m.Seconds > 0 {
		parts = append(parts, fmt.Sprintf("%g s", m.Seconds))
	}
	if m.Until == UntilDecided {
		u := fmt.Sprintf("until decided (the first %d rounds every series, at most %d", m.Repeat, m.MaxRepeat)
		if m.BudgetSeconds > 0 {
			u += ", within " + trials.Duration(m.BudgetSeconds)
		}
		parts = append(parts, u+")")
	} else {
		parts = append(parts, fmt.Sprintf("%d trials each", m.Repeat))
	}
	return strings.Join(parts, ", ")
}

// text is "1234.5 [1200.1, 1250.0]" or the median alone.
func (f Figure) text(format string) string {
	s := fmt.Sprintf(format, f.Median)
	if len(f.CI95) == 2 {
		s += fmt.Sprintf(" ["+format+", "+format+"]", f.CI95[0], f.CI95[1])
	}
	return s
}

// writeSeriesFit writes the table of every series at every level; wider
// than width (> 0), grouped by series: each series' label on a line of
// its own, its levels under it in one table of aligned columns.
func writeSeriesFit(w io.Writer, res *Result, width int) {
	var confs []float64
	for _, s := range res.Series {
		for _, st := range s.Steps {
			confs = append(confs, trials.MedianConfidence(len(st.Trials)))
		}
	}
	head := []string{"series", "c", fmt.Sprintf("req/s (median [%s])", trials.IntervalLabel(confs...)), "p99 ms", "max ms", "failed"}
	rows := [][]string{head}
	var labels []string // the series of each row, "" for the header
	labels = append(labels, "")
	for _, s := range res.Series {
		if len(s.Steps) == 0 {
			rows = append(rows, []string{s.Label, "-", "not measured", "", "", ""})
			labels = append(labels, s.Label)
		}
		for _, st := range s.Steps {
			failed := "0"
			if st.Failed > 0 {
				failed = fmt.Sprintf("%d (%s)", st.Failed, st.FailureClass)
			}
			rows = append(rows, []string{s.Label, fmt.Sprint(st.Concurrency), st.RequestsPerSecond.text("%.1f"),
				st.P99Ms.text("%.2f"), st.MaxMs.text("%.2f"), failed})
			labels = append(labels, s.Label)
		}
	}
	writeRowsFit(w, rows, labels, width, "series, then each level:")
}

// writeRowsFit writes rows (the header first) in columns; wider than
// width (> 0), grouped by series: head, the header without its first
// column, then each series' label (labels[i], the series of row i) on a
// line of its own where it changes, its rows under it without their first
// cell.
func writeRowsFit(w io.Writer, rows [][]string, labels []string, width int, head string) {
	lines := columns(rows)
	if fits(lines, width) {
		fmt.Fprint(w, strings.Join(lines, "\n")+"\n")
		return
	}
	narrow := make([][]string, len(rows))
	for i, r := range rows {
		narrow[i] = append([]string{""}, r[1:]...)
	}
	// The header says what the label lines are; a row still too wide
	// (intervals of many digits) wraps under its figures.
	lines = columns(narrow)
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, wrap(lines[0], width, "     "))
	for i := 1; i < len(lines); i++ {
		if labels[i] != labels[i-1] {
			fmt.Fprintln(w, wrap(labels[i], width, "  "))
		}
		fmt.Fprintln(w, wrap(lines[i], width, "     "))
	}
}

// maxTextTargets is the most targets of a series the text shows at each
// level; study.json has every one.
const maxTextTargets = 10

// targetWidth is the most columns a target's label takes in the text.
const targetWidth = 34

// writeTargetsFit writes, for a study of a mix, every series' targets at
// every level: requests and failures summed over the trials, the medians
// of their p50 and p99 in ms (their intervals, and the max, are in
// study.json); a series of more than maxTextTargets targets shows those
// with the most requests over its levels, in the file's order, and the
// heading says so. Wider than width (> 0), grouped by series as the
// series table is. Nothing for a study of one request.
func writeTargetsFit(w io.Writer, res *Result, width int) {
	most := 0
	rows := [][]string{{"series", "c", "target", "requests", "failed", "p50 ms", "p99 ms"}}
	labels := []string{""}
	for _, s := range res.Series {
		var sums []int64
		for _, st := range s.Steps {
			for len(sums) < len(st.Targets) {
				sums = append(sums, 0)
			}
			for i, t := range st.Targets {
				sums[i] += t.Requests
			}
		}
		most = max(most, len(sums))
		show := make([]int, len(sums))
		for i := range show {
			show[i] = i
		}
		if len(show) > maxTextTargets {
			slices.SortStableFunc(show, func(a, b int) int { return cmp.Compare(sums[b], sums[a]) })
			show = show[:maxTextTargets]
			slices.Sort(show)
		}
		for _, st := range s.Steps {
			first := true
			for _, i := range show {
				if i >= len(st.Targets) {
					continue
				}
				t := st.Targets[i]
				label, c := "", ""
				if first {
					label, c, first = s.Label, fmt.Sprint(st.Concurrency), false
				}
				rows = append(rows, []string{label, c, cutTarget(t.Target), fmt.Sprint(t.Requests), fmt.Sprint(t.Failed),
					fmt.Sprintf("%.2f", t.P50Ms.Median), fmt.Sprintf("%.2f", t.P99Ms.Median)})
				labels = append(labels, s.Label)
			}
		}
	}
	if most == 0 {
		return
	}
	head := "Per target (medians of the trials, in ms; study.json has their intervals and max):"
	if most > maxTextTargets {
		head = fmt.Sprintf("Per target (the %d with the most requests of a series' %d; medians of the trials, in ms;"+
			" study.json has every target, the intervals and max):", maxTextTargets, most)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, wrap(head, width, "    "))
	writeRowsFit(w, rows, labels, width, "series, then each level's targets:")
}

// cutTarget cuts a target's label to targetWidth runes, keeping its start
// (the method) and its end (where paths differ).
func cutTarget(s string) string {
	r := []rune(s)
	if len(r) <= targetWidth {
		return s
	}
	head := 12
	return string(r[:head]) + "..." + string(r[len(r)-(targetWidth-head-3):])
}

// columns lays rows out in columns 2 spaces apart, each as wide as its
// widest cell (in runes), trailing spaces trimmed (as text/tabwriter
// does).
func columns(rows [][]string) []string {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	out := make([]string, len(rows))
	for j, r := range rows {
		var b strings.Builder
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
			}
		}
		out[j] = strings.TrimRight(b.String(), " ")
	}
	return out
}

// fits reports whether every line is at most width columns (always with
// width <= 0).
func fits(lines []string, width int) bool {
	if width <= 0 {
		return true
	}
	for _, l := range lines {
		if utf8.RuneCountInString(l) > width {
			return false
		}
	}
	return true
}

// wrap breaks line into lines of at most width columns at spaces (never
// inside an interval "[0.506, 1.574]"), the lines after the first
// indented by indent; a word longer than a line stays whole. width <= 0,
// or a line that fits, leaves it as it is.
func wrap(line string, width int, indent string) string {
	if width <= 0 || utf8.RuneCountInString(line) <= width {
		return line
	}
	lead := line[:len(line)-len(strings.TrimLeft(line, " "))]
	var words []string
	for _, w := range strings.Fields(line) {
		if n := len(words); n > 0 && strings.Count(words[n-1], "[") > strings.Count(words[n-1], "]") {
			words[n-1] += " " + w
			continue
		}
		words = append(words, w)
	}
	var b strings.Builder
	b.WriteString(lead)
	n := utf8.RuneCountInString(lead)
	for i, word := range words {
		k := utf8.RuneCountInString(word)
		switch {
		case i == 0:
		case n+1+k > width:
			b.WriteString("\n" + indent)
			n = utf8.RuneCountInString(indent)
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += k
	}
	return b.String()
}
