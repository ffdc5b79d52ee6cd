package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	east "github.com/yuin/goldmark/extension/ast"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/trials"
)

// TestStudyMarkdown: a saved 3-factor study's Markdown, read back by a
// Markdown parser (goldmark with GFM), holds every answer and detail as
// list text, then one table per factor with a row for each of its
// pairs' req/s comparisons (the pair as the factor's two levels, the
// other factors' levels, the ratio with its interval, the verdict),
// numbers right-aligned, and the command in a code span.
func TestStudyMarkdown(t *testing.T) {
	path := filepath.Join("testdata", "study", "three-factor.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := document.Read(path, b)
	if err != nil {
		t.Fatal(err)
	}
	st := d.(*document.Study)
	var out bytes.Buffer
	cmd := "backbench study --format markdown three.yaml"
	if err := StudyMarkdown(&out, st, cmd); err != nil {
		t.Fatal(err)
	}
	md := parseMarkdown(t, out.Bytes())
	for _, a := range st.Answers {
		for _, s := range append([]string{a.Conclusion}, a.Details...) {
			if !slices.Contains(md.paragraphs, s) {
				t.Errorf("no paragraph or list item reads %q", s)
			}
		}
	}
	if len(md.tables) != len(st.Factors) {
		t.Fatalf("%d tables, want one per factor (%d):\n%s", len(md.tables), len(st.Factors), out.String())
	}
	levels := map[string]map[string]string{}
	for _, s := range st.Series {
		levels[s.Label] = s.Levels
	}
	for i, f := range st.Factors {
		tb := md.tables[i]
		if want := []string{"pair", "at", "c", "metric", "ratio [95% interval]", "verdict"}; !slices.Equal(tb.rows[0], want) {
			t.Errorf("%s: header %q, want %q", f.Name, tb.rows[0], want)
		}
		if tb.align(t, "c") != east.AlignRight || tb.align(t, "ratio [95% interval]") != east.AlignRight {
			t.Errorf("%s: numbers are not right-aligned", f.Name)
		}
		row := 1
		for _, c := range st.Comparisons {
			if c.Factor != f.Name || (c.Metric != trials.MetricRequestsPerSecond && !direction(c.Verdict)) {
				continue
			}
			pair := levels[c.Series][f.Name] + " vs " + levels[c.Baseline][f.Name]
			if got := tb.cell(t, row, "pair"); got != pair {
				t.Errorf("%s row %d: pair %q, want %q", f.Name, row, got, pair)
			}
			if got := tb.cell(t, row, "ratio [95% interval]"); got != c.RatioText() || c.RatioCI95 == nil {
				t.Errorf("%s row %d: ratio %q, want %q with an interval", f.Name, row, got, c.RatioText())
			}
			if got := tb.cell(t, row, "verdict"); got != c.VerdictText() {
				t.Errorf("%s row %d: verdict %q, want %q", f.Name, row, got, c.VerdictText())
			}
			if got := tb.cell(t, row, "at"); got == "" || slices.Contains([]string{got}, f.Name) {
				t.Errorf("%s row %d: at %q", f.Name, row, got)
			}
			row++
		}
		if row != len(tb.rows) || row < 9 {
			t.Errorf("%s: %d rows, want %d (8 pairs' req/s at least)", f.Name, len(tb.rows)-1, row-1)
		}
	}
	if !slices.Contains(md.codeSpans, cmd) {
		t.Errorf("the command is not in a code span: %q", md.codeSpans)
	}
}
