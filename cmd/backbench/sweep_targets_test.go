package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/report"
)

// TestSweepTargetsFile: a sweep of a mix writes sweep-targets.csv into
// --out and names it; a sweep of one request into the same directory
// leaves none of the earlier sweep's and does not name it. (The mix's
// levels, rows and tables: internal/sweep's TestLiveSweepTargets.)
func TestSweepTargetsFile(t *testing.T) {
	onceAcrossEngines(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(file, []byte("GET /a\n\nGET /b\n# weight: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{BodyBytes: 7})
	out := filepath.Join(dir, "out")
	code, stdout, errs := runMain(t, context.Background(), "sweep", "-q", "-c", "1,2", "-n", "40", "--warmup", "0",
		"--targets", file, "--out", out, "mix="+srv.URL("/"))
	if code != 0 {
		t.Fatalf("sweep: exit %d %s", code, errs)
	}
	if !strings.Contains(stdout, report.SweepTargetsFile) {
		t.Errorf("stdout does not name %s:\n%s", report.SweepTargetsFile, stdout)
	}
	if _, err := os.Stat(filepath.Join(out, report.SweepTargetsFile)); err != nil {
		t.Errorf("no sweep-targets.csv: %v", err)
	}
	code, stdout, errs = runMain(t, context.Background(), "sweep", "-q", "-c", "1", "-n", "20", "--out", out, "one="+srv.URL("/a"))
	if code != 0 {
		t.Fatalf("sweep of one request: exit %d %s", code, errs)
	}
	if strings.Contains(stdout, "per target") || strings.Contains(stdout, report.SweepTargetsFile) {
		t.Errorf("a sweep of one request has per-target output:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(out, report.SweepTargetsFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sweep-targets.csv of the earlier sweep left: %v", err)
	}
}
