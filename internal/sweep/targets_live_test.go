package sweep_test

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/report"
)

// TestLiveSweepTargets runs a sweep of a mix (GET /a, GET /b of weight 3)
// against a built-in backend that counts what it served: every level has
// its targets in the saved sweep, a row each in sweep-targets.csv
// (report.SweepTargetsCSV), and a per-target table after the sweep's
// table; each level's targets' counts sum to its requests, /b has three
// quarters of them (±1), and the backend saw what the file says was
// sent. A sweep of one request has no targets and prints its table
// without per-target lines. (That its run leaves no sweep-targets.csv of
// an earlier sweep: cmd/backbench's TestSweepTargetsFile.)
func TestLiveSweepTargets(t *testing.T) {
	sweepDocOnce(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(file, []byte("GET /a\n\nGET /b\n# weight: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tally := &fixtures.Tally{}
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{BodyBytes: 7, Tally: tally})
	so := sweepDocOptions(40, "1,2", "mix="+srv.URL("/"))
	sweepDocWarmup(&so, 0)
	so.Load.Targets = file
	r := runSweepDoc(t, so, nil)
	for _, want := range []string{"mix: per target (2 targets; times are Total, in ms)", "concurrency target"} {
		if !strings.Contains(r.text, want) {
			t.Errorf("the text lacks %q:\n%s", want, r.text)
		}
	}
	if w := report.Width(r.text); w > report.DefaultWidth {
		t.Errorf("the text is %d columns wide:\n%s", w, r.text)
	}
	sw := r.sw
	sweepDocFiles(t, sw)
	if !report.SweepHasTargets(sw) {
		t.Error("a sweep of a mix has no targets")
	}
	var b bytes.Buffer
	if err := report.SweepTargetsCSV(&b, sw); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
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
	if len(sw.Series) != 1 || len(sw.Series[0].Levels) != 2 {
		t.Fatalf("sweep.json: %+v", sw.Series)
	}
	for _, l := range sw.Series[0].Levels {
		if len(l.Targets) != 2 || l.Targets[0].Requests+l.Targets[1].Requests != 40 || l.Targets[1].Weight != 3 {
			t.Errorf("c=%d: targets %+v", l.Concurrency, l.Targets)
		}
	}

	one := runSweepDoc(t, sweepDocOptions(20, "1", "one="+srv.URL("/a")), nil)
	if strings.Contains(one.text, "per target") || strings.Contains(one.text, report.SweepTargetsFile) || report.SweepHasTargets(one.sw) {
		t.Errorf("a sweep of one request has per-target output:\n%s", one.text)
	}
}
