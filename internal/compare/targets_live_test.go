package compare_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/gate"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/trials"
)

// TestLiveCompareTargets runs one targets file (GET /a, GET /b) against
// two built-in backends whose paths have delays of their own: the
// baseline's /a and /b take 10 ms, the new one's /b 60 ms. The comparison
// gives each target's p50 and p99 a verdict from the trials' own
// per-target figures (/b higher); the gate's rule "p99 higher by 20% on
// /b" trips (the tripped line naming GET /b), the same rule on /a does
// not, a rule on a path of no target cannot judge, and the whole run's
// rules are not judged on the targets. Runs without trials give each
// target's ratio without a verdict, and a note says so; two sweeps'
// levels compare per target too. (The exit statuses of the gate:
// cmd/backbench's TestGateExit.)
func TestLiveCompareTargets(t *testing.T) {
	liveOnce(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(file, []byte("GET /a\n\nGET /b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The backends run in processes of their own, as a real deployment's
	// do: in the test's process their scheduling mixes with the client's,
	// and a pause of either shows in a p99 of a few dozen requests.
	base := liveServePathsProcess(t, 0, map[string]time.Duration{"/a": 10 * time.Millisecond, "/b": 10 * time.Millisecond})
	slow := liveServePathsProcess(t, 0, map[string]time.Duration{"/a": 10 * time.Millisecond, "/b": 60 * time.Millisecond})
	bench := func(name string, url string, repeat int) string {
		return liveBenchFile(t, dir, name, liveBench(url, 200, func(o *plan.Options) { o.Concurrency, o.Targets = 4, file }), repeat, "app")
	}
	var before, after string
	liveSpeedRetries(t, func() (bad []string) {
		before = bench("before.json", base, 4)
		after = bench("after.json", slow, 4)
		r := liveMustCompare(t, "", before, after)
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
		r = liveMustCompare(t, "p99 higher by 20% on /b", before, after)
		if out, line := liveText(t, r, report.DefaultWidth), liveGateLine(r); r.Gate.Status != gate.Tripped ||
			!strings.Contains(line, "p99 higher by 20% on /b") || !strings.Contains(out, "at c=4, GET /b: higher") {
			bad = append(bad, fmt.Sprintf("on /b: %s, %q, want tripped naming GET /b\n%s", r.Gate.Status, line, out))
		}
		if r := liveMustCompare(t, "p99 higher by 20% on /a, undecided pass", before, after); r.Gate.Status != gate.Passed {
			bad = append(bad, fmt.Sprintf("on /a: %s %q, want passed", r.Gate.Status, liveGateLine(r)))
		}
		return bad
	})
	r := liveMustCompare(t, "p99 higher by 20% on /b, p99 higher by 20% on /a, undecided pass", before, after)
	if r.Gate == nil || r.Gate.Status != gate.Tripped {
		t.Fatalf("gate %+v: want tripped", r.Gate)
	}
	if len(r.Gate.Tripped) != 1 || r.Gate.Tripped[0].Target != "GET /b" || r.Gate.Tripped[0].Rule != "p99 higher by 20% on /b" {
		t.Errorf("gate %+v: want the rule on /b alone tripped, by GET /b", r.Gate)
	}
	// The text: the table per target.
	r = liveMustCompare(t, "", before, after)
	if out := liveText(t, r, 0); !strings.Contains(out, "Per target") || !strings.Contains(out, "GET /b p99 ms") {
		t.Errorf("compare text:\n%s", out)
	}
	var md bytes.Buffer
	if err := report.CompareMarkdown(&md, report.MarkdownCompare{Command: "backbench compare", Files: r.Files, Noise: r.Noise, Differences: r.Differences,
		Notes: r.Notes, Comparisons: r.Comparisons, TargetComparisons: r.TargetComparisons, Gate: r.Gate}); err != nil || !strings.Contains(md.String(), "GET /b p99 ms") {
		t.Errorf("compare markdown: %v\n%s", err, md.String())
	}
	// A path no target has: nothing to judge, never a pass.
	if r := liveMustCompare(t, "p99 higher on /c", before, after); r.Gate.Status != gate.Unjudged || !strings.Contains(liveGateLine(r), "no target /c") {
		t.Errorf("on /c: %s %q, want unjudged", r.Gate.Status, liveGateLine(r))
	}
	// A bad rule: refused.
	if _, err := gate.Parse("req/s slower on /b"); err == nil || !strings.Contains(err.Error(), "p50 and p99 only") {
		t.Errorf("req/s on a target: %v", err)
	}

	// One run a side: ratios without verdicts, and a note.
	one, other := bench("one.json", base, 0), bench("other.json", slow, 0)
	r = liveMustCompare(t, "", one, other)
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
	if r := liveMustCompare(t, "p99 higher on /b", one, other); r.Gate.Status != gate.Unjudged || !strings.Contains(liveGateLine(r), "cannot judge") {
		t.Errorf("one run a side, on /b: %s %q, want unjudged", r.Gate.Status, liveGateLine(r))
	}

	// Two sweeps: per target at each level.
	sweepFile := func(name string, url string) string {
		l := plan.Defaults("")
		l.Requests, l.RequestsSet, l.KeepAlive, l.Targets = 20, true, true, file
		return liveSweepFile(t, dir, name, plan.SweepOptions{Load: l, Args: []string{url}, Levels: "1,2"})
	}
	sa, sb := sweepFile("sa.json", base), sweepFile("sb.json", slow)
	r = liveMustCompare(t, "", sa, sb)
	levels := map[int]int{}
	for _, c := range r.TargetComparisons {
		levels[c.Concurrency]++
	}
	if levels[1] != 4 || levels[2] != 4 {
		t.Errorf("sweeps: target comparisons by level %v, want 4 at c=1 and c=2", levels)
	}
}
