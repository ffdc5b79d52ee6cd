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
	"github.com/backbench/backbench/internal/trials"
)

// TestCompareByFactor: compare of a TCP and a Unix saved bench run (with
// trials) prints a verdict without any flag, grouped as "transport: unix
// vs tcp" with TCP the baseline whichever file comes first; so do two
// runs of different backends (bench --label), as "backend: b vs a"; runs
// two factors apart are refused with one line and exit 2.
func TestCompareByFactor(t *testing.T) {
	onceAcrossEngines(t)
	opts := fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelThreaded}, BodyBytes: 5}
	tcp := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", opts)
	unix := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", opts)
	other := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", opts)
	dir := t.TempDir()
	ft := benchFile(t, dir, "tcp.json", "-n", "20", "--repeat", "4", tcp.URL("/x"))
	fu := benchFile(t, dir, "unix.json", "-n", "20", "--repeat", "4", unix.URL("/x"))
	fa := benchFile(t, dir, "a.json", "-n", "20", "--repeat", "4", "--label", "a", tcp.URL("/x"))
	fb := benchFile(t, dir, "b.json", "-n", "20", "--repeat", "4", "--label", "b", other.URL("/x"))
	fbu := benchFile(t, dir, "bu.json", "-n", "20", "--repeat", "4", "--label", "b", unix.URL("/x"))
	fk := benchFile(t, dir, "k.json", "-n", "20", "--repeat", "4", "-k", tcp.URL("/x"))
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
		code, out, errs := runMain(t, context.Background(), append([]string{"compare", "--format", "json"}, tc.files...)...)
		var r document.Comparison
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil || len(r.Comparisons) == 0 || len(r.Differences) == 0 {
			t.Fatalf("compare %v: exit %d %s\n%s", tc.files, code, errs, out)
		}
		for _, c := range r.Comparisons {
			if c.FactorTitle != tc.title || c.BaselineFile != tc.base || c.Series != tc.series || c.Baseline != tc.baseof ||
				c.Verdict == trials.NoVerdict || c.Verdict == "" {
				t.Errorf("compare %v: %+v, want %q against %s with a verdict", tc.files, c, tc.title, tc.base)
			}
		}
		code, out, _ = runMain(t, context.Background(), append([]string{"compare"}, tc.files...)...)
		if code != 0 || !strings.Contains(out, tc.title) || !strings.Contains(out, "Differs:") {
			t.Errorf("compare %v text, exit %d:\n%s", tc.files, code, out)
		}
	}
	code, _, errs := runMain(t, context.Background(), "compare", fa, fbu)
	if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "more than one factor") {
		t.Errorf("compare of runs two factors apart: exit %d, %q: want 2 and one line", code, errs)
	}
	var s map[string]any
	b, _ := os.ReadFile(fa)
	if json.Unmarshal(b, &s) != nil || s["label"] != "a" {
		t.Errorf("bench --label a: the JSON's label is %v", s["label"])
	}
}

// TestCompareSavedBench: bench runs saved before and after a change of
// the backend behind one socket (10 ms, then 20 ms) compare as "slower",
// with the ratio around 0.8; two saved runs of the same backend as "no
// difference"; runs without trials have no interval and no verdict.
func TestCompareSavedBench(t *testing.T) {
	onceAcrossEngines(t)
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
		if c := find(t, r.Comparisons, url, url, 1, trials.MetricRequestsPerSecond); c.Verdict != trials.Same && c.Verdict != trials.Undecided {
			bad = append(bad, fmt.Sprintf("the same backend twice: %s %s, want same or undecided", c.Verdict, c.RatioText()))
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
	onceAcrossEngines(t)
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
