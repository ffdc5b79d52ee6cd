package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/trials"
)

// TestStudyPairs replays the 2008 study on built-in backends: FastCGI
// serial and evented, each on TCP and on a Unix socket (one label per
// backend), keep-alive on and off, one sweep with --repeat 5 over the 8
// series at 2 small levels. The text table and sweep.json hold transport
// verdicts at each keep-alive mode, keep-alive verdicts on each transport
// and backend verdicts at each of the four settings, and no other pair:
// which pairs exist is checked, not which verdict they got.
func TestStudyPairs(t *testing.T) {
	var args []string
	for _, model := range []string{fixtures.ModelSerial, fixtures.ModelEvented} {
		opts := fixtures.Options{Model: fixtures.Model{Kind: model}, BodyBytes: 5}
		for _, network := range []string{"tcp", "unix"} {
			s := fixtures.StartTB(t, fixtures.ProtoFCGI, network, opts)
			args = append(args, model+"="+s.URL("/x"))
		}
	}
	code, out, errs, dir := sweepOut(t, append([]string{"-q", "-n", "20", "-c", "1,2", "--repeat", "5", "--seed", "8",
		"--keepalive-modes", "on,off"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sw, _ := readSweep(t, dir)
	if len(sw.Series) != 8 || sw.Series[0].Label != "serial tcp ka" || sw.Series[0].Backend != "serial" {
		t.Fatalf("series %+v", sw.Series)
	}
	type pair struct{ factor, series, baseline string }
	got := map[pair]map[int]int{}
	for _, c := range sw.Comparisons {
		p := pair{c.Factor, c.Series, c.Baseline}
		if got[p] == nil {
			got[p] = map[int]int{}
		}
		got[p][c.Concurrency]++
		if c.Verdict == "" || c.Verdict == trials.NoVerdict {
			t.Errorf("%+v: no verdict with 5 trials a side", c)
		}
	}
	want := map[pair]bool{}
	for _, b := range []string{"serial", "evented"} {
		for _, ka := range []string{"ka", "no-ka"} {
			want[pair{trials.FactorTransport, b + " unix " + ka, b + " tcp " + ka}] = true
		}
		for _, tr := range []string{"tcp", "unix"} {
			want[pair{trials.FactorKeepAlive, b + " " + tr + " ka", b + " " + tr + " no-ka"}] = true
		}
	}
	for _, tr := range []string{"tcp", "unix"} {
		for _, ka := range []string{"ka", "no-ka"} {
			want[pair{trials.FactorBackend, "evented " + tr + " " + ka, "serial " + tr + " " + ka}] = true
		}
	}
	for p, levels := range got {
		if !want[p] {
			t.Errorf("unexpected pair %+v", p)
		}
		for _, c := range []int{1, 2} {
			if levels[c] != 5 {
				t.Errorf("%+v at c=%d: %d metrics, want 5 (req/s, mean, p50, p99, max)", p, c, levels[c])
			}
		}
	}
	for p := range want {
		if got[p] == nil {
			t.Errorf("missing pair %+v", p)
		}
	}
	for _, h := range []string{"transport: unix vs tcp", "keep-alive: on vs off", "backend: evented vs serial"} {
		if !strings.Contains(out, h) {
			t.Errorf("the table has no group %q:\n%s", h, out)
		}
	}
}

// TestCompareByFactor: compare of a TCP and a Unix saved bench run (with
// trials) prints a verdict without any flag, grouped as "transport: unix
// vs tcp" with TCP the baseline whichever file comes first; so do two
// runs of different backends (bench --label), as "backend: b vs a"; runs
// two factors apart are refused with one line and exit 2.
func TestCompareByFactor(t *testing.T) {
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

// TestDesignJudgedFirst: --repeat 3 (bench and sweep) gets one line on
// stderr saying that 3 trials a side cannot reach p < 0.05 and that 4
// can, written before the backend answered any request; --repeat 4 gets
// none.
func TestDesignJudgedFirst(t *testing.T) {
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

// TestSweepBackendPerSeries: --backend-pid LABEL=PID and --backend-pidfile
// LABEL=FILE sample each series' own backend; a bare PID applies to every
// series, as before; a label that names no series is a usage error.
func TestSweepBackendPerSeries(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 5})
	var procs []int
	for range 3 {
		cmd := exec.Command("sleep", "30")
		if err := cmd.Start(); err != nil {
			t.Skip("no sleep to stand for a backend:", err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		procs = append(procs, cmd.Process.Pid)
	}
	pidfile := filepath.Join(t.TempDir(), "b.pid")
	os.WriteFile(pidfile, []byte(strconv.Itoa(procs[1])+"\n"), 0o644)
	code, _, errs, dir := sweepOut(t, "-q", "-n", "10", "-c", "1", "--repeat", "4",
		"--backend-pid", "a="+strconv.Itoa(procs[0]), "--backend-pidfile", "b="+pidfile, "--backend-pid", strconv.Itoa(procs[2]),
		"a="+srv.URL("/x"), "b="+srv.URL("/y"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sw, _ := readSweep(t, dir)
	want := map[string][]int{"a": {procs[2], procs[0]}, "b": {procs[2], procs[1]}}
	for _, se := range sw.Series {
		for _, l := range se.Levels {
			if l.Backend == nil || !slices.Equal(l.Backend.PIDs, want[se.Label]) {
				t.Errorf("%s: backend %+v, want PIDs %v", se.Label, l.Backend, want[se.Label])
			}
		}
	}
	// Sampled on both sides: verdicts on the backend's CPU per request and
	// memory too.
	metrics := map[string]bool{}
	for _, c := range sw.Comparisons {
		metrics[c.Metric] = true
	}
	if !metrics[trials.MetricBackendCPUPerRequest] || !metrics[trials.MetricBackendPSSBytes] {
		t.Errorf("comparisons of sampled series without the backend's metrics: %v", metrics)
	}
	code, _, errs, _ = sweepOut(t, "-q", "-n", "10", "-c", "1", "--backend-pid", "c="+strconv.Itoa(procs[0]), "a="+srv.URL("/x"))
	if code != exitUsage || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, `"c"`) {
		t.Errorf("unknown label: exit %d, %q", code, errs)
	}
}

// TestSweepUnpairedNote: a backend two factors or more from every other
// series (b over HTTP, where backend a is FastCGI over TCP and over a
// Unix socket: the label a on two URLs names a backend) is compared with
// a's closest series as a deployment, the protocol named in the title and
// a note, while a's two transports are compared; only series that
// nothing can pair (two unlabelled URLs two factors apart: one backend)
// are "not compared", with a note that says how they differ.
func TestSweepUnpairedNote(t *testing.T) {
	tcp := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{BodyBytes: 5})
	unix := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 5})
	web := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 5})
	webUnix := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{BodyBytes: 5})
	code, out, errs, dir := sweepOut(t, "-q", "-n", "10", "-c", "1", "--repeat", "4", "a="+tcp.URL("/x"), "a="+unix.URL("/x"), "b="+web.URL("/x"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sw, _ := readSweep(t, dir)
	notes := strings.Join(sw.Notes, "\n")
	if !strings.Contains(notes, "b differs from a tcp in more than the backend (over HTTP rather than FastCGI)") || strings.Contains(out, "not compared") {
		t.Errorf("notes %q\n%s", sw.Notes, out)
	}
	transport, backend := 0, 0
	for _, c := range sw.Comparisons {
		switch c.Factor {
		case trials.FactorTransport:
			transport++
		case trials.FactorBackend:
			backend++
			if c.Series != "b" || c.Baseline != "a tcp" || c.FactorTitle != "backend: b vs a, over HTTP rather than FastCGI" {
				t.Errorf("backend pair %+v", c)
			}
		default:
			t.Errorf("pair %+v", c)
		}
	}
	if transport != 5 || backend != 5 {
		t.Errorf("%d transport and %d backend comparisons, want 5 each (one pair, five metrics)", transport, backend)
	}

	code, out, errs, dir = sweepOut(t, "-q", "-n", "10", "-c", "1", "--repeat", "4", tcp.URL("/x"), webUnix.URL("/x"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sw, _ = readSweep(t, dir)
	notes = strings.Join(sw.Notes, "\n")
	if len(sw.Comparisons) != 0 || !strings.Contains(notes, "fcgi/tcp differs from every other series in more than one factor (from http/unix in transport tcp vs unix, protocol fcgi vs http)") ||
		!strings.Contains(out, "not compared") {
		t.Errorf("unlabelled, two factors apart: %d comparisons, notes %q", len(sw.Comparisons), sw.Notes)
	}
}
