package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
)

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
