package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// wideSweep is a synthetic sweep of 3 targets in 2 keep-alive modes with
// 5 trials a level (the measured 305-column case), and its
// comparisons: keep-alive at each backend, backends against the first.
func wideSweep() Sweep {
	var series []SweepSeries
	var cs []trials.Comparison
	f := func(v float64) *float64 { return &v }
	backends := []string{"serial", "prefork", "evented"}
	for bi, b := range backends {
		for _, ka := range []bool{false, true} {
			label := b + map[bool]string{false: " no-ka", true: " ka"}[ka]
			se := SweepSeries{Label: label, Backend: b, KeepAlive: ka,
				Target: stats.TargetInfo{URL: fmt.Sprintf("fcgi://unix:/tmp/%s.sock:/x", b), Protocol: "fcgi", Network: "unix"}}
			for li, c := range []int{1, 8, 32} {
				rps := float64(100*(bi+1)*(li+1)) * map[bool]float64{false: 1, true: 1.25}[ka]
				l := level(c, rps, float64(10*(li+1)), 0)
				l.Repeated = &stats.Repeated{Trials: make([]*stats.Record, 5), RequestsPerSecondCI95: []float64{rps * 0.98, rps * 1.02},
					P99Ms: float64(10 * (li + 1)), P99MsCI95: []float64{9, 12}, Confidence: 0.9375}
				se.Levels = append(se.Levels, l)
				if label == "serial no-ka" {
					continue
				}
				verdict, ratio := trials.Faster, 1.25
				if bi > 0 && !ka {
					ratio = float64(bi + 1)
				}
				base, factor, title := "serial no-ka", trials.FactorBackend, "backend: "+b+" vs serial"
				if ka {
					base, factor, title = b+" no-ka", trials.FactorKeepAlive, "keep-alive: on vs off"
				}
				for _, m := range []string{trials.MetricRequestsPerSecond, trials.MetricP99Ms} {
					v := verdict
					if m == trials.MetricP99Ms {
						v = trials.Higher
					}
					cs = append(cs, trials.Comparison{Series: label, Baseline: base, Concurrency: c, Factor: factor, FactorTitle: title,
						Metric: m, Trials: 5, BaselineTrials: 5, Value: f(rps), BaselineValue: f(rps / ratio),
						ValueCI95: []float64{rps * 0.98, rps * 1.02}, BaselineValueCI95: []float64{rps / ratio * 0.98, rps / ratio * 1.02},
						Ratio: f(ratio), RatioCI95: []float64{ratio * 0.97, ratio * 1.03}, PValue: 0.008, Verdict: v, ShortTrials: 1})
				}
			}
			series = append(series, se)
		}
	}
	return Sweep{Levels: []int{1, 8, 32}, RequestsPerLevel: 1000, Series: series,
		SweepTrials: &SweepTrials{Repeat: 5, Seed: 7, Noise: 0.02, Baseline: "serial no-ka", Comparisons: cs}}
}

// TestGoldenFit: the sweep table and the comparisons table of a 3-target,
// 2-mode, 5-trial sweep are wider than 100 columns as they were (the
// --wide golden files); fitted to 100 columns (the default) no line is
// wider, and every series, level and comparison is still there.
func TestGoldenFit(t *testing.T) {
	sw := wideSweep()
	var wide, fit, cwide, cfit bytes.Buffer
	if err := SweepTable(&wide, &sw); err != nil {
		t.Fatal(err)
	}
	if err := SweepTableFit(&fit, &sw, DefaultWidth); err != nil {
		t.Fatal(err)
	}
	if err := ComparisonTableFit(&cwide, sw.SweepTrials.Comparisons, 0); err != nil {
		t.Fatal(err)
	}
	if err := ComparisonTableFit(&cfit, sw.SweepTrials.Comparisons, DefaultWidth); err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep_table_wide.golden", wide.Bytes())
	golden(t, "sweep_table_fit.golden", fit.Bytes())
	golden(t, "comparisons_wide.golden", cwide.Bytes())
	golden(t, "comparisons_fit.golden", cfit.Bytes())
	var direct bytes.Buffer
	ComparisonTable(&direct, sw.SweepTrials.Comparisons)
	if !bytes.Equal(direct.Bytes(), cwide.Bytes()) {
		t.Error("the wide comparisons table is not today's")
	}
	if w := Width(wide.String()); w <= DefaultWidth {
		t.Errorf("the wide sweep table is %d columns: the test needs a wider one", w)
	}
	if w := Width(cwide.String()); w <= DefaultWidth {
		t.Errorf("the wide comparisons table is %d columns: the test needs a wider one", w)
	}
	for name, out := range map[string]string{"sweep table": fit.String(), "comparisons": cfit.String()} {
		for _, l := range strings.Split(out, "\n") {
			if n := Width(l); n > DefaultWidth {
				t.Errorf("%s: a line of %d columns: %q", name, n, l)
			}
		}
	}
	for _, se := range sw.Series {
		if !strings.Contains(fit.String(), se.Label) {
			t.Errorf("fitted sweep table lacks %q", se.Label)
		}
	}
	// Every level's row in every block: 3 levels, header lines 2, blocks.
	blocks := strings.Count(fit.String(), "concurrency")
	if blocks < 2 || strings.Count(fit.String(), "\n         32 ") != blocks {
		t.Errorf("%d blocks, not every one with the level 32:\n%s", blocks, fit.String())
	}
	if got, want := strings.Count(cfit.String(), "req/s "), strings.Count(cwide.String(), "req/s "); got != want {
		t.Errorf("fitted comparisons have %d req/s rows, the wide %d", got, want)
	}
	// A table that fits is left as it is.
	small := wideSweep()
	small.Series, small.SweepTrials = small.Series[:2], nil
	var a, b bytes.Buffer
	SweepTable(&a, &small)
	SweepTableFit(&b, &small, DefaultWidth)
	if Width(a.String()) > DefaultWidth || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("a sweep table that fits was changed:\n%s", b.String())
	}
}

func TestWrap(t *testing.T) {
	got := Wrap("Note: "+strings.Repeat("word ", 40), 30, "  ")
	for _, l := range strings.Split(got, "\n") {
		if Width(l) > 30 {
			t.Errorf("line of %d columns: %q", Width(l), l)
		}
	}
	if got := Wrap("a\n"+strings.Repeat("b ", 20), 30, "  "); !strings.HasPrefix(got, "a\nb b") || Width(got) > 30 {
		t.Errorf("Wrap of two lines: %q", got)
	}
	if got := Wrap("slower, ratio 0.776 [0.769, 0.781]", 25, "  "); got != "slower, ratio 0.776\n  [0.769, 0.781]" {
		t.Errorf("Wrap broke an interval: %q", got)
	}
	// Brackets are counted: an interval inside another, or a second one
	// opened after the first closed in the same run of words, stays whole.
	if got := Wrap("a [b [c, d] e] f", 8, ""); got != "a\n[b [c, d] e]\nf" {
		t.Errorf("Wrap broke a nested interval: %q", got)
	}
	if got := Wrap("x [1, 2]y[3, 4] z", 6, ""); got != "x\n[1, 2]y[3, 4]\nz" {
		t.Errorf("Wrap broke the second interval of a word: %q", got)
	}
	if got := Wrap("  tripped: a b c d e f g h", 12, "    "); !strings.HasPrefix(got, "  tripped: a\n    b") {
		t.Errorf("Wrap lost the indentation: %q", got)
	}
	if Wrap("short", 30, "  ") != "short" || Wrap(strings.Repeat("x", 40), 30, "") != strings.Repeat("x", 40) {
		t.Error("Wrap changed a line that fits, or broke a word")
	}
}
