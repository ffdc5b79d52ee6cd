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
// spaces, the lines after the first indented by indent. The spaces of a
// line are kept as they are but at a break. A word longer than a line
// stays whole (it overflows, and the break comes after it), and a line
// whose first word is longer than width is left whole; an interval
// stays whole too: a space inside brackets ("[0.769, 0.781]", counted, so
// "[a [b, c] d]" too) is never a break. width <= 0, or text that fits,
// leaves text as it is. It is the one word-wrapper: the text renderers'
// (sweep's and compare's lines, the gate's, capacity's table, the study's
// text) and help text's (cmd/backbench's WrapText, which picks each
// line's indent).
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
	var b strings.Builder
	line := text
	for first := true; Width(line) > width; first = false {
		cut, fits := breakAt(line, width)
		if cut < 0 || first && !fits {
			break
		}
		b.WriteString(strings.TrimRight(line[:cut], " ") + "\n")
		line = indent + strings.TrimLeft(line[cut:], " ")
	}
	b.WriteString(line)
	return b.String()
}

// breakAt is where Wrap breaks line: the last space outside brackets,
// after the line's first word, at which what comes before fits in width
// columns (fits), else the first such space past width; -1 when the line
// has none.
func breakAt(line string, width int) (cut int, fits bool) {
	depth, col, word := 0, 0, false
	cut = -1
	for i, r := range line {
		switch {
		case r == ' ' && depth == 0 && word:
			if col > width {
				if cut >= 0 {
					return cut, true
				}
				return i, false
			}
			cut, fits = i, true
		case r == '[':
			depth++
		case r == ']':
			depth = max(depth-1, 0)
		}
		if r != ' ' {
			word = true
		}
		col++
	}
	return cut, fits
}
