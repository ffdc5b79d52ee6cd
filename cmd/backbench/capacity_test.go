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
	"github.com/backbench/backbench/internal/capacity"
)

// The search itself (truth tests against backends of known capacity, the
// answer, the JSON, the steps against bench's runs, --max-time) is tested
// in internal/driver (capacity_truth_test.go); here: the command's flags,
// exit statuses and the files --out writes.

// stepsText lists the steps of a capacity report, for the messages.
func stepsText(j capacity.JSONReport) string {
	var b strings.Builder
	for _, s := range j.Steps {
		fmt.Fprintf(&b, "[%g/c%d: %.1f req/s p99 %.1f err %.3f %v] ", s.Rate, s.Concurrency, s.AchievedRPS, s.P99Ms, s.ErrorRate, s.Pass)
	}
	return b.String()
}

// TestCapacityCommand runs capacity end to end on a backend that answers
// 500 to every request: no step passes, exit status 3 and one line on stderr;
// --out gets capacity.json, capacity.svg and capacity.png, and --format
// json prints the document of capacity.json.
func TestCapacityCommand(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Status: 500})
	for _, format := range []string{"text", "json"} {
		dir := t.TempDir()
		code, out, errs := runMain(t, context.Background(), "capacity", "-q", "-t", "0.3", "--warmup", "0", "--confirm", "0", "--start", "200",
			"--slo", "errors<=1%", "--format", format, "--out", dir, srv.URL("/"))
		if code != exitSLO || !strings.HasSuffix(errs, "no step met every objective\n") || strings.Count(errs, "\n") != 1 {
			t.Fatalf("%s: exit %d, stderr %q\n%s", format, code, errs, out)
		}
		b, err := os.ReadFile(filepath.Join(dir, "capacity.json"))
		var j capacity.JSONReport
		if err != nil || json.Unmarshal(b, &j) != nil || j.CapacityRPS == nil || *j.CapacityRPS != 0 || len(j.Steps) == 0 {
			t.Fatalf("%s: capacity.json %v\n%s", format, err, b)
		}
		for _, n := range []string{"capacity.svg", "capacity.png"} {
			if fi, err := os.Stat(filepath.Join(dir, n)); err != nil || fi.Size() == 0 {
				t.Errorf("%s not written: %v", n, err)
			}
		}
		switch format {
		case "text":
			if !strings.HasPrefix(out, j.Answer+"\n") || !strings.Contains(out, "\nWrote "+filepath.Join(dir, "capacity.json")) {
				t.Errorf("text:\n%s", out)
			}
		case "json":
			var raw map[string]any
			if err := json.Unmarshal([]byte(out), &raw); err != nil || raw["kind"] != "capacity" || raw["answer"] != j.Answer {
				t.Errorf("stdout is not capacity.json's document: %v\n%s", err, out)
			}
		}
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
