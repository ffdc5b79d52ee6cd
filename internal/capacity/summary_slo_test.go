package capacity_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/stats"
)

// bench --slo's verdicts on a run (capacity.JudgeSummary, capacity.Judged)
// against a built-in backend: plan builds the run as bench does from its
// flags, execute.Run runs it (both above capacity, used to build the
// input). The exit status 3, the report's Objectives section and the
// stderr line stay in cmd/backbench.

// sloRunJudged runs n requests against url with the objectives slo and
// judges the run's summary by them, as bench --slo does.
func sloRunJudged(t *testing.T, url string, n int64, slo ...string) (stats.Summary, []capacity.Objective) {
	t.Helper()
	o := plan.Defaults(url)
	o.Requests, o.RequestsSet, o.SLO = n, true, slo
	l, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	run, err := execute.Run(context.Background(), l.Plan, execute.Options{Stderr: io.Discard, Quiet: true, Observe: true})
	if err != nil {
		t.Fatal(err)
	}
	s := run.Summary
	capacity.JudgeSummary(&s, s.RequestsPerSecond, l.Objectives)
	return s, l.Objectives
}

// TestRunObjectives: a failed objective is named with by how much it
// failed, a met one passes; both are in the summary.
func TestRunObjectives(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{Delay: 10 * time.Millisecond})
	s, objs := sloRunJudged(t, srv.URL("/"), 20, "p99<=1ms", "errors<=1%")
	lines, failed := capacity.Judged(objs, s.SLO)
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "p99<=1ms: FAIL, p99 ") || !strings.HasPrefix(lines[1], "errors<=1%: pass, errors 0.00%") {
		t.Fatalf("lines %q", lines)
	}
	if len(failed) != 1 || !strings.HasPrefix(failed[0], "p99<=1ms: FAIL, p99 ") || !strings.Contains(failed[0], " ms over)") {
		t.Errorf("failed %q", failed)
	}
	// The same run within p99 <= 500 ms passes (tried again if a loaded
	// machine stalls the run past it; 50 ms was missed three times in a
	// row by go test -race -count=3 on a busy 2-core machine).
	for i := 1; ; i++ {
		s, _ := sloRunJudged(t, srv.URL("/"), 20, "p99<=500ms")
		if len(s.SLO) != 1 || s.SLO[0].Objective != "p99<=500ms" || s.SLO[0].Value < 9 {
			t.Fatalf("slo_results %+v", s.SLO)
		}
		if s.SLO[0].Pass {
			break
		}
		if i == 3 {
			t.Fatalf("after %d attempts: %s", i, fmt.Sprintf("p99 %.1f ms", s.SLO[0].Value))
		}
		t.Logf("attempt %d: p99 %.1f ms; trying again", i, s.SLO[0].Value)
	}
}
