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
			if v := find(t, sw.Comparisons, "same", "base", c, trials.MetricRequestsPerSecond); v.Verdict != trials.NoDifference {
				bad = append(bad, fmt.Sprintf("c=%d: two serial 10 ms backends: %s %s, want no difference", c, v.Verdict, v.RatioText()))
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
			if c.Verdict != trials.NoDifference || *c.Ratio != 1 {
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

// TestCompareSavedBench: bench runs saved before and after a change of
// the backend behind one socket (10 ms, then 20 ms) compare as "slower",
// with the ratio around 0.8; two saved runs of the same backend as "no
// difference"; runs without trials have no interval and no verdict.
func TestCompareSavedBench(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(os.TempDir(), fmt.Sprintf("bb-compare-%d.sock", os.Getpid()))
	save := func(name string, args ...string) string {
		code, out, errs := runMain(t, context.Background(), append([]string{"bench", "-q", "--format", "json", "-n", "30"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	url := "fcgi://unix:" + sock + ":/x"
	compare := func(args ...string) document.Comparison {
		t.Helper()
		code, out, errs := runMain(t, context.Background(), append([]string{"compare", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("compare %v: exit %d: %s", args, code, errs)
		}
		var r document.Comparison
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("compare JSON: %v\n%s", err, out)
		}
		return r
	}
	var old1, newer, single string
	withSpeedRetries(t, func() (bad []string) {
		fast := serialFCGI(t, 10*time.Millisecond, sock)
		old1, single = save("old1.json", "--repeat", "5", url), save("single.json", url)
		old2 := save("old2.json", "--repeat", "5", url)
		fast.Close()
		slow := serialFCGI(t, 20*time.Millisecond, sock)
		newer = save("new.json", "--repeat", "5", url)
		slow.Close()
		r := compare(old1, newer)
		c := find(t, r.Comparisons, url, url, 1, trials.MetricRequestsPerSecond)
		// Twice the service time: an effect far above the noise of a
		// busy machine (12.5 ms, a 0.8 ratio, was within it at times).
		if c.Verdict != trials.Slower || c.RatioCI95 == nil || *c.Ratio < 0.4 || *c.Ratio > 0.62 ||
			c.RatioCI95[0] < 0.3 || c.RatioCI95[1] > 0.8 || c.Trials != 5 {
			bad = append(bad, fmt.Sprintf("10 ms then 20 ms: %s %s, want slower around 0.5", c.Verdict, c.RatioText()))
		}
		r = compare(old1, old2)
		if c := find(t, r.Comparisons, url, url, 1, trials.MetricRequestsPerSecond); c.Verdict != trials.NoDifference {
			bad = append(bad, fmt.Sprintf("the same backend twice: %s %s, want no difference", c.Verdict, c.RatioText()))
		}
		return bad
	})
	r := compare(single, newer)
	c := find(t, r.Comparisons, url, url, 1, trials.MetricRequestsPerSecond)
	if c.RatioCI95 != nil || c.Verdict != trials.NoVerdict || !strings.HasPrefix(c.VerdictText(), "–, 1 trial") || !strings.Contains(strings.Join(r.Notes, "\n"), "no interval") {
		t.Errorf("without trials: %+v, notes %q: want no interval, no verdict (\"–, 1 trial\"), and a note", c, r.Notes)
	}
	code, out, _ := runMain(t, context.Background(), "compare", old1, newer)
	if code != 0 || !strings.Contains(out, "slower") || !strings.Contains(out, "req/s") || !strings.Contains(out, "p99 ms") {
		t.Errorf("compare text, exit %d:\n%s", code, out)
	}
}

// TestCompareShapes: files of other targets or load shapes compare
// without --force; what differs is shown at the top (and in the JSON).
func TestCompareShapes(t *testing.T) {
	a, b := serialFCGI(t, time.Millisecond, ""), serialFCGI(t, time.Millisecond, "")
	dir := t.TempDir()
	save := func(name string, args ...string) string {
		code, out, errs := runMain(t, context.Background(), append([]string{"bench", "-q", "--format", "json", "--repeat", "4"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(out), 0o644)
		return p
	}
	fa, fb, fc := save("a.json", "-n", "10", a.URL("/x")), save("b.json", "-n", "10", b.URL("/x")), save("c.json", "-n", "12", a.URL("/x"))
	for other, want := range map[string]string{fb: "targets", fc: "10 and 12 requests"} {
		code, out, errs := runMain(t, context.Background(), "compare", fa, other)
		if code != 0 || !strings.Contains(out, "Differs:") || !strings.Contains(out, want) || !strings.Contains(out, "req/s") {
			t.Errorf("compare of other shapes: exit %d %s\n%s: want the difference (%s) shown and the comparisons", code, errs, out, want)
		}
		code, out, errs = runMain(t, context.Background(), "compare", "--format", "json", other, fa)
		var r document.Comparison
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil || len(r.Differences) == 0 || len(r.Comparisons) == 0 {
			t.Errorf("compare JSON of other shapes: exit %d %s\n%s", code, errs, out)
		}
	}
}

// TestPrecisionStops: --precision 3% on a steady backend stops before
// --max-repeat, with the interval inside ±3%.
func TestPrecisionStops(t *testing.T) {
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
	want := c.Verdict + " (50% failed)"
	if c.ShortTrials > 0 {
		want += trials.ShortMark // trials of 10 requests: too short to trust
	}
	if c.VerdictText() != want || !strings.Contains(out, want) {
		t.Errorf("verdict text %q, want %q in the table:\n%s", c.VerdictText(), want, out)
	}
}
