package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/backbench/backbench/internal/trials"
)

// ComparisonTable writes comparisons as a table, one row per series, level
// and metric, benchstat's way: the baseline's median ± its interval, the
// series', the ratio with its interval (labelled with its real
// confidence: trials.RatioLabel), the p-value and the verdict (with the
// failures of either side).
func ComparisonTable(w io.Writer, cs []trials.Comparison) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "series\tbaseline\tc\tmetric\tbaseline value\tvalue\tratio ["+trials.RatioLabel(cs)+"]\tp\tverdict")
	group := ""
	for i := range cs {
		c := &cs[i]
		if c.FactorTitle != "" && c.FactorTitle != group {
			// Comparisons come grouped by what differs: a heading
			// per group ("transport: unix vs tcp").
			group = c.FactorTitle
			fmt.Fprintf(tw, "%s\t\t\t\t\t\t\t\t\n", group)
		}
		series, baseline := c.Series, c.Baseline
		if c.File != "" {
			series, baseline = c.Series+" ("+c.File+")", c.Baseline+" ("+c.BaselineFile+")"
		}
		if c.FactorTitle != "" {
			series = "  " + series
		}
		p := "-"
		if c.RatioCI95 != nil {
			p = fmt.Sprintf("%.3f", c.PValue)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", series, baseline, c.Concurrency,
			comparisonMetric(c), valueText(c.BaselineValue, c.BaselineValueCI95),
			valueText(c.Value, c.ValueCI95), c.RatioText(), p, c.VerdictText())
	}
	return tw.Flush()
}

// comparisonMetric is the table's name of c's metric, after its target
// for a comparison of one target of a mix: "GET /checkout p99 ms".
func comparisonMetric(c *trials.Comparison) string {
	if c.Target != "" {
		return c.Target + " " + metricName(c.Metric)
	}
	return metricName(c.Metric)
}

// metricName is the table's name of a metric.
func metricName(m string) string {
	switch m {
	case trials.MetricRequestsPerSecond:
		return "req/s"
	case trials.MetricP99Ms:
		return "p99 ms"
	case trials.MetricMeanMs:
		return "mean ms"
	case trials.MetricP50Ms:
		return "p50 ms"
	case trials.MetricMaxMs:
		return "max ms"
	case trials.MetricBackendCPUPerRequest:
		return "backend CPU s/req"
	case trials.MetricBackendPSSBytes:
		return "backend PSS bytes"
	}
	return m
}

// valueText is "93.41 ± 0.8%", the median alone without an interval, or
// "-" without a value.
func valueText(v *float64, ci []float64) string {
	if v == nil {
		return "-"
	}
	s := fmt.Sprintf("%.2f", *v)
	switch a := math.Abs(*v); {
	case a > 0 && a < 0.01: // CPU seconds per request
		s = fmt.Sprintf("%.3g", *v)
	case a >= 1e5: // bytes
		s = fmt.Sprintf("%.0f", *v)
	}
	if ci != nil && *v != 0 {
		e := trials.Estimate{Median: *v, Lo: ci[0], Hi: ci[1], N: 2}
		s += " " + e.PlusMinus()
	}
	return strings.TrimSpace(s)
}
