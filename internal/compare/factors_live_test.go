package compare_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/trials"
)

// TestLiveCompareByFactor: the comparison of a TCP and a Unix saved bench
// run (with trials) gives a verdict without any option, grouped as
// "transport: unix vs tcp" with TCP the baseline whichever file comes
// first; so do two runs of different backends (labelled), as "backend: b
// vs a"; runs two factors apart are refused with one line. (Its exit
// status: cmd/backbench's TestCompareRefusedExit.)
func TestLiveCompareByFactor(t *testing.T) {
	liveOnce(t)
	opts := fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelThreaded}, BodyBytes: 5}
	tcp := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", opts)
	unix := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", opts)
	other := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", opts)
	dir := t.TempDir()
	bench := func(name, url, label string, change func(*plan.Options)) string {
		return liveBenchFile(t, dir, name, liveBench(url, 20, change), 4, label)
	}
	ft := bench("tcp.json", tcp.URL("/x"), "", nil)
	fu := bench("unix.json", unix.URL("/x"), "", nil)
	fa := bench("a.json", tcp.URL("/x"), "a", nil)
	fb := bench("b.json", other.URL("/x"), "b", nil)
	fbu := bench("bu.json", unix.URL("/x"), "b", nil)
	fk := bench("k.json", tcp.URL("/x"), "", func(o *plan.Options) { o.KeepAlive = true })
	for _, tc := range []struct {
		files          []string
		title, base    string
		series, baseof string
	}{
		{[]string{ft, fu}, "transport: unix vs tcp", ft, unix.URL("/x"), tcp.URL("/x")},
		{[]string{fu, ft}, "transport: unix vs tcp", ft, unix.URL("/x"), tcp.URL("/x")},
		{[]string{fa, fb}, "backend: b vs a", fa, "b", "a"},
		{[]string{fk, ft}, "keep-alive: on vs off", ft, tcp.URL("/x"), tcp.URL("/x")},
	} {
		r := liveMustCompare(t, "", tc.files...)
		if len(r.Comparisons) == 0 || len(r.Differences) == 0 {
			t.Fatalf("compare %v: %d comparisons, differences %q", tc.files, len(r.Comparisons), r.Differences)
		}
		for _, c := range r.Comparisons {
			if c.FactorTitle != tc.title || c.BaselineFile != tc.base || c.Series != tc.series || c.Baseline != tc.baseof ||
				c.Verdict == trials.NoVerdict || c.Verdict == "" {
				t.Errorf("compare %v: %+v, want %q against %s with a verdict", tc.files, c, tc.title, tc.base)
			}
		}
		if out := liveText(t, r, report.DefaultWidth); !strings.Contains(out, tc.title) || !strings.Contains(out, "Differs:") {
			t.Errorf("compare %v text:\n%s", tc.files, out)
		}
	}
	if _, err := liveCompare(t, "", fa, fbu); err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "more than one factor") {
		t.Errorf("compare of runs two factors apart: %v: want one line", err)
	}
	var s map[string]any
	b, _ := os.ReadFile(fa)
	if json.Unmarshal(b, &s) != nil || s["label"] != "a" {
		t.Errorf("a run labelled a: the JSON's label is %v", s["label"])
	}
}

// TestLiveCompareSavedBench: bench runs saved before and after a change
// of the backend behind one socket (10 ms, then 20 ms) compare as
// "slower", with the ratio around 0.5; two saved runs of the same backend
// as "no difference"; runs without trials have no interval and no
// verdict.
func TestLiveCompareSavedBench(t *testing.T) {
	liveOnce(t)
	dir := t.TempDir()
	sock := filepath.Join(os.TempDir(), fmt.Sprintf("bb-livecompare-%d.sock", os.Getpid()))
	url := "fcgi://unix:" + sock + ":/x"
	save := func(name string, repeat int) string {
		return liveBenchFile(t, dir, name, liveBench(url, 30, nil), repeat, "")
	}
	var old1, newer, single string
	liveSpeedRetries(t, func() (bad []string) {
		fast := liveSerialFCGI(t, 10*time.Millisecond, sock)
		old1, single = save("old1.json", 5), save("single.json", 0)
		old2 := save("old2.json", 5)
		fast.Close()
		slow := liveSerialFCGI(t, 20*time.Millisecond, sock)
		newer = save("new.json", 5)
		slow.Close()
		r := liveMustCompare(t, "", old1, newer)
		c := liveFind(t, r.Comparisons, url, url, 1, trials.MetricRequestsPerSecond)
		// Twice the service time: an effect far above the noise of a
		// busy machine (12.5 ms, a 0.8 ratio, was within it at times).
		if c.Verdict != trials.Slower || c.RatioCI95 == nil || *c.Ratio < 0.4 || *c.Ratio > 0.62 ||
			c.RatioCI95[0] < 0.3 || c.RatioCI95[1] > 0.8 || c.Trials != 5 {
			bad = append(bad, fmt.Sprintf("10 ms then 20 ms: %s %s, want slower around 0.5", c.Verdict, c.RatioText()))
		}
		r = liveMustCompare(t, "", old1, old2)
		if c := liveFind(t, r.Comparisons, url, url, 1, trials.MetricRequestsPerSecond); c.Verdict != trials.Same && c.Verdict != trials.Undecided {
			bad = append(bad, fmt.Sprintf("the same backend twice: %s %s, want same or undecided", c.Verdict, c.RatioText()))
		}
		return bad
	})
	r := liveMustCompare(t, "", single, newer)
	c := liveFind(t, r.Comparisons, url, url, 1, trials.MetricRequestsPerSecond)
	if c.RatioCI95 != nil || c.Verdict != trials.NoVerdict || !strings.HasPrefix(c.VerdictText(), "–, 1 trial") || !strings.Contains(strings.Join(r.Notes, "\n"), "no interval") {
		t.Errorf("without trials: %+v, notes %q: want no interval, no verdict (\"–, 1 trial\"), and a note", c, r.Notes)
	}
	if out := liveText(t, liveMustCompare(t, "", old1, newer), report.DefaultWidth); !strings.Contains(out, "slower") || !strings.Contains(out, "req/s") || !strings.Contains(out, "p99 ms") {
		t.Errorf("compare text:\n%s", out)
	}
}

// TestLiveCompareShapes: files of other targets or load shapes compare
// without forcing; what differs is shown at the top (and in the saved
// comparison).
func TestLiveCompareShapes(t *testing.T) {
	liveOnce(t)
	a, b := liveSerialFCGI(t, time.Millisecond, ""), liveSerialFCGI(t, time.Millisecond, "")
	dir := t.TempDir()
	save := func(name string, n int64, url string) string {
		return liveBenchFile(t, dir, name, liveBench(url, n, nil), 4, "")
	}
	fa, fb, fc := save("a.json", 10, a.URL("/x")), save("b.json", 10, b.URL("/x")), save("c.json", 12, a.URL("/x"))
	for other, want := range map[string]string{fb: "targets", fc: "10 and 12 requests"} {
		out := liveText(t, liveMustCompare(t, "", fa, other), report.DefaultWidth)
		if !strings.Contains(out, "Differs:") || !strings.Contains(out, want) || !strings.Contains(out, "req/s") {
			t.Errorf("compare of other shapes:\n%s: want the difference (%s) shown and the comparisons", out, want)
		}
		if r := liveMustCompare(t, "", other, fa); len(r.Differences) == 0 || len(r.Comparisons) == 0 {
			t.Errorf("compare of other shapes, saved: differences %q, %d comparisons", r.Differences, len(r.Comparisons))
		}
	}
}
