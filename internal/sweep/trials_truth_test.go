package sweep_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/compare"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/driver"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/report/page"
	"github.com/backbench/backbench/internal/sweep"
	"github.com/backbench/backbench/internal/trials"
)

// These tests run sweeps with trials as the sweep command does
// (plan.SweepOptions.Build, trials.Options.Build, sweep.Run, the sweep's
// document with its trials, sweep.TrialsDocument) against built-in
// backends (fixtures), and read what is made of them: the comparisons'
// verdicts, the rounds' order, the notes, the text table, the CSV, the
// page and compare's reading of sweep.json. internal/plan builds the
// input; internal/report, internal/report/page, internal/compare and
// internal/document render and read the result, as the command does.

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

// serialTrialsBackend starts a built-in serial FastCGI backend of the
// given service time on a Unix socket.
func serialTrialsBackend(t *testing.T, delay time.Duration) *fixtures.Server {
	t.Helper()
	return fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: delay, BodyBytes: 5})
}

// trialsSweep is a sweep with trials and what the command makes of it.
type trialsSweep struct {
	// sw is the sweep's document (sweep.json), read back from its JSON.
	sw report.Sweep
	// json is sweep.json's bytes.
	json []byte
	// text is the text the command prints: the trials' plan, the table
	// and the comparisons.
	text string
	// rows are sweep.csv's rows, the header first.
	rows [][]string
	// page is sweep.html.
	page string
}

// sweepTrialsOpts are the options of a sweep with trials: -n, -c, the
// trials, --warmup (when warmupSet) and the series [LABEL=]URL.
type sweepTrialsOpts struct {
	requests  int64
	levels    string
	trials    trials.Options
	warmup    int64
	warmupSet bool
	args      []string
}

// runTrialsSweep runs the sweep of o as the sweep command does (noise
// 2%, its default) and returns what it makes of it.
func runTrialsSweep(t *testing.T, o sweepTrialsOpts) trialsSweep {
	t.Helper()
	po := plan.Defaults("")
	po.Requests, po.RequestsSet = o.requests, true
	so := plan.SweepOptions{Load: po, Args: o.args, Levels: o.levels, Warmup: o.warmup, WarmupSet: o.warmupSet}
	sp, err := so.Build()
	if err != nil {
		t.Fatal(err)
	}
	to := o.trials
	if !to.MaxRepeatSet {
		to.MaxRepeat = trials.DefaultMaxRepeat
	}
	tp, err := to.Build()
	if err != nil {
		t.Fatal(err)
	}
	const noise = 0.02
	tp.Noise = noise
	setup := sp.Config.Prepare(sp.Series, true, nil)
	defer setup.Done()
	sp.Config.Options = execute.Options{Quiet: true, Setup: setup, Version: "test"}
	var short sweep.ShortTrials
	sp.Config.Trials = &tp
	sp.Config.OnTrial = func(tr driver.Trial) { short.Add(sp.Series[tr.Series].Label, tr.Summary) }
	res, err := sweep.Run(context.Background(), sp.Config, sp.Series)
	if err != nil {
		t.Fatal(err)
	}
	notes := res.Notes
	if n := short.Note(); n != "" {
		notes = append(notes, n)
	}
	sw := sp.Config.Document(sp.Series, sp.Backends, res)
	sw.SweepTrials = sweep.TrialsDocument(tp, noise, sp.Baseline, res.Series, sp.Backends, notes, res.Until)
	var out trialsSweep
	var text bytes.Buffer
	fmt.Fprintln(&text, report.Wrap(report.SweepTitle(&sw), report.DefaultWidth, "  "))
	fmt.Fprintln(&text, report.Wrap(tp.Describe(true), report.DefaultWidth, "  "))
	fmt.Fprintln(&text)
	if err := report.SweepTableFit(&text, &sw, report.DefaultWidth); err != nil {
		t.Fatal(err)
	}
	if err := report.Comparisons(&text, sw.SweepTrials, report.DefaultWidth); err != nil {
		t.Fatal(err)
	}
	out.text = text.String()
	var js, csvb, html bytes.Buffer
	if err := document.Write(&js, &sw); err != nil {
		t.Fatal(err)
	}
	out.json = js.Bytes()
	d, err := document.Read("sweep.json", out.json)
	if err != nil {
		t.Fatalf("sweep.json: %v", err)
	}
	back, ok := d.(*document.Sweep)
	if !ok {
		t.Fatalf("sweep.json reads as %T", d)
	}
	out.sw = *back
	if err := report.SweepCSV(&csvb, &out.sw); err != nil {
		t.Fatal(err)
	}
	if out.rows, err = csv.NewReader(&csvb).ReadAll(); err != nil || len(out.rows) == 0 || !reflect.DeepEqual(out.rows[0], report.SweepCSVHeader) {
		t.Fatalf("sweep.csv: %v %v", err, out.rows)
	}
	if err := page.WriteOwn(&html, &out.sw, "sweep.json", "sweep", false); err != nil {
		t.Fatal(err)
	}
	out.page = html.String()
	return out
}

// findComparison returns the comparison of series against baseline at
// level c for metric, or fails.
func findComparison(t *testing.T, cs []trials.Comparison, series, baseline string, c int, metric string) trials.Comparison {
	t.Helper()
	for _, x := range cs {
		if x.Series == series && x.Baseline == baseline && x.Concurrency == c && x.Metric == metric {
			return x
		}
	}
	t.Fatalf("no comparison of %q against %q at c=%d for %s in %+v", series, baseline, c, metric, cs)
	return trials.Comparison{}
}

// TestTrialsTruth: against built-in backends of known speed, a serial
// 12.5 ms backend is "slower" than a serial 10 ms one at every level, with
// a ratio interval around 0.8, and a second serial 10 ms backend makes "no
// difference"; the trials ran in interleaved rounds.
func TestTrialsTruth(t *testing.T) {
	skipOnSecondEngine(t)
	a := serialTrialsBackend(t, 10*time.Millisecond)
	slow := serialTrialsBackend(t, 12500*time.Microsecond)
	same := serialTrialsBackend(t, 10*time.Millisecond)
	retryTrialsSpeed(t, func() (bad []string) {
		r := runTrialsSweep(t, sweepTrialsOpts{requests: 30, levels: "1,3",
			trials: trials.Options{Repeat: 6, RepeatSet: true, Seed: 17, SeedSet: true},
			args:   []string{"base=" + a.URL("/x"), "slow=" + slow.URL("/x"), "same=" + same.URL("/x")}})
		sw, out := r.sw, r.text
		if sw.SweepTrials == nil || sw.Seed != 17 || sw.Baseline != "base" || sw.Repeat != 6 {
			t.Fatalf("sweep.json trials: %+v", sw.SweepTrials)
		}
		if !strings.Contains(out, "--seed 17") || !strings.Contains(out, "vs base") || !strings.Contains(out, "±") {
			t.Errorf("the text has no seed, no verdict column or no ±:\n%s", out)
		}
		for _, c := range []int{1, 3} {
			rps := findComparison(t, sw.Comparisons, "slow", "base", c, trials.MetricRequestsPerSecond)
			if rps.Verdict != trials.Slower || rps.RatioCI95 == nil || *rps.Ratio < 0.74 || *rps.Ratio > 0.86 ||
				rps.RatioCI95[0] < 0.65 || rps.RatioCI95[1] > 0.92 {
				bad = append(bad, fmt.Sprintf("c=%d: slow against base: %s %s, want slower around 0.8", c, rps.Verdict, rps.RatioText()))
			}
			if p99 := findComparison(t, sw.Comparisons, "slow", "base", c, trials.MetricP99Ms); p99.RatioCI95 == nil {
				t.Errorf("c=%d: p99 comparison without interval: %+v", c, p99)
			}
			if v := findComparison(t, sw.Comparisons, "same", "base", c, trials.MetricRequestsPerSecond); v.Verdict != trials.Same && v.Verdict != trials.Undecided {
				bad = append(bad, fmt.Sprintf("c=%d: two serial 10 ms backends: %s %s, want same or undecided", c, v.Verdict, v.RatioText()))
			}
		}
		checkTrialRounds(t, &sw)
		// compare reads sweep.json: against itself, every series and level
		// matches and nothing differs (5 metrics: req/s, mean, p50, p99,
		// max; the backend was not sampled).
		f, err := compare.Read("sweep.json", r.json)
		if err != nil {
			t.Fatal(err)
		}
		g, err := compare.Read("sweep.json", r.json)
		if err != nil {
			t.Fatal(err)
		}
		cr, err := compare.Files([]*compare.File{f, g}, 0.02, false)
		if err != nil || len(cr.Comparisons) != 3*2*5 {
			t.Fatalf("compare of sweep.json with itself: %v, %d comparisons", err, len(cr.Comparisons))
		}
		for _, c := range cr.Comparisons {
			if (c.Verdict != trials.Same && c.Verdict != trials.Undecided) || *c.Ratio != 1 {
				t.Errorf("sweep.json against itself: %+v", c)
			}
		}
		// sweep.csv: the trials and the intervals of every row.
		n := len(report.SweepCSVHeader)
		for _, row := range r.rows[1:] {
			if row[n-5] != "6" || row[n-4] == "" || row[n-1] == "" {
				t.Errorf("sweep.csv row without trials or intervals: %q", row)
			}
		}
		return bad
	})
}

// checkTrialRounds checks in the trials' start times that at every level
// trial k of every series ran before trial k+1 of any, and that the
// series did not always run in the same order.
func checkTrialRounds(t *testing.T, sw *report.Sweep) {
	t.Helper()
	firsts := map[string]bool{}
	for li, level := range sw.Levels {
		start := func(si, k int) time.Time { return sw.Series[si].Levels[li].Trials[k].StartedAt.Time }
		for si, se := range sw.Series {
			if r := se.Levels[li].Repeated; r == nil || len(r.Trials) != 6 || start(si, 0).IsZero() {
				t.Fatalf("%s c=%d: trials %+v", se.Label, level, r)
			}
		}
		for k := range 6 {
			first := 0
			for si := range sw.Series {
				if start(si, k).Before(start(first, k)) {
					first = si
				}
				for sj := range sw.Series {
					if k > 0 && !start(sj, k-1).Before(start(si, k)) {
						t.Errorf("c=%d: trial %d of %s started before trial %d of %s", level, k+1, sw.Series[si].Label, k, sw.Series[sj].Label)
					}
				}
			}
			firsts[sw.Series[first].Label] = true
		}
	}
	if len(firsts) < 2 {
		t.Errorf("the same series ran first in every round: %v", firsts)
	}
}

// TestVerdictCarriesFailures: a series whose every other request fails at
// once looks faster, and its verdict says how many failed, in the table
// and in sweep.json.
func TestVerdictCarriesFailures(t *testing.T) {
	skipOnSecondEngine(t)
	ok := serialTrialsBackend(t, 5*time.Millisecond)
	broken := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial},
		Delay: 5 * time.Millisecond, Fault: "garbage", FaultEvery: 2})
	r := runTrialsSweep(t, sweepTrialsOpts{requests: 10, levels: "1", trials: trials.Options{Repeat: 4, RepeatSet: true},
		warmupSet: true, args: []string{"ok=" + ok.URL("/x"), "broken=" + broken.URL("/x")}})
	c := findComparison(t, r.sw.Comparisons, "broken", "ok", 1, trials.MetricRequestsPerSecond)
	if c.FailedRatio == nil || c.FailedRatio.Series < 0.4 || c.FailedRatio.Series > 0.6 || c.FailedRatio.Baseline != 0 {
		t.Fatalf("failed_ratio %+v, want about 0.5 for the series and 0 for the baseline", c.FailedRatio)
	}
	want := c.Verdict
	if m := c.MoreText(); m != "" {
		want += ": " + m
	}
	want += " (50% failed)"
	if c.ShortTrials > 0 {
		want += trials.ShortMark // trials of 10 requests: too short to trust
	}
	if c.VerdictText() != want || !strings.Contains(r.text, want) {
		t.Errorf("verdict text %q, want %q in the table:\n%s", c.VerdictText(), want, r.text)
	}
}

// TestShortTrialNoteSweep: trials of a few milliseconds (-n 10 on a fast
// backend) carry a note naming -n and -t in a sweep's notes and text,
// and the marker of every verdict drawn from them.
func TestShortTrialNoteSweep(t *testing.T) {
	skipOnSecondEngine(t)
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 5})
	has := func(s string) bool {
		return strings.Contains(s, "too short to trust") && strings.Contains(s, "-n") && strings.Contains(s, "-t")
	}
	r := runTrialsSweep(t, sweepTrialsOpts{requests: 10, levels: "1", trials: trials.Options{Repeat: 4, RepeatSet: true},
		args: []string{"a=" + srv.URL("/x"), "b=" + srv.URL("/y")}})
	if !has(strings.Join(r.sw.Notes, "\n")) || !has(r.text) || !strings.Contains(r.text, trials.ShortMark+"\n") {
		t.Errorf("sweep of short trials: notes %q\n%s", r.sw.Notes, r.text)
	}
	for _, c := range r.sw.Comparisons {
		if c.ShortTrials != 8 {
			t.Errorf("%+v: want 8 short trials", c)
		}
	}
}

// TestOneP99: with trials, the page's p99 of every series and level is
// the one of the table, CSV and comparisons (the median of the trials'
// p99s), not the pooled trials' p99.
func TestOneP99(t *testing.T) {
	skipOnSecondEngine(t)
	a := serialTrialsBackend(t, time.Millisecond)
	b := serialTrialsBackend(t, 2*time.Millisecond)
	r := runTrialsSweep(t, sweepTrialsOpts{requests: 20, levels: "1,2", trials: trials.Options{Repeat: 4, RepeatSet: true},
		args: []string{"a=" + a.URL("/x"), "b=" + b.URL("/x")}})
	sw, rows := r.sw, r.rows
	p99col := slices.Index(rows[0], "p99_ms")
	for _, se := range sw.Series {
		for _, l := range se.Levels {
			want := fmt.Sprintf("%s, c=%d: p99 %.3f ms", se.Label, l.Concurrency, l.P99Ms)
			if l.Repeated == nil || !strings.Contains(r.page, want) {
				t.Errorf("the page has no %q (pooled p99 %.3f)", want, l.Percentiles["99"])
			}
			for _, row := range rows[1:] {
				if row[0] == se.Label && row[1] == strconv.Itoa(l.Concurrency) && (row[p99col] != fmt.Sprintf("%.3f", l.P99Ms) ||
					row[slices.Index(rows[0], "mean_ms")] != fmt.Sprintf("%.3f", l.MeanMs) || row[slices.Index(rows[0], "max_ms")] != fmt.Sprintf("%.3f", l.MaxMs)) {
					t.Errorf("sweep.csv row %q, want the medians p99 %.3f, mean %.3f, max %.3f", row, l.P99Ms, l.MeanMs, l.MaxMs)
				}
			}
		}
	}
	for _, c := range sw.Comparisons {
		for _, se := range sw.Series {
			for _, l := range se.Levels {
				if se.Label != c.Series || l.Concurrency != c.Concurrency {
					continue
				}
				v, ok := map[string]float64{trials.MetricP99Ms: l.P99Ms, trials.MetricMeanMs: l.MeanMs, trials.MetricMaxMs: l.MaxMs,
					trials.MetricP50Ms: l.P50Ms, trials.MetricRequestsPerSecond: l.RequestsPerSecond}[c.Metric]
				if ok && *c.Value != v {
					t.Errorf("comparison %s %g, table %g", c.Metric, *c.Value, v)
				}
			}
		}
	}
}
