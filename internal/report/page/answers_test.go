package page

import (
	"strings"
	"testing"
)

func ip(v int) *int         { return &v }
func fp(v float64) *float64 { return &v }

// TestAnswerSentences: synthetic comparison rows become one sentence per
// group (the factor when given, else the pair), with the estimate, its
// interval and the levels where each verdict holds, the directional
// verdicts first, and the caveats of the levels named in the same
// sentence.
func TestAnswerSentences(t *testing.T) {
	rows := []answerRow{
		{Series: "unix", Baseline: "tcp", Level: ip(1), Metric: "requests_per_second", Ratio: fp(1.01), CI: []float64{0.97, 1.05}, Verdict: "no difference"},
		{Series: "unix", Baseline: "tcp", Level: ip(101), Metric: "requests_per_second", Ratio: fp(1.41), CI: []float64{1.12, 1.60}, Verdict: "faster"},
		{Series: "unix", Baseline: "tcp", Level: ip(301), Metric: "requests_per_second", Ratio: fp(1.38), CI: []float64{1.20, 1.75}, Verdict: "faster",
			Caveats: []string{"tcp's listen queue overflowed"}},
		{Series: "unix", Baseline: "tcp", Level: ip(1), Metric: "p99_ms", Ratio: fp(0.5), CI: []float64{0.4, 0.6}, Verdict: "lower"},
		{Group: "keep-alive", Series: "thin -k", Baseline: "thin", Level: ip(8), Metric: "requests_per_second", Ratio: fp(2.0), CI: []float64{1.9, 2.1}, Verdict: "faster",
			Caveats: []string{"thin had 5% failed"}},
		{Group: "keep-alive", Series: "thin -k", Baseline: "thin", Level: ip(16), Metric: "requests_per_second", Ratio: fp(2.2), CI: []float64{2.0, 2.4}, Verdict: "faster",
			Caveats: []string{"thin had 5% failed"}},
	}
	got := answerSentences(rows)
	want := []string{
		"unix vs tcp: 1.38–1.41× the req/s (faster) [1.12, 1.75] at c = 101 and 301, no difference at c = 1; " +
			"0.50× the p99 (lower) [0.40, 0.60] at c = 1; but tcp's listen queue overflowed at c = 301.",
		"keep-alive: thin -k vs thin: 2.00–2.20× the req/s (faster) [1.90, 2.40] at c = 8 and 16; but thin had 5% failed at c = 8 and 16.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sentences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A group where nothing differs says so, once, with its levels; a
	// row without a level (two whole files) names none.
	got = answerSentences([]answerRow{
		{Series: "a.json", Baseline: "b.json", Metric: "p99_ms", Ratio: fp(1.0), Verdict: "no difference"},
		{Series: "x", Baseline: "y", Level: ip(2), Metric: "requests_per_second", Ratio: fp(0.7), CI: []float64{0.6, 0.8}, Verdict: "slower"},
		{Series: "x", Baseline: "y", Level: ip(4), Metric: "requests_per_second", Ratio: fp(1.0), Verdict: "no difference"},
		{Series: "x", Baseline: "y", Level: ip(8), Metric: "requests_per_second", Ratio: fp(1.0), Verdict: "no difference"},
	})
	want = []string{"a.json vs b.json: p99: no difference.", "x vs y: 0.70× the req/s (slower) [0.60, 0.80] at c = 2, no difference at c = 4 and 8."}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sentences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := answerSentences(nil); len(got) != 0 {
		t.Errorf("no rows gave %q", got)
	}
}
