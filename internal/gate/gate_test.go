package gate

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/trials"
)

// TestParse: rules in the user's words, and one error naming the rule
// for an unknown metric, direction or effect.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []Rule
	}{
		{"req/s slower", []Rule{{Text: "req/s slower", Metric: trials.MetricRequestsPerSecond, Verdict: trials.Slower}}},
		{"req/s slower, p99 higher by 10%", []Rule{
			{Text: "req/s slower", Metric: trials.MetricRequestsPerSecond, Verdict: trials.Slower},
			{Text: "p99 higher by 10%", Metric: trials.MetricP99Ms, Verdict: trials.Higher, By: 0.1}}},
		{" RPS  Faster ,", []Rule{{Text: "req/s faster", Metric: trials.MetricRequestsPerSecond, Verdict: trials.Faster}}},
		{"p99_ms higher by 2.5%", []Rule{{Text: "p99 higher by 2.5%", Metric: trials.MetricP99Ms, Verdict: trials.Higher, By: 0.025}}},
		{"cpu larger, pss larger, mean lower, max higher, p50 higher", []Rule{
			{Text: "cpu larger", Metric: trials.MetricBackendCPUPerRequest, Verdict: trials.Larger},
			{Text: "pss larger", Metric: trials.MetricBackendPSSBytes, Verdict: trials.Larger},
			{Text: "mean lower", Metric: trials.MetricMeanMs, Verdict: trials.Lower},
			{Text: "max higher", Metric: trials.MetricMaxMs, Verdict: trials.Higher},
			{Text: "p50 higher", Metric: trials.MetricP50Ms, Verdict: trials.Higher}}},
	} {
		got, err := Parse(tc.spec)
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.spec, got, err, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("Parse(%q)[%d] = %+v, want %+v", tc.spec, i, got[i], tc.want[i])
			}
		}
	}
	for spec, want := range map[string]string{
		"":                       "no rule",
		" , ":                    "no rule",
		"latency slower":         `unknown metric "latency"`,
		"req/s higher":           `unknown direction "higher" of req/s (want faster or slower)`,
		"p99":                    "no direction",
		"p99 higher by 10":       `bad effect "10"`,
		"p99 higher by 0%":       `bad effect`,
		"p99 higher by 100%":     `bad effect`,
		"p99 higher by x%":       `bad effect`,
		"p99 higher than 10%":    `unexpected "than 10%"`,
		"req/s slower, p99 more": `"p99 more": unknown direction`,
	} {
		_, err := Parse(spec)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): error %v, want one line with %q", spec, err, want)
		}
	}
}

func f64(f float64) *float64 { return &f }

// cmp is a req/s comparison of factor "run" with a verdict and a ratio
// interval.
func cmp(metric, verdict string, lo, hi float64) trials.Comparison {
	return trials.Comparison{Series: "s", Baseline: "s", Concurrency: 4, Factor: trials.FactorNone, Metric: metric,
		Trials: 10, BaselineTrials: 10, Verdict: verdict, Ratio: f64((lo + hi) / 2), RatioCI95: []float64{lo, hi}}
}

// TestJudge: a rule trips on its metric's verdict in its direction only,
// beyond its least effect; "same" never trips; a comparison without a
// verdict, an undecided one, or a rule without a comparison, leaves the
// gate unable to judge (never passed), unless "undecided pass" or
// "undecided trip" says how undecided ones count; pairs of another factor
// are not judged.
func TestJudge(t *testing.T) {
	slower := mustParse(t, "req/s slower")
	by10 := mustParse(t, "p99 higher by 10%")
	noVerdict := cmp(trials.MetricRequestsPerSecond, trials.NoVerdict, 0.7, 0.9)
	noVerdict.Trials, noVerdict.BaselineTrials, noVerdict.RatioCI95 = 3, 3, nil
	transport := cmp(trials.MetricRequestsPerSecond, trials.Slower, 0.5, 0.6)
	transport.Factor = trials.FactorTransport
	backend := cmp(trials.MetricRequestsPerSecond, trials.Slower, 0.5, 0.6)
	backend.Factor = trials.FactorBackend
	for _, tc := range []struct {
		name    string
		rules   []Rule
		cs      []trials.Comparison
		want    Status
		tripped int
	}{
		{"slower trips", slower, []trials.Comparison{cmp(trials.MetricRequestsPerSecond, trials.Slower, 0.7, 0.8)}, Tripped, 1},
		{"faster passes", slower, []trials.Comparison{cmp(trials.MetricRequestsPerSecond, trials.Faster, 1.2, 1.3)}, Passed, 0},
		{"same passes", slower, []trials.Comparison{cmp(trials.MetricRequestsPerSecond, trials.Same, 0.99, 1.01)}, Passed, 0},
		{"undecided cannot judge", slower, []trials.Comparison{cmp(trials.MetricRequestsPerSecond, trials.Undecided, 0.9, 1.1)}, Unjudged, 0},
		{"undecided pass", mustParse(t, "req/s slower, undecided pass"), []trials.Comparison{cmp(trials.MetricRequestsPerSecond, trials.Undecided, 0.9, 1.1)}, Passed, 0},
		{"undecided trip", mustParse(t, "req/s slower, undecided trip"), []trials.Comparison{cmp(trials.MetricRequestsPerSecond, trials.Undecided, 0.9, 1.1)}, Tripped, 1},
		{"other metric is not judged", slower, []trials.Comparison{cmp(trials.MetricP99Ms, trials.Higher, 1.2, 1.3)}, Unjudged, 0},
		{"no verdict cannot judge", slower, []trials.Comparison{noVerdict}, Unjudged, 0},
		{"tripped beats unjudged", slower, []trials.Comparison{noVerdict, cmp(trials.MetricRequestsPerSecond, trials.Slower, 0.7, 0.8)}, Tripped, 1},
		{"another factor is not judged", slower, []trials.Comparison{transport}, Unjudged, 0},
		{"a backend pair is judged", slower, []trials.Comparison{backend}, Tripped, 1},
		{"beyond the least effect", by10, []trials.Comparison{cmp(trials.MetricP99Ms, trials.Higher, 1.12, 1.3)}, Tripped, 1},
		{"within the least effect", by10, []trials.Comparison{cmp(trials.MetricP99Ms, trials.Higher, 1.05, 1.3)}, Passed, 0},
		{"lower p99 passes", by10, []trials.Comparison{cmp(trials.MetricP99Ms, trials.Lower, 0.5, 0.6)}, Passed, 0},
		{"nothing at all", slower, nil, Unjudged, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Judge(tc.rules, tc.cs)
			if r.Status != tc.want || len(r.Tripped) != tc.tripped {
				t.Fatalf("status %s, %d tripped (%+v); want %s, %d", r.Status, len(r.Tripped), r, tc.want, tc.tripped)
			}
			if r.Status == Unjudged && (len(r.Unjudged) == 0 || r.Unjudged[0].Why == "" || !strings.Contains(r.Summary(), "cannot judge")) {
				t.Errorf("unjudged without saying why: %+v, %q", r, r.Summary())
			}
			for _, f := range r.Tripped {
				if l := f.Line(); !strings.Contains(l, f.Rule) || !strings.Contains(l, "c=4") || !strings.Contains(l, "ratio") {
					t.Errorf("tripped line %q names no rule, level or ratio", l)
				}
			}
		})
	}
}

func mustParse(t *testing.T, spec string) []Rule {
	t.Helper()
	r, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFalseTripRate: on synthetic trials of known truth (lognormal req/s,
// fixed seed), the gate "req/s slower" on two samples of one distribution
// trips in at most the verdict's documented false-positive rate (5%,
// docs/statistics.md), with the default 2% noise threshold, 10 trials a
// side; on a true 13/10 slowdown (a 10 ms and a 13 ms model, ratio
// 0.77) it trips nearly always, and "req/s faster" never does.
func TestFalseTripRate(t *testing.T) {
	const studies, noise, n = 2000, 0.02, 10
	slower, faster := mustParse(t, "req/s slower"), mustParse(t, "req/s faster")
	for _, cv := range []float64{0.02, 0.05, 0.10} {
		rng := rand.New(rand.NewPCG(38, 2026))
		sigma := math.Sqrt(math.Log(1 + cv*cv))
		sample := func(median float64) []trials.Trial {
			ts := make([]trials.Trial, n)
			for i := range ts {
				ts[i] = trials.Trial{RequestsPerSecond: median * math.Exp(sigma*rng.NormFloat64()), Seconds: 2, ClientCPUMeasured: true}
			}
			return ts
		}
		judge := func(rules []Rule, s, b []trials.Trial) Status {
			cs := trials.CompareLevel("a", "a", 1, s, b, noise)
			for i := range cs {
				cs[i].Factor = trials.FactorNone
			}
			return Judge(rules, cs[:1]).Status
		}
		falseTrips, found, wrongWay := 0, 0, 0
		for range studies {
			if judge(slower, sample(100), sample(100)) == Tripped {
				falseTrips++
			}
			s, b := sample(100/1.3), sample(100)
			if judge(slower, s, b) == Tripped {
				found++
			}
			if judge(faster, s, b) == Tripped {
				wrongWay++
			}
		}
		rate := float64(falseTrips) / studies
		t.Logf("cv %.0f%%, %d trials a side: A vs A tripped \"req/s slower\" in %d of %d (%.2f%%); a true 13/10 slowdown in %d of %d; \"req/s faster\" on it %d times",
			100*cv, n, falseTrips, studies, 100*rate, found, studies, wrongWay)
		if rate > 0.05 || wrongWay > 0 || float64(found)/studies < 0.95 {
			t.Errorf("cv %.0f%%: false trips %.2f%% (want <= 5%%), found %d of %d (want >= 95%%), wrong way %d (want 0)",
				100*cv, 100*rate, found, studies, wrongWay)
		}
	}
}

// TestJudgeMostlyFailed: a gate over the comparisons of a side with 99%
// of its requests failed cannot judge its p99 (trials.CompareLevel
// withholds it), says why in the failures' words, and still trips on its
// req/s.
func TestJudgeMostlyFailed(t *testing.T) {
	mk := func(rps, p99 float64, failed int64) []trials.Trial {
		var ts []trials.Trial
		for i := range 5 {
			f := 1 + 0.01*float64(i)
			ts = append(ts, trials.Trial{RequestsPerSecond: rps * f, MeanMs: p99 / 2, P50Ms: p99 / 2 * f, P99Ms: p99 * f, MaxMs: p99 * f,
				Failed: failed, Finished: 1000, Seconds: 2, ClientCPUMeasured: true})
		}
		return ts
	}
	cs := trials.CompareLevel("s", "s", 8, mk(10, 50, 990), mk(1000, 1, 0), 0.02)
	for i := range cs {
		cs[i].Factor = trials.FactorNone
	}
	r := Judge(mustParse(t, "p99 higher"), cs)
	if r.Status != Unjudged || len(r.Unjudged) != 1 || !strings.Contains(r.Unjudged[0].Line(), "99% of the series' requests failed (more than 10%") {
		t.Errorf("p99 higher on a 99%%-failed side: %s %+v", r.Status, r.Unjudged)
	}
	if r := Judge(mustParse(t, "req/s slower, p99 higher"), cs); r.Status != Tripped || len(r.Tripped) != 1 {
		t.Errorf("req/s slower on a 99%%-failed side: %s %+v", r.Status, r)
	}
}

// TestTargetRules: "on PATH" keeps PATH's case, takes p50 and p99 only,
// and a rule on a target judges the comparisons of the targets it names
// and no other (neither the whole run's nor another target's), while a
// rule without one judges the whole run's only.
func TestTargetRules(t *testing.T) {
	rules, err := Parse("p99 higher by 10% on /Checkout, req/s slower")
	if err != nil || len(rules) != 2 || rules[0].Target != "/Checkout" || rules[0].Text != "p99 higher by 10% on /Checkout" ||
		rules[0].Metric != trials.MetricP99Ms || rules[0].By != 0.1 || rules[1].Target != "" {
		t.Fatalf("Parse: %+v %v", rules, err)
	}
	for spec, want := range map[string]string{
		"p99 higher on":            "no target",
		"on /a":                    "no metric",
		"req/s slower on /a":       "p50 and p99 only",
		"undecided pass on /a":     "takes no target",
		"p99 higher by x% on /a":   "bad effect",
		"p99 higher, p50 lower on": "no target",
	} {
		if _, err := Parse(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): error %v, want %q", spec, err, want)
		}
	}
	for _, tc := range []struct {
		path, target string
		want         bool
	}{
		{"/checkout", "GET /checkout", true},
		{"/checkout", "POST /checkout?step=2", true},
		{"/checkout?step=2", "POST /checkout?step=2", true},
		{"POST /checkout", "POST /checkout", true},
		{"/checkout", "GET http://shop:8080/checkout#x", true},
		{"/", "GET http://shop", true},
		{"/checkout", "GET /checkout/done", false},
		{"/checkout", "GET /", false},
		{"GET /checkout", "POST /checkout", false},
	} {
		if got := MatchesTarget(tc.path, tc.target); got != tc.want {
			t.Errorf("MatchesTarget(%q, %q) = %v", tc.path, tc.target, got)
		}
	}
	one := func(target, metric, verdict string, lo float64) trials.Comparison {
		r := lo + 0.05
		return trials.Comparison{Series: "app", Baseline: "app", Concurrency: 2, Target: target, Metric: metric,
			Trials: 5, BaselineTrials: 5, Verdict: verdict, Ratio: &r, RatioCI95: []float64{lo, lo + 0.1}}
	}
	cs := []trials.Comparison{
		one("", trials.MetricP99Ms, trials.Same, 0.95),
		one("GET /a", trials.MetricP99Ms, trials.Same, 0.95),
		one("GET /b", trials.MetricP99Ms, trials.Higher, 1.5),
	}
	for spec, want := range map[string]Status{
		"p99 higher on /b":        Tripped,
		"p99 higher by 20% on /b": Tripped,
		"p99 higher by 80% on /b": Passed,
		"p99 higher on /a":        Passed,
		"p99 higher":              Passed,
		"p99 higher on /c":        Unjudged,
		"p50 higher on /b":        Unjudged,
	} {
		rules, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		g := Judge(rules, cs)
		if g.Status != want {
			t.Errorf("%q: %s %+v, want %s", spec, g.Status, g, want)
		}
		if want == Tripped && (len(g.Tripped) != 1 || g.Tripped[0].Target != "GET /b" ||
			!strings.Contains(g.Tripped[0].Line(), "at c=2, GET /b: higher")) {
			t.Errorf("%q: tripped %+v", spec, g.Tripped)
		}
		if spec == "p99 higher on /c" && !strings.Contains(g.Unjudged[0].Why, "no target /c") {
			t.Errorf("%q: %+v", spec, g.Unjudged)
		}
	}
}

// TestMetrics: the metrics a gate reads are those of its whole-run rules,
// each once, in their order: not a target's rule, not "undecided pass".
func TestMetrics(t *testing.T) {
	rules, err := Parse("p99 higher by 10%, req/s slower, p99 higher, undecided pass, p50 higher on /x")
	if err != nil {
		t.Fatal(err)
	}
	if got := Metrics(rules); !slices.Equal(got, []string{trials.MetricP99Ms, trials.MetricRequestsPerSecond}) {
		t.Errorf("Metrics = %q", got)
	}
	if got := Metrics(nil); got != nil {
		t.Errorf("no rules: %q", got)
	}
}
