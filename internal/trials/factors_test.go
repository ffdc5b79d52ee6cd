package trials

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// study is the 2 backends × TCP/Unix × keep-alive design.
func study() []Factors {
	var fs []Factors
	for _, backend := range []string{"serial", "evented"} {
		for _, tr := range []string{"tcp", "unix"} {
			for _, ka := range []bool{true, false} {
				fs = append(fs, Factors{Protocol: "fcgi", Transport: tr, KeepAlive: ka, Upstreams: 1, Backend: backend})
			}
		}
	}
	return fs
}

// TestPairsOfStudy: the factor pairing of a 3-factor study yields exactly
// the one-factor pairs, 4 per factor, each with the usual setting as its
// baseline (TCP, keep-alive off, the first backend).
func TestPairsOfStudy(t *testing.T) {
	fs := study()
	pairs, unpaired := Pairs(fs, "")
	if len(unpaired) != 0 {
		t.Errorf("unpaired %v", unpaired)
	}
	var got []string
	per := map[string]int{}
	for _, p := range pairs {
		if d := Differences(fs[p.Series], fs[p.Baseline]); len(d) != 1 || d[0] != p.Factor {
			t.Errorf("pair %+v differs in %v", p, d)
		}
		per[p.Factor]++
		got = append(got, p.Title(fs)+" "+fmt.Sprint(fs[p.Baseline]))
	}
	if len(pairs) != 12 || per[FactorTransport] != 4 || per[FactorKeepAlive] != 4 || per[FactorBackend] != 4 {
		t.Fatalf("%d pairs, per factor %v: want 12, 4 each", len(pairs), per)
	}
	sort.Strings(got)
	for _, p := range pairs {
		b := fs[p.Baseline]
		switch p.Factor {
		case FactorTransport:
			if b.Transport != "tcp" || p.Title(fs) != "transport: unix vs tcp" {
				t.Errorf("transport pair %s", p.Title(fs))
			}
		case FactorKeepAlive:
			if b.KeepAlive || p.Title(fs) != "keep-alive: on vs off" {
				t.Errorf("keep-alive pair %s", p.Title(fs))
			}
		case FactorBackend:
			if b.Backend != "serial" || p.Title(fs) != "backend: evented vs serial" {
				t.Errorf("backend pair %s", p.Title(fs))
			}
		}
	}
	// Groups come in FactorOrder.
	for i := 1; i < len(pairs); i++ {
		if order(pairs[i].Factor) < order(pairs[i-1].Factor) {
			t.Errorf("pairs not grouped by factor: %v", pairs)
		}
	}
	// --baseline evented turns the backend pairs round.
	pairs, _ = Pairs(fs, "evented")
	for _, p := range pairs {
		if p.Factor == FactorBackend && fs[p.Baseline].Backend != "evented" {
			t.Errorf("with baseline evented: %s", p.Title(fs))
		}
	}
}

func order(f string) int {
	for i, o := range FactorOrder {
		if o == f {
			return i
		}
	}
	return -1
}

// TestPairsThreeBackends: every backend against the first (or the one
// named), never against another; two series differing in two factors are
// said unpaired rather than compared.
func TestPairsThreeBackends(t *testing.T) {
	fs := []Factors{{Transport: "tcp", Backend: "a"}, {Transport: "tcp", Backend: "b"}, {Transport: "tcp", Backend: "c"}}
	pairs, _ := Pairs(fs, "")
	if len(pairs) != 2 || pairs[0].Baseline != 0 || pairs[1].Baseline != 0 {
		t.Errorf("three backends: %+v, want b and c against a", pairs)
	}
	pairs, _ = Pairs(fs, "c")
	if len(pairs) != 2 || pairs[0].Baseline != 2 || pairs[1].Baseline != 2 {
		t.Errorf("three backends, baseline c: %+v", pairs)
	}
	// a on two targets names a backend; b, over TLS, is two factors
	// from a's Unix series and three from its TCP one: it is compared with
	// the closest on the backend, TLS named; nothing is left unpaired.
	fs = []Factors{{Transport: "tcp", Backend: "a"}, {Transport: "unix", Backend: "a"}, {Transport: "unix", TLS: true, Backend: "b"}}
	pairs, unpaired := Pairs(fs, "")
	if len(unpaired) != 0 || len(pairs) != 2 || pairs[0].Factor != FactorTransport || pairs[1].Series != 2 || pairs[1].Baseline != 1 {
		t.Fatalf("pairs %+v unpaired %v", pairs, unpaired)
	}
	if got := pairs[len(pairs)-1].Title(fs); got != "backend: b vs a, over TLS rather than plain" {
		t.Errorf("title %q", got)
	}
	if d := DescribeDifferences(fs[2], fs[0]); d != "transport unix vs tcp, tls on vs off, backend b vs a" {
		t.Errorf("differences %q", d)
	}
}

// TestMatchSeries: a Unix run against a TCP run pairs by transport with
// TCP as the baseline whichever file came first; runs of two factors
// apart match nothing, and say how they differ.
func TestMatchSeries(t *testing.T) {
	tcp, unix := Factors{Transport: "tcp"}, Factors{Transport: "unix"}
	ms, _ := MatchSeries("x", tcp, []string{"y"}, []Factors{unix}, false)
	if len(ms) != 1 || ms[0].Factor != FactorTransport || !ms[0].Swap || ms[0].Title != "transport: unix vs tcp" {
		t.Errorf("tcp (new) against unix (old): %+v", ms)
	}
	ms, _ = MatchSeries("x", unix, []string{"y"}, []Factors{tcp}, false)
	if len(ms) != 1 || ms[0].Swap || ms[0].Title != "transport: unix vs tcp" {
		t.Errorf("unix (new) against tcp (old): %+v", ms)
	}
	ms, why := MatchSeries("x", Factors{Transport: "unix", Backend: "b"}, []string{"a"}, []Factors{{Transport: "tcp", Backend: "a"}}, false)
	if len(ms) != 0 || why == "" {
		t.Errorf("two factors apart: %+v %q", ms, why)
	}
	ms, _ = MatchSeries("x", tcp, []string{"x"}, []Factors{tcp}, true)
	if len(ms) != 1 || ms[0].Factor != FactorNone || ms[0].Title != "" {
		t.Errorf("same series: %+v", ms)
	}
}

// TestMinTrialsForVerdict: 3 against 3 cannot reach p < 0.05 (0.1 at
// best), 4 against 4 can; the smallest count is 4.
func TestMinTrialsForVerdict(t *testing.T) {
	if CanReach(3, 3) || !CanReach(4, 4) || CanReach(1, 20) || MinTrialsForVerdict() != 4 {
		t.Errorf("CanReach(3,3)=%v CanReach(4,4)=%v CanReach(1,20)=%v MinTrialsForVerdict=%d",
			CanReach(3, 3), CanReach(4, 4), CanReach(1, 20), MinTrialsForVerdict())
	}
	// The bound is the test's own: 4 fully separated trials a side give
	// p < Alpha, 3 do not.
	for n, want := range map[int]bool{3: false, 4: true} {
		a, b := make([]float64, n), make([]float64, n)
		for i := range a {
			a[i], b[i] = float64(100+i), float64(200+i)
		}
		if got := Compare(b, a).P < Alpha; got != want {
			t.Errorf("%d against %d fully separated: p %g", n, n, Compare(b, a).P)
		}
	}
}

// TestNoVerdictWithoutTrials: one trial a side gives "–, 1 trial", never
// "same" or "undecided", whatever the ratio.
func TestNoVerdictWithoutTrials(t *testing.T) {
	cs := CompareLevel("a", "b", 1, []Trial{{RequestsPerSecond: 200, P99Ms: 2, Seconds: 2, ClientCPUMeasured: true}},
		[]Trial{{RequestsPerSecond: 100, P99Ms: 1, Seconds: 2, ClientCPUMeasured: true}}, 0.02)
	if len(cs) != 5 {
		t.Fatalf("%d comparisons, want 5 metrics (no backend sampled)", len(cs))
	}
	for _, c := range cs {
		if c.Verdict != NoVerdict || c.VerdictText() != "–, 1 trial" {
			t.Errorf("%s: verdict %q text %q", c.Metric, c.Verdict, c.VerdictText())
		}
	}
}

// TestVerdictWords: every metric has its words, the backend's only when
// sampled on both sides, and a short trial marks the verdict.
func TestVerdictWords(t *testing.T) {
	mk := func(rps, ms, cpu, pss, secs float64) []Trial {
		var ts []Trial
		for i := range 5 {
			f := 1 + 0.001*float64(i)
			ts = append(ts, Trial{RequestsPerSecond: rps * f, MeanMs: ms * f, P50Ms: ms * f, P99Ms: 2 * ms * f, MaxMs: 3 * ms * f,
				Seconds: secs, ClientCPUMeasured: true, BackendSampled: true, BackendCPUPerRequest: cpu * f, BackendPSSBytes: pss * f})
		}
		return ts
	}
	cs := CompareLevel("new", "old", 1, mk(200, 1, 1e-4, 1e8, 2), mk(100, 2, 2e-4, 2e8, 2), 0.02)
	want := map[string]string{MetricRequestsPerSecond: Faster, MetricMeanMs: Lower, MetricP50Ms: Lower, MetricP99Ms: Lower,
		MetricMaxMs: Lower, MetricBackendCPUPerRequest: Smaller, MetricBackendPSSBytes: Smaller}
	if len(cs) != len(want) {
		t.Fatalf("%d comparisons, want %d", len(cs), len(want))
	}
	for _, c := range cs {
		if c.Verdict != want[c.Metric] || c.ShortTrials != 0 {
			t.Errorf("%s: %q (short %d), want %q", c.Metric, c.Verdict, c.ShortTrials, want[c.Metric])
		}
	}
	cs = CompareLevel("new", "old", 1, mk(200, 1, 1e-4, 1e8, 0.1), mk(100, 2, 2e-4, 2e8, 2), 0.02)
	if c := cs[0]; c.ShortTrials != 5 || c.VerdictText() != Faster+ShortMark {
		t.Errorf("short trials: %d, %q", c.ShortTrials, c.VerdictText())
	}
}

// TestSyntheticStudies: on synthetic trials of known truth (lognormal
// req/s, the default 2% noise threshold, 200 studies each, a fixed seed:
// deterministic), an A-vs-A design gives a faster/slower verdict in at
// most 5% of the studies, and a true 20% effect is found in at least the
// share given: 80% with 5 trials at a 5% coefficient of variation or 10
// trials at 10%; with 5 trials at 10% the test finds it in 60% (so 50% is
// asked), the price of a distribution-free test on 5 trials. The rates
// are logged (go test -v), and docs quote them.
func TestSyntheticStudies(t *testing.T) {
	const studies, noise = 200, 0.02
	for _, tc := range []struct {
		trials   int
		cv, want float64
	}{{5, 0.05, 0.80}, {5, 0.10, 0.50}, {10, 0.10, 0.80}} {
		rng := rand.New(rand.NewPCG(27, 2008))
		sigma := math.Sqrt(math.Log(1 + tc.cv*tc.cv))
		sample := func(median float64) []Trial {
			ts := make([]Trial, tc.trials)
			for i := range ts {
				ts[i] = Trial{RequestsPerSecond: median * math.Exp(sigma*rng.NormFloat64()), Seconds: 2, ClientCPUMeasured: true}
			}
			return ts
		}
		falsePos, found, wrong := 0, 0, 0
		for range studies {
			switch CompareLevel("a2", "a", 1, sample(1000), sample(1000), noise)[0].Verdict {
			case Faster, Slower:
				falsePos++
			}
			switch CompareLevel("b", "a", 1, sample(1200), sample(1000), noise)[0].Verdict {
			case Faster:
				found++
			case Slower:
				wrong++
			}
		}
		fp, power := float64(falsePos)/studies, float64(found)/studies
		t.Logf("%d trials, cv %.0f%%: A vs A gave a verdict in %d of %d studies (%.1f%%); a true +20%% was found in %d of %d (%.1f%%), the wrong way in %d",
			tc.trials, 100*tc.cv, falsePos, studies, 100*fp, found, studies, 100*power, wrong)
		if fp > 0.05 || power < tc.want || wrong > 0 {
			t.Errorf("%d trials, cv %.0f%%: false positives %.1f%% (want <= 5%%), power %.1f%% (want >= %.0f%%), wrong way %d",
				tc.trials, 100*tc.cv, 100*fp, 100*power, 100*tc.want, wrong)
		}
	}
}

// TestPairsOfNames: series labelled by what differs ("tcp", "unix",
// "tcp ka") are one backend reached several ways, paired on the setting
// that differs; two that differ in nothing but their labels are two
// backends. A label on several series keeps the labels as backends.
func TestPairsOfNames(t *testing.T) {
	tcp := Factors{Protocol: "fcgi", Transport: "tcp", Upstreams: 1, Backend: "tcp"}
	unix := Factors{Protocol: "fcgi", Transport: "unix", Upstreams: 1, Backend: "unix"}
	tcpKA := Factors{Protocol: "fcgi", Transport: "tcp", KeepAlive: true, Upstreams: 1, Backend: "tcp ka"}
	other := Factors{Protocol: "fcgi", Transport: "tcp", Upstreams: 1, Backend: "other"}
	if !LabelsAreNames([]Factors{tcp, unix}) || LabelsAreNames([]Factors{tcp}) {
		t.Fatal("LabelsAreNames")
	}
	names := []string{"tcp", "unix", "tcp ka", "other"}
	pairs, unpaired := Pairs([]Factors{tcp, unix, tcpKA}, "")
	got := map[string]bool{}
	for _, p := range pairs {
		got[p.Factor+" "+names[p.Series]+"/"+names[p.Baseline]] = true
	}
	want := map[string]bool{"transport unix/tcp": true, "keep-alive tcp ka/tcp": true}
	if len(unpaired) != 0 || len(got) != len(want) {
		t.Fatalf("pairs %v, unpaired %v, want %v", got, unpaired, want)
	}
	for k := range want {
		if !got[k] {
			t.Errorf("no pair %q in %v", k, got)
		}
	}
	// "other" is alike "tcp" but for its label: labels are backends;
	// "unix" and "tcp ka" are joined to "tcp" by no one-factor pair, so
	// each is compared with it as a backend, what else differs named.
	if LabelsAreNames([]Factors{tcp, unix, tcpKA, other}) {
		t.Fatal("labels taken as names though two series differ in their labels alone")
	}
	fs := []Factors{tcp, unix, tcpKA, other}
	pairs, unpaired = Pairs(fs, "")
	want = map[string]bool{"backend: other vs tcp": true, "backend: unix vs tcp, over a Unix socket rather than TCP": true,
		"backend: tcp ka vs tcp, with keep-alive rather than without": true}
	if len(pairs) != 3 || len(unpaired) != 0 {
		t.Errorf("with a second backend: pairs %+v, unpaired %v", pairs, unpaired)
	}
	for _, p := range pairs {
		if !want[p.Title(fs)] || fs[p.Baseline] != tcp {
			t.Errorf("pair %q against %+v", p.Title(fs), fs[p.Baseline])
		}
	}
	// The same label on two targets: labels are backends again, and
	// "evented unix ka", joined to no serial series by one factor, is
	// compared with the closest one, "serial unix".
	s1 := Factors{Protocol: "fcgi", Transport: "tcp", Upstreams: 1, Backend: "serial"}
	s2 := Factors{Protocol: "fcgi", Transport: "unix", Upstreams: 1, Backend: "serial"}
	e := Factors{Protocol: "fcgi", Transport: "unix", KeepAlive: true, Upstreams: 1, Backend: "evented"}
	if LabelsAreNames([]Factors{s1, s2, e}) {
		t.Fatal("a label on two targets taken as names")
	}
	fs = []Factors{s1, s2, e}
	if pairs, unpaired := Pairs(fs, ""); len(pairs) != 2 || pairs[0].Factor != FactorTransport || len(unpaired) != 0 ||
		pairs[1].Series != 2 || pairs[1].Baseline != 1 || pairs[1].Title(fs) != "backend: evented vs serial, with keep-alive rather than without" {
		t.Errorf("pairs %+v, unpaired %v", pairs, unpaired)
	}
}

// TestPairsOfSweeps: the pairs of what sweep infers from its command
// line, one table row per study: every pair (its title, series and
// baseline) and the series left unpaired. Each series is named by its
// label and the settings sweep adds to it.
func TestPairsOfSweeps(t *testing.T) {
	fcgi := func(label, transport string, ka bool) Factors {
		return Factors{Protocol: "fcgi", Transport: transport, KeepAlive: ka, Upstreams: 1, Backend: label}
	}
	http := func(label, transport string, ka, tls bool) Factors {
		return Factors{Protocol: "http", Transport: transport, KeepAlive: ka, HTTPVersion: "1.1", TLS: tls, Upstreams: 1, Backend: label}
	}
	name := func(f Factors) string {
		return fmt.Sprintf("%s %s %s", f.Level(FactorBackend), f.Transport, map[bool]string{true: "ka", false: "no-ka"}[f.KeepAlive])
	}
	for _, tc := range []struct {
		name     string
		fs       []Factors
		base     string
		want     []string // "title: series / baseline", sorted
		unpaired []int
	}{
		{
			// The README's study: one backend on both transports, labels
			// t and u, keep-alive on and off (issue 34).
			name: "t and u over keep-alive modes",
			fs:   []Factors{fcgi("t", "tcp", true), fcgi("t", "tcp", false), fcgi("u", "unix", true), fcgi("u", "unix", false)},
			want: []string{
				"keep-alive: on vs off: t tcp ka / t tcp no-ka",
				"keep-alive: on vs off: u unix ka / u unix no-ka",
				"transport: unix vs tcp: u unix ka / t tcp ka",
				"transport: unix vs tcp: u unix no-ka / t tcp no-ka",
			},
		},
		{
			name: "t and u",
			fs:   []Factors{fcgi("t", "tcp", false), fcgi("u", "unix", false)},
			want: []string{"transport: unix vs tcp: u unix no-ka / t tcp no-ka"},
		},
		{
			// ruby=fcgi://127.0.0.1:9005/ ruby=fcgi://unix:/run/r.sock:/
			name: "one label on two URLs",
			fs:   []Factors{fcgi("ruby", "tcp", false), fcgi("ruby", "unix", false)},
			want: []string{"transport: unix vs tcp: ruby unix no-ka / ruby tcp no-ka"},
		},
		{
			name: "one label on two URLs, keep-alive modes",
			fs:   []Factors{fcgi("ruby", "tcp", true), fcgi("ruby", "tcp", false), fcgi("ruby", "unix", true), fcgi("ruby", "unix", false)},
			want: []string{
				"keep-alive: on vs off: ruby tcp ka / ruby tcp no-ka",
				"keep-alive: on vs off: ruby unix ka / ruby unix no-ka",
				"transport: unix vs tcp: ruby unix ka / ruby tcp ka",
				"transport: unix vs tcp: ruby unix no-ka / ruby tcp no-ka",
			},
		},
		{
			// Moscow.pm 2008: fcgi=fcgi://... starman=http://...
			name: "FastCGI prefork against an HTTP server",
			fs:   []Factors{fcgi("fcgi", "tcp", false), http("starman", "tcp", false, false)},
			want: []string{"backend: starman vs fcgi, over HTTP rather than FastCGI: starman tcp no-ka / fcgi tcp no-ka"},
		},
		{
			name: "FastCGI prefork against an HTTP server, keep-alive modes",
			fs: []Factors{fcgi("fcgi", "tcp", true), fcgi("fcgi", "tcp", false),
				http("starman", "tcp", true, false), http("starman", "tcp", false, false)},
			want: []string{
				"backend: starman vs fcgi, over HTTP rather than FastCGI: starman tcp ka / fcgi tcp ka",
				"backend: starman vs fcgi, over HTTP rather than FastCGI: starman tcp no-ka / fcgi tcp no-ka",
				"keep-alive: on vs off: fcgi tcp ka / fcgi tcp no-ka",
				"keep-alive: on vs off: starman tcp ka / starman tcp no-ka",
			},
		},
		{
			name: "--baseline starman",
			fs:   []Factors{fcgi("fcgi", "tcp", false), http("starman", "tcp", false, false)},
			base: "starman",
			want: []string{"backend: fcgi vs starman, over FastCGI rather than HTTP: fcgi tcp no-ka / starman tcp no-ka"},
		},
		{
			// The 2024 question: tls=https://... plain=http://...
			name: "TLS in front or not",
			fs:   []Factors{http("tls", "tcp", true, true), http("plain", "tcp", true, false)},
			want: []string{"tls: on vs off: tls tcp ka / plain tcp ka"},
		},
		{
			// A deployment named beside the ways of reaching another: x
			// (HTTP) is compared with t at each keep-alive mode, not u.
			name: "ways and a deployment",
			fs: []Factors{fcgi("t", "tcp", true), fcgi("t", "tcp", false), fcgi("u", "unix", true), fcgi("u", "unix", false),
				http("x", "tcp", true, false), http("x", "tcp", false, false)},
			want: []string{
				"backend: x vs t, over HTTP rather than FastCGI: x tcp ka / t tcp ka",
				"backend: x vs t, over HTTP rather than FastCGI: x tcp no-ka / t tcp no-ka",
				"keep-alive: on vs off: t tcp ka / t tcp no-ka",
				"keep-alive: on vs off: u unix ka / u unix no-ka",
				"keep-alive: on vs off: x tcp ka / x tcp no-ka",
				"transport: unix vs tcp: u unix ka / t tcp ka",
				"transport: unix vs tcp: u unix no-ka / t tcp no-ka",
			},
		},
		{
			// Two unlabelled URLs two factors apart: one backend, nothing
			// to compare them on.
			name:     "unlabelled, two factors apart",
			fs:       []Factors{fcgi("", "tcp", false), http("", "unix", false, false)},
			unpaired: []int{0, 1},
		},
		{
			name: "unlabelled, one factor apart",
			fs:   []Factors{fcgi("", "tcp", false), http("", "tcp", false, false)},
			want: []string{"protocol: fcgi vs http: unnamed tcp no-ka / unnamed tcp no-ka"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pairs, unpaired := Pairs(tc.fs, tc.base)
			var got []string
			for _, p := range pairs {
				got = append(got, fmt.Sprintf("%s: %s / %s", p.Title(tc.fs), name(tc.fs[p.Series]), name(tc.fs[p.Baseline])))
				// A pair across factors is a backend pair that says so.
				d := Differences(tc.fs[p.Series], tc.fs[p.Baseline])
				if p.Factor != FactorBackend && (len(d) > 2 || (len(d) == 2 && d[1] != FactorBackend)) {
					t.Errorf("%s: across %v", p.Title(tc.fs), d)
				}
			}
			sort.Strings(got)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || fmt.Sprint(unpaired) != fmt.Sprint(tc.unpaired) {
				t.Errorf("pairs:\n  %s\nunpaired %v\nwant:\n  %s\nunpaired %v", strings.Join(got, "\n  "), unpaired,
					strings.Join(tc.want, "\n  "), tc.unpaired)
			}
		})
	}
}

// TestNoVerdictWhenAllFailed: a side whose every request failed gets no
// verdict, whatever the test says of its figures (zeros), and says which
// side did not answer; a side with a few failures keeps its verdict and
// shows its failures.
func TestNoVerdictWhenAllFailed(t *testing.T) {
	mk := func(rps float64, failed, finished int64) []Trial {
		var ts []Trial
		for i := range 5 {
			ts = append(ts, Trial{RequestsPerSecond: rps * (1 + 0.01*float64(i)), MeanMs: 1, P50Ms: 1, P99Ms: 2, MaxMs: 3,
				Failed: failed, Finished: finished, Seconds: 2, ClientCPUMeasured: true})
		}
		return ts
	}
	for _, tc := range []struct {
		name       string
		s, b       []Trial
		unanswered string
		text       string
	}{
		{"series failed", mk(0, 100, 100), mk(1000, 0, 100), "series", "–, no answer (100% failed)"},
		{"baseline failed", mk(1000, 0, 100), mk(0, 100, 100), "baseline", "–, no answer from baseline (baseline 100% failed)"},
		{"both failed", mk(0, 100, 100), mk(0, 100, 100), "both", "–, no answer from either (100% failed, baseline 100% failed)"},
		{"some failed", mk(900, 5, 100), mk(1000, 0, 100), "", "slower (5.0% failed)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if AllFailed(tc.s) != (tc.unanswered == "series" || tc.unanswered == "both") {
				t.Errorf("AllFailed(series) = %v", AllFailed(tc.s))
			}
			for _, c := range CompareLevel("a", "b", 1, tc.s, tc.b, 0.02) {
				if c.Unanswered != tc.unanswered || (tc.unanswered != "") != (c.Verdict == NoVerdict) {
					t.Errorf("%s: unanswered %q verdict %q, want %q", c.Metric, c.Unanswered, c.Verdict, tc.unanswered)
				}
				if c.Metric == MetricRequestsPerSecond && c.VerdictText() != tc.text {
					t.Errorf("verdict text %q, want %q", c.VerdictText(), tc.text)
				}
			}
		})
	}
	if AllFailed(nil) || AllFailed([]Trial{{Finished: 0}}) {
		t.Error("no finished request taken as all failed")
	}
}

// TestFailedShareRule: a side with more than MaxFailedRatio of its
// requests failed gets no latency or CPU-per-request verdict, on either
// side and on both, whatever its figures say (a refused connect is fast,
// the few that got through are slow); its req/s keeps its verdict and
// names the failures; at MaxFailedRatio exactly the verdicts stand. All
// failed is the Unanswered rule.
func TestFailedShareRule(t *testing.T) {
	// mk gives 5 trials, failed of 1000 requests each, the latency of the
	// series clearly apart from the baseline's (lat).
	mk := func(rps, lat float64, failed int64) []Trial {
		var ts []Trial
		for i := range 5 {
			f := 1 + 0.01*float64(i)
			ts = append(ts, Trial{RequestsPerSecond: rps * f, MeanMs: lat * f, P50Ms: lat * f, P99Ms: 2 * lat * f, MaxMs: 3 * lat * f,
				Failed: failed, Finished: 1000, Seconds: 2, ClientCPUMeasured: true,
				BackendSampled: true, BackendCPUPerRequest: lat * f * 1e-4, BackendPSSBytes: 1e6 * f})
		}
		return ts
	}
	for _, tc := range []struct {
		name           string
		sFailed, bFail int64
		mostly         string // MostlyFailed of the latency verdicts
		unanswered     string
		rpsText        string
	}{
		{"0%", 0, 0, "", "", "slower"},
		{"5%", 50, 0, "", "", "slower (5.0% failed)"},
		{"10% exactly", 100, 0, "", "", "slower (10% failed)"},
		{"11%", 110, 0, UnansweredSeries, "", "slower (11% failed)"},
		{"99%", 990, 0, UnansweredSeries, "", "slower (99% failed)"},
		{"100%", 1000, 0, "", UnansweredSeries, "–, no answer (100% failed)"},
		{"baseline 99%", 0, 990, UnansweredBaseline, "", "slower (baseline 99% failed)"},
		{"baseline 10% exactly", 0, 100, "", "", "slower (baseline 10% failed)"},
		{"both 99%", 990, 990, UnansweredBoth, "", "slower (99% failed, baseline 99% failed)"},
		{"both 11% and 10%", 110, 100, UnansweredSeries, "", "slower (11% failed, baseline 10% failed)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, b := mk(500, 0.1, tc.sFailed), mk(1000, 1, tc.bFail)
			if tc.unanswered == "" && MostlyFailed(s) != (tc.mostly == UnansweredSeries || tc.mostly == UnansweredBoth) {
				t.Errorf("MostlyFailed(series) = %v", MostlyFailed(s))
			}
			cs := CompareLevel("a", "b", 8, s, b, 0.02)
			if len(cs) != len(metrics) {
				t.Fatalf("%d comparisons, want %d", len(cs), len(metrics))
			}
			for _, c := range cs {
				if c.Unanswered != tc.unanswered {
					t.Errorf("%s: unanswered %q, want %q", c.Metric, c.Unanswered, tc.unanswered)
				}
				withheld := tc.unanswered != "" || (tc.mostly != "" && c.Metric != MetricRequestsPerSecond && c.Metric != MetricBackendPSSBytes)
				if withheld != (c.Verdict == NoVerdict) {
					t.Errorf("%s: verdict %q, withheld %v", c.Metric, c.Verdict, withheld)
				}
				wantMostly := ""
				if withheld && tc.unanswered == "" {
					wantMostly = tc.mostly
				}
				if c.MostlyFailed != wantMostly {
					t.Errorf("%s: mostly failed %q, want %q", c.Metric, c.MostlyFailed, wantMostly)
				}
				if c.Metric == MetricRequestsPerSecond && c.VerdictText() != tc.rpsText {
					t.Errorf("req/s verdict text %q, want %q", c.VerdictText(), tc.rpsText)
				}
				if c.MostlyFailed != "" && !strings.HasPrefix(c.VerdictText(), MostlyFailedText+" (") {
					t.Errorf("%s: verdict text %q, want %q and the failures", c.Metric, c.VerdictText(), MostlyFailedText)
				}
			}
			notes := strings.Join(VerdictNotes(cs), "\n")
			if got := strings.Contains(notes, MostlyFailedText+": more than 10%"); got != (tc.mostly != "") {
				t.Errorf("notes %q: the failed-share note there %v, want %v", notes, got, tc.mostly != "")
			}
			if tc.mostly != "" && strings.Contains(notes, "trials") {
				t.Errorf("notes %q blame the trials for a verdict withheld for failures", notes)
			}
		})
	}
}
