package main

import (
	"context"
	"encoding/json"
	"fmt"
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

// TestGateTruth: against built-in serial backends of known speed (10 ms
// and 13 ms a request, 10 trials a side), compare --fail-on 'req/s slower'
// trips (exit status 4, one line on stderr naming the rule) when the new
// run is the 13 ms one, passes (0) the other way round, on two runs of
// the 10 ms one passes (same) or cannot judge (undecided, exit 5) unless
// told "undecided pass", and refuses to judge (exit status 5) a run without
// trials; the JSON's gate names what tripped it.
func TestGateTruth(t *testing.T) {
	onceAcrossEngines(t)
	dir := t.TempDir()
	fast := serialFCGI(t, 10*time.Millisecond, "")
	slow := serialFCGI(t, 13*time.Millisecond, "")
	gateRun := func(args ...string) (int, string, string) {
		return runMain(t, context.Background(), append([]string{"compare", "--fail-on", "req/s slower"}, args...)...)
	}
	var before, after string
	withSpeedRetries(t, func() (bad []string) {
		before = saveBench(t, dir, "before.json", "-n", "40", "--repeat", "10", "--label", "app", fast.URL("/x"))
		after = saveBench(t, dir, "after.json", "-n", "40", "--repeat", "10", "--label", "app", slow.URL("/x"))
		again := saveBench(t, dir, "again.json", "-n", "40", "--repeat", "10", "--label", "app", fast.URL("/x"))
		if code, out, errs := gateRun(before, after); code != exitRegression || strings.Count(errs, "\n") != 1 ||
			!strings.Contains(errs, "req/s slower") || !strings.Contains(out, "tripped: req/s slower") {
			bad = append(bad, fmt.Sprintf("10 ms then 13 ms: exit %d, stderr %q, want 4 and one line naming req/s slower\n%s", code, errs, out))
		}
		if code, out, errs := gateRun(after, before); code != 0 || errs != "" || !strings.Contains(out, "Gate: the gate passed") {
			bad = append(bad, fmt.Sprintf("13 ms then 10 ms: exit %d %s, want 0 (faster is no regression)\n%s", code, errs, out))
		}
		// Two runs of one model: same (0), or undecided, which the gate
		// cannot judge (5) unless told to pass it; never a regression.
		if code, out, errs := gateRun(before, again); code != 0 && (code != 5 || !strings.Contains(errs, "undecided")) {
			bad = append(bad, fmt.Sprintf("two runs of the 10 ms model: exit %d %s, want 0, or 5 for undecided\n%s", code, errs, out))
		}
		if code, out, errs := runMain(t, context.Background(), "compare", "--fail-on", "req/s slower, undecided pass", before, again); code != 0 {
			bad = append(bad, fmt.Sprintf("two runs of the 10 ms model, undecided pass: exit %d %s, want 0\n%s", code, errs, out))
		}
		return bad
	})
	code, out, errs := runMain(t, context.Background(), "compare", "--format", "json", "--fail-on", "req/s slower, p50 higher", before, after)
	var r document.Comparison
	if err := json.Unmarshal([]byte(out), &r); code != exitRegression || err != nil || r.Gate == nil {
		t.Fatalf("JSON: exit %d %s %v\n%s", code, errs, err, out)
	}
	if r.Gate.Status != gate.Tripped || len(r.Gate.Tripped) != 2 || r.Gate.Tripped[0].Rule != "req/s slower" ||
		r.Gate.Tripped[1].Rule != "p50 higher" || r.Gate.Tripped[0].Concurrency != 1 || r.Gate.Tripped[0].File != after {
		t.Errorf("gate JSON %+v: want both rules tripped at c=1 by %s", r.Gate, after)
	}
	// Without trials there is no verdict: the gate says it cannot judge.
	single := saveBench(t, dir, "single.json", "-n", "20", "--label", "app", slow.URL("/x"))
	code, out, errs = gateRun(before, single)
	if code != exitUnjudged || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "cannot judge") || !strings.Contains(out, "cannot judge:") {
		t.Errorf("a run without trials: exit %d, stderr %q, want 5 and one line saying the gate cannot judge\n%s", code, errs, out)
	}
	// Without a gate, compare exits 0 whatever the verdicts.
	if code, _, errs := runMain(t, context.Background(), "compare", before, after); code != 0 {
		t.Errorf("compare without --fail-on: exit %d %s", code, errs)
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

// TestAgainst: bench and sweep --against FILE --fail-on RULES check a run
// against a saved baseline in one step, with compare's rules: a 13 ms
// backend against a saved 10 ms one trips the gate (exit status 4), the
// 10 ms one again passes (0); a file of another kind, or a run with
// nothing to pair with the baseline, is one line and exit status 2.
func TestAgainst(t *testing.T) {
	onceAcrossEngines(t)
	dir := t.TempDir()
	fast := serialFCGI(t, 10*time.Millisecond, "")
	slow := serialFCGI(t, 13*time.Millisecond, "")
	ctx := context.Background()
	var base string
	withSpeedRetries(t, func() (bad []string) {
		// The baseline is measured again at every attempt: a busy machine
		// drifts, and an attempt compares runs made close together.
		base = saveBench(t, dir, "base.json", "-n", "40", "--repeat", "10", "--label", "app", fast.URL("/x"))
		code, out, errs := runMain(t, ctx, "bench", "-q", "-n", "40", "--repeat", "10", "--label", "app",
			"--against", base, "--fail-on", "req/s slower", slow.URL("/x"))
		if code != exitRegression || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "req/s slower") ||
			!strings.Contains(out, "Against "+base) || !strings.Contains(out, "tripped: req/s slower") || !strings.Contains(out, "Requests per second") {
			bad = append(bad, fmt.Sprintf("bench of 13 ms against 10 ms: exit %d, stderr %q, want 4\n%s", code, errs, out))
		}
		// The same backend: "same" within the noise, or undecided when 10
		// trials cannot tell ±2% apart, which the rule lets pass; never
		// slower.
		code, out, errs = runMain(t, ctx, "bench", "-q", "-n", "40", "--repeat", "10", "--label", "app",
			"--against", base, "--fail-on", "req/s slower, undecided pass", fast.URL("/x"))
		if code != 0 || !strings.Contains(out, "Gate: the gate passed") {
			bad = append(bad, fmt.Sprintf("bench of 10 ms against 10 ms: exit %d, stderr %q, want 0\n%s", code, errs, out))
		}
		code, out, errs, _ = sweepOut(t, "-q", "-n", "40", "-c", "1", "--repeat", "5", "--against", base, "--fail-on", "req/s slower", "app="+slow.URL("/x"))
		if code != exitRegression || !strings.Contains(errs, "req/s slower") || !strings.Contains(out, "tripped: req/s slower") {
			bad = append(bad, fmt.Sprintf("sweep of 13 ms against 10 ms: exit %d, stderr %q, want 4\n%s", code, errs, out))
		}
		return bad
	})
	// JSON output stays one document; the gate's line is on stderr.
	code, out, errs := runMain(t, ctx, "bench", "-q", "--format", "json", "-n", "20", "--against", base, "--fail-on", "req/s slower", fast.URL("/x"))
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
