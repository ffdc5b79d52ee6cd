package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/report"
)

// TestSweepTargets runs a sweep of a mix (GET /a, GET /b of weight 3)
// against a built-in backend that counts what it served: every level has
// its targets in sweep.json, a row each in sweep-targets.csv, and a
// per-target table after the sweep's table; each level's targets' counts
// sum to its requests, /b has three quarters of them (±1), and the
// backend saw what the file says was sent. A sweep of one request into
// the same directory leaves no sweep-targets.csv and prints its table
// without per-target lines.
func TestSweepTargets(t *testing.T) {
	onceAcrossEngines(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(file, []byte("GET /a\n\nGET /b\n# weight: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tally := &fixtures.Tally{}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{BodyBytes: 7, Tally: tally})
	out := filepath.Join(dir, "out")
	code, stdout, errs := runMain(t, context.Background(), "sweep", "-q", "-c", "1,2", "-n", "40", "--warmup", "0",
		"--targets", file, "--out", out, "mix="+srv.URL("/"))
	if code != 0 {
		t.Fatalf("sweep: exit %d %s", code, errs)
	}
	for _, want := range []string{"mix: per target (2 targets; times are Total, in ms)", "concurrency target", "sweep-targets.csv"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if w := report.Width(stdout); w > report.DefaultWidth {
		t.Errorf("stdout %d columns wide:\n%s", w, stdout)
	}

	f, err := os.Open(filepath.Join(out, report.SweepTargetsFile))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 1+4 {
		t.Fatalf("sweep-targets.csv: %v, %d rows: %q", err, len(rows), rows)
	}
	perLevel := map[string]int64{}
	perTarget := map[string]int64{}
	for _, r := range rows[1:] {
		n, _ := strconv.ParseInt(r[4], 10, 64)
		perLevel[r[1]] += n
		perTarget[r[2]] += n
		if r[0] != "mix" || r[6] != "0" || r[10] != strconv.FormatInt(7*n, 10) {
			t.Errorf("row %q: want label mix, no failure, 7 body bytes a request", r)
		}
		if r[2] == "GET /b" && (n < 29 || n > 31) {
			t.Errorf("row %q: GET /b sent %d of 40, want 30 ± 1", r, n)
		}
	}
	if perLevel["1"] != 40 || perLevel["2"] != 40 {
		t.Errorf("requests per level %v: want 40 at c=1 and c=2", perLevel)
	}
	seen := tally.Snapshot()
	for _, k := range []string{"GET /a", "GET /b"} {
		if seen[k].N != perTarget[k] {
			t.Errorf("%s: the backend served %d, sweep-targets.csv says %d", k, seen[k].N, perTarget[k])
		}
	}

	var sw document.Sweep
	b, err := os.ReadFile(filepath.Join(out, "sweep.json"))
	if err == nil {
		err = json.Unmarshal(b, &sw)
	}
	if err != nil || len(sw.Series) != 1 || len(sw.Series[0].Levels) != 2 {
		t.Fatalf("sweep.json: %v %+v", err, sw.Series)
	}
	for _, l := range sw.Series[0].Levels {
		if len(l.Targets) != 2 || l.Targets[0].Requests+l.Targets[1].Requests != 40 || l.Targets[1].Weight != 3 {
			t.Errorf("c=%d: targets %+v", l.Concurrency, l.Targets)
		}
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
