package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/summary"
)

// TestBenchDerivesSummaryOnce: a bench run derives its record's summary
// once (the executor's, kept with the record), whatever the report; with
// --repeat N, once per trial and once for the pooled trials; a sweep once
// per level; a capacity search once per step. It counts summary.Derived, so it must not run in parallel
// with other tests.
func TestBenchDerivesSummaryOnce(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 5})
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want int64
	}{
		{"text", []string{"bench", "-n", "20", "-c", "2"}, 1},
		{"json", []string{"bench", "-q", "--format", "json", "-n", "20", "-c", "2"}, 1},
		{"files", []string{"bench", "-q", "-n", "20", "-c", "2", "-e", filepath.Join(dir, "p.csv"), "-g", filepath.Join(dir, "g.tsv")}, 1},
		{"slo", []string{"bench", "-q", "-n", "20", "-c", "2", "--slo", "errors<=100%"}, 1},
		{"repeat", []string{"bench", "-q", "--format", "json", "-n", "20", "-c", "2", "--repeat", "3"}, 3 + 1},
		{"sweep", []string{"sweep", "-q", "-n", "20", "-c", "1,2", "--out", filepath.Join(dir, "sweep")}, 2},
		{"sweep repeat", []string{"sweep", "-q", "-n", "20", "-c", "1,2", "--repeat", "2", "--out", filepath.Join(dir, "sweep2")}, 2 * (2 + 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := summary.Derived()
			code, _, errs := runMain(t, context.Background(), append(tc.args, srv.URL("/"))...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if n := summary.Derived() - before; n != tc.want {
				t.Errorf("%d summaries derived, want %d", n, tc.want)
			}
		})
	}
	t.Run("capacity", func(t *testing.T) {
		before := summary.Derived()
		code, out, errs := runMain(t, context.Background(), "capacity", "-q", "-t", "0.2", "--warmup", "0", "--confirm", "0",
			"--start", "20", "--max", "40", "--slo", "p99<=1s", "--format", "json", "--out", filepath.Join(dir, "capacity"), srv.URL("/"))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var doc struct{ Steps []json.RawMessage }
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Steps) == 0 {
			t.Fatalf("no steps (%v) in %s", err, out)
		}
		if n := summary.Derived() - before; n != int64(len(doc.Steps)) {
			t.Errorf("%d summaries derived for %d steps", n, len(doc.Steps))
		}
	})
}
