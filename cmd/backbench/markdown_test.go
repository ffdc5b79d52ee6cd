package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// mdTables returns the GFM tables a Markdown parser (goldmark with
// GitHub's extensions) finds in src, each as rows of cell texts (the
// header first), and the code spans.
func mdTables(t *testing.T, src string) (tables [][][]string, codeSpans []string) {
	t.Helper()
	b := []byte(src)
	root := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(b))
	textOf := func(n ast.Node) string {
		var s strings.Builder
		ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
			if tx, ok := c.(*ast.Text); ok && entering {
				s.Write(tx.Segment.Value(b))
			}
			return ast.WalkContinue, nil
		})
		return strings.ReplaceAll(s.String(), `\`, "")
	}
	ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch x := n.(type) {
		case *east.Table:
			var rows [][]string
			for r := x.FirstChild(); r != nil; r = r.NextSibling() {
				var cells []string
				for c := r.FirstChild(); c != nil; c = c.NextSibling() {
					cells = append(cells, textOf(c))
				}
				rows = append(rows, cells)
			}
			tables = append(tables, rows)
			return ast.WalkSkipChildren, nil
		case *ast.CodeSpan:
			codeSpans = append(codeSpans, textOf(x))
		}
		return ast.WalkContinue, nil
	})
	return tables, codeSpans
}

// TestMarkdownFormats: --format markdown of bench, sweep and compare, on
// runs of a built-in backend, renders as tables (read back by a Markdown
// parser) with the command in a code span, and nothing else on stdout.
func TestMarkdownFormats(t *testing.T) {
	onceAcrossEngines(t)
	srv := serialFCGI(t, time.Millisecond, "")
	ctx := context.Background()
	check := func(name, out string, wantHead []string, wantRows int, cmd string) [][]string {
		t.Helper()
		tables, spans := mdTables(t, out)
		if len(tables) != 1 || len(tables[0]) != 1+wantRows || strings.Join(tables[0][0], "|") != strings.Join(wantHead, "|") {
			t.Fatalf("%s: tables %q, want one of %d rows under %q\n%s", name, tables, wantRows, wantHead, out)
		}
		if len(spans) == 0 || !strings.HasPrefix(spans[len(spans)-1], cmd) {
			t.Errorf("%s: code spans %q, want the command %q last", name, spans, cmd)
		}
		return tables[0]
	}
	code, out, errs := runMain(t, ctx, "bench", "-q", "-n", "10", "--format", "markdown", "-A", "user:secret", srv.URL("/x"))
	if code != 0 {
		t.Fatalf("bench: exit %d %s", code, errs)
	}
	tb := check("bench", out, []string{"figure", "value"}, 8, "backbench bench -q -n 10 --format markdown -A REDACTED ")
	if tb[6][0] != "complete requests" || tb[6][1] != "10" || strings.Contains(out, "secret") {
		t.Errorf("bench table %q (or the secret shown)", tb)
	}
	// --against adds compare's Markdown: a second table, of the verdicts.
	saved := saveBench(t, t.TempDir(), "base.json", "-n", "10", srv.URL("/x"))
	code, out, errs = runMain(t, ctx, "bench", "-q", "-n", "10", "--format", "markdown", "--against", saved, srv.URL("/x"))
	if tables, _ := mdTables(t, out); code != 0 || len(tables) != 2 || tables[1][0][3] != "metric" || len(tables[1]) != 1+5 {
		t.Errorf("bench --format markdown --against: exit %d %s, tables %q", code, errs, tables)
	}
	code, out, errs, dir := sweepOut(t, "-q", "-n", "10", "-c", "1,2", "--repeat", "4", "--format", "markdown", "a="+srv.URL("/x"), "b="+srv.URL("/x"))
	if code != 0 {
		t.Fatalf("sweep: exit %d %s", code, errs)
	}
	tb = check("sweep", out, []string{"series", "c", "req/s", "±", "p99 ms", "failed", "vs a"}, 4, "backbench sweep --out ")
	if tb[3][0] != "b" || tb[3][1] != "1" || tb[3][6] == "" || strings.Contains(out, "Wrote") {
		t.Errorf("sweep table %q: want b at c=1 with a verdict, and no Wrote line", tb)
	}
	if _, err := os.Stat(filepath.Join(dir, "sweep.json")); err != nil {
		t.Errorf("sweep --format markdown wrote no sweep.json: %v", err)
	}
	f := filepath.Join(dir, "sweep.json")
	code, out, errs = runMain(t, ctx, "compare", "--format", "markdown", f, f)
	if code != 0 {
		t.Fatalf("compare: exit %d %s", code, errs)
	}
	tb = check("compare", out, []string{"series", "baseline", "c", "metric", "baseline value", "value", "ratio [95% interval]", "p", "verdict"}, 2*2*5, "backbench compare --format markdown ")
	for _, r := range tb[1:] {
		if v := strings.Fields(strings.TrimSuffix(r[8], " *")); len(v) == 0 || (v[0] != "same" && v[0] != "undecided:" && v[0] != "undecided") {
			t.Errorf("sweep.json against itself: %q", r)
		}
	}
}

// TestTablesFit: a sweep of 3 targets in 2 keep-alive modes with 5
// trials a level prints no line wider than 100 columns by default (its
// table in blocks, its comparisons grouped by pair, its notes wrapped);
// with --wide its table is today's, wider than that.
func TestTablesFit(t *testing.T) {
	onceAcrossEngines(t)
	var targets []string
	for _, name := range []string{"serial", "prefork", "evented"} {
		targets = append(targets, name+"="+serialFCGI(t, time.Millisecond, "").URL("/x"))
	}
	args := append([]string{"-q", "-n", "10", "-c", "1,2", "--repeat", "5", "--keepalive-modes", "off,on", "--seed", "3"}, targets...)
	widest := func(out string) (int, string) {
		n, line := 0, ""
		for _, l := range strings.Split(out, "\n") {
			if w := utf8.RuneCountInString(l); w > n {
				n, line = w, l
			}
		}
		return n, line
	}
	code, out, errs, _ := sweepOut(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n, l := widest(out); n > 100 {
		t.Errorf("a line of %d columns by default: %q\n%s", n, l, out)
	}
	for _, want := range []string{"serial no-ka", "evented ka", "Comparisons", "keep-alive: on vs off"} {
		if !strings.Contains(out, want) {
			t.Errorf("the fitted output lacks %q:\n%s", want, out)
		}
	}
	code, out, errs, _ = sweepOut(t, append([]string{"--wide"}, args...)...)
	if code != 0 {
		t.Fatalf("--wide: exit %d: %s", code, errs)
	}
	if n, _ := widest(out); n <= 100 {
		t.Errorf("--wide: the widest line is %d columns, want today's wide table:\n%s", n, out)
	}
}
