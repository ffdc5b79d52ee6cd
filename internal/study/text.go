package study

import (
	"fmt"
	"github.com/backbench/backbench/internal/grammar"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/backbench/backbench/internal/trials"
)

// WriteText writes the study's text report: the configurations, a table of
// every series at every level (medians of the trials with their intervals,
// labelled with their real confidence), the notes, and the answers last, where a terminal leaves
// them in sight.
func WriteText(w io.Writer, res *Result) error {
	fmt.Fprintf(w, "Study: %s\n", res.Question)
	what := fmt.Sprintf("%d configurations, %d series, %s, %d round", len(res.Configurations), len(res.Series), res.Measure.describe(), res.Rounds)
	if res.Rounds != 1 {
		what += "s"
	}
	fmt.Fprintf(w, "%s, %.1f s in all", what, res.Seconds)
	if res.Incomplete {
		fmt.Fprint(w, " (INCOMPLETE: interrupted)")
	}
	fmt.Fprintln(w)
	if len(res.Measure.ClientCPUs) > 0 {
		fmt.Fprintf(w, "client pinned to CPU %s\n", grammar.FormatCPUs(res.Measure.ClientCPUs))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "configuration\tstarts\taddress\tstatus")
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
		fmt.Fprintf(tw, "%s\t%d\t%s %s\t%s\n", c.Name, c.Starts, c.Network, c.Address, status)
	}
	tw.Flush()
	fmt.Fprintln(w)
	if res.Sizing != nil {
		res.Sizing.writeTable(w)
	} else {
		writeSeries(w, res)
	}
	if len(res.Notes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Notes:")
		for _, n := range res.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	fmt.Fprintln(w)
	WriteAnswers(w, res)
	return nil
}

// WriteAnswers writes the answers block: each factor's conclusion, then
// its details indented.
func WriteAnswers(w io.Writer, res *Result) {
	head := fmt.Sprintf("%s; verdicts on ratio intervals of %s, noise %.0f%%", res.Question,
		strings.TrimSuffix(trials.RatioLabel(res.Comparisons), " interval"), 100*res.Noise)
	if f := res.FalseDiscoveries; f != nil {
		head += "; " + f.Text()
	}
	fmt.Fprintf(w, "Answers (%s):\n", head)
	for _, a := range res.Answers {
		fmt.Fprintf(w, "  %s\n", a.Conclusion)
		for _, d := range a.Details {
			fmt.Fprintf(w, "      %s\n", d)
		}
	}
	if res.Incomplete {
		fmt.Fprintln(w, "  The study was interrupted: these answers rest on the rounds that finished.")
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

// writeSeries writes the table of every series at every level.
func writeSeries(w io.Writer, res *Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var confs []float64
	for _, s := range res.Series {
		for _, st := range s.Steps {
			confs = append(confs, trials.MedianConfidence(len(st.Trials)))
		}
	}
	fmt.Fprintf(tw, "series\tc\treq/s (median [%s])\tp99 ms\tmax ms\tfailed\n", trials.IntervalLabel(confs...))
	for _, s := range res.Series {
		if len(s.Steps) == 0 {
			fmt.Fprintf(tw, "%s\t-\tnot measured\t\t\t\n", s.Label)
		}
		for _, st := range s.Steps {
			failed := "0"
			if st.Failed > 0 {
				failed = fmt.Sprintf("%d (%s)", st.Failed, st.FailureClass)
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", s.Label, st.Concurrency, st.RequestsPerSecond.text("%.1f"),
				st.P99Ms.text("%.2f"), st.MaxMs.text("%.2f"), failed)
		}
	}
	tw.Flush()
}
