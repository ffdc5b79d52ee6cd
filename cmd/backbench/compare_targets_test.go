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

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/trials"
)

// TestCompareTargets runs one targets file (GET /a, GET /b) against two
// built-in backends whose paths have delays of their own: the baseline's
// /a and /b take 10 ms, the new one's /b 60 ms. compare gives each
// target's p50 and p99 a verdict from the trials' own per-target figures
// (/b higher); the gate's rule "p99 higher by 20% on /b" trips (exit 4,
// the tripped line naming GET /b), the same rule on /a does not,
// a rule on a path of no target cannot judge (5), and the whole run's
// rules are not judged on the targets. Runs without trials give each
// target's ratio without a verdict, and a note says so; two sweeps'
// levels compare per target too.
func TestCompareTargets(t *testing.T) {
	onceAcrossEngines(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(file, []byte("GET /a\n\nGET /b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 10,
		PathDelays: map[string]time.Duration{"/a": 10 * time.Millisecond, "/b": 10 * time.Millisecond}})
	slow := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 10,
		PathDelays: map[string]time.Duration{"/a": 10 * time.Millisecond, "/b": 60 * time.Millisecond}})
	bench := func(name string, srv *fixtures.Server, more ...string) string {
		return saveBench(t, dir, name, append(append([]string{"-n", "200", "-c", "4", "--targets", file, "--label", "app"}, more...),
			srv.URL("/"))...)
	}
	gateRun := func(rules string, files ...string) (int, string, string) {
		return runMain(t, context.Background(), append([]string{"compare", "--fail-on", rules}, files...)...)
	}
	var before, after string
	withSpeedRetries(t, func() (bad []string) {
		before = bench("before.json", base, "--repeat", "4")
		after = bench("after.json", slow, "--repeat", "4")
		code, out, errs := runMain(t, context.Background(), "compare", "--format", "json", before, after)
		var r document.Comparison
		if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
			t.Fatalf("compare: exit %d %s %v\n%s", code, errs, err, out)
		}
		verdicts := map[string]string{}
		for _, c := range r.TargetComparisons {
			if c.Trials != 4 || c.BaselineTrials != 4 || c.File != after || c.BaselineFile != before {
				t.Errorf("target comparison %+v: want 4 trials a side of %s against %s", c, after, before)
			}
			verdicts[c.Target+" "+c.Metric] = c.Verdict
		}
		if len(r.TargetComparisons) != 4 {
			t.Fatalf("target comparisons %+v: want p50 and p99 of GET /a and GET /b", r.TargetComparisons)
		}
		for _, k := range []string{"GET /b p50_ms", "GET /b p99_ms"} {
			if verdicts[k] != trials.Higher {
				bad = append(bad, fmt.Sprintf("%s: %s, want higher", k, verdicts[k]))
			}
		}
		if code, out, errs := gateRun("p99 higher by 20% on /b", before, after); code != exitRegression ||
			!strings.Contains(errs, "p99 higher by 20% on /b") || !strings.Contains(out, "at c=4, GET /b: higher") {
			bad = append(bad, fmt.Sprintf("on /b: exit %d, stderr %q, want 4 naming GET /b\n%s", code, errs, out))
		}
		if code, out, errs := gateRun("p99 higher by 20% on /a, undecided pass", before, after); code != 0 {
			bad = append(bad, fmt.Sprintf("on /a: exit %d %s, want 0\n%s", code, errs, out))
		}
		return bad
	})
	code, out, errs := runMain(t, context.Background(), "compare", "--format", "json", "--fail-on", "p99 higher by 20% on /b, p99 higher by 20% on /a, undecided pass", before, after)
	var r document.Comparison
	if err := json.Unmarshal([]byte(out), &r); code != exitRegression || err != nil || r.Gate == nil {
		t.Fatalf("JSON: exit %d %s %v\n%s", code, errs, err, out)
	}
	if len(r.Gate.Tripped) != 1 || r.Gate.Tripped[0].Target != "GET /b" || r.Gate.Tripped[0].Rule != "p99 higher by 20% on /b" {
		t.Errorf("gate %+v: want the rule on /b alone tripped, by GET /b", r.Gate)
	}
	// The text: the table per target.
	if code, out, _ := runMain(t, context.Background(), "compare", "--wide", before, after); code != 0 ||
		!strings.Contains(out, "Per target") || !strings.Contains(out, "GET /b p99 ms") {
		t.Errorf("compare text: exit %d\n%s", code, out)
	}
	if code, out, _ := runMain(t, context.Background(), "compare", "--format", "markdown", before, after); code != 0 ||
		!strings.Contains(out, "GET /b p99 ms") {
		t.Errorf("compare markdown: exit %d\n%s", code, out)
	}
	// A path no target has: nothing to judge (5), never a pass.
	if code, _, errs := gateRun("p99 higher on /c", before, after); code != 5 || !strings.Contains(errs, "no target /c") {
		t.Errorf("on /c: exit %d %s, want 5", code, errs)
	}
	// A bad rule: a usage error.
	if code, _, errs := gateRun("req/s slower on /b", before, after); code != 2 || !strings.Contains(errs, "p50 and p99 only") {
		t.Errorf("req/s on a target: exit %d %s, want 2", code, errs)
	}

	// One run a side: ratios without verdicts, and a note.
	one, other := bench("one.json", base), bench("other.json", slow)
	code, out, errs = runMain(t, context.Background(), "compare", "--format", "json", one, other)
	r = document.Comparison{}
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
		t.Fatalf("compare one run: exit %d %s %v", code, errs, err)
	}
	if len(r.TargetComparisons) != 4 || !strings.Contains(strings.Join(r.Notes, "\n"), "targets are compared on one run a side") {
		t.Errorf("one run a side: %+v, notes %q", r.TargetComparisons, r.Notes)
	}
	for _, c := range r.TargetComparisons {
		if c.Verdict != trials.NoVerdict || c.Ratio == nil {
			t.Errorf("one run a side: %+v, want a ratio without a verdict", c)
		}
		if c.Target == "GET /b" && c.Metric == trials.MetricP50Ms && *c.Ratio < 2 {
			t.Errorf("GET /b p50 ratio %.2f, want about 6 (60 ms against 10 ms)", *c.Ratio)
		}
	}
	if code, _, errs := gateRun("p99 higher on /b", one, other); code != 5 || !strings.Contains(errs, "cannot judge") {
		t.Errorf("one run a side, on /b: exit %d %s, want 5", code, errs)
	}

	// Two sweeps: per target at each level.
	sweepDir := func(name string, srv *fixtures.Server) string {
		d := filepath.Join(dir, name)
		if code, _, errs := runMain(t, context.Background(), "sweep", "-q", "-c", "1,2", "-n", "20", "-k", "--targets", file, "--out", d, srv.URL("/")); code != 0 {
			t.Fatalf("sweep: exit %d %s", code, errs)
		}
		return filepath.Join(d, "sweep.json")
	}
	sa, sb := sweepDir("sa", base), sweepDir("sb", slow)
	code, out, errs = runMain(t, context.Background(), "compare", "--format", "json", sa, sb)
	r = document.Comparison{}
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
		t.Fatalf("compare sweeps: exit %d %s %v", code, errs, err)
	}
	levels := map[int]int{}
	for _, c := range r.TargetComparisons {
		levels[c.Concurrency]++
	}
	if levels[1] != 4 || levels[2] != 4 {
		t.Errorf("sweeps: target comparisons by level %v, want 4 at c=1 and c=2", levels)
	}
}
