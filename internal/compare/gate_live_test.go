package compare_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/compare"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/gate"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
)

// TestLiveGateTruth: against built-in serial backends of known speed (10
// ms and 13 ms a request, 10 trials a side), the gate "req/s slower"
// trips, its line naming the rule, when the new run is the 13 ms one,
// passes the other way round, on two runs of the 10 ms one passes (same)
// or cannot judge (undecided) unless told "undecided pass", and refuses
// to judge a run without trials; the saved comparison's gate names what
// tripped it. (The exit statuses: cmd/backbench's TestGateExit.)
func TestLiveGateTruth(t *testing.T) {
	liveOnce(t)
	dir := t.TempDir()
	fast := liveSerialFCGI(t, 10*time.Millisecond, "")
	slow := liveSerialFCGI(t, 13*time.Millisecond, "")
	save := func(name, url string, n int64, repeat int) string {
		return liveBenchFile(t, dir, name, liveBench(url, n, nil), repeat, "app")
	}
	var before, after string
	liveSpeedRetries(t, func() (bad []string) {
		before = save("before.json", fast.URL("/x"), 40, 10)
		after = save("after.json", slow.URL("/x"), 40, 10)
		again := save("again.json", fast.URL("/x"), 40, 10)
		if r := liveMustCompare(t, "req/s slower", before, after); r.Gate.Status != gate.Tripped || !strings.Contains(liveGateLine(r), "req/s slower") ||
			!strings.Contains(liveText(t, r, report.DefaultWidth), "tripped: req/s slower") {
			bad = append(bad, fmt.Sprintf("10 ms then 13 ms: %s %q, want tripped naming req/s slower\n%s", r.Gate.Status, liveGateLine(r), liveText(t, r, report.DefaultWidth)))
		}
		if r := liveMustCompare(t, "req/s slower", after, before); r.Gate.Status != gate.Passed || !strings.Contains(liveText(t, r, report.DefaultWidth), "Gate: the gate passed") {
			bad = append(bad, fmt.Sprintf("13 ms then 10 ms: %s %q, want passed (faster is no regression)\n%s", r.Gate.Status, liveGateLine(r), liveText(t, r, report.DefaultWidth)))
		}
		// Two runs of one model: same (passed), or undecided, which the
		// gate cannot judge unless told to pass it; never a regression.
		if r := liveMustCompare(t, "req/s slower", before, again); r.Gate.Status != gate.Passed && (r.Gate.Status != gate.Unjudged || !strings.Contains(liveGateLine(r), "undecided")) {
			bad = append(bad, fmt.Sprintf("two runs of the 10 ms model: %s %q, want passed, or unjudged for undecided", r.Gate.Status, liveGateLine(r)))
		}
		if r := liveMustCompare(t, "req/s slower, undecided pass", before, again); r.Gate.Status != gate.Passed {
			bad = append(bad, fmt.Sprintf("two runs of the 10 ms model, undecided pass: %s %q, want passed", r.Gate.Status, liveGateLine(r)))
		}
		return bad
	})
	r := liveMustCompare(t, "req/s slower, p50 higher", before, after)
	if r.Gate == nil || r.Gate.Status != gate.Tripped || len(r.Gate.Tripped) != 2 || r.Gate.Tripped[0].Rule != "req/s slower" ||
		r.Gate.Tripped[1].Rule != "p50 higher" || r.Gate.Tripped[0].Concurrency != 1 || r.Gate.Tripped[0].File != after {
		t.Errorf("gate %+v: want both rules tripped at c=1 by %s", r.Gate, after)
	}
	// Without trials there is no verdict: the gate says it cannot judge.
	single := save("single.json", slow.URL("/x"), 20, 0)
	r = liveMustCompare(t, "req/s slower", before, single)
	if r.Gate.Status != gate.Unjudged || !strings.Contains(liveGateLine(r), "cannot judge") || !strings.Contains(liveText(t, r, report.DefaultWidth), "cannot judge:") {
		t.Errorf("a run without trials: %s %q, want unjudged, saying the gate cannot judge\n%s", r.Gate.Status, liveGateLine(r), liveText(t, r, report.DefaultWidth))
	}
	// Without a gate, nothing is judged.
	if r := liveMustCompare(t, "", before, after); r.Gate != nil {
		t.Errorf("compare without rules: gate %+v", r.Gate)
	}
}

// liveSweepTrialsDoc runs the sweep so with repeat trials as the sweep
// command does and returns its saved form (sweep.json) as the command
// holds it before writing it.
func liveSweepTrialsDoc(t *testing.T, so plan.SweepOptions, repeat int) *document.Sweep {
	t.Helper()
	p, err := so.Build()
	if err != nil {
		t.Fatal(err)
	}
	tp, err := trials.Options{Repeat: repeat, RepeatSet: true, MaxRepeat: trials.DefaultMaxRepeat}.Build()
	if err != nil {
		t.Fatal(err)
	}
	tp.Noise = 0.02
	cfg := p.Config
	cfg.Options, cfg.Trials = liveQuiet, &tp
	res, err := sweep.Run(t.Context(), cfg, p.Series)
	if err != nil {
		t.Fatal(err)
	}
	sw := cfg.Document(p.Series, p.Backends, res)
	sw.SweepTrials = sweep.TrialsDocument(tp, tp.Noise, p.Baseline, res.Series, p.Backends, res.Notes, res.Until)
	return &sw
}

// liveAgainst compares d, named name, with the saved file base by the
// rules, as bench and sweep --against do, and returns the comparison and
// its text (compare's, after the header the commands print).
func liveAgainst(t *testing.T, base, name string, d document.Result, rules string) (*document.Comparison, string, error) {
	t.Helper()
	f, err := compare.Load(base)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := gate.Parse(rules)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compare.Against(f, name, d, 0.02, rs, nil)
	if err != nil {
		return nil, "", err
	}
	var b bytes.Buffer
	if err := report.CompareText(&b, res, report.DefaultWidth); err != nil {
		t.Fatal(err)
	}
	return res, b.String(), nil
}

// TestLiveAgainst: a bench run or a sweep checked against a saved
// baseline in one step (compare.Against), with compare's rules: a 13 ms
// backend against a saved 10 ms one trips the gate, the 10 ms one again
// passes; a run without trials cannot be judged; a file of another kind
// is not a baseline, and a run with nothing to pair with the baseline is
// refused. (The flags, the exit statuses and the one JSON document on
// stdout: cmd/backbench's TestAgainstExit.)
func TestLiveAgainst(t *testing.T) {
	liveOnce(t)
	dir := t.TempDir()
	fast := liveSerialFCGI(t, 10*time.Millisecond, "")
	slow := liveSerialFCGI(t, 13*time.Millisecond, "")
	var base string
	liveSpeedRetries(t, func() (bad []string) {
		// The baseline is measured again at every attempt: a busy machine
		// drifts, and an attempt compares runs made close together.
		base = liveBenchFile(t, dir, "base.json", liveBench(fast.URL("/x"), 40, nil), 10, "app")
		r, out, err := liveAgainst(t, base, "this run", liveBenchDoc(t, liveBench(slow.URL("/x"), 40, nil), 10, "app"), "req/s slower")
		if err != nil || r.Gate.Status != gate.Tripped || !strings.Contains(liveGateLine(r), "req/s slower") || !strings.Contains(out, "tripped: req/s slower") {
			bad = append(bad, fmt.Sprintf("bench of 13 ms against 10 ms: %v, %q, want tripped\n%s", err, liveGateLine(r), out))
		}
		// The same backend: "same" within the noise, or undecided when 10
		// trials cannot tell ±2% apart, which the rule lets pass; never
		// slower.
		r, out, err = liveAgainst(t, base, "this run", liveBenchDoc(t, liveBench(fast.URL("/x"), 40, nil), 10, "app"), "req/s slower, undecided pass")
		if err != nil || r.Gate.Status != gate.Passed || !strings.Contains(out, "Gate: the gate passed") {
			bad = append(bad, fmt.Sprintf("bench of 10 ms against 10 ms: %v, %q, want passed\n%s", err, liveGateLine(r), out))
		}
		l := plan.Defaults("")
		l.Requests, l.RequestsSet = 40, true
		sw := liveSweepTrialsDoc(t, plan.SweepOptions{Load: l, Args: []string{"app=" + slow.URL("/x")}, Levels: "1"}, 5)
		r, out, err = liveAgainst(t, base, "sweep.json", sw, "req/s slower")
		if err != nil || r.Gate.Status != gate.Tripped || !strings.Contains(liveGateLine(r), "req/s slower") || !strings.Contains(out, "tripped: req/s slower") {
			bad = append(bad, fmt.Sprintf("sweep of 13 ms against 10 ms: %v, %q, want tripped\n%s", err, liveGateLine(r), out))
		}
		return bad
	})
	// A run without trials against the baseline: the gate cannot judge.
	if r, _, err := liveAgainst(t, base, "this run", liveBenchDoc(t, liveBench(fast.URL("/x"), 20, nil), 0, ""), "req/s slower"); err != nil ||
		r.Gate.Status != gate.Unjudged || !strings.Contains(liveGateLine(r), "cannot judge") {
		t.Errorf("a run without trials against a baseline: %v, %+v, want unjudged", err, r)
	}
	// Bad input: a file of another kind, nothing to pair.
	cmp := liveSave(t, dir, "compare.json", liveMustCompare(t, "", base, base))
	if _, err := compare.Load(cmp); err == nil || !strings.Contains(err.Error(), cmp+" is not a bench or sweep result") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a comparison as a baseline: %v", err)
	}
	if _, err := compare.Load(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("a missing baseline: %v", err)
	}
	l := plan.Defaults("")
	l.Requests, l.RequestsSet = 5, true
	saved := liveSweepFile(t, dir, "sweep.json", plan.SweepOptions{Load: l, Args: []string{"app=" + fast.URL("/x")}, Levels: "1"})
	sw := liveSweepDoc(t, plan.SweepOptions{Load: l, Args: []string{"app=" + fast.URL("/x")}, Levels: "2"})
	if _, _, err := liveAgainst(t, saved, "sweep.json", sw, "req/s slower"); err == nil || !strings.Contains(err.Error(), "nothing to pair") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a sweep at c=2 against one at c=1: %v, want one line with nothing to pair", err)
	}
}
