package driver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// Truth tests of the capacity search (driver.NewCapacity run by
// driver.Run) against built-in backends whose capacity is known. Steps
// are short (1 s after a 0.3 s warm-up) to keep the tests quick; the
// ranges are the issue's. The search is built by plan.CapacityOptions and
// its answer, progress lines and JSON written by report.Capacity, as
// backbench capacity does: both packages stand above driver and are used
// here to build the input and to read the result. The flags, exit
// statuses and the files --out writes stay in cmd/backbench.

// capacityTruthAttempts is how many times a speed assertion is tried: a
// loaded machine can wreck the timing of one search, while a broken
// feature fails every attempt.
const capacityTruthAttempts = 3

// capacityTruthRetry runs attempt until it reports nothing wrong, at most
// capacityTruthAttempts times.
func capacityTruthRetry(t *testing.T, attempt func() []string) {
	t.Helper()
	for i := 1; ; i++ {
		bad := attempt()
		if len(bad) == 0 {
			return
		}
		if i == capacityTruthAttempts {
			t.Fatalf("after %d attempts: %s", i, strings.Join(bad, "; "))
		}
		t.Logf("attempt %d: %s; trying again", i, strings.Join(bad, "; "))
	}
}

// capacityTruthOnce skips the test in the engine pass of make test (it
// tests the search, not the load path), as the command's tests did.
func capacityTruthOnce(t *testing.T) {
	t.Helper()
	if os.Getenv("BACKBENCH_ENGINE") != "" {
		t.Skip("runs once, with the default engine: it tests what is made of the runs, not the load path")
	}
}

// capacitySearch is one search and what backbench capacity makes of it.
type capacitySearch struct {
	res      capacity.Result
	rep      *report.Capacity
	j        capacity.JSONReport
	answer   string   // the first line of the text report
	progress []string // the progress lines, as on stderr
	plan     *plan.Capacity
}

// runCapacitySearch searches the capacity of url with 1 s steps after a
// 0.3 s warm-up (as capacity -t 1 --warmup 0.3), the objectives slo and
// the changes edit makes to the options.
func runCapacitySearch(t *testing.T, url string, slo []string, edit func(*plan.CapacityOptions)) *capacitySearch {
	t.Helper()
	l := plan.Defaults(url)
	l.Duration, l.TimeLimitSet, l.SLO = time.Second, true, slo
	o := plan.CapacityOptions{Load: l, Model: capacity.ModelOpen, Resolution: 0.02, ResolutionText: "2%",
		MaxTime: 5 * time.Minute, Warmup: 300 * time.Millisecond}
	if edit != nil {
		edit(&o)
	}
	p, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	s := &capacitySearch{plan: p, rep: &report.Capacity{Model: o.Model, Objectives: p.Config.Objectives, MaxTime: o.MaxTime}}
	s.progress = append(s.progress, s.rep.Searching(p.ShownURL(), p.Config.Step, p.Config.Confirm))
	p.Config.OnStep = func(st capacity.Step) { s.progress = append(s.progress, s.rep.StepLine(st)) }
	ctx := context.Background()
	sched := driver.NewCapacity(ctx, p.Config)
	started := time.Now()
	if _, err := driver.Run(ctx, driver.Config{Schedule: sched, Warmup: driver.Warmup{Duration: p.Warmup},
		Options: execute.Options{Stderr: io.Discard, Quiet: true, Observe: true}},
		[]driver.Series{{Label: p.ShownURL(), Plan: p.Plan}}); err != nil {
		t.Fatal(err)
	}
	if s.res, err = sched.Result(); err != nil {
		t.Fatal(err)
	}
	env := stats.CurrentEnvironment("test")
	s.rep.Result, s.rep.Started, s.rep.Ended, s.rep.Environment = s.res, started, time.Now(), &env
	s.j = s.rep.JSON(p.Concurrency)
	s.answer = s.rep.Answer()
	return s
}

// capacityStepsText lists the steps of j, for the messages.
func capacityStepsText(j capacity.JSONReport) string {
	var b strings.Builder
	for _, s := range j.Steps {
		fmt.Fprintf(&b, "[%g/c%d: %.1f req/s p99 %.1f err %.3f %v] ", s.Rate, s.Concurrency, s.AchievedRPS, s.P99Ms, s.ErrorRate, s.Pass)
	}
	return b.String()
}

// capacityTruthRange checks a capacity answer c against the backend's
// known range [lo, hi]. A search the client held back (a busy machine, the
// race detector) answers a lower bound, "at least c": it must then say so
// and still claim no more than hi.
func capacityTruthRange(t *testing.T, s *capacitySearch, c, lo, hi float64) []string {
	t.Helper()
	if s.j.LimitedBy == "client" {
		if c > hi || !strings.HasPrefix(s.answer, "sustains at least ") {
			return []string{fmt.Sprintf("limited by the client: capacity %.1f, want at most %g and said as a lower bound: %s", c, hi, capacityStepsText(s.j))}
		}
		t.Logf("limited by the client: at least %.1f (%s)", c, capacityStepsText(s.j))
		return nil
	}
	if c < lo || c > hi {
		return []string{fmt.Sprintf("capacity %.1f limited by %s, want %g to %g: %s", c, s.j.LimitedBy, lo, hi, capacityStepsText(s.j))}
	}
	return nil
}

// noConfirm is --confirm 0. The truth tests check where the search's
// steps put the answer against a backend of known capacity; a backend at
// 80 to 95% of its capacity can fail a 5 s confirmation by queueing alone,
// and the confirmation's step-down has tests of its own (internal/capacity).
func noConfirm(o *plan.CapacityOptions) { o.Confirm, o.ConfirmSet = 0, true }

// TestCapacitySerialTruth: a serial worker with a 10 ms service time
// sustains at most 100 req/s; with requests arriving at a constant rate
// its p99 stays within 50 ms up to close to that.
func TestCapacitySerialTruth(t *testing.T) {
	capacityTruthOnce(t)
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{
		Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: 10 * time.Millisecond})
	capacityTruthRetry(t, func() []string {
		s := runCapacitySearch(t, srv.URL("/"), []string{"p99<=50ms"}, noConfirm)
		if s.res.Best < 0 || s.j.CapacityRPS == nil || s.j.Model != "open" {
			t.Fatalf("%+v\n%s", s.j, s.answer)
		}
		if !strings.HasPrefix(s.answer, "sustains ") || !strings.Contains(s.answer, "req/s with p99 <= 50 ms (p99 at that rate: ") {
			t.Errorf("first line: %q", s.answer)
		}
		return capacityTruthRange(t, s, *s.j.CapacityRPS, 55, 101)
	})
}

// TestCapacityPreforkTruth: four workers of 10 ms sustain at most 400
// req/s.
func TestCapacityPreforkTruth(t *testing.T) {
	capacityTruthOnce(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{
		Model: fixtures.Model{Kind: fixtures.ModelPrefork, N: 4}, Delay: 10 * time.Millisecond})
	capacityTruthRetry(t, func() []string {
		s := runCapacitySearch(t, srv.URL("/"), []string{"p99<=50ms"}, func(o *plan.CapacityOptions) { noConfirm(o); o.Start = 50 })
		if s.res.Best < 0 || s.j.CapacityRPS == nil {
			t.Fatalf("%+v\n%s", s.j, s.answer)
		}
		return capacityTruthRange(t, s, *s.j.CapacityRPS, 220, 405)
	})
}

// TestCapacityClosedTruth: in the closed model, c connections on four 10
// ms workers wait about c/4 × 10 ms, so p99 <= 50 ms holds up to about 20.
func TestCapacityClosedTruth(t *testing.T) {
	capacityTruthOnce(t)
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{
		Model: fixtures.Model{Kind: fixtures.ModelPrefork, N: 4}, Delay: 10 * time.Millisecond})
	capacityTruthRetry(t, func() []string {
		s := runCapacitySearch(t, srv.URL("/"), []string{"p99<=50ms"}, func(o *plan.CapacityOptions) {
			noConfirm(o)
			o.Model, o.Start = capacity.ModelClosed, 4
		})
		if s.res.Best < 0 || s.j.CapacityConcurrency == nil || s.j.CapacityRPS != nil || s.j.Model != "closed" {
			t.Fatalf("%+v\n%s", s.j, s.answer)
		}
		if !strings.HasPrefix(s.answer, "sustains a concurrency of ") && !strings.HasPrefix(s.answer, "sustains at least a concurrency of ") {
			t.Errorf("first line: %q", s.answer)
		}
		return capacityTruthRange(t, s, float64(*s.j.CapacityConcurrency), 12, 21)
	})
}

// TestCapacityFailuresEveryRate: a backend that resets every 10th request
// fails errors<=1% at every rate: no capacity (capacity's exit status 3,
// tested in cmd/backbench).
func TestCapacityFailuresEveryRate(t *testing.T) {
	capacityTruthOnce(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{
		Fault: fixtures.FaultReset, FaultEvery: 10})
	s := runCapacitySearch(t, srv.URL("/"), []string{"errors<=1%", "p99<=1s"}, func(o *plan.CapacityOptions) { o.Start = 200 })
	j := s.j
	// 200 (measured again: the first level), 100, 50, 25, 12.5.
	if s.res.Best >= 0 || j.CapacityRPS == nil || *j.CapacityRPS != 0 || len(j.Steps) != 6 || !j.Steps[1].Again || j.Steps[1].Rate != 200 {
		t.Fatalf("best %d, %+v\n%s", s.res.Best, j, s.answer)
	}
	for _, st := range j.Steps {
		if st.Pass || st.ErrorRate < 0.05 || st.ErrorRate > 0.2 {
			t.Errorf("step %+v: want about 10%% errors, failing", st)
		}
	}
	if !strings.HasPrefix(s.answer, "sustains no rate tried with errors <= 1% and p99 <= 1000 ms (lowest rate tried 12.5 req/s: errors ") {
		t.Errorf("first line: %q", s.answer)
	}
}

// TestCapacityJSONAndBench: the capacity document has the documented
// keys, and a step is the run bench makes: a run at rate R for T with a
// ceiling of C reproduces it.
func TestCapacityJSONAndBench(t *testing.T) {
	capacityTruthOnce(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 5 * time.Millisecond})
	s := runCapacitySearch(t, srv.URL("/"), []string{"p99<=200ms"}, func(o *plan.CapacityOptions) {
		o.Load.Duration, o.Confirm, o.ConfirmSet, o.Warmup, o.Start, o.Max = 500*time.Millisecond, 2500*time.Millisecond, true, 0, 20, 40
	})
	// A step whose latency grew through it is measured again, longer (1 s,
	// then 2 s), so the passing step of 40 req/s may be any of them.
	progress := strings.Join(s.progress, "\n")
	if !strings.Contains(progress, "Searching the capacity of ") || !regexp.MustCompile(`\n  40 req/s, (0\.5|1|2) s: pass`).MatchString(progress) ||
		!strings.Contains(progress, "40 req/s, 2.5 s confirmation: pass") {
		t.Errorf("progress lines: %q", progress)
	}
	var b bytes.Buffer
	if err := document.Write(&b, &document.Capacity{JSONReport: &s.j}); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b.Bytes(), &raw); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
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
	if err := json.Unmarshal(b.Bytes(), &j); err != nil {
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
	// The run bench --rate 40 -t 0.5 -c 256 makes.
	bo := plan.Defaults(srv.URL("/"))
	bo.Rate, bo.RateSet, bo.Duration, bo.TimeLimitSet, bo.Concurrency, bo.ConcurrencySet = 40, true, 500*time.Millisecond, true, 256, true
	bl, err := bo.Build()
	if err != nil {
		t.Fatal(err)
	}
	run, err := execute.Run(context.Background(), bl.Plan, execute.Options{Stderr: io.Discard, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	sum := run.Summary
	if sum.Open == nil || sum.Open.RateAsked != st.Rate || sum.Concurrency != st.Concurrency {
		t.Fatalf("bench %+v", sum.Open)
	}
	if d := sum.Open.RateAchieved - st.AchievedRPS; d < -6 || d > 6 {
		t.Errorf("bench achieved %.1f req/s, the step %.1f", sum.Open.RateAchieved, st.AchievedRPS)
	}
	if sum.Spectrum["50"] < 4 || st.P50Ms < 4 || sum.Spectrum["50"] > 3*st.P50Ms || st.P50Ms > 3*sum.Spectrum["50"] {
		t.Errorf("bench p50 %.1f ms, the step %.1f ms", sum.Spectrum["50"], st.P50Ms)
	}
}

// TestCapacityMaxTimeStopsEarly: at MaxTime the search stops, answers with
// the best passing step so far and says that it stopped early.
func TestCapacityMaxTimeStopsEarly(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{})
	var s *capacitySearch
	// On a busy machine the first 0.3 s step can fail its steady-state
	// judgement and its second look end past MaxTime, leaving no passing
	// step: that attempt is tried again.
	capacityTruthRetry(t, func() []string {
		s = runCapacitySearch(t, srv.URL("/"), []string{"p99<=1s"}, func(o *plan.CapacityOptions) {
			o.Load.Duration, o.Warmup, o.MaxTime = 300*time.Millisecond, 0, time.Second
		})
		if s.res.Best < 0 {
			return []string{"no step passed before MaxTime: " + s.answer}
		}
		return nil
	})
	if !strings.HasPrefix(s.answer, "sustains at least ") || !strings.Contains(s.answer, "stopped early at --max-time 1s: the best passing step so far") {
		t.Errorf("first line %q", s.answer)
	}
	if !s.j.StoppedEarly {
		t.Errorf("not stopped early: %+v", s.j)
	}
}

// runCapacitySteps runs a search of url as runCapacitySearch does and
// returns the driver's steps (with their settling).
func runCapacitySteps(t *testing.T, url string, slo []string, edit func(*plan.CapacityOptions)) []driver.Step {
	t.Helper()
	l := plan.Defaults(url)
	l.Duration, l.TimeLimitSet, l.SLO = 300*time.Millisecond, true, slo
	o := plan.CapacityOptions{Load: l, Model: capacity.ModelOpen, Resolution: 0.02, ResolutionText: "2%",
		MaxTime: 5 * time.Minute}
	if edit != nil {
		edit(&o)
	}
	p, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sched := driver.NewCapacity(ctx, p.Config)
	res, err := driver.Run(ctx, driver.Config{Schedule: sched, Options: execute.Options{Stderr: io.Discard, Quiet: true, Observe: true}},
		[]driver.Series{{Label: p.ShownURL(), Plan: p.Plan}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sched.Result(); err != nil {
		t.Fatal(err)
	}
	return res.Steps
}

// TestCapacitySettleBounded: the wait before a step for the backend's
// queue to drain happens only when the backend ever answered (a backend
// that fails every request has no queue to wait for: that wait once took
// 30 s a step, past --max-time), and it has at most what --max-time
// leaves.
func TestCapacitySettleBounded(t *testing.T) {
	capacityTruthOnce(t)
	reset := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Fault: fixtures.FaultReset})
	steps := runCapacitySteps(t, reset.URL("/"), []string{"p99<=100ms"}, func(o *plan.CapacityOptions) {
		o.Confirm, o.ConfirmSet, o.MaxTime = 0, true, 20*time.Second
	})
	if len(steps) < 3 {
		t.Errorf("%d steps against a backend that resets every connection: %+v", len(steps), steps)
	}
	for i, st := range steps {
		if st.Settle != 0 {
			t.Errorf("step %d waits to settle (%v) for a backend that never answered", i, st.Settle)
		}
	}
	// 20 ms a request against p99 <= 5 ms: every step fails with answers,
	// so each step after the first waits, within --max-time.
	slow := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 20 * time.Millisecond})
	maxTime := 4 * time.Second
	steps = runCapacitySteps(t, slow.URL("/"), []string{"p99<=5ms"}, func(o *plan.CapacityOptions) {
		o.Confirm, o.ConfirmSet, o.MaxTime, o.Start = 0, true, maxTime, 10
	})
	settled := 0
	for i, st := range steps {
		if st.Settle > 0 {
			settled++
			if st.SettleFor <= 0 || st.SettleFor > maxTime {
				t.Errorf("step %d settles for %v, want within --max-time %v", i, st.SettleFor, maxTime)
			}
		}
	}
	if settled == 0 {
		t.Errorf("no step after a failed one waited to settle: %+v", steps)
	}
}
