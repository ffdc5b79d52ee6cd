package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// capacityDocument runs a short open-model capacity search (0.5 s steps from
// 10 req/s up to 40, no confirmation, no warm-up) on srv into dir and
// returns its capacity.json, read by document.Read.
func capacityDocument(t *testing.T, srv *fixtures.Server, dir string) (string, *document.Capacity) {
	t.Helper()
	code, _, errs := runMain(t, context.Background(), "capacity", "-q", "-t", "0.5", "--confirm", "0", "--warmup", "0",
		"--max-time", "20s", "--max", "40", "--slo", "p99<=2s", "--out", dir, srv.URL("/"))
	if code != 0 && code != exitSLO {
		t.Fatalf("capacity: exit %d: %s", code, errs)
	}
	name := filepath.Join(dir, "capacity.json")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := document.Read(name, data)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := r.(*document.Capacity)
	if !ok {
		t.Fatalf("capacity.json read as %T", r)
	}
	return name, d
}

// TestCapacityDocument runs two capacity searches on a built-in backend:
// capacity.json is a document of kind capacity whose every step holds its
// run record (at the step's rate); compare pairs the two searches' steps
// by rate (and their answers); report draws each step's figures from its
// records; a capacity.json of schema 1 without records is still read by
// report and named by compare as having no records to compare.
func TestCapacityDocument(t *testing.T) {
	onceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	a, da := capacityDocument(t, srv, filepath.Join(dir, "a"))
	b, _ := capacityDocument(t, srv, filepath.Join(dir, "b"))

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
	code, out, errs := runMain(t, context.Background(), "compare", "--format", "json", a, b)
	if code != 0 {
		t.Fatalf("compare a b: exit %d: %s", code, errs)
	}
	var res document.Comparison
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
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
	if code, out, errs := runMain(t, context.Background(), "compare", a, b); code != 0 || !strings.Contains(out, "10 req/s") {
		t.Errorf("compare text: exit %d: %s\n%s", code, errs, out)
	}

	// report: each step's point says what its record holds, and the
	// section what the records add up to.
	page := filepath.Join(dir, "page.html")
	if code, out, errs := runMain(t, context.Background(), "report", "-o", page, a); code != 0 {
		t.Fatalf("report: exit %d: %s%s", code, out, errs)
	}
	html, _ := os.ReadFile(page)
	var complete, failed int64
	for _, st := range da.Steps {
		s := stats.SummaryOf(st.Records[0])
		complete, failed = complete+s.Complete, failed+s.Failed
		tip := fmt.Sprintf("; its record: %d complete, %d failed, mean %.2f ms", s.Complete, s.Failed, report.LatencyOf(&s).Mean)
		if !strings.Contains(string(html), tip) {
			t.Errorf("step at %g req/s: no point title with %q", st.Rate, tip)
		}
	}
	if want := fmt.Sprintf("From the run records of %d steps: %d requests complete, %d failed.", len(da.Steps), complete, failed); len(da.Steps) > 1 && !strings.Contains(string(html), want) {
		t.Errorf("the page lacks %q", want)
	}

	// The schema-1 capacity.json (no records): report reads it; compare
	// says it has nothing to compare.
	old := filepath.Join("..", "..", "internal", "document", "testdata", "schema1", "capacity.json")
	if code, out, errs := runMain(t, context.Background(), "report", "-o", filepath.Join(dir, "old.html"), old); code != 0 {
		t.Errorf("report of a schema-1 capacity.json: exit %d: %s%s", code, out, errs)
	}
	code, out, errs = runMain(t, context.Background(), "compare", old, a)
	oneLineExit2(t, "compare of a capacity.json without records", code, out, errs, "capacity.json", "without the steps' records")
}

// TestSavedKinds: every JSON a command writes starts with its kind, and
// compare, merge and report read bench and sweep documents written now
// beside schema-1 files written before the kind key.
func TestSavedKinds(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	dir := t.TempDir()
	a := benchFile(t, dir, "a.json", "-n", "20", "-c", "2", srv.URL("/"))
	b := benchFile(t, dir, "b.json", "-n", "20", "-c", "2", srv.URL("/"))
	sw := filepath.Join(dir, "sw")
	if code, _, errs := runMain(t, context.Background(), "sweep", "-q", "-c", "1,2", "-n", "20", "--out", sw, srv.URL("/")); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	merged := filepath.Join(dir, "m.json")
	code, out, errs := runMain(t, context.Background(), "merge", "-q", "--format", "json", a, b)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	os.WriteFile(merged, []byte(out), 0o644)
	_, probe, errs := runMain(t, context.Background(), "probe", "--format", "json", "-s", "0.5", "--idle-max", "1", "--max-requests", "3", srv.URL("/"))
	probeFile := filepath.Join(dir, "p.json")
	os.WriteFile(probeFile, []byte(probe), 0o644)
	for file, kind := range map[string]document.Kind{a: document.KindBench, filepath.Join(sw, "sweep.json"): document.KindSweep,
		merged: document.KindMerge, probeFile: document.KindProbe} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("{\n  \"kind\": %q,\n", kind); !strings.HasPrefix(string(data), want) {
			t.Errorf("%s: starts %.40q, want %q (%s)", file, data, want, errs)
		}
		if d, err := document.Read(file, data); err != nil || d.ResultKind() != kind {
			t.Errorf("%s: read as %v, %v; want %s", file, d, err, kind)
		}
	}
	old := filepath.Join("..", "..", "internal", "document", "testdata", "schema1")
	page := filepath.Join(dir, "page.html")
	if code, out, errs := runMain(t, context.Background(), "report", "-o", page, a, merged, filepath.Join(sw, "sweep.json"), probeFile,
		filepath.Join(old, "bench.json"), filepath.Join(old, "sweep-repeat.json"), filepath.Join(old, "compare.json"), filepath.Join(old, "merge-sweep.json")); code != 0 {
		t.Errorf("report of new and schema-1 documents: exit %d: %s%s", code, out, errs)
	}
	if code, out, errs := runMain(t, context.Background(), "compare", filepath.Join(old, "bench.json"), a); code != 0 {
		t.Errorf("compare of a schema-1 bench and a bench document: exit %d: %s%s", code, out, errs)
	}
	if code, out, errs := runMain(t, context.Background(), "compare", filepath.Join(old, "sweep.json"), filepath.Join(sw, "sweep.json")); code != 0 {
		t.Errorf("compare of a schema-1 sweep and a sweep document: exit %d: %s%s", code, out, errs)
	}
	// merge reads a merge document (its merged record) as one run.
	if code, out, errs := runMain(t, context.Background(), "merge", "-q", "--force", merged, filepath.Join(old, "bench.json")); code != 0 || !strings.Contains(out, "Complete requests:      80\n") {
		t.Errorf("merge of a merge document and a schema-1 bench: exit %d: %s\n%s", code, errs, out)
	}
}

// TestCapacityClosedCompare: two closed-model searches (concurrency 1 and
// 2) compare as one series whose levels are the steps' concurrencies.
func TestCapacityClosedCompare(t *testing.T) {
	onceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	dir := t.TempDir()
	var files []string
	for _, sub := range []string{"a", "b"} {
		out := filepath.Join(dir, sub)
		code, _, errs := runMain(t, context.Background(), "capacity", "-q", "--model", "closed", "-t", "0.5", "--confirm", "0", "--warmup", "0",
			"--max-time", "20s", "--max", "2", "--slo", "p99<=2s", "--out", out, srv.URL("/"))
		if code != 0 && code != exitSLO {
			t.Fatalf("capacity: exit %d: %s", code, errs)
		}
		files = append(files, filepath.Join(out, "capacity.json"))
	}
	code, out, errs := runMain(t, context.Background(), "compare", "--format", "json", files[0], files[1])
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errs)
	}
	var res document.Comparison
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
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
