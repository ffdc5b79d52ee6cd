package report

import (
	"fmt"
	"io"

	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// Trials is bench's result of trials as its text report draws it.
type Trials struct {
	// Pooled is the pooled run's own summary: ab's report.
	Pooled *stats.Summary
	// Medians are the trials' medians with their intervals, of Runs
	// trials.
	Medians *trials.Summary
	Runs    int
	// Precise, with a precision asked, says whether the requests/sec
	// interval got within it.
	Precise *bool
	// Plan is the trials' plan (its line and its precision).
	Plan trials.Plan
}

// TrialsText writes bench's text report of trials t: ab's report of the
// pooled run's own summary (its requests/sec the pooled one), then what
// the trials add: the medians of their figures with their intervals, and
// whether the precision was reached.
func TrialsText(w io.Writer, t *Trials, o TextOptions) error {
	if err := Text(w, t.Pooled, o); err != nil {
		return err
	}
	m := t.Medians
	fmt.Fprintf(w, "\n%s\n", t.Plan.Describe(false))
	conf := "no interval with one trial"
	if c := m.RequestsPerSecond.Confidence; c > 0 {
		conf = fmt.Sprintf("%.4g%% interval", 100*c)
	}
	fmt.Fprintf(w, "Median of %d trials (%s):\n", t.Runs, conf)
	line := func(name string, e trials.Estimate, unit string) {
		ci := e.Interval()
		if ci == nil {
			fmt.Fprintf(w, "  %-20s %.3f %s\n", name, e.Median, unit)
			return
		}
		e = trials.Estimate{Median: e.Median, Lo: ci[0], Hi: ci[1], N: 2}
		fmt.Fprintf(w, "  %-20s %.3f %s %s [%.3f, %.3f]\n", name, e.Median, unit, e.PlusMinus(), ci[0], ci[1])
	}
	line("Requests per second:", m.RequestsPerSecond, "[#/sec]")
	line("mean:", m.MeanMs, "[ms]")
	line("p50:", m.P50Ms, "[ms]")
	line("p99:", m.P99Ms, "[ms]")
	line("max:", m.MaxMs, "[ms]")
	if t.Precise != nil && !*t.Precise {
		fmt.Fprintf(w, "Note: the requests/sec interval is still wider than ±%g%% after %d trials (--max-repeat)\n", 100*t.Plan.Precision, t.Runs)
	}
	return nil
}
