package driver_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// These tests run bench's trials (--repeat, --precision) as bench does:
// plan.Options.Build, trials.Options.Build, driver.RunTrials, and the
// saved form of the trials (document.NewTrials), against built-in
// backends (fixtures). internal/plan and internal/document are imported
// to build the input and read the result.

// skipOnSecondEngine skips a test that tests what is made of the runs,
// not the load path, when make test runs again with BACKBENCH_ENGINE set.
func skipOnSecondEngine(t *testing.T) {
	t.Helper()
	if os.Getenv(execute.EngineEnv) != "" {
		t.Skip("runs once, with the default engine: it tests what is made of the runs, not the load path")
	}
}

// trialsSpeedAttempts is how many times a speed assertion is tried: a
// loaded machine may slow one attempt down.
const trialsSpeedAttempts = 3

// retryTrialsSpeed runs attempt until it reports no problem, at most
// trialsSpeedAttempts times, and fails the test with the last problems.
func retryTrialsSpeed(t *testing.T, attempt func() []string) {
	t.Helper()
	for i := 1; ; i++ {
		bad := attempt()
		if len(bad) == 0 {
			return
		}
		if i == trialsSpeedAttempts {
			t.Fatalf("after %d attempts: %s", i, strings.Join(bad, "; "))
		}
		t.Logf("attempt %d: %s; trying again", i, strings.Join(bad, "; "))
	}
}

// benchTrials runs bench -n n with the trials of to against url (noise
// 2%, bench's default) and returns the saved summary of the trials (what
// bench --format json writes).
func benchTrials(t *testing.T, url string, n int64, to trials.Options, o execute.Options) stats.Summary {
	t.Helper()
	po := plan.Defaults(url)
	po.Requests, po.RequestsSet = n, true
	l, err := po.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !to.MaxRepeatSet {
		to.MaxRepeat = trials.DefaultMaxRepeat
	}
	if !to.RepeatSet {
		to.Repeat = 1
	}
	tp, err := to.Build()
	if err != nil {
		t.Fatal(err)
	}
	tp.Noise = 0.02
	o.Observe, o.Version = true, "test"
	tr, err := driver.RunTrials(context.Background(), l.Plan, &tp, o)
	if err != nil {
		t.Fatal(err)
	}
	doc := document.NewTrials(tr.Runs, tr.Pooled, tr.Medians, tr.Precise, tp.Seed)
	return *doc.Summary
}

// TestPrecisionStops: --precision 3% on a steady backend stops before
// --max-repeat, with the interval inside ±3%.
func TestPrecisionStops(t *testing.T) {
	skipOnSecondEngine(t)
	// A sleeping serial backend: the client's own delays on a shared
	// machine weigh least against its 20 ms.
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial},
		Delay: 20 * time.Millisecond, BodyBytes: 5})
	retryTrialsSpeed(t, func() (bad []string) {
		s := benchTrials(t, srv.URL("/x"), 20, trials.Options{Precision: "3%"}, execute.Options{Quiet: true})
		r := s.Repeated
		if r == nil || r.Precise == nil {
			t.Fatalf("no trials or no precision verdict: %+v", r)
		}
		ci := r.RequestsPerSecondCI95
		if n := len(r.Trials); n >= trials.DefaultMaxRepeat || !*r.Precise || ci == nil ||
			ci[0] < s.RequestsPerSecond*0.97 || ci[1] > s.RequestsPerSecond*1.03 {
			bad = append(bad, fmt.Sprintf("%d trials, precise %v, %.1f req/s in %v: want fewer than 20 trials and ±3%%", n, *r.Precise, s.RequestsPerSecond, ci))
		}
		return bad
	})
}

// TestShortTrialNoteBench: trials of a few milliseconds (-n 10 on a fast
// backend) carry a note naming -n and -t, in the trials' result and on
// stderr.
func TestShortTrialNoteBench(t *testing.T) {
	skipOnSecondEngine(t)
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 5})
	var errs strings.Builder
	s := benchTrials(t, srv.URL("/x"), 10, trials.Options{Repeat: 4, RepeatSet: true}, execute.Options{Stderr: &execute.LockedWriter{W: &errs}})
	has := func(s string) bool {
		return strings.Contains(s, "too short to trust") && strings.Contains(s, "-n") && strings.Contains(s, "-t")
	}
	if !has(strings.Join(s.Notes, "\n")) || !has(errs.String()) {
		t.Errorf("bench of short trials: no note naming -n and -t:\n%q\n%s", s.Notes, errs.String())
	}
}
