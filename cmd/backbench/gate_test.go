package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/gate"
)

// saveBench runs bench -q --format json with args and saves its output
// as dir/name.
func saveBench(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	code, out, errs := runMain(t, context.Background(), append([]string{"bench", "-q", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("bench %v: exit %d: %s", args, code, errs)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGateExit: compare --fail-on's exit statuses, with one line on
// stderr: 4 when the gate tripped (a serial 20 ms backend against a 5 ms
// one, 5 trials a side), 0 when it passed (the other way round) or
// without --fail-on, 5 when it cannot judge (saved runs without trials).
// (What the gate judges: internal/compare's TestLiveGateTruth.)
func TestGateExit(t *testing.T) {
	onceAcrossEngines(t)
	dir := t.TempDir()
	fast := serialFCGI(t, 5*time.Millisecond, "")
	slow := serialFCGI(t, 20*time.Millisecond, "")
	before := saveBench(t, dir, "before.json", "-n", "10", "--repeat", "5", "--label", "app", fast.URL("/x"))
	after := saveBench(t, dir, "after.json", "-n", "10", "--repeat", "5", "--label", "app", slow.URL("/x"))
	ctx := context.Background()
	if code, out, errs := runMain(t, ctx, "compare", "--fail-on", "req/s slower", before, after); code != exitRegression ||
		strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "req/s slower") || !strings.Contains(out, "tripped: req/s slower") {
		t.Errorf("20 ms against 5 ms: exit %d, stderr %q, want 4 and one line naming req/s slower\n%s", code, errs, out)
	}
	if code, out, errs := runMain(t, ctx, "compare", "--fail-on", "req/s slower", after, before); code != 0 || errs != "" {
		t.Errorf("5 ms against 20 ms: exit %d %s, want 0\n%s", code, errs, out)
	}
	if code, _, errs := runMain(t, ctx, "compare", before, after); code != 0 {
		t.Errorf("compare without --fail-on: exit %d %s", code, errs)
	}
	var r document.Comparison
	if code, out, _ := runMain(t, ctx, "compare", "--format", "json", "--fail-on", "req/s slower", before, after); code != exitRegression ||
		json.Unmarshal([]byte(out), &r) != nil || r.Gate == nil || r.Gate.Status != gate.Tripped {
		t.Errorf("JSON: exit %d, gate %+v: want 4 and one document with the gate", code, r.Gate)
	}
	one, err := filepath.Abs("../../internal/document/testdata/schema1/bench.json")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runMain(t, ctx, "compare", "--fail-on", "req/s slower", one, strings.Replace(one, "bench.json", "bench-b.json", 1))
	if code != exitUnjudged || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "cannot judge") || !strings.Contains(out, "cannot judge:") {
		t.Errorf("runs without trials: exit %d, stderr %q, want 5 and one line saying the gate cannot judge\n%s", code, errs, out)
	}
}

// TestGateBadInput: a bad --fail-on is one line and exit status 2,
// before any file is read.
func TestGateBadInput(t *testing.T) {
	for spec, want := range map[string]string{
		"latency slower": `unknown metric "latency"`,
		"req/s higher":   `unknown direction "higher"`,
		"p99 higher by":  "unexpected",
		"":               "no rule",
	} {
		code, _, errs := runMain(t, context.Background(), "compare", "--fail-on", spec, "missing1.json", "missing2.json")
		if code != exitUsage || !strings.Contains(errs, want) || !strings.Contains(errs, "--fail-on") || strings.Count(errs, "\n") != 1 {
			t.Errorf("--fail-on %q: exit %d, stderr %q: want 2 and one line with %q", spec, code, errs, want)
		}
	}
}

// TestAgainstExit: bench and sweep --against FILE --fail-on RULES check
// a run against a saved baseline in one step: bench's report, then
// "Against FILE" and compare's text, exit status 4 when the gate tripped
// (a serial 20 ms backend against a saved 5 ms one) for bench and sweep;
// with --format json stdout stays one document, the gate's line on
// stderr (5: a run without trials cannot be judged); a file of another
// kind, a missing file, --fail-on alone, a bad rule or a run with nothing
// to pair with the baseline is one line and exit status 2. (What is
// compared and judged: internal/compare's TestLiveAgainst.)
func TestAgainstExit(t *testing.T) {
	onceAcrossEngines(t)
	dir := t.TempDir()
	fast := serialFCGI(t, 5*time.Millisecond, "")
	slow := serialFCGI(t, 20*time.Millisecond, "")
	ctx := context.Background()
	base := saveBench(t, dir, "base.json", "-n", "10", "--repeat", "5", "--label", "app", fast.URL("/x"))
	code, out, errs := runMain(t, ctx, "bench", "-q", "-n", "10", "--repeat", "5", "--label", "app",
		"--against", base, "--fail-on", "req/s slower", slow.URL("/x"))
	if code != exitRegression || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "req/s slower") ||
		!strings.Contains(out, "Against "+base) || !strings.Contains(out, "tripped: req/s slower") || !strings.Contains(out, "Requests per second") {
		t.Errorf("bench of 20 ms against 5 ms: exit %d, stderr %q, want 4\n%s", code, errs, out)
	}
	code, out, errs, _ = sweepOut(t, "-q", "-n", "10", "-c", "1", "--repeat", "5", "--against", base, "--fail-on", "req/s slower", "app="+slow.URL("/x"))
	if code != exitRegression || !strings.Contains(errs, "req/s slower") || !strings.Contains(out, "tripped: req/s slower") {
		t.Errorf("sweep of 20 ms against 5 ms: exit %d, stderr %q, want 4\n%s", code, errs, out)
	}
	// JSON output stays one document; the gate's line is on stderr.
	code, out, errs = runMain(t, ctx, "bench", "-q", "--format", "json", "-n", "20", "--against", base, "--fail-on", "req/s slower", fast.URL("/x"))
	var v map[string]any
	if code != exitUnjudged || json.Unmarshal([]byte(out), &v) != nil || !strings.Contains(errs, "cannot judge") {
		t.Errorf("bench --format json without trials against a baseline: exit %d, stderr %q, want 5 and one JSON document\n%s", code, errs, out)
	}
	// Bad input: a file of another kind, nothing to pair, --fail-on alone.
	cmpFile := filepath.Join(dir, "compare.json")
	_, cmpOut, _ := runMain(t, ctx, "compare", "--format", "json", base, base)
	os.WriteFile(cmpFile, []byte(cmpOut), 0o644)
	_, _, _, swDir := sweepOut(t, "-q", "-n", "5", "-c", "1", "app="+fast.URL("/x"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "-n", "5", "--against", cmpFile, fast.URL("/x")}, "--against: " + cmpFile + " is not a bench or sweep result"},
		{[]string{"bench", "-n", "5", "--against", filepath.Join(dir, "missing.json"), fast.URL("/x")}, "missing.json"},
		{[]string{"bench", "-n", "5", "--fail-on", "req/s slower", fast.URL("/x")}, "--against FILE"},
		{[]string{"bench", "-n", "5", "--against", base, "--fail-on", "req/s up", fast.URL("/x")}, "--fail-on"},
		{[]string{"sweep", "-q", "--out", t.TempDir(), "-n", "5", "-c", "2", "--against", filepath.Join(swDir, "sweep.json"), "app=" + fast.URL("/x")}, "--against: nothing to pair"},
	} {
		code, _, errs := runMain(t, ctx, c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q: want 2 and one line with %q", c.args, code, errs, c.want)
		}
	}
}
