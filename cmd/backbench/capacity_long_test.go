package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/stats"
)

// longTests runs the long truth tests (go test -run X ./cmd/backbench
// -args -long, or BACKBENCH_LONG=1). They are not part of make test: on
// this 2-core machine, with the rest of the suite beside them, the client
// itself is starved often enough that the p99<=50ms search ends in "at
// least", and each takes 5 to 30 minutes.
var longTests = flag.Bool("long", false, "run the long truth tests (also BACKBENCH_LONG=1)")

// skipUnlessLong skips a long test unless -long or BACKBENCH_LONG=1.
func skipUnlessLong(t *testing.T) {
	t.Helper()
	if !longEnabled() {
		t.Skip("a long test: runs with -args -long or BACKBENCH_LONG=1")
	}
}

// TestCapacityHoldsPrefork4 is the built-in truth of a capacity that
// holds: four workers of 20 ms (at most 200 req/s; a sleeping model, so
// the backend needs little CPU). For p99<=150ms and p99<=50ms, the answer
// of capacity -t 2 and of capacity -t 10 lies below 200 req/s, the two are
// the same within 5%, and bench at the -t 10 answer for 30 s (with the
// steps' in-flight ceiling, -c 256) meets the objective. Bounds, not
// times; on a busy machine the whole attempt is tried once more
// (longAttempts), since the backend's real capacity there is what the
// machine leaves it, and it changes between the searches. The two
// objectives run side by side, each on its own backend: about 5 minutes
// in all, at most about 30 (two attempts of a 5 minute and an 8 minute
// search and a 30 s bench).
func TestCapacityHoldsPrefork4(t *testing.T) {
	skipUnlessLong(t)
	for _, obj := range []string{"p99<=150ms", "p99<=50ms"} {
		t.Run(obj, func(t *testing.T) {
			t.Parallel()
			srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{
				Model: fixtures.Model{Kind: fixtures.ModelPrefork, N: 4}, Delay: 20 * time.Millisecond})
			longAttempts(t, func() []string {
				answers := map[string]float64{}
				for _, step := range []string{"2", "10"} {
					dir := t.TempDir()
					code, out, errs := runMain(t, context.Background(), "capacity", "-q", "--slo", obj, "-t", step, "--warmup", "0.5",
						"--start", "100", "--max-time", map[string]string{"2": "5m", "10": "8m"}[step], "--out", dir, srv.URL("/"))
					b, err := os.ReadFile(filepath.Join(dir, "capacity.json"))
					var j capacity.JSONReport
					if err != nil || json.Unmarshal(b, &j) != nil || j.CapacityRPS == nil {
						t.Fatalf("-t %s: exit %d, no capacity.json: %v\n%s%s", step, code, err, out, errs)
					}
					if j.StepSeconds != map[string]float64{"2": 2, "10": 10}[step] || j.ConfirmSeconds != max(plan.CapacityConfirmTimes*j.StepSeconds, plan.CapacityConfirmFloor.Seconds()) {
						t.Fatalf("-t %s: step %g s, confirmation %g s, want -t and 5 times it, at least 30 s", step, j.StepSeconds, j.ConfirmSeconds)
					}
					a := *j.CapacityRPS
					t.Logf("-t %s: %s", step, j.Answer)
					if code != 0 || a <= 0 || !j.Confirmed {
						return []string{fmt.Sprintf("-t %s: exit %d, no confirmed answer: %s", step, code, j.Answer)}
					}
					if a >= 200 {
						// Never: above the backend's capacity whatever the machine.
						t.Fatalf("-t %s: %g req/s, at or above the backend's 200: %s", step, a, stepsText(j))
					}
					answers[step] = a
				}
				hi, lo := max(answers["2"], answers["10"]), min(answers["2"], answers["10"])
				if hi-lo > 0.05*hi {
					return []string{fmt.Sprintf("-t 2 answers %g req/s, -t 10 %g: more than 5%% apart", answers["2"], answers["10"])}
				}
				// The -t 10 answer rests on the longer evidence (10 s steps,
				// a 50 s confirmation); the -t 2 answer is within 5% of it.
				rate := answers["10"]
				code, out, errs := runMain(t, context.Background(), "bench", "-q", "--format", "json", "--rate", strconv.FormatFloat(rate, 'f', -1, 64),
					"-c", strconv.Itoa(plan.CapacityCeiling), "-t", "30", "--slo", obj, srv.URL("/"))
				var s stats.Summary
				if err := json.Unmarshal([]byte(out), &s); err != nil || len(s.SLO) != 1 {
					t.Fatalf("bench: exit %d: %v\n%s", code, err, errs)
				}
				t.Logf("bench --rate %g -t 30: p99 %.1f ms, %.1f req/s", rate, s.SLO[0].Value, s.Open.RateAchieved)
				if code != 0 || !s.SLO[0].Pass || math.Abs(s.Open.RateAchieved-rate) > 0.02*rate {
					return []string{fmt.Sprintf("bench --rate %g -t 30: exit %d, p99 %.1f ms, %.1f req/s achieved", rate, code, s.SLO[0].Value, s.Open.RateAchieved)}
				}
				return nil
			})
		})
	}
}

// longAttempts is withSpeedRetries for the long tests: two attempts, so
// that a failing long test ends within CI's time.
func longAttempts(t *testing.T, attempt func() []string) {
	t.Helper()
	for i := 1; ; i++ {
		bad := attempt()
		if len(bad) == 0 {
			return
		}
		if i == 2 {
			t.Fatalf("after %d attempts: %s", i, strings.Join(bad, "; "))
		}
		t.Logf("attempt %d: %s; trying again", i, strings.Join(bad, "; "))
	}
}

// longEnabled reports whether the long truth tests run (-args -long or
// BACKBENCH_LONG=1).
func longEnabled() bool { return os.Getenv("BACKBENCH_LONG") == "1" || *longTests }
