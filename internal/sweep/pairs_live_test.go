package sweep_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/trials"
)

// livePairsOptions are the options of a sweep of 10 requests per level at
// levels, of the series args.
func livePairsOptions(levels []int, args ...string) plan.SweepOptions {
	var cs []string
	for _, c := range levels {
		cs = append(cs, strconv.Itoa(c))
	}
	return sweepDocOptions(10, strings.Join(cs, ","), args...)
}

// livePairs runs the sweep of so with the fewest trials that can give a
// verdict (trials.MinTrialsForVerdict, seed 34) and returns its document
// and text, and the set of its comparisons as "title: series / baseline",
// each checked to be at every level on the five metrics.
func livePairs(t *testing.T, so plan.SweepOptions) (*document.Sweep, string, []string) {
	t.Helper()
	levels, _ := livePairsLevels(so.Levels)
	r := runSweepDoc(t, so, sweepDocTrials(t, trials.MinTrialsForVerdict(), 34))
	if r.sw == nil {
		t.Fatalf("no target answered: %q", r.warnings)
	}
	sw := r.sw
	sweepDocFiles(t, sw)
	if sw.SweepTrials == nil {
		t.Fatal("no trials in sweep.json")
	}
	got := map[string]map[int]int{}
	for _, c := range sw.SweepTrials.Comparisons {
		k := fmt.Sprintf("%s: %s / %s", c.FactorTitle, c.Series, c.Baseline)
		if !strings.HasPrefix(c.FactorTitle, c.Factor+": ") {
			t.Errorf("%s: factor %q", k, c.Factor)
		}
		if got[k] == nil {
			got[k] = map[int]int{}
		}
		got[k][c.Concurrency]++
	}
	var pairs []string
	for k, at := range got {
		pairs = append(pairs, k)
		for _, c := range levels {
			if at[c] != 5 {
				t.Errorf("%s at c=%d: %d metrics, want 5", k, c, at[c])
			}
		}
	}
	slices.Sort(pairs)
	return sw, r.text, pairs
}

// livePairsLevels reads a list of levels (1,2).
func livePairsLevels(spec string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// TestLiveSweepPairsOfLabels replays, on built-in backends, the sweeps
// whose design a sweep infers from its labels, and checks which pairs the
// saved sweep compares (not the verdicts): one FastCGI backend reached
// over TCP (t) and a Unix socket (u) with keep-alive on and off gives
// transport pairs at both modes and keep-alive pairs on both transports,
// none across two factors; one label on both URLs compares the
// transports; FastCGI against HTTP, labelled fcgi and starman (Moscow.pm
// 2008), compares the backends and names the protocol in the title and a
// note.
func TestLiveSweepPairsOfLabels(t *testing.T) {
	sweepDocOnce(t)
	opts := fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelThreaded}, BodyBytes: 5}
	tcp := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", opts)
	unix := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", opts)
	http := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", opts)
	for _, tc := range []struct {
		name    string
		kaModes string
		args    []string
		want    []string
		note    string
	}{
		{
			name:    "t and u over keep-alive modes",
			kaModes: "on,off",
			args:    []string{"t=" + tcp.URL("/x"), "u=" + unix.URL("/x")},
			want: []string{
				"keep-alive: on vs off: t ka / t no-ka",
				"keep-alive: on vs off: u ka / u no-ka",
				"transport: unix vs tcp: u ka / t ka",
				"transport: unix vs tcp: u no-ka / t no-ka",
			},
			note: "labels are taken as names of one backend reached in different ways",
		},
		{
			name: "one label on two URLs",
			args: []string{"ruby=" + tcp.URL("/x"), "ruby=" + unix.URL("/x")},
			want: []string{"transport: unix vs tcp: ruby unix / ruby tcp"},
		},
		{
			name: "FastCGI against HTTP",
			args: []string{"fcgi=" + tcp.URL("/x"), "starman=" + http.URL("/x")},
			want: []string{"backend: starman vs fcgi, over HTTP rather than FastCGI: starman / fcgi"},
			note: "starman differs from fcgi in more than the backend (over HTTP rather than FastCGI)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			so := livePairsOptions([]int{1, 2}, tc.args...)
			so.KeepAliveModes = tc.kaModes
			sw, out, pairs := livePairs(t, so)
			if !slices.Equal(pairs, tc.want) {
				t.Errorf("pairs:\n  %s\nwant:\n  %s", strings.Join(pairs, "\n  "), strings.Join(tc.want, "\n  "))
			}
			for _, c := range sw.SweepTrials.Comparisons {
				if c.Verdict == "" || c.Verdict == trials.NoVerdict {
					t.Errorf("%s %s c=%d %s: no verdict with %d trials a side", c.FactorTitle, c.Series, c.Concurrency, c.Metric, c.Trials)
				}
			}
			for _, n := range sw.SweepTrials.Notes {
				if strings.Contains(n, "not compared") {
					t.Errorf("note: %s", n)
				}
			}
			// The text wraps its notes to fit 100 columns.
			if tc.note != "" && !strings.Contains(strings.Join(strings.Fields(out), " "), tc.note) {
				t.Errorf("no note %q:\n%s", tc.note, out)
			}
		})
	}
}

// TestLiveSweepTLSAndPlain: the 2024 question (TLS in front or not) on
// built-in HTTP backends, one with a self-signed certificate. With
// Insecure (which applies to the https series only) the sweep compares
// "tls: on vs off" with verdicts; without it, every TLS request fails on
// the certificate, and the comparisons have no verdict and say why, in
// the saved sweep, the table and a note. (Insecure with no https target:
// plan's TestSweepOptionsErrors.)
func TestLiveSweepTLSAndPlain(t *testing.T) {
	sweepDocOnce(t)
	cfg, err := fixtures.SelfSignedTLS()
	if err != nil {
		t.Fatal(err)
	}
	tlsSrv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 5, TLS: cfg})
	plain := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 5})
	tlsURL, plainURL := "tls="+tlsSrv.URL("/"), "plain="+plain.URL("/")
	if !strings.Contains(tlsURL, "https://") {
		t.Fatalf("the TLS backend's URL is %s", tlsURL)
	}

	t.Run("insecure", func(t *testing.T) {
		so := livePairsOptions([]int{1}, tlsURL, plainURL)
		so.Load.Insecure, so.Load.KeepAlive = true, true
		sw, _, pairs := livePairs(t, so)
		if want := []string{"tls: on vs off: tls / plain"}; !slices.Equal(pairs, want) {
			t.Errorf("pairs %v, want %v", pairs, want)
		}
		for _, se := range sw.Series {
			if se.Levels[0].Failed != 0 {
				t.Errorf("%s: %d failed", se.Label, se.Levels[0].Failed)
			}
		}
		for _, c := range sw.SweepTrials.Comparisons {
			if c.Verdict == trials.NoVerdict || c.Unanswered != "" {
				t.Errorf("%s: verdict %q, unanswered %q", c.Metric, c.Verdict, c.Unanswered)
			}
		}
	})

	t.Run("certificate not verified", func(t *testing.T) {
		sw, out, pairs := livePairs(t, livePairsOptions([]int{1}, tlsURL, plainURL))
		if want := []string{"tls: on vs off: tls / plain"}; !slices.Equal(pairs, want) {
			t.Errorf("pairs %v, want %v", pairs, want)
		}
		for _, c := range sw.SweepTrials.Comparisons {
			if c.Verdict != trials.NoVerdict || c.Unanswered != "series" || !strings.Contains(c.Why, "certificate does not verify") {
				t.Errorf("%s: verdict %q, unanswered %q, why %q: want no verdict, the certificate named", c.Metric, c.Verdict, c.Unanswered, c.Why)
			}
		}
		if !strings.Contains(out, "–, no answer (100% failed)") || strings.Contains(out, "slower") {
			t.Errorf("the table does not say that tls never answered:\n%s", out)
		}
		found := false
		for _, n := range sw.SweepTrials.Notes {
			found = found || (strings.HasPrefix(n, "tls: every request failed at c=1") && strings.Contains(n, "certificate does not verify"))
			if strings.Contains(n, "cannot give p <") {
				t.Errorf("a note blames the trial count: %s", n)
			}
		}
		if !found {
			t.Errorf("no note says why tls has no verdict: %q", sw.SweepTrials.Notes)
		}
	})
}

// TestLiveSweepBackendPerSeries: backend PIDs and PID files given per
// label (LABEL=PID, LABEL=FILE) sample each series' own backend; a bare
// PID applies to every series. (A label that names no series: plan's
// TestSweepOptionsErrors.)
func TestLiveSweepBackendPerSeries(t *testing.T) {
	sweepDocOnce(t)
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
	so := livePairsOptions([]int{1}, "a="+srv.URL("/x"), "b="+srv.URL("/y"))
	so.BackendPIDs = []string{"a=" + strconv.Itoa(procs[0]), strconv.Itoa(procs[2])}
	so.BackendPIDFiles = []string{"b=" + pidfile}
	r := runSweepDoc(t, so, sweepDocTrials(t, 4, 0))
	sw := r.sw
	sweepDocFiles(t, sw)
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
	for _, c := range sw.SweepTrials.Comparisons {
		metrics[c.Metric] = true
	}
	if !metrics[trials.MetricBackendCPUPerRequest] || !metrics[trials.MetricBackendPSSBytes] {
		t.Errorf("comparisons of sampled series without the backend's metrics: %v", metrics)
	}
}

// TestLiveSweepUnpairedNote: a backend two factors or more from every
// other series (b over HTTP, where backend a is FastCGI over TCP and over
// a Unix socket: the label a on two URLs names a backend) is compared
// with a's closest series as a deployment, the protocol named in the
// title and a note, while a's two transports are compared; only series
// that nothing can pair (two unlabelled URLs two factors apart: one
// backend) are "not compared", with a note that says how they differ.
func TestLiveSweepUnpairedNote(t *testing.T) {
	sweepDocOnce(t)
	tcp := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{BodyBytes: 5})
	unix := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 5})
	web := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 5})
	webUnix := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{BodyBytes: 5})
	r := runSweepDoc(t, livePairsOptions([]int{1}, "a="+tcp.URL("/x"), "a="+unix.URL("/x"), "b="+web.URL("/x")), sweepDocTrials(t, 4, 0))
	sw, out := r.sw, r.text
	sweepDocFiles(t, sw)
	notes := strings.Join(sw.Notes, "\n")
	if !strings.Contains(notes, "b differs from a tcp in more than the backend (over HTTP rather than FastCGI)") || strings.Contains(out, "not compared") {
		t.Errorf("notes %q\n%s", sw.Notes, out)
	}
	transport, backend := 0, 0
	for _, c := range sw.SweepTrials.Comparisons {
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

	r = runSweepDoc(t, livePairsOptions([]int{1}, tcp.URL("/x"), webUnix.URL("/x")), sweepDocTrials(t, 4, 0))
	sw, out = r.sw, r.text
	sweepDocFiles(t, sw)
	notes = strings.Join(sw.Notes, "\n")
	if len(sw.SweepTrials.Comparisons) != 0 || !strings.Contains(notes, "fcgi/tcp differs from every other series in more than one factor (from http/unix in transport tcp vs unix, protocol fcgi vs http)") ||
		!strings.Contains(out, "not compared") {
		t.Errorf("unlabelled, two factors apart: %d comparisons, notes %q", len(sw.SweepTrials.Comparisons), sw.Notes)
	}
}
