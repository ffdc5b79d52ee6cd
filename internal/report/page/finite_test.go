package page_test

// A page of results saved from live runs on an in-process backend: a
// sweep and a bench run made as the commands make them (plan,
// sweep.Run, execute.Run: imported only to build the input), then
// mutated, as backbench report reads them.

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report/page"
	"github.com/backbench/backbench/internal/sweep"
)

// finiteQuiet are the executor's options of the runs, silent.
var finiteQuiet = execute.Options{Stderr: io.Discard, Quiet: true, Observe: true, Version: "test"}

// finiteSave writes d as dir/name and returns the path.
func finiteSave(t *testing.T, dir, name string, d document.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := document.Write(&b, d); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// finiteMutate writes a copy of the file src at dir/name with every match
// of re replaced by repl, and fails when nothing matched.
func finiteMutate(t *testing.T, src, dir, name, re, repl string) string {
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

// finiteRefused fails unless reading the file name for a page is refused
// with one line holding every want.
func finiteRefused(t *testing.T, what, name string, want ...string) {
	t.Helper()
	_, err := page.ReadFileRedacted(name)
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: %v; want one line", what, err)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q does not name %q", what, err, w)
		}
	}
}

// TestPageFiniteCoordinates renders a sweep from a real run whose figures
// were set to 1.7e308 and 1e308 (and a bench result's percentiles to
// 1e308): every number in every SVG coordinate attribute of the page is
// finite and inside the chart's box. A figure of -1e308 is refused, and
// so are schemas that are no schema. (The exit status 2 of backbench
// report: cmd/backbench.)
func TestPageFiniteCoordinates(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	l := plan.Defaults("")
	l.Requests, l.RequestsSet = 60, true
	sp, err := (&plan.SweepOptions{Load: l, Args: []string{srv.URL("/")}, Levels: "1,2,3"}).Build()
	if err != nil {
		t.Fatal(err)
	}
	cfg := sp.Config
	cfg.Options = finiteQuiet
	res, err := sweep.Run(context.Background(), cfg, sp.Series)
	if err != nil {
		t.Fatal(err)
	}
	swDoc := cfg.Document(sp.Series, sp.Backends, res)
	sw := finiteSave(t, dir, "sweep.json", &swDoc)
	big := finiteMutate(t, sw, dir, "big.json", `"requests_per_second": *[0-9.e+-]+`, `"requests_per_second": 1.7e308`)
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
	bo := plan.Defaults(srv.URL("/"))
	bo.Requests, bo.RequestsSet, bo.Concurrency = 50, true, 2
	bl, err := bo.Build()
	if err != nil {
		t.Fatal(err)
	}
	run, err := execute.Run(context.Background(), bl.Plan, finiteQuiet)
	if err != nil {
		t.Fatal(err)
	}
	bench := finiteSave(t, dir, "bench.json", &document.Run{Summary: &run.Summary, Record: run.Record})
	bigBench := finiteMutate(t, bench, dir, "big-bench.json", `("percentiles_ms": *\{[^}]*"50": *)[0-9.e+-]+`, `${1}1e308`)
	// A negative figure is no figure: refused, one line.
	neg := finiteMutate(t, sw, dir, "neg.json", `"requests_per_second": *[0-9.e+-]+`, `"requests_per_second": -1e308`)
	finiteRefused(t, "report of -1e308 req/s", neg, "neg.json", "requests_per_second is -1e+308")
	for i, schema := range []string{"2", "-1", "0", `"1"`, "1e308", "1.5"} {
		bad := finiteMutate(t, bench, dir, "schema"+strconv.Itoa(i)+".json", `"schema": *1`, `"schema": `+schema)
		finiteRefused(t, "report: schema "+schema, bad, filepath.Base(bad), "schema")
	}
	var results []*page.Result
	for _, name := range []string{big, bigBench} {
		r, err := page.ReadFileRedacted(name)
		if err != nil {
			t.Fatalf("report: %v", err)
		}
		results = append(results, r)
	}
	var out bytes.Buffer
	if err := page.Write(&out, results, page.Options{Generated: time.Now()}); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&out)
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
