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

// TestSLOGate: bench --slo exits 3, prints the verdicts after the report
// and names the failing objective and by how much on one stderr line; a
// sweep with a failing level exits 3 and names it. (The verdicts are
// tested in internal/capacity and internal/sweep.)
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
	code, out, errs = runMain(t, context.Background(), "sweep", "-q", "-c", "1", "-n", "10", "--warmup", "0", "--out", t.TempDir(),
		"--slo", "p99<=1ms", srv.URL("/"))
	if code != exitSLO || !strings.Contains(out, "c=1 FAIL (p99 ") || !strings.Contains(errs, "objective failed: fcgi/tcp at c=1") {
		t.Fatalf("sweep: exit %d\n%s%s", code, out, errs)
	}
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
