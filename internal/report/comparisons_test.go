package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/trials"
)

// TestComparisons checks what trials add under a sweep's table: nothing
// without trials; the notes, one "Note:" line each, without comparisons;
// the titled table (its noise threshold said) before them with.
func TestComparisons(t *testing.T) {
	var b bytes.Buffer
	if err := Comparisons(&b, nil, 0); err != nil || b.Len() != 0 {
		t.Fatalf("nil: %q, %v", b.String(), err)
	}
	st := &SweepTrials{Noise: 0.02, Notes: []string{"one", "two"}}
	if err := Comparisons(&b, st, 0); err != nil || b.String() != "Note: one\nNote: two\n" {
		t.Fatalf("notes only: %q, %v", b.String(), err)
	}
	b.Reset()
	f := func(v float64) *float64 { return &v }
	st.Comparisons = []trials.Comparison{{Series: "b", Baseline: "a", Concurrency: 4, Factor: trials.FactorBackend,
		Metric: trials.MetricRequestsPerSecond, Trials: 5, BaselineTrials: 5, Value: f(110), BaselineValue: f(100),
		ValueCI95: []float64{105, 115}, BaselineValueCI95: []float64{95, 105}, Ratio: f(1.1), RatioCI95: []float64{1.05, 1.15}, PValue: 0.008, Verdict: trials.Faster}}
	if err := Comparisons(&b, st, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "\nComparisons (ratio series / baseline, 95% interval, Mann-Whitney p, noise threshold ±2%):\n") ||
		!strings.HasSuffix(b.String(), "Note: one\nNote: two\n") {
		t.Errorf("with comparisons:\n%s", b.String())
	}
}
