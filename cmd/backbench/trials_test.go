package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/trials"
)

// serialFCGI starts a built-in serial FastCGI backend of the given service
// time on a Unix socket at path ("" for a fresh one).
func serialFCGI(t *testing.T, delay time.Duration, path string) *fixtures.Server {
	t.Helper()
	opts := fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: delay, BodyBytes: 5}
	if path == "" {
		return fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", opts)
	}
	s, err := fixtures.Start(fixtures.ProtoFCGI, "unix", path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// find returns the comparison of series against baseline at level c for
// metric, or fails.
func find(t *testing.T, cs []trials.Comparison, series, baseline string, c int, metric string) trials.Comparison {
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
	onceAcrossEngines(t)
	a := serialFCGI(t, 10*time.Millisecond, "")
	slow := serialFCGI(t, 12500*time.Microsecond, "")
	same := serialFCGI(t, 10*time.Millisecond, "")
	withSpeedRetries(t, func() (bad []string) {
		code, out, errs, dir := sweepOut(t, "-q", "-n", "30", "-c", "1,3", "--repeat", "6", "--seed", "17",
			"base="+a.URL("/x"), "slow="+slow.URL("/x"), "same="+same.URL("/x"))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		sw, rows := readSweep(t, dir)
		if sw.SweepTrials == nil || sw.Seed != 17 || sw.Baseline != "base" || sw.Repeat != 6 {
			t.Fatalf("sweep.json trials: %+v", sw.SweepTrials)
		}
		if !strings.Contains(out, "--seed 17") || !strings.Contains(out, "vs base") || !strings.Contains(out, "±") {
			t.Errorf("the text has no seed, no verdict column or no ±:\n%s", out)
		}
		for _, c := range []int{1, 3} {
			rps := find(t, sw.Comparisons, "slow", "base", c, trials.MetricRequestsPerSecond)
			if rps.Verdict != trials.Slower || rps.RatioCI95 == nil || *rps.Ratio < 0.74 || *rps.Ratio > 0.86 ||
				rps.RatioCI95[0] < 0.65 || rps.RatioCI95[1] > 0.92 {
				bad = append(bad, fmt.Sprintf("c=%d: slow against base: %s %s, want slower around 0.8", c, rps.Verdict, rps.RatioText()))
			}
			if p99 := find(t, sw.Comparisons, "slow", "base", c, trials.MetricP99Ms); p99.RatioCI95 == nil {
				t.Errorf("c=%d: p99 comparison without interval: %+v", c, p99)
			}
			if v := find(t, sw.Comparisons, "same", "base", c, trials.MetricRequestsPerSecond); v.Verdict != trials.Same && v.Verdict != trials.Undecided {
				bad = append(bad, fmt.Sprintf("c=%d: two serial 10 ms backends: %s %s, want same or undecided", c, v.Verdict, v.RatioText()))
			}
		}
		checkRounds(t, &sw)
		// compare reads sweep.json: against itself, every series and level
		// matches and nothing differs (5 metrics: req/s, mean, p50, p99,
		// max; the backend was not sampled).
		f := filepath.Join(dir, "sweep.json")
		code, out, errs = runMain(t, context.Background(), "compare", "--format", "json", f, f)
		var cr document.Comparison
		if err := json.Unmarshal([]byte(out), &cr); code != 0 || err != nil || len(cr.Comparisons) != 3*2*5 {
			t.Fatalf("compare of sweep.json with itself: exit %d %s %v, %d comparisons", code, errs, err, len(cr.Comparisons))
		}
		for _, c := range cr.Comparisons {
			if (c.Verdict != trials.Same && c.Verdict != trials.Undecided) || *c.Ratio != 1 {
				t.Errorf("sweep.json against itself: %+v", c)
			}
		}
		// sweep.csv: the trials and the intervals of every row.
		n := len(report.SweepCSVHeader)
		for _, r := range rows[1:] {
			if r[n-5] != "6" || r[n-4] == "" || r[n-1] == "" {
				t.Errorf("sweep.csv row without trials or intervals: %q", r)
			}
		}
		return bad
	})
}

// checkRounds checks in the trials' start times that at every level trial
// k of every series ran before trial k+1 of any, and that the series did
// not always run in the same order.
func checkRounds(t *testing.T, sw *report.Sweep) {
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

// TestPrecisionStops: --precision 3% on a steady backend stops before
// --max-repeat, with the interval inside ±3%.
func TestPrecisionStops(t *testing.T) {
	onceAcrossEngines(t)
	// A sleeping serial backend: the client's own delays on a shared
	// machine weigh least against its 20 ms.
	srv := serialFCGI(t, 20*time.Millisecond, "")
	withSpeedRetries(t, func() (bad []string) {
		s := benchJSON(t, "-n", "20", "--precision", "3%", srv.URL("/x"))
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

// TestTrialsBadInput: bad trial flags and files that are not results get
// one line on stderr and exit status 2, before any run.
func TestTrialsBadInput(t *testing.T) {
	dir := t.TempDir()
	notResult := filepath.Join(dir, "x.json")
	os.WriteFile(notResult, []byte(`{"hello": "world"}`), 0o644)
	notJSON := filepath.Join(dir, "y.json")
	os.WriteFile(notJSON, []byte("Requests per second: 1\n"), 0o644)
	u := "fcgi://127.0.0.1:1/x"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--repeat", "0", u}, "--repeat 0"},
		{[]string{"sweep", "-c", "1", "--repeat", "0", u}, "--repeat 0"},
		{[]string{"bench", "--precision", "150%", u}, "--precision"},
		{[]string{"bench", "--precision", "2", u}, "--precision"},
		{[]string{"bench", "--precision", "3%", "--max-repeat", "200", u}, "--max-repeat"},
		{[]string{"bench", "--max-repeat", "9", u}, "--max-repeat"},
		{[]string{"bench", "--repeat", "3", "--noise", "x", u}, "--noise"},
		{[]string{"bench", "--repeat", "3", "-g", filepath.Join(dir, "g"), u}, "-g"},
		{[]string{"sweep", "-c", "1", "--repeat", "3", "--baseline", "nope", "a=" + u}, "--baseline"},
		{[]string{"compare", notResult, notResult}, "not a bench or sweep result"},
		{[]string{"compare", notJSON, notJSON}, "not a bench or sweep result"},
		{[]string{"compare", filepath.Join(dir, "missing.json"), notResult}, "missing.json"},
		{[]string{"compare", notResult}, "two files"},
		{[]string{"compare", "--noise", "150%", notResult, notResult}, "--noise"},
	}
	for _, c := range cases {
		code, _, errs := runMain(t, context.Background(), c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q: want 2 and one line with %q", c.args, code, errs, c.want)
		}
	}
}

// TestVerdictCarriesFailures: a series whose every other request fails at
// once looks faster, and its verdict says how many failed, in the table
// and in sweep.json.
func TestVerdictCarriesFailures(t *testing.T) {
	onceAcrossEngines(t)
	ok := serialFCGI(t, 5*time.Millisecond, "")
	broken := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial},
		Delay: 5 * time.Millisecond, Fault: "garbage", FaultEvery: 2})
	code, out, errs, dir := sweepOut(t, "-q", "-n", "10", "-c", "1", "--repeat", "4", "--warmup", "0",
		"ok="+ok.URL("/x"), "broken="+broken.URL("/x"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sw, _ := readSweep(t, dir)
	c := find(t, sw.Comparisons, "broken", "ok", 1, trials.MetricRequestsPerSecond)
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
	if c.VerdictText() != want || !strings.Contains(out, want) {
		t.Errorf("verdict text %q, want %q in the table:\n%s", c.VerdictText(), want, out)
	}
}

// TestDesignJudgedFirst: --repeat 3 (bench and sweep) gets one line on
// stderr saying that 3 trials a side cannot reach p < 0.05 and that 4
// can, written before the backend answered any request; --repeat 4 gets
// none.
func TestDesignJudgedFirst(t *testing.T) {
	onceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 5})
	for _, args := range [][]string{
		{"bench", "-q", "-n", "5", "--repeat", "3", srv.URL("/x")},
		{"sweep", "-q", "--out", t.TempDir(), "-n", "5", "-c", "1", "--repeat", "3", srv.URL("/x")},
	} {
		before := srv.Requests()
		errw := &firstWrite{requests: srv.Requests}
		var out bytes.Buffer
		code := Main(context.Background(), nil, args, &out, errw)
		lines := strings.Split(strings.TrimSpace(errw.buf.String()), "\n")
		if code != 0 || errw.at != before || srv.Requests() == before || len(lines) != 1 ||
			!strings.Contains(lines[0], "3 trials a side cannot give p < 0.05") || !strings.Contains(lines[0], "--repeat 4") {
			t.Errorf("%v: exit %d, %d requests before the first line of stderr (want 0), stderr:\n%s",
				args[0], code, errw.at-before, errw.buf.String())
		}
		args = slices.Clone(args)
		args[slices.Index(args, "3")] = "4"
		code, _, errs := runMain(t, context.Background(), args...)
		if code != 0 || strings.Contains(errs, "cannot give") {
			t.Errorf("%v --repeat 4: exit %d, stderr %q", args[0], code, errs)
		}
	}
	// An unreachable target: the line comes before the error.
	code, _, errs := runMain(t, context.Background(), "bench", "-q", "-n", "5", "--repeat", "3", "fcgi://unix:"+filepath.Join(t.TempDir(), "none.sock")+":/x")
	if code == 0 || !strings.HasPrefix(errs, "backbench: warning: 3 trials a side") {
		t.Errorf("unreachable target: exit %d, stderr %q", code, errs)
	}
}

// TestShortTrialNote: trials of a few milliseconds (-n 10 on a fast
// backend) carry a note naming -n and -t, in bench's result and on
// stderr, in a sweep's notes, and as the marker of every verdict drawn
// from them.
func TestShortTrialNote(t *testing.T) {
	onceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 5})
	code, out, errs := runMain(t, context.Background(), "bench", "--format", "json", "-n", "10", "--repeat", "4", srv.URL("/x"))
	has := func(s string) bool {
		return strings.Contains(s, "too short to trust") && strings.Contains(s, "-n") && strings.Contains(s, "-t")
	}
	if code != 0 || !has(out) || !has(errs) {
		t.Errorf("bench of short trials: exit %d, no note naming -n and -t:\n%s\n%s", code, out, errs)
	}
	code, out, errs, dir := sweepOut(t, "-q", "-n", "10", "-c", "1", "--repeat", "4", "a="+srv.URL("/x"), "b="+srv.URL("/y"))
	if code != 0 {
		t.Fatalf("sweep: exit %d %s", code, errs)
	}
	sw, _ := readSweep(t, dir)
	if !has(strings.Join(sw.Notes, "\n")) || !has(out) || !strings.Contains(out, trials.ShortMark+"\n") {
		t.Errorf("sweep of short trials: notes %q\n%s", sw.Notes, out)
	}
	for _, c := range sw.Comparisons {
		if c.ShortTrials != 8 {
			t.Errorf("%+v: want 8 short trials", c)
		}
	}
}

// TestOneP99: with trials, the page's p99 of every series and level is
// the one of the table, CSV and comparisons (the median of the trials'
// p99s), not the pooled trials' p99.
func TestOneP99(t *testing.T) {
	onceAcrossEngines(t)
	a := serialFCGI(t, time.Millisecond, "")
	b := serialFCGI(t, 2*time.Millisecond, "")
	code, _, errs, dir := sweepOut(t, "-q", "-n", "20", "-c", "1,2", "--repeat", "4", "a="+a.URL("/x"), "b="+b.URL("/x"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sw, rows := readSweep(t, dir)
	page, err := os.ReadFile(filepath.Join(dir, "sweep.html"))
	if err != nil {
		t.Fatal(err)
	}
	p99col := slices.Index(rows[0], "p99_ms")
	for _, se := range sw.Series {
		for _, l := range se.Levels {
			want := fmt.Sprintf("%s, c=%d: p99 %.3f ms", se.Label, l.Concurrency, l.P99Ms)
			if l.Repeated == nil || !strings.Contains(string(page), want) {
				t.Errorf("the page has no %q (pooled p99 %.3f)", want, l.Percentiles["99"])
			}
			for _, r := range rows[1:] {
				if r[0] == se.Label && r[1] == strconv.Itoa(l.Concurrency) && (r[p99col] != fmt.Sprintf("%.3f", l.P99Ms) ||
					r[slices.Index(rows[0], "mean_ms")] != fmt.Sprintf("%.3f", l.MeanMs) || r[slices.Index(rows[0], "max_ms")] != fmt.Sprintf("%.3f", l.MaxMs)) {
					t.Errorf("sweep.csv row %q, want the medians p99 %.3f, mean %.3f, max %.3f", r, l.P99Ms, l.MeanMs, l.MaxMs)
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

// firstWrite records, at its first write, the requests a backend had
// answered: what was done before the line was written.
type firstWrite struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	at       int64
	requests func() int64
}

func (w *firstWrite) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() == 0 {
		w.at = w.requests()
	}
	return w.buf.Write(b)
}
