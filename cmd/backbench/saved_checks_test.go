package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/backbench/backbench/fixtures"
)

// mutate writes a copy of the file src at dir/name with every match of re
// replaced by repl, and fails when nothing matched.
func mutate(t *testing.T, src, dir, name, re, repl string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	rx := regexp.MustCompile(re)
	if !rx.Match(b) {
		t.Fatalf("%s: no %s", src, re)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, rx.ReplaceAll(b, []byte(repl)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// oneLineExit2 fails unless the command exited 2 with one line on stderr
// holding every want, and nothing on stdout.
func oneLineExit2(t *testing.T, what string, code int, out, errs string, want ...string) {
	t.Helper()
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
		t.Errorf("%s: exit %d, stdout %.200q, stderr %q; want 2 and one line", what, code, out, errs)
		return
	}
	for _, w := range want {
		if !strings.Contains(errs, w) {
			t.Errorf("%s: stderr %q does not name %q", what, errs, w)
		}
	}
}

// TestSavedNumbersChecked runs the built-in backend, then feeds merge and
// compare mutated copies of the result: negative counts and sums, failures
// near MaxInt64 in two files (whose sum would wrap), and schemas that are
// no schema. Each is refused with exit 2 and one line naming the file and
// the field.
func TestSavedNumbersChecked(t *testing.T) {
	onceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	a := benchFile(t, dir, "a.json", "-n", "50", "-c", "2", srv.URL("/"))
	b := benchFile(t, dir, "b.json", "-n", "50", "-c", "2", srv.URL("/"))
	// The run's counts, not the timeline's windows (which have a
	// "complete" each, checked when the timeline is read).
	negComplete := mutate(t, a, dir, "neg-complete.json", `("counts": \{\s*"complete": *)[0-9]+`, `${1}-5`)
	negSum := mutate(t, a, dir, "neg-sum.json", `("total": \{\s*"count": [0-9]+,\s*"sum_ns": )[0-9]+`, `${1}-2500000000`)
	negSummary := mutate(t, a, dir, "neg-summary.json", `"complete_requests": *[0-9]+`, `"complete_requests": -5`)
	hugeA := mutate(t, a, dir, "huge-a.json", `"connect": *0,`, `"connect": 9223372036854775000,`)
	hugeB := mutate(t, b, dir, "huge-b.json", `"connect": *0,`, `"connect": 9223372036854775000,`)
	for _, tc := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"negative count", []string{a, negComplete}, []string{"neg-complete.json", "counts.complete is -5"}},
		{"negative sum", []string{a, negSum}, []string{"neg-sum.json", "phases.total.sum_ns is -2500000000"}},
		{"failures that overflow", []string{hugeA, hugeB}, []string{"huge-b.json", "counts.failures", "overflows"}},
	} {
		code, out, errs := runMain(t, context.Background(), append([]string{"merge"}, tc.files...)...)
		oneLineExit2(t, "merge: "+tc.name, code, out, errs, tc.want...)
	}
	// Each huge file alone is a valid count.
	if code, out, errs := runMain(t, context.Background(), "merge", hugeA); code != 0 || !strings.Contains(out, "Failed requests:        9223372036854775000\n") {
		t.Errorf("merge of one file of 9223372036854775000 failures: exit %d, %s\n%s", code, errs, out)
	}

	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"negative summary count", negSummary, []string{"neg-summary.json", "complete_requests is -5"}},
		{"negative record count", negComplete, []string{"neg-complete.json", "counts.complete is -5"}},
		{"negative record sum", negSum, []string{"neg-sum.json", "sum_ns is -2500000000"}},
	} {
		code, out, errs := runMain(t, context.Background(), "compare", a, tc.file)
		oneLineExit2(t, "compare: "+tc.name, code, out, errs, tc.want...)
	}

	for i, schema := range []string{"2", "-1", "0", `"1"`, "1e308", "1.5"} {
		bad := mutate(t, a, dir, "schema"+strconv.Itoa(i)+".json", `"schema": *1`, `"schema": `+schema)
		code, out, errs := runMain(t, context.Background(), "compare", a, bad)
		oneLineExit2(t, "compare: schema "+schema, code, out, errs, filepath.Base(bad), "schema")
		code, out, errs = runMain(t, context.Background(), "merge", a, bad)
		oneLineExit2(t, "merge: schema "+schema, code, out, errs, filepath.Base(bad), "schema")
		code, out, errs = runMain(t, context.Background(), "report", "-o", filepath.Join(dir, "r.html"), bad)
		oneLineExit2(t, "report: schema "+schema, code, out, errs, filepath.Base(bad), "schema")
	}
}

// TestMergeSameRunTwice gives merge one run twice by another path: a
// symlink, a copy, a re-indented copy and standard input. Each is refused
// (exit 2, one line naming both), since its requests would count twice.
func TestMergeSameRunTwice(t *testing.T) {
	onceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	dir := t.TempDir()
	a := benchFile(t, dir, "a.json", "-n", "50", "-c", "2", srv.URL("/"))
	b := benchFile(t, dir, "b.json", "-n", "50", "-c", "2", srv.URL("/"))
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(a)
	cp := filepath.Join(dir, "copy.json")
	os.WriteFile(cp, data, 0o644)
	flat := filepath.Join(dir, "flat.json")
	os.WriteFile(flat, regexp.MustCompile(`\n\s*`).ReplaceAll(data, nil), 0o644)
	for _, other := range []string{link, cp, flat} {
		code, out, errs := runMain(t, context.Background(), "merge", a, b, other)
		oneLineExit2(t, "merge a b "+filepath.Base(other), code, out, errs, "a.json", filepath.Base(other), "twice")
	}
	// Standard input.
	f, err := os.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stdin := os.Stdin
	os.Stdin = f
	code, out, errs := runMain(t, context.Background(), "merge", b, "-", a)
	os.Stdin = stdin
	oneLineExit2(t, "merge b - a", code, out, errs, "twice")
	// Two runs merge.
	if code, out, errs := runMain(t, context.Background(), "merge", a, b); code != 0 || !strings.Contains(out, "Complete requests:      100\n") {
		t.Errorf("merge a b: exit %d, %s\n%s", code, errs, out)
	}
}

// TestPageFiniteCoordinates renders a sweep from a real run whose figures
// were set to 1.7e308 and 1e308 (and a bench result's percentiles to
// 1e308): every number in every SVG coordinate attribute of the page is
// finite and inside the chart's box. A figure of -1e308 is refused.
func TestPageFiniteCoordinates(t *testing.T) {
	onceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	out := filepath.Join(dir, "sw")
	if code, _, errs := runMain(t, context.Background(), "sweep", "-q", "-c", "1,2,3", "-n", "60", "--out", out, srv.URL("/")); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	sw := filepath.Join(out, "sweep.json")
	big := mutate(t, sw, dir, "big.json", `"requests_per_second": *[0-9.e+-]+`, `"requests_per_second": 1.7e308`)
	// 1.7e308 with the axis' 5% headroom is +Inf; 1e308 beside it.
	n := 0
	b, _ := os.ReadFile(big)
	b = regexp.MustCompile(`"requests_per_second": 1.7e308`).ReplaceAllFunc(b, func(m []byte) []byte {
		n++
		if n%2 == 0 {
			return []byte(`"requests_per_second": 1e308`)
		}
		return m
	})
	b = regexp.MustCompile(`("99": *)[0-9.e+-]+`).ReplaceAll(b, []byte(`${1}1e308`))
	os.WriteFile(big, b, 0o644)
	bench := benchFile(t, dir, "bench.json", "-n", "50", "-c", "2", srv.URL("/"))
	bigBench := mutate(t, bench, dir, "big-bench.json", `("percentiles_ms": *\{[^}]*"50": *)[0-9.e+-]+`, `${1}1e308`)
	// A negative figure is no figure: refused, one line.
	neg := mutate(t, sw, dir, "neg.json", `"requests_per_second": *[0-9.e+-]+`, `"requests_per_second": -1e308`)
	code, out, errs := runMain(t, context.Background(), "report", "-o", filepath.Join(dir, "neg.html"), neg)
	oneLineExit2(t, "report of -1e308 req/s", code, out, errs, "neg.json", "requests_per_second is -1e+308")
	page := filepath.Join(dir, "page.html")
	if code, _, errs := runMain(t, context.Background(), "report", "-o", page, big, bigBench); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	numRE := regexp.MustCompile(`[-+]?(?:[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?|Inf|NaN|inf|nan)`)
	// Absolute coordinates lie in the 960×400 box; a path's relative
	// moves are a marker's size.
	coords := map[string]float64{"x": 960, "y": 960, "x1": 960, "x2": 960, "y1": 960, "y2": 960, "cx": 960, "cy": 960,
		"points": 960, "d": 960, "width": 960, "height": 960, "transform": 960}
	checked := 0
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, at := range n.Attr {
				limit, ok := coords[at.Key]
				if !ok {
					continue
				}
				for _, s := range numRE.FindAllString(at.Val, -1) {
					v, err := strconv.ParseFloat(s, 64)
					if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > limit {
						t.Errorf("<%s %s=%q>: %q is not a finite coordinate in the chart's box", n.Data, at.Key, at.Val, s)
						return
					}
					checked++
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if checked < 100 {
		t.Errorf("only %d coordinates on the page", checked)
	}
}
