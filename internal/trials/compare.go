package trials

import (
	"fmt"
	"math"
	"strings"
)

// Trial is what the statistics read of one trial (one run of a series at
// a level).
type Trial struct {
	// RequestsPerSecond is the trial's complete requests over its time.
	RequestsPerSecond float64
	// P50Ms and P99Ms are its percentiles of the total request time, in ms.
	P50Ms, P99Ms float64
	// Failed counts its failed requests; Finished the requests that
	// finished, failed or not (a Length failure, also complete, once).
	Failed, Finished int64
}

// Summary describes a series at a level over its trials.
type Summary struct {
	// Trials is the number of trials.
	Trials int
	// RequestsPerSecond, P50Ms and P99Ms are the medians of the trials'
	// values with their intervals.
	RequestsPerSecond, P50Ms, P99Ms Estimate
	// FailedRatio is the trials' failed requests over their finished
	// requests, pooled (0 when none finished).
	FailedRatio float64
}

// Summarize returns the Summary of ts.
func Summarize(ts []Trial) Summary {
	s := Summary{Trials: len(ts)}
	rps, p50, p99 := make([]float64, len(ts)), make([]float64, len(ts)), make([]float64, len(ts))
	var failed, finished int64
	for i, t := range ts {
		rps[i], p50[i], p99[i] = t.RequestsPerSecond, t.P50Ms, t.P99Ms
		failed += t.Failed
		finished += t.Finished
	}
	s.RequestsPerSecond, s.P50Ms, s.P99Ms = Median(rps), Median(p50), Median(p99)
	if finished > 0 {
		s.FailedRatio = float64(failed) / float64(finished)
	}
	return s
}

// Metric names, as the JSON says them.
const (
	MetricRequestsPerSecond = "requests_per_second"
	MetricP99Ms             = "p99_ms"
)

// Comparison is one metric of one series against its baseline at one
// level: the JSON object of "comparisons".
type Comparison struct {
	// Series and Baseline are the labels compared (new over old).
	Series   string `json:"series"`
	Baseline string `json:"baseline"`
	// File and BaselineFile name the saved results compared (compare
	// only).
	File         string `json:"file,omitempty"`
	BaselineFile string `json:"baseline_file,omitempty"`
	// Concurrency is the level.
	Concurrency int `json:"concurrency"`
	// Metric is MetricRequestsPerSecond or MetricP99Ms.
	Metric string `json:"metric"`
	// Trials and BaselineTrials count the trials of each side.
	Trials         int `json:"trials"`
	BaselineTrials int `json:"baseline_trials"`
	// Value and BaselineValue are the medians of the metric, ValueCI95
	// and BaselineValueCI95 their intervals (null without one).
	Value             *float64  `json:"value"`
	BaselineValue     *float64  `json:"baseline_value"`
	ValueCI95         []float64 `json:"value_ci95"`
	BaselineValueCI95 []float64 `json:"baseline_value_ci95"`
	// Ratio is the series' median over the baseline's (null when the
	// baseline's is 0).
	Ratio *float64 `json:"ratio"`
	// RatioCI95 is its 95% interval, [low, high]; null with fewer than 2
	// trials on a side.
	RatioCI95 []float64 `json:"ratio_ci95"`
	// PValue is the Mann-Whitney U test's (1 when it cannot say).
	PValue float64 `json:"p_value"`
	// Verdict is Faster, Slower, Lower, Higher or NoDifference.
	Verdict string `json:"verdict"`
	// FailedRatio, when either side had failed requests, gives each
	// side's failed / finished requests.
	FailedRatio *Sides `json:"failed_ratio,omitempty"`
}

// Sides holds a value of each side of a comparison.
type Sides struct {
	Series   float64 `json:"series"`
	Baseline float64 `json:"baseline"`
}

// CompareLevel compares series against baseline at one level, for
// requests/sec (faster, slower) and p99 (lower, higher), noise the
// threshold (a fraction) under which a difference does not count.
func CompareLevel(series, baseline string, concurrency int, s, b []Trial, noise float64) []Comparison {
	ss, bs := Summarize(s), Summarize(b)
	metrics := []struct {
		name     string
		get      func(Trial) float64
		est      func(Summary) Estimate
		up, down string
	}{
		{MetricRequestsPerSecond, func(t Trial) float64 { return t.RequestsPerSecond },
			func(s Summary) Estimate { return s.RequestsPerSecond }, Faster, Slower},
		{MetricP99Ms, func(t Trial) float64 { return t.P99Ms },
			func(s Summary) Estimate { return s.P99Ms }, Higher, Lower},
	}
	var out []Comparison
	for _, m := range metrics {
		r := Compare(values(s, m.get), values(b, m.get))
		c := Comparison{Series: series, Baseline: baseline, Concurrency: concurrency, Metric: m.name,
			Trials: len(s), BaselineTrials: len(b),
			Value: num(m.est(ss).Median), BaselineValue: num(m.est(bs).Median),
			ValueCI95: m.est(ss).Interval(), BaselineValueCI95: m.est(bs).Interval(),
			Ratio: num(r.Ratio), PValue: r.P, Verdict: r.Verdict(noise, m.up, m.down)}
		if r.HasInterval() {
			c.RatioCI95 = []float64{r.Lo, r.Hi}
		}
		if ss.FailedRatio > 0 || bs.FailedRatio > 0 {
			c.FailedRatio = &Sides{Series: ss.FailedRatio, Baseline: bs.FailedRatio}
		}
		out = append(out, c)
	}
	return out
}

func values(ts []Trial, get func(Trial) float64) []float64 {
	v := make([]float64, len(ts))
	for i, t := range ts {
		v[i] = get(t)
	}
	return v
}

// num is f, or nil for NaN and infinities (JSON has no such numbers).
func num(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// VerdictText is the verdict with the failures it must not hide:
// "faster (62% failed)", "slower (baseline 40% failed)".
func (c *Comparison) VerdictText() string {
	if c.FailedRatio == nil {
		return c.Verdict
	}
	var parts []string
	if f := c.FailedRatio.Series; f > 0 {
		parts = append(parts, pct(f)+" failed")
	}
	if f := c.FailedRatio.Baseline; f > 0 {
		parts = append(parts, "baseline "+pct(f)+" failed")
	}
	return c.Verdict + " (" + strings.Join(parts, ", ") + ")"
}

// pct prints a ratio as a percentage: 62%, 0.5%, 0.01%.
func pct(f float64) string {
	switch v := 100 * f; {
	case v >= 10:
		return fmt.Sprintf("%.0f%%", v)
	case v >= 1:
		return fmt.Sprintf("%.1f%%", v)
	default:
		return fmt.Sprintf("%.2g%%", v)
	}
}

// RatioText is "0.801 [0.795, 0.806]", or the ratio alone with "no
// interval", or "-" without a ratio.
func (c *Comparison) RatioText() string {
	if c.Ratio == nil {
		return "-"
	}
	if c.RatioCI95 == nil {
		return fmt.Sprintf("%.3f (no interval)", *c.Ratio)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", *c.Ratio, c.RatioCI95[0], c.RatioCI95[1])
}

// PlusMinus is "± 2.1%": the larger distance from e's median to a bound,
// in percent of the median; "" without interval.
func (e Estimate) PlusMinus() string {
	w := e.HalfWidth()
	if math.IsInf(w, 0) || math.IsNaN(w) {
		return ""
	}
	return fmt.Sprintf("± %s", pct(w))
}

// Interval is [Lo, Hi], or nil without an interval (JSON null).
func (e Estimate) Interval() []float64 {
	if !e.HasInterval() {
		return nil
	}
	return []float64{e.Lo, e.Hi}
}
