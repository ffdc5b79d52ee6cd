package compare_test

// Capacity searches compared: the searches are run in-process against a
// built-in backend (fixtures) as backbench capacity runs them, with the
// packages that build that input (plan, driver, execute, and report for
// capacity.json's JSON), then loaded and paired as compare does.

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/compare"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// capSearch runs a capacity search of url as capacity -t 0.5 --confirm 0
// --warmup 0 --max-time 20s --max max --slo p99<=2s [--model closed]
// does and writes its capacity.json into dir; it returns the file's path
// and its document as document.Read reads it.
func capSearch(t *testing.T, dir, url, model string, max float64) (string, *document.Capacity) {
	t.Helper()
	lo := plan.Defaults(url)
	lo.Duration, lo.TimeLimitSet, lo.SLO = 500*time.Millisecond, true, []string{"p99<=2s"}
	o := plan.CapacityOptions{Load: lo, Model: model, Max: max, Resolution: 0.02, ResolutionText: "2%", ConfirmSet: true, MaxTime: 20 * time.Second}
	c, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sched := driver.NewCapacity(ctx, c.Config)
	quiet := execute.Options{Stderr: io.Discard, Quiet: true, Observe: true}
	if _, err := driver.Run(ctx, driver.Config{Schedule: sched, Options: quiet}, []driver.Series{{Label: c.ShownURL(), Plan: c.Plan}}); err != nil {
		t.Fatal(err)
	}
	rep := report.Capacity{Model: model, Objectives: c.Config.Objectives, MaxTime: o.MaxTime}
	if rep.Result, err = sched.Result(); err != nil {
		t.Fatal(err)
	}
	env := stats.CurrentEnvironment("")
	rep.Started, rep.Ended, rep.Environment = time.Now(), time.Now(), &env
	j := rep.JSON(c.Concurrency)
	var b bytes.Buffer
	if err := document.Write(&b, &document.Capacity{JSONReport: &j}); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "capacity.json")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := document.Read(name, b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	d, ok := r.(*document.Capacity)
	if !ok {
		t.Fatalf("capacity.json read as %T", r)
	}
	return name, d
}

// capCompare loads the files and compares them as compare does.
func capCompare(paths ...string) (*document.Comparison, error) {
	var files []*compare.File
	for _, p := range paths {
		f, err := compare.Load(p)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return compare.Files(files, 0.02, false)
}

// capOnceAcrossEngines skips a test in make test's second pass
// (BACKBENCH_ENGINE set): it tests what is made of the runs.
func capOnceAcrossEngines(t *testing.T) {
	t.Helper()
	if os.Getenv(execute.EngineEnv) != "" {
		t.Skip("runs once, with the default engine: it tests what is made of the runs, not the load path")
	}
}

// TestCapacityDocument runs two open-model capacity searches (0.5 s steps
// from 10 req/s up to 40, no confirmation, no warm-up) on a built-in
// backend: capacity.json is a document of kind capacity whose every step
// holds its run record (at the step's rate); compare pairs the two
// searches' steps by rate; a capacity.json of schema 1 without records is
// named by compare as having no records to compare. (The page of such a
// search is internal/report/page's TestCapacityStepRecordsOnPage.)
func TestCapacityDocument(t *testing.T) {
	capOnceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	a, da := capSearch(t, filepath.Join(dir, "a"), srv.URL("/"), capacity.ModelOpen, 40)
	b, _ := capSearch(t, filepath.Join(dir, "b"), srv.URL("/"), capacity.ModelOpen, 40)

	if da.Kind != document.KindCapacity || len(da.Steps) == 0 || len(da.Meta.Records) != len(da.Steps) {
		t.Fatalf("capacity.json: kind %q, %d steps, %d records", da.Kind, len(da.Steps), len(da.Meta.Records))
	}
	raw, _ := os.ReadFile(a)
	if !strings.HasPrefix(string(raw), "{\n  \"kind\": \"capacity\",\n") {
		t.Errorf("capacity.json does not start with its kind: %.60q", raw)
	}
	for i, st := range da.Steps {
		if len(st.Records) != 1 {
			t.Fatalf("step %d: %d records, want 1", i, len(st.Records))
		}
		r := st.Records[0]
		s := stats.SummaryOf(r)
		if r.Plan.Rate != st.Rate || s.Complete+s.Failed == 0 || r.Plan.Duration <= 0 {
			t.Errorf("step %d at %g req/s: record of rate %g, %d finished", i, st.Rate, r.Plan.Rate, s.Complete+s.Failed)
		}
	}

	// compare: steps paired by rate; every search starts at 10 req/s.
	res, err := capCompare(a, b)
	if err != nil {
		t.Fatalf("compare a b: %v", err)
	}
	var series []string
	for _, c := range res.Comparisons {
		if !slices.Contains(series, c.Series) {
			series = append(series, c.Series)
		}
		if c.Series != c.Baseline {
			t.Errorf("%q paired with %q", c.Series, c.Baseline)
		}
	}
	if !slices.Contains(series, "10 req/s") {
		t.Errorf("compare of two capacity searches: series %v, want the 10 req/s steps paired", series)
	}
	var text strings.Builder
	if err := report.CompareText(&text, res, report.DefaultWidth); err != nil || !strings.Contains(text.String(), "10 req/s") {
		t.Errorf("compare text: %v\n%s", err, text.String())
	}

	// The schema-1 capacity.json (no records): compare says it has
	// nothing to compare, in one line.
	old := filepath.Join("..", "document", "testdata", "schema1", "capacity.json")
	if _, err := capCompare(old, a); err == nil || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), "capacity.json") || !strings.Contains(err.Error(), "without the steps' records") {
		t.Errorf("compare of a capacity.json without records: %v", err)
	}
}

// TestCapacityClosedCompare: two closed-model searches (concurrency 1 and
// 2) compare as one series whose levels are the steps' concurrencies.
func TestCapacityClosedCompare(t *testing.T) {
	capOnceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	dir := t.TempDir()
	a, _ := capSearch(t, filepath.Join(dir, "a"), srv.URL("/"), capacity.ModelClosed, 2)
	b, _ := capSearch(t, filepath.Join(dir, "b"), srv.URL("/"), capacity.ModelClosed, 2)
	res, err := capCompare(a, b)
	if err != nil {
		t.Fatalf("compare: %v", err)
	}
	levels := map[int]bool{}
	for _, c := range res.Comparisons {
		if c.Series == srv.URL("/") {
			levels[c.Concurrency] = true
		}
	}
	if !levels[1] {
		t.Errorf("no comparison of the steps at concurrency 1: %v", levels)
	}
}
