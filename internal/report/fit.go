package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/backbench/backbench/internal/trials"
)

// DefaultWidth is the width, in columns, that the text tables of sweep
// and compare fit by default (an 80- to 100-column terminal, a CI log);
// --wide, or a terminal wider than a table, keeps the wide layout.
const DefaultWidth = 100

// Width is the widest line of text, in columns (runes: "±" and "–" are
// one column each).
func Width(text string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		n = max(n, utf8.RuneCountInString(l))
	}
	return n
}

// SweepTableFit writes SweepTable fitted to width columns: as it is when
// it fits (or width <= 0), else the series in blocks of as many as fit,
// each block with its own header and the concurrency column, one after
// the other; the lines of stopped series and clusters follow once.
func SweepTableFit(w io.Writer, sw *Sweep, width int) error {
	var wide bytes.Buffer
	if err := SweepTable(&wide, sw); err != nil {
		return err
	}
	if width <= 0 || Width(wide.String()) <= width {
		_, err := w.Write(wide.Bytes())
		return err
	}
	bw := bufio.NewWriter(w)
	block := func(idx []int) string {
		var b bytes.Buffer
		tw := bufio.NewWriter(&b)
		sweepBlock(tw, sw, idx)
		tw.Flush()
		return b.String()
	}
	var cur []int
	first := true
	flush := func() {
		if !first {
			bw.WriteString("\n")
		}
		first = false
		bw.WriteString(block(cur))
	}
	for i := range sw.Series {
		next := append(append([]int(nil), cur...), i)
		if len(cur) > 0 && Width(block(next)) > width {
			flush()
			next = []int{i}
		}
		cur = next
	}
	if len(cur) > 0 {
		flush()
	}
	sweepTail(bw, sw)
	return bw.Flush()
}

// ComparisonTableFit writes ComparisonTable fitted to width columns: as
// it is when it fits (or width <= 0), else grouped by pair and level,
// each group under a heading line that names the series, the baseline
// and the level (the table's widest columns), its rows the metrics:
// baseline value, value, ratio with its interval, p, verdict.
func ComparisonTableFit(w io.Writer, cs []trials.Comparison, width int) error {
	var wide bytes.Buffer
	if err := ComparisonTable(&wide, cs); err != nil {
		return err
	}
	if width <= 0 || Width(wide.String()) <= width {
		_, err := w.Write(wide.Bytes())
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	group, pair := "", ""
	for i := range cs {
		c := &cs[i]
		if c.FactorTitle != "" && c.FactorTitle != group {
			group = c.FactorTitle
			fmt.Fprintf(tw, "%s\n", group)
		}
		series, baseline := c.Series, c.Baseline
		if c.File != "" {
			series, baseline = c.Series+" ("+c.File+")", c.Baseline+" ("+c.BaselineFile+")"
		}
		key := fmt.Sprintf("%s\x00%s\x00%d", series, baseline, c.Concurrency)
		if key != pair {
			pair = key
			head := fmt.Sprintf("%s vs %s, c=%d", series, baseline, c.Concurrency)
			if utf8.RuneCountInString(head)+2 > width {
				head = fmt.Sprintf("%s\n    vs %s, c=%d", series, baseline, c.Concurrency)
			}
			fmt.Fprintf(tw, "  %s\n", head)
			fmt.Fprintln(tw, "    metric\tbaseline value\tvalue\tratio ["+trials.RatioLabel(cs)+"]\tp\tverdict")
		}
		p := "-"
		if c.RatioCI95 != nil {
			p = fmt.Sprintf("%.3f", c.PValue)
		}
		// Narrow: an undecided verdict without its estimate of more
		// rounds (the wide table and the JSON give it).
		short := *c
		short.MoreRounds = 0
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\t%s\n", comparisonMetric(c), valueText(c.BaselineValue, c.BaselineValueCI95),
			valueText(c.Value, c.ValueCI95), c.RatioText(), p, short.VerdictText())
	}
	return tw.Flush()
}

// Wrap breaks each line of text into lines of at most width columns at
// spaces, the lines after the first indented by indent; a word longer
// than a line stays whole, and so does an interval: a space inside
// brackets ("[0.769, 0.781]", counted, so "[a [b, c] d]" too) is never a
// break. width <= 0, or text that fits, leaves text as it is. It is the
// one word-wrapper of the text renderers (sweep's and compare's lines,
// the gate's, capacity's table, the study's text); help text has its own
// rule (cmd/backbench's WrapText: a list's continuation under its second
// column).
func Wrap(text string, width int, indent string) string {
	if width <= 0 || Width(text) <= width {
		return text
	}
	if strings.Contains(text, "\n") {
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			lines[i] = Wrap(l, width, indent)
		}
		return strings.Join(lines, "\n")
	}
	// An interval "[0.769, 0.781]" is one word: never broken. The
	// brackets are counted, so an interval inside another stays whole.
	var words []string
	for _, w := range strings.Fields(text) {
		if n := len(words); n > 0 && strings.Count(words[n-1], "[") > strings.Count(words[n-1], "]") {
			words[n-1] += " " + w
			continue
		}
		words = append(words, w)
	}
	lead := text[:len(text)-len(strings.TrimLeft(text, " "))]
	var b strings.Builder
	b.WriteString(lead)
	line := len(lead)
	for i, word := range words {
		n := utf8.RuneCountInString(word)
		switch {
		case i == 0:
		case line+1+n > width:
			b.WriteString("\n" + indent)
			line = utf8.RuneCountInString(indent)
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += n
	}
	return b.String()
}
