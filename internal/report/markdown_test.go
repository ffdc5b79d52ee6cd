package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"

	"github.com/backbench/backbench/internal/gate"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// mdDoc is what a Markdown parser (goldmark, with GitHub's table
// extension) reads in a text: its tables (the header row first, then
// the body rows, as cell texts, with each column's alignment), its
// paragraphs' texts and its code spans.
type mdDoc struct {
	tables     []mdTableRead
	paragraphs []string
	codeSpans  []string
}

type mdTableRead struct {
	rows   [][]string
	aligns []east.Alignment
}

var unescapeRe = regexp.MustCompile(`\\([!-/:-@\[-` + "`" + `{-~])`)

// inlineText is the text of n's inline children, backslash escapes
// resolved.
func inlineText(n ast.Node, src []byte) string {
	var b strings.Builder
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
			if t.SoftLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return unescapeRe.ReplaceAllString(b.String(), "$1")
}

func parseMarkdown(t *testing.T, src []byte) mdDoc {
	t.Helper()
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	root := md.Parser().Parse(text.NewReader(src))
	var d mdDoc
	ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch x := n.(type) {
		case *east.Table:
			tb := mdTableRead{aligns: x.Alignments}
			for r := x.FirstChild(); r != nil; r = r.NextSibling() {
				var cells []string
				for c := r.FirstChild(); c != nil; c = c.NextSibling() {
					cells = append(cells, inlineText(c, src))
				}
				tb.rows = append(tb.rows, cells)
			}
			d.tables = append(d.tables, tb)
			return ast.WalkSkipChildren, nil
		case *ast.Paragraph, *ast.TextBlock:
			d.paragraphs = append(d.paragraphs, inlineText(x, src))
		case *ast.CodeSpan:
			d.codeSpans = append(d.codeSpans, inlineText(x, src))
		}
		return ast.WalkContinue, nil
	})
	return d
}

// cell returns the cell of table tb at row (0: the header) and the
// column named col.
func (tb mdTableRead) cell(t *testing.T, row int, col string) string {
	t.Helper()
	for i, h := range tb.rows[0] {
		if h == col {
			if row >= len(tb.rows) || i >= len(tb.rows[row]) {
				t.Fatalf("no row %d in %q", row, tb.rows)
			}
			return tb.rows[row][i]
		}
	}
	t.Fatalf("no column %q in %q", col, tb.rows[0])
	return ""
}

func (tb mdTableRead) align(t *testing.T, col string) east.Alignment {
	t.Helper()
	for i, h := range tb.rows[0] {
		if h == col {
			return tb.aligns[i]
		}
	}
	t.Fatalf("no column %q", col)
	return 0
}

func withTrials(s stats.Summary) stats.Summary {
	s.Repeated = &stats.Repeated{Trials: make([]*stats.Record, 5), RequestsPerSecondCI95: []float64{1900.5, 1990.25},
		P50Ms: 4.5, P50MsCI95: []float64{4.25, 4.75}, P99Ms: 19.5, P99MsCI95: []float64{18, 21}, MeanMs: 5.125, MeanMsCI95: []float64{5, 5.5},
		MaxMs: 30, MaxMsCI95: []float64{28, 33}, Confidence: 0.9375}
	return s
}

// TestBenchMarkdown: bench's Markdown, read by a Markdown parser, is a
// sentence with the answer, a table of the headline figures (numbers
// right-aligned), and the command in a code span.
func TestBenchMarkdown(t *testing.T) {
	for _, tc := range []struct {
		name   string
		s      stats.Summary
		golden string
	}{{"one run", fixed(), "bench.md.golden"}, {"trials", withTrials(fixed()), "bench_trials.md.golden"}} {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.Label = "app"
			var b bytes.Buffer
			cmd := "backbench bench -n 1000 -c 10 --format markdown fcgi://unix:/run/php/fpm.sock:/index.php?x=1"
			if err := BenchMarkdown(&b, &tc.s, cmd); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.golden, b.Bytes())
			d := parseMarkdown(t, b.Bytes())
			if len(d.tables) != 1 {
				t.Fatalf("%d tables:\n%s", len(d.tables), b.String())
			}
			tb := d.tables[0]
			if len(tb.rows) != 9 || tb.cell(t, 1, "figure") != "requests per second" || tb.cell(t, 1, "value") != "1948.08" ||
				tb.cell(t, 4, "figure") != "p99 ms" || tb.cell(t, 7, "value") != "3" || tb.align(t, "value") != east.AlignRight {
				t.Errorf("table %q, aligns %v", tb.rows, tb.aligns)
			}
			if tc.s.Repeated != nil {
				if got := tb.cell(t, 1, "93.75% interval"); got != "[1900.50, 1990.25]" {
					t.Errorf("req/s interval %q", got)
				}
				if got := tb.cell(t, 4, "value"); got != "19.50" {
					t.Errorf("p99 with trials %q, want the median of the trials' 19.50", got)
				}
			}
			if !strings.HasPrefix(d.paragraphs[0], "app (fcgi://unix:/run/php/fpm.sock:/index.php?x=1): 1948.1 req/s at concurrency 10") {
				t.Errorf("answer %q", d.paragraphs[0])
			}
			if len(d.codeSpans) != 1 || d.codeSpans[0] != cmd {
				t.Errorf("code spans %q, want the command", d.codeSpans)
			}
		})
	}
}

// TestSweepMarkdown: a sweep's Markdown has a sentence per series above
// a table of one row per series and level, with the verdicts of trials.
func TestSweepMarkdown(t *testing.T) {
	sw := fixedSweep()
	base, other := sw.Series[0].Label, sw.Series[1].Label
	for i := range sw.Series[:2] {
		l := &sw.Series[i].Levels[0]
		l.Repeated = &stats.Repeated{Trials: make([]*stats.Record, 5), RequestsPerSecondCI95: []float64{l.RequestsPerSecond * 0.98, l.RequestsPerSecond * 1.03},
			P99Ms: 10.5, P99MsCI95: []float64{10, 12}, Confidence: 0.9375}
	}
	ratio := 0.8
	sw.SweepTrials = &SweepTrials{Repeat: 5, Seed: 7, Noise: 0.02, Baseline: base, Comparisons: []trials.Comparison{
		{Series: other, Baseline: base, Concurrency: 1, Metric: trials.MetricRequestsPerSecond,
			Ratio: &ratio, RatioCI95: []float64{0.78, 0.82}, PValue: 0.008, Verdict: trials.Slower}}}
	var b bytes.Buffer
	if err := SweepMarkdown(&b, &sw, "backbench sweep -c 1,11,21 --format markdown ..."); err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep.md.golden", b.Bytes())
	d := parseMarkdown(t, b.Bytes())
	if len(d.tables) != 1 {
		t.Fatalf("%d tables:\n%s", len(d.tables), b.String())
	}
	tb := d.tables[0]
	// One row per series and level run: 3 + 3 + 2, under the header.
	if len(tb.rows) != 1+8 {
		t.Fatalf("%d rows: %q", len(tb.rows), tb.rows)
	}
	if tb.cell(t, 4, "series") != other || tb.cell(t, 4, "c") != "1" || tb.cell(t, 4, "req/s") != "99.5" ||
		tb.cell(t, 4, "vs "+base) != "slower" || tb.cell(t, 4, "±") != "± 3.0%" || tb.cell(t, 2, "p99 ms") != "112.3" ||
		tb.cell(t, 8, "failed") != "700" || tb.align(t, "req/s") != east.AlignRight || tb.align(t, "series") == east.AlignRight {
		t.Errorf("rows %q, aligns %v", tb.rows, tb.aligns)
	}
	all := strings.Join(d.paragraphs, "\n")
	for _, want := range []string{"prefork:4, \"ka\" peaks at 398.1 req/s at concurrency 21", "against serial: slower at c=1", "broken peaks at 50.0 req/s", "stopped after concurrency 11"} {
		if !strings.Contains(all, want) {
			t.Errorf("no answer %q in %q", want, all)
		}
	}
}

// TestCompareMarkdown: compare's Markdown gives the gate's judgement and
// a sentence per pair above the table of verdicts.
func TestCompareMarkdown(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cs := []trials.Comparison{
		{Series: "app", Baseline: "app", File: "after.json", BaselineFile: "before.json", Concurrency: 4, Factor: trials.FactorNone,
			Metric: trials.MetricRequestsPerSecond, Trials: 10, BaselineTrials: 10, Value: f(73.39), BaselineValue: f(94.61),
			ValueCI95: []float64{72.5, 74}, BaselineValueCI95: []float64{94, 95.5}, Ratio: f(0.776), RatioCI95: []float64{0.769, 0.781}, PValue: 0.0001, Verdict: trials.Slower},
		{Series: "app", Baseline: "app", File: "after.json", BaselineFile: "before.json", Concurrency: 4, Factor: trials.FactorNone,
			Metric: trials.MetricP99Ms, Trials: 10, BaselineTrials: 10, Value: f(14.03), BaselineValue: f(13.9),
			ValueCI95: []float64{13.5, 14.5}, BaselineValueCI95: []float64{13.5, 14.2}, Ratio: f(1.01), RatioCI95: []float64{0.97, 1.04}, PValue: 0.48, Verdict: trials.Undecided},
	}
	rules, err := gate.Parse("req/s slower")
	if err != nil {
		t.Fatal(err)
	}
	g := gate.Judge(rules, cs)
	var b bytes.Buffer
	cmd := "backbench compare --format markdown --fail-on 'req/s slower' before.json after.json"
	if err := CompareMarkdown(&b, MarkdownCompare{Command: cmd, Files: []string{"before.json", "after.json"}, Noise: 0.02,
		Notes: []string{"*: some trials were short"}, Comparisons: cs, Gate: &g}); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.md.golden", b.Bytes())
	d := parseMarkdown(t, b.Bytes())
	if len(d.tables) != 1 || len(d.tables[0].rows) != 3 {
		t.Fatalf("tables %+v:\n%s", d.tables, b.String())
	}
	tb := d.tables[0]
	if tb.cell(t, 1, "metric") != "req/s" || tb.cell(t, 1, "verdict") != "slower" || tb.cell(t, 1, "ratio [95% interval]") != "0.776 [0.769, 0.781]" ||
		tb.cell(t, 2, "verdict") != "undecided" || tb.cell(t, 1, "value") != "73.39 ± 1.2%" || tb.align(t, "p") != east.AlignRight {
		t.Errorf("rows %q", tb.rows)
	}
	all := strings.Join(d.paragraphs, "\n")
	for _, want := range []string{"Gate: regression: 1 comparison tripped the gate (req/s slower).", "app at c=4: req/s slower (0.776 [0.769, 0.781]); p99 ms undecided (1.010 [0.970, 1.040])."} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in %q", want, all)
		}
	}
	if d.codeSpans[len(d.codeSpans)-1] != cmd {
		t.Errorf("code spans %q: the last is not the command", d.codeSpans)
	}
}

func TestCodeSpan(t *testing.T) {
	for in, want := range map[string]string{"a b": "`a b`", "a`b": "`` a`b ``", "``x": "``` ``x ```"} {
		if got := CodeSpan(in); got != want {
			t.Errorf("CodeSpan(%q) = %q, want %q", in, got, want)
		}
	}
}
