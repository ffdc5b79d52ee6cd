package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/trials"
)

// StudyText writes a study's text report (study's default output): the
// configurations, a table of every series at every level (medians of the
// trials with their intervals, labelled with their real confidence), for
// a mix every series' targets at every level (writeStudyTargets), the
// notes, and the answers last, where a terminal leaves them in sight.
// With width > 0 (columns) every line fits it but a word longer than a
// line: sentences wrap with a hanging indent (Wrap), and a table wider
// than width is written grouped (a series' label on a line of its own,
// its levels under it; a configuration's or a pool size's figures on
// indented lines). width <= 0 (--wide) writes every line whole, as wide
// as it is.
func StudyText(w io.Writer, res *study.Result, width int) error {
	fmt.Fprintln(w, Wrap(fmt.Sprintf("Study: %s", res.Question), width, "    "))
	what := fmt.Sprintf("%d configurations, %d series, %s, %d round", len(res.Configurations), len(res.Series), studyMeasure(res.Measure), res.Rounds)
	if res.Rounds != 1 {
		what += "s"
	}
	what += fmt.Sprintf(", %.1f s in all", res.Seconds)
	if res.Incomplete {
		what += " (INCOMPLETE: interrupted)"
	}
	fmt.Fprintln(w, Wrap(what, width, "    "))
	if len(res.Measure.ClientCPUs) > 0 {
		fmt.Fprintf(w, "client pinned to CPU %s\n", load.FormatCPUs(res.Measure.ClientCPUs))
	}
	fmt.Fprintln(w)
	writeStudyConfigurations(w, res, width)
	fmt.Fprintln(w)
	if res.Sizing != nil {
		writeSizing(w, res.Sizing, width)
	} else {
		writeStudySeries(w, res, width)
		writeStudyTargets(w, res, width)
	}
	if len(res.Notes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Notes:")
		for _, n := range res.Notes {
			fmt.Fprintln(w, Wrap("  - "+n, width, "    "))
		}
	}
	fmt.Fprintln(w)
	writeStudyAnswers(w, res, width)
	return nil
}

// writeStudyAnswers writes the answers block: each factor's conclusion,
// then its details indented; with width > 0 (columns) each wraps to it
// with a hanging indent (a conclusion's lines after the first under its
// text, a detail's 2 columns further in).
func writeStudyAnswers(w io.Writer, res *study.Result, width int) {
	head := fmt.Sprintf("%s; verdicts on ratio intervals of %s, noise %.0f%%", res.Question,
		strings.TrimSuffix(trials.RatioLabel(res.Comparisons), " interval"), 100*res.Noise)
	if f := res.FalseDiscoveries; f != nil {
		head += "; " + f.Text()
	}
	fmt.Fprintln(w, Wrap(fmt.Sprintf("Answers (%s):", head), width, "  "))
	for _, a := range res.Answers {
		fmt.Fprintln(w, Wrap("  "+a.Conclusion, width, "    "))
		for _, d := range a.Details {
			fmt.Fprintln(w, Wrap("      "+d, width, "        "))
		}
	}
	if res.Incomplete {
		fmt.Fprintln(w, Wrap("  The study was interrupted: these answers rest on the rounds that finished.", width, "    "))
	}
}

// writeStudyConfigurations writes the table of the configurations; wider
// than width (> 0), each configuration's name on a line, its starts,
// address and status on the next, indented.
func writeStudyConfigurations(w io.Writer, res *study.Result, width int) {
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
			status += ", on CPU " + load.FormatCPUs(c.CPUs)
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
		fmt.Fprintln(w, Wrap("  "+r[0], width, "    "))
		fmt.Fprintln(w, Wrap(fmt.Sprintf("    %s starts, %s, %s", r[1], r[2], r[3]), width, "      "))
	}
}

// studyMeasure is "c 1,4, 200 requests, 5 trials each".
func studyMeasure(m study.Measure) string {
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
	if m.Until == study.UntilDecided {
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

// studyFigure is "1234.5 [1200.1, 1250.0]" or the median alone.
func studyFigure(f study.Figure, format string) string {
	s := fmt.Sprintf(format, f.Median)
	if len(f.CI95) == 2 {
		s += fmt.Sprintf(" ["+format+", "+format+"]", f.CI95[0], f.CI95[1])
	}
	return s
}

// writeStudySeries writes the table of every series at every level;
// wider than width (> 0), grouped by series: each series' label on a line
// of its own, its levels under it in one table of aligned columns.
func writeStudySeries(w io.Writer, res *study.Result, width int) {
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
			rows = append(rows, []string{s.Label, fmt.Sprint(st.Concurrency), studyFigure(st.RequestsPerSecond, "%.1f"),
				studyFigure(st.P99Ms, "%.2f"), studyFigure(st.MaxMs, "%.2f"), failed})
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
	fmt.Fprintln(w, Wrap(lines[0], width, "     "))
	for i := 1; i < len(lines); i++ {
		if labels[i] != labels[i-1] {
			fmt.Fprintln(w, Wrap(labels[i], width, "  "))
		}
		fmt.Fprintln(w, Wrap(lines[i], width, "     "))
	}
}

// maxStudyTargets is the most targets of a series the study's text shows
// at each level; study.json has every one.
const maxStudyTargets = 10

// studyTargetWidth is the most columns a target's label takes in the
// study's text.
const studyTargetWidth = 34

// writeStudyTargets writes, for a study of a mix, every series' targets at
// every level: requests and failures summed over the trials, the medians
// of their p50 and p99 in ms (their intervals, and the max, are in
// study.json); a series of more than maxStudyTargets targets shows those
// with the most requests over its levels, in the file's order, and the
// heading says so. Wider than width (> 0), grouped by series as the
// series table is. Nothing for a study of one request.
func writeStudyTargets(w io.Writer, res *study.Result, width int) {
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
		if len(show) > maxStudyTargets {
			slices.SortStableFunc(show, func(a, b int) int { return cmp.Compare(sums[b], sums[a]) })
			show = show[:maxStudyTargets]
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
	if most > maxStudyTargets {
		head = fmt.Sprintf("Per target (the %d with the most requests of a series' %d; medians of the trials, in ms;"+
			" study.json has every target, the intervals and max):", maxStudyTargets, most)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, Wrap(head, width, "    "))
	writeRowsFit(w, rows, labels, width, "series, then each level's targets:")
}

// writeSizing writes a capacity study's sizing table: per pool size, its
// capacity and its memory and CPU at the answer. Wider than width (> 0),
// each pool size's name is on a line of its own, its figures on indented
// lines.
func writeSizing(w io.Writer, s *study.Sizing, width int) {
	rows := [][]string{{s.Factor, "capacity req/s (median [interval])", "range", "pool PSS", "worker PSS p50/p95/max", "CPU ms/req", "backend/client/machine cores"}}
	for _, p := range s.Points {
		name := p.Level
		if p.Others != "" {
			name += " (" + p.Others + ")"
		}
		switch {
		case len(p.Searches) == 0:
			rows = append(rows, []string{name, "not measured"})
		case p.Counted == 0:
			rows = append(rows, []string{name, fmt.Sprintf("no confirmed rate (%d searches)", len(p.Searches))})
		default:
			rows = append(rows, []string{name, p.RateText(), study.Rate(p.Min) + " to " + study.Rate(p.Max),
				study.Bytes(int64(p.PoolPSSBytes)), study.Bytes(int64(p.WorkerPSS.P50)) + " / " + study.Bytes(int64(p.WorkerPSS.P95)) + " / " + study.Bytes(int64(p.WorkerPSS.Max)),
				fmt.Sprintf("%.2f", p.CPUPerRequestMs), fmt.Sprintf("%.2f / %.2f / %.2f", p.BackendCores, p.ClientCores, p.MachineCores)})
		}
	}
	lines := columns(rows)
	if fits(lines, width) {
		fmt.Fprint(w, strings.Join(lines, "\n")+"\n")
		return
	}
	fmt.Fprintf(w, "%s:\n", s.Factor)
	for _, r := range rows[1:] {
		if len(r) == 2 {
			fmt.Fprintln(w, Wrap("  "+r[0]+": "+r[1], width, "    "))
			continue
		}
		fmt.Fprintln(w, Wrap("  "+r[0], width, "    "))
		fmt.Fprintln(w, Wrap(fmt.Sprintf("    capacity %s, range %s", r[1], r[2]), width, "      "))
		fmt.Fprintln(w, Wrap(fmt.Sprintf("    pool PSS %s, worker PSS p50/p95/max %s", r[3], r[4]), width, "      "))
		fmt.Fprintln(w, Wrap(fmt.Sprintf("    CPU %s ms/req, backend/client/machine cores %s", r[5], r[6]), width, "      "))
	}
}

// cutTarget cuts a target's label to studyTargetWidth runes, keeping its start
// (the method) and its end (where paths differ).
func cutTarget(s string) string {
	r := []rune(s)
	if len(r) <= studyTargetWidth {
		return s
	}
	head := 12
	return string(r[:head]) + "..." + string(r[len(r)-(studyTargetWidth-head-3):])
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
	return width <= 0 || Width(strings.Join(lines, "\n")) <= width
}
