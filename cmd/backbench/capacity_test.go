package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/capacity"
)

// Truth tests of capacity against built-in backends whose capacity is
// known. Steps are short (1 s after a 0.3 s warm-up) to keep the tests
// quick; the ranges are the issue's.

// capacityRun runs capacity with args and returns the exit status and its
// JSON report (from --out's capacity.json).
func capacityRun(t *testing.T, args ...string) (int, capacity.JSONReport, string) {
	t.Helper()
	dir := t.TempDir()
	all := append([]string{"capacity", "-q", "-t", "1", "--warmup", "0.3", "--out", dir}, args...)
	code, out, errs := runMain(t, context.Background(), all...)
	var j capacity.JSONReport
	b, err := os.ReadFile(filepath.Join(dir, "capacity.json"))
	if err != nil {
		t.Fatalf("exit %d, no capacity.json: %v\n%s%s", code, err, out, errs)
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatalf("bad capacity.json: %v\n%s", err, b)
	}
	for _, n := range []string{"capacity.svg", "capacity.png"} {
		if fi, err := os.Stat(filepath.Join(dir, n)); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written: %v", n, err)
		}
	}
	return code, j, out
}

func stepsText(j capacity.JSONReport) string {
	var b strings.Builder
	for _, s := range j.Steps {
		fmt.Fprintf(&b, "[%g/c%d: %.1f req/s p99 %.1f err %.3f %v] ", s.Rate, s.Concurrency, s.AchievedRPS, s.P99Ms, s.ErrorRate, s.Pass)
	}
	return b.String()
}

// TestCapacitySerialTruth: a serial worker with a 10 ms service time
// sustains at most 100 req/s; with requests arriving at a constant rate
// its p99 stays within 50 ms up to close to that.
func TestCapacitySerialTruth(t *testing.T) {
	onceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{
		Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: 10 * time.Millisecond})
	withSpeedRetries(t, func() []string {
		code, j, out := capacityRun(t, "--confirm", "0", "--slo", "p99<=50ms", srv.URL("/"))
		if code != 0 || j.CapacityRPS == nil || j.Model != "open" {
			t.Fatalf("exit %d, %+v\n%s", code, j, out)
		}
		if !strings.HasPrefix(out, "sustains ") || !strings.Contains(out, "req/s with p99 <= 50 ms (p99 at that rate: ") {
			t.Errorf("first line: %q", strings.SplitN(out, "\n", 2)[0])
		}
		return truthRange(t, j, out, *j.CapacityRPS, 55, 101)
	})
}

// The truth tests run the search with --confirm 0: they check where its
// steps put the answer against a backend of known capacity; a backend at
// 80 to 95% of its capacity can fail a 5 s confirmation by queueing alone,
// and the confirmation's step-down has tests of its own (internal/capacity).

// truthRange checks a capacity answer c against the backend's known
// range [lo, hi]. A search the client held back (a busy machine, the race
// detector) answers a lower bound, "at least c": it must then say so and
// still claim no more than hi.
func truthRange(t *testing.T, j capacity.JSONReport, out string, c, lo, hi float64) []string {
	t.Helper()
	if j.LimitedBy == "client" {
		if c > hi || !strings.HasPrefix(out, "sustains at least ") {
			return []string{fmt.Sprintf("limited by the client: capacity %.1f, want at most %g and said as a lower bound: %s", c, hi, stepsText(j))}
		}
		t.Logf("limited by the client: at least %.1f (%s)", c, stepsText(j))
		return nil
	}
	if c < lo || c > hi {
		return []string{fmt.Sprintf("capacity %.1f limited by %s, want %g to %g: %s", c, j.LimitedBy, lo, hi, stepsText(j))}
	}
	return nil
}

// TestCapacityPreforkTruth: four workers of 10 ms sustain at most 400
// req/s.
func TestCapacityPreforkTruth(t *testing.T) {
	onceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{
		Model: fixtures.Model{Kind: fixtures.ModelPrefork, N: 4}, Delay: 10 * time.Millisecond})
	withSpeedRetries(t, func() []string {
		code, j, out := capacityRun(t, "--confirm", "0", "--slo", "p99<=50ms", "--start", "50", srv.URL("/"))
		if code != 0 || j.CapacityRPS == nil {
			t.Fatalf("exit %d, %+v\n%s", code, j, out)
		}
		return truthRange(t, j, out, *j.CapacityRPS, 220, 405)
	})
}

// TestCapacityClosedTruth: in the closed model, c connections on four 10
// ms workers wait about c/4 × 10 ms, so p99 <= 50 ms holds up to about 20.
func TestCapacityClosedTruth(t *testing.T) {
	onceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{
		Model: fixtures.Model{Kind: fixtures.ModelPrefork, N: 4}, Delay: 10 * time.Millisecond})
	withSpeedRetries(t, func() []string {
		code, j, out := capacityRun(t, "--confirm", "0", "--model", "closed", "--slo", "p99<=50ms", "--start", "4", srv.URL("/"))
		if code != 0 || j.CapacityConcurrency == nil || j.CapacityRPS != nil || j.Model != "closed" {
			t.Fatalf("exit %d, %+v\n%s", code, j, out)
		}
		if !strings.HasPrefix(out, "sustains a concurrency of ") && !strings.HasPrefix(out, "sustains at least a concurrency of ") {
			t.Errorf("first line: %q", strings.SplitN(out, "\n", 2)[0])
		}
		return truthRange(t, j, out, float64(*j.CapacityConcurrency), 12, 21)
	})
}

// TestCapacityFailuresEveryRate: a backend that resets every 10th request
// fails errors<=1% at every rate: no capacity, exit status 3.
func TestCapacityFailuresEveryRate(t *testing.T) {
	onceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{
		Fault: fixtures.FaultReset, FaultEvery: 10})
	code, j, out := capacityRun(t, "--slo", "errors<=1%", "--slo", "p99<=1s", "--start", "200", srv.URL("/"))
	// 200 (measured again: the first level), 100, 50, 25, 12.5.
	if code != exitSLO || j.CapacityRPS == nil || *j.CapacityRPS != 0 || len(j.Steps) != 6 || !j.Steps[1].Again || j.Steps[1].Rate != 200 {
		t.Fatalf("exit %d, %+v\n%s", code, j, out)
	}
	for _, s := range j.Steps {
		if s.Pass || s.ErrorRate < 0.05 || s.ErrorRate > 0.2 {
			t.Errorf("step %+v: want about 10%% errors, failing", s)
		}
	}
	if !strings.HasPrefix(out, "sustains no rate tried with errors <= 1% and p99 <= 1000 ms (lowest rate tried 12.5 req/s: errors ") {
		t.Errorf("first line: %q", strings.SplitN(out, "\n", 2)[0])
	}
}

// TestCapacityJSONAndBench: capacity's JSON has the documented keys, and a
// step is the run bench makes: bench --rate R -t T -c C reproduces it.
func TestCapacityJSONAndBench(t *testing.T) {
	onceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 5 * time.Millisecond})
	dir := t.TempDir()
	code, out, errs := runMain(t, context.Background(), "capacity", "-t", "0.5", "--confirm", "2.5", "--warmup", "0", "--start", "20", "--max", "40",
		"--slo", "p99<=200ms", "--format", "json", "--out", dir, srv.URL("/"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// A step whose latency grew through it is measured again, longer (1 s,
	// then 2 s), so the passing step of 40 req/s may be any of them.
	if !strings.Contains(errs, "Searching the capacity of ") || !regexp.MustCompile(`\n  40 req/s, (0\.5|1|2) s: pass`).MatchString(errs) ||
		!strings.Contains(errs, "40 req/s, 2.5 s confirmation: pass") {
		t.Errorf("progress on stderr: %q", errs)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if got := strings.Join(keys, " "); got != "answer capacity_rps confirm_seconds confirmed ended_at environment interrupted kind limited_by model objectives slo started_at step_seconds steps stopped_early" {
		t.Errorf("keys %s", got)
	}
	steps := raw["steps"].([]any)
	var stepKeys []string
	for k := range steps[0].(map[string]any) {
		stepKeys = append(stepKeys, k)
	}
	sort.Strings(stepKeys)
	if got := strings.Join(stepKeys, " "); got != "achieved_rps concurrency confirm error_rate held in_flight_growth in_flight_halves latency_growth_ms latency_halves_ms length_seconds p50_ms p99_ms pass rate records served_rps slo_results" {
		t.Errorf("step keys %s", got)
	}
	var j capacity.JSONReport
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	// 20, 40 (again if the client held it back), the confirmation of 40.
	n := len(j.Steps)
	if n < 3 {
		t.Fatalf("report %+v", j)
	}
	st, conf := j.Steps[n-2], j.Steps[n-1]
	if *j.CapacityRPS != 40 || st.Rate != 40 || st.Concurrency != 256 ||
		!strings.Contains(j.Answer, "sustains at least 40 req/s") || !strings.Contains(j.Answer, "--max") ||
		!strings.Contains(j.Answer, "; 0.5 s steps, confirmed by a 2.5 s run") || j.StepSeconds != 0.5 || j.ConfirmSeconds != 2.5 || !j.Confirmed ||
		!conf.Confirm || conf.LengthSeconds != 2.5 || conf.Rate != 40 || st.Held != "yes" || st.ServedRPS == nil ||
		*st.ServedRPS < 36 || *st.ServedRPS > 44 || st.LatencyHalvesMs == nil || st.InFlightHalves == nil || st.InFlightGrowth == nil || st.LatencyGrowthMs == nil {
		t.Fatalf("report %+v", j)
	}
	s := benchJSON(t, "--rate", "40", "-t", "0.5", "-c", "256", srv.URL("/"))
	if s.Open == nil || s.Open.RateAsked != st.Rate || s.Concurrency != st.Concurrency {
		t.Fatalf("bench %+v", s.Open)
	}
	if d := s.Open.RateAchieved - st.AchievedRPS; d < -6 || d > 6 {
		t.Errorf("bench achieved %.1f req/s, the step %.1f", s.Open.RateAchieved, st.AchievedRPS)
	}
	if s.Spectrum["50"] < 4 || st.P50Ms < 4 || s.Spectrum["50"] > 3*st.P50Ms || st.P50Ms > 3*s.Spectrum["50"] {
		t.Errorf("bench p50 %.1f ms, the step %.1f ms", s.Spectrum["50"], st.P50Ms)
	}
}

// TestSLOGate: bench --slo exits 3 and names the failing objective and by
// how much; a met objective exits 0; both are in the JSON.
func TestSLOGate(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{Delay: 10 * time.Millisecond})
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "-n", "20", "--slo", "p99<=1ms", "--slo", "errors<=1%", srv.URL("/"))
	if code != exitSLO || !strings.Contains(out, "\nObjectives:\n  p99<=1ms: FAIL, p99 ") || !strings.Contains(out, "errors<=1%: pass, errors 0.00%") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.HasPrefix(errs, "backbench bench: objective failed: p99<=1ms: FAIL, p99 ") || !strings.Contains(errs, " ms over)") ||
		strings.Count(errs, "\n") != 1 {
		t.Errorf("stderr %q", errs)
	}
	// The same run within p99 <= 500 ms exits 0 (tried again if a loaded
	// machine stalls the run past it; 50 ms was missed three times in a
	// row by go test -race -count=3 on a busy 2-core machine).
	withSpeedRetries(t, func() []string {
		code, out, errs := runMain(t, context.Background(), "bench", "-q", "-n", "20", "--slo", "p99<=500ms", "--format", "json", srv.URL("/"))
		var s struct {
			SLO []struct {
				Objective string  `json:"objective"`
				Value     float64 `json:"value"`
				Pass      bool    `json:"pass"`
			} `json:"slo_results"`
		}
		if err := json.Unmarshal([]byte(out), &s); err != nil || len(s.SLO) != 1 || s.SLO[0].Objective != "p99<=500ms" ||
			s.SLO[0].Value < 9 || s.SLO[0].Pass != (code == 0) {
			t.Fatalf("exit %d, slo_results %+v (%v) %s", code, s.SLO, err, errs)
		}
		if code != 0 {
			return []string{fmt.Sprintf("exit %d: %s", code, errs)}
		}
		return nil
	})
	// A sweep: the highest level that passes, per level in the JSON, and
	// exit status 3 since one level fails.
	serial := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{
		Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: 10 * time.Millisecond})
	withSpeedRetries(t, func() []string {
		dir := t.TempDir()
		code, out, errs := runMain(t, context.Background(), "sweep", "-q", "-c", "1,16", "-n", "48", "--warmup", "0", "--out", dir,
			"--slo", "p99<=60ms", serial.URL("/"))
		// c=1 may fail too on a loaded machine ("at c=1; http/unix at
		// c=16"): the retry below sees to it.
		if code != exitSLO || !strings.Contains(out, "c=16 FAIL (p99 ") || !strings.Contains(errs, "objective failed: http/unix at c=") ||
			!strings.Contains(errs, "http/unix at c=16") {
			t.Fatalf("exit %d\n%s%s", code, out, errs)
		}
		if !strings.Contains(out, "highest level that passes: c=1; c=1 pass, c=16 FAIL (p99 ") {
			return []string{"c=1 did not pass: " + out}
		}
		b, _ := os.ReadFile(filepath.Join(dir, "sweep.json"))
		if !strings.Contains(string(b), `"slo_highest_passing_level": 1`) || strings.Count(string(b), `"slo_results"`) != 2 {
			t.Errorf("sweep.json lacks the verdicts")
		}
		return nil
	})
}

// TestCapacityBadInput: a bad objective or flag is one line and exit
// status 2.
func TestCapacityBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"capacity", "http://127.0.0.1:1/"},
		{"capacity", "--slo", "p99<50ms", "http://127.0.0.1:1/"},
		{"capacity", "--slo", "p95<=50ms", "http://127.0.0.1:1/"},
		{"capacity", "--slo", "errors<=1", "http://127.0.0.1:1/"},
		{"capacity", "--slo", "p99<=5ms", "--model", "closed", "-c", "4", "http://127.0.0.1:1/"},
		{"capacity", "--slo", "p99<=5ms", "-n", "100", "http://127.0.0.1:1/"},
		{"capacity", "--slo", "p99<=5ms", "--resolution", "0", "http://127.0.0.1:1/"},
		{"capacity", "--slo", "p99<=5ms", "--start", "100", "--max", "10", "http://127.0.0.1:1/"},
		{"capacity", "--slo", "p99<=5ms", "--confirm", "-1", "http://127.0.0.1:1/"},
		{"capacity", "--slo", "p99<=5ms", "--confirm", "twice", "http://127.0.0.1:1/"},
		{"bench", "--slo", "max<=fast", "http://127.0.0.1:1/"},
		{"sweep", "-c", "1", "--slo", "p99", "http://127.0.0.1:1/"},
	} {
		code, out, errs := runMain(t, context.Background(), args...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "backbench "+args[0]+": ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

// TestCapacityMaxTime: at --max-time the search stops, answers with the
// best passing step so far and says that it stopped early.
func TestCapacityMaxTime(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{})
	var dir, out string
	// On a busy machine the first 0.3 s step can fail its steady-state
	// judgement and its second look end past --max-time, leaving no
	// passing step: that attempt is tried again.
	withSpeedRetries(t, func() []string {
		dir = t.TempDir()
		code, o, errs := runMain(t, context.Background(), "capacity", "-q", "-t", "0.3", "--warmup", "0", "--max-time", "1",
			"--slo", "p99<=1s", "--out", dir, srv.URL("/"))
		out = o
		switch {
		case code == exitSLO && strings.Contains(errs, "no step met every objective"):
			return []string{"no step passed before --max-time: " + strings.TrimSpace(o)}
		case code != 0:
			t.Fatalf("exit %d: %s", code, errs)
		}
		return nil
	})
	first := strings.SplitN(out, "\n", 2)[0]
	if !strings.HasPrefix(first, "sustains at least ") || !strings.Contains(first, "stopped early at --max-time 1s: the best passing step so far") {
		t.Errorf("first line %q", first)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "capacity.json"))
	if !strings.Contains(string(b), `"stopped_early": true`) {
		t.Errorf("capacity.json: %s", b)
	}
}
