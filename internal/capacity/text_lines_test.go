package capacity

import (
	"testing"
	"time"

	"github.com/backbench/backbench/internal/stats"
)

// TestProgressLines: the line that starts a search, each step's line and
// the title of the steps' table, in both models.
func TestProgressLines(t *testing.T) {
	open := Report{Model: ModelOpen, MaxTime: 5 * time.Minute, Result: Result{Steps: make([]Step, 3)}}
	if got, want := open.Searching("http://x/", 2*time.Second, 30*time.Second),
		"Searching the capacity of http://x/ (open model, 2 s per step, a 30 s confirmation; at most 5m0s)"; got != want {
		t.Errorf("Searching:\n%s\nwant\n%s", got, want)
	}
	st := Step{Level: 1200, Length: 2 * time.Second, Pass: false, Measure: Measure{P99: 61.5, ErrorRate: 0.001,
		Held: Steadiness{Verdict: HeldNo, Why: "latency grew"}}}
	if got, want := open.StepLine(st), "  1,200 req/s, 2 s: FAIL (latency grew), p99 "+FormatMs(61.5)+", errors 0.10%"; got != want {
		t.Errorf("StepLine:\n%q\nwant\n%q", got, want)
	}
	if got, want := open.Heading("http://x/", 256, 2*time.Second, time.Second, 0, 1500*time.Millisecond),
		"Capacity search: http://x/, open model, at most 256 in flight, 2 s per step after a 1 s warm-up, no confirmation run, 3 steps in 1.5 s"; got != want {
		t.Errorf("Heading:\n%s\nwant\n%s", got, want)
	}
	closed := Report{Model: ModelClosed}
	st = Step{Level: 8, Length: 10 * time.Second, Pass: true, Confirm: true, Measure: Measure{P99: 3, Held: Steadiness{Verdict: HeldYes}}}
	if got, want := closed.StepLine(st), "  8 connections, 10 s confirmation: pass, p99 "+FormatMs(3)+", errors 0.00%"; got != want {
		t.Errorf("closed StepLine:\n%q\nwant\n%q", got, want)
	}
	if got, want := closed.Heading("http://x/", 256, time.Second, 0, 30*time.Second, time.Second),
		"Capacity search: http://x/, closed model, 1 s per step, a 30 s confirmation run, 0 steps in 1.0 s"; got != want {
		t.Errorf("closed Heading:\n%s\nwant\n%s", got, want)
	}
}

// TestJudgeSummary: a summary gets its objectives' verdicts, none without
// objectives.
func TestJudgeSummary(t *testing.T) {
	s := &stats.Summary{Complete: 100, Spectrum: map[string]float64{"50": 1, "90": 2, "99": 40, "99.9": 50, "100": 60}}
	JudgeSummary(s, 100, nil)
	if s.SLO != nil {
		t.Fatalf("no objectives: %+v", s.SLO)
	}
	objs, err := ParseAll([]string{"p99<=50ms", "max<=50ms"})
	if err != nil {
		t.Fatal(err)
	}
	JudgeSummary(s, 100, objs)
	if len(s.SLO) != 2 || !s.SLO[0].Pass || s.SLO[1].Pass || s.SLO[1].Value != 60 {
		t.Errorf("verdicts %+v", s.SLO)
	}
}

// TestChartWords: the chart's line is the p99 objective's bound, its axis
// the model's level.
func TestChartWords(t *testing.T) {
	objs, err := ParseAll([]string{"errors<=1%", "p99<=50ms"})
	if err != nil {
		t.Fatal(err)
	}
	r := Report{Model: ModelOpen, Objectives: objs}
	if r.P99Bound() != 50 || r.LevelAxis() != "offered rate (req/s)" {
		t.Errorf("open: %v, %q", r.P99Bound(), r.LevelAxis())
	}
	r = Report{Model: ModelClosed, Objectives: objs[:1]}
	if r.P99Bound() != 0 || r.LevelAxis() != "concurrency (connections)" {
		t.Errorf("closed: %v, %q", r.P99Bound(), r.LevelAxis())
	}
}
