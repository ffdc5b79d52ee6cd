package main

import (
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/trials"
)

// untilStudy is a bench study of the built-in HTTP backend at the delays
// given (the first the baseline), run until decided.
func untilStudy(delays, maxRepeat string) string {
	return `question: Which delay is slower?
factors:
  delay: [` + delays + `]
backends:
  - name: model
    command: [backbench, serve, --protocol, http, --delay, "{delay}", --listen, "{listen}"]
    url: "http://{target}/"
measure:
  kind: bench
  concurrency: [1]
  requests: 30
  until: decided
  budget: 20m
  max_repeat: ` + maxRepeat + `
`
}

// stepTrials is the number of trials of the series whose delay is d.
func stepTrials(t *testing.T, res *study.Result, d string) int {
	t.Helper()
	for _, s := range res.Series {
		if s.Levels["delay"] == d {
			if len(s.Steps) != 1 {
				t.Fatalf("series %s: %d steps", s.Label, len(s.Steps))
			}
			return len(s.Steps[0].Trials)
		}
	}
	t.Fatalf("no series of delay %s", d)
	return 0
}

// TestStudyUntilDecided: 10 ms against 20 ms, 12 ms and 10 ms (written
// 10.0ms, the same sleep) run until decided: the 20 ms and the 12 ms
// sides are "slower", decided by the sequential rule before max_repeat
// and the budget, and stop running once decided (fewer trials than the
// baseline, which the open 10 ms pair keeps running); the two 10 ms
// sides get "same" or "undecided", never a direction, on any metric. The
// answer says why the rounds ended and how many pairs were decided. A
// busy machine can spread the trials of 12 ms against 10 ms past what 30
// rounds decide: the study is then run once more (a broken rule fails
// both times).
//
// A long test (make test-long), as TestStudyUntilIdentical: make test
// keeps TestStudyUntilDecidedStops and the synthetic truths of
// internal/trials (TestSequentialTruth).
func TestStudyUntilDecided(t *testing.T) {
	skipUnlessLong(t)
	f := writeStudy(t, untilStudy("10ms, 20ms, 12ms, 10.0ms", "30"))
	var r studyRun
	var got map[string]trials.Comparison
	for try := 1; try <= 2; try++ {
		r = runStudy(t, f)
		if r.code != 0 || r.res == nil {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		got = map[string]trials.Comparison{}
		for _, c := range r.res.Comparisons {
			d := seriesLevels(t, r.res, c.Series)["delay"]
			if c.Metric == trials.MetricRequestsPerSecond {
				got[d] = c
			}
			if d == "10.0ms" && trials.Directional(c.Verdict) {
				t.Fatalf("10 ms against 10 ms: %s %s %v (try %d)\n%s", c.Metric, c.Verdict, c.RatioCI95, try, r.stdout)
			}
		}
		if got["12ms"].Verdict == trials.Slower && got["20ms"].Verdict == trials.Slower {
			break
		}
		t.Logf("try %d: 12 ms %s %v, 20 ms %s %v", try, got["12ms"].Verdict, got["12ms"].RatioCI95, got["20ms"].Verdict, got["20ms"].RatioCI95)
	}
	res := r.res
	for _, d := range []string{"20ms", "12ms"} {
		c := got[d]
		if c.Verdict != trials.Slower {
			t.Fatalf("%s against 10ms: %s %v, want slower\n%s\n%s", d, c.Verdict, c.RatioCI95, r.stdout, r.stderr)
		}
		if c.DecidedAt < trials.DefaultMinRounds || c.DecidedAt >= 30 || c.Confidence < 0.99 {
			t.Errorf("%s against 10ms: decided at round %d, interval of %v", d, c.DecidedAt, c.Confidence)
		}
		// Decided, its series ran no more: the open 10 ms pair kept the
		// baseline running.
		if n, base := stepTrials(t, res, d), stepTrials(t, res, "10ms"); n != c.DecidedAt || n >= base {
			t.Errorf("%s: %d trials, decided at round %d, the baseline %d trials", d, n, c.DecidedAt, base)
		}
	}
	if v := got["10.0ms"].Verdict; v != trials.Same && v != trials.Undecided {
		t.Errorf("10 ms against 10 ms: %s", v)
	}
	u := res.Until
	if u == nil || u.Pairs != 3 || res.Measure.Until != study.UntilDecided || res.Measure.MaxRepeat != 30 {
		t.Fatalf("until %+v, measure %+v", u, res.Measure)
	}
	switch u.Stopped {
	case study.StoppedDecided:
		if u.Decided != 3 {
			t.Errorf("stopped decided with %d of 3 pairs decided", u.Decided)
		}
	case study.StoppedMaxRepeat:
		if u.Decided != 2 || res.Rounds != 30 {
			t.Errorf("stopped at max_repeat after %d rounds with %d of 3 pairs decided", res.Rounds, u.Decided)
		}
	default:
		t.Errorf("stopped: %s", u.Stopped)
	}
	if !strings.Contains(r.words, "rounds until decided: ") || !strings.Contains(r.words, "pairs (a pair at a level, by its req/s) decided") {
		t.Errorf("no note of the rounds until decided:\n%s", r.stdout)
	}
}

// TestStudyUntilIdentical: six identical configurations (one 10 ms
// delay written six ways) run until decided: no direction among their
// comparisons, on any metric.
func TestStudyUntilIdentical(t *testing.T) {
	skipUnlessLong(t)
	r := runStudy(t, writeStudy(t, untilStudy(`10ms, 10.0ms, 10.00ms, "0.01", "0.010", "0.0100"`, "8")))
	if r.code != 0 || r.res == nil {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r.res.Until == nil || r.res.Until.Pairs != 5 {
		t.Fatalf("until %+v", r.res.Until)
	}
	n := 0
	for _, c := range r.res.Comparisons {
		if trials.Directional(c.Verdict) {
			t.Errorf("%s against %s: %s %s %v", c.Series, c.Baseline, c.Metric, c.Verdict, c.RatioCI95)
		}
		if c.Verdict != trials.NoVerdict {
			n++
		}
	}
	if n < 5 {
		t.Errorf("%d comparisons judged:\n%s", n, r.stdout)
	}
}
