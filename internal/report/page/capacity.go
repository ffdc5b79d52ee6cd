package page

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// closedModel reports whether the search was over the concurrency.
func closedModel(c *capacity.JSONReport) bool {
	return c.CapacityConcurrency != nil || c.Model == "closed"
}

// level writes a step's offered load as the text report does: a rate as
// it was asked, never rounded (capacity.FormatRate).
func level(v float64) string { return capacity.FormatRate(v) }

// offered is a step's offered load: its rate, or its concurrency.
func offered(c *capacity.JSONReport, s *capacity.StepJSON) float64 {
	if closedModel(c) {
		return float64(s.Concurrency)
	}
	return s.Rate
}

// stepVerdict is a step's pass or FAIL in words, with its marks.
func stepVerdict(s *capacity.StepJSON) string {
	v := "pass"
	if !s.Pass {
		var failed []string
		for _, r := range s.SLO {
			if !r.Pass {
				failed = append(failed, r.Objective)
			}
		}
		v = "FAIL"
		if len(failed) > 0 {
			v += " (" + strings.Join(failed, ", ") + ")"
		}
	}
	if s.Held != "" && s.Held != "yes" && s.HeldReason != "" {
		if s.Held == "unsure" {
			v += ", not shown steady: " + s.HeldReason
		} else {
			v += ", load not held: " + s.HeldReason
		}
	}
	if s.Confirm {
		v += ", confirmation run"
	}
	if s.Again {
		v += ", measured again"
	}
	if s.Longer {
		v += ", run longer: the shorter step could not tell"
	}
	if s.LengthSeconds > 0 {
		v += ", a " + capacity.FormatLength(time.Duration(s.LengthSeconds*float64(time.Second))) + " run"
	}
	if s.ClientLimit != "" {
		v += ", held back by the client: " + s.ClientLimit
	}
	return v
}

// capacity writes a capacity search: its answer, the chart of each latency
// objective's metric against the offered load with the objective as a
// line, and the table of every step.
func (p *pager) capacity(c *capacity.JSONReport) {
	b := &p.b
	fmt.Fprintf(b, "<p class=\"answer\"><strong>%s</strong></p>\n", esc(c.Answer))
	model := "open model (arrival rate)"
	loadName, unit := "offered rate", "req/s"
	if closedModel(c) {
		model, loadName, unit = "closed model (concurrency)", "concurrency", "connections"
	}
	fmt.Fprintf(b, "<p>%s search, objectives %s, %s; limited by the %s.", esc(model), esc(strings.Join(c.SLO, ", ")),
		plural(len(c.Steps), "step"), esc(c.LimitedBy))
	if c.StepSeconds > 0 {
		fmt.Fprintf(b, " Steps of %s", esc(capacity.FormatLength(time.Duration(c.StepSeconds*float64(time.Second)))))
		switch {
		case c.ConfirmSeconds == 0:
			b.WriteString(", no confirmation run.")
		case c.Confirmed:
			fmt.Fprintf(b, "; the answer was confirmed by a %s run.", esc(capacity.FormatLength(time.Duration(c.ConfirmSeconds*float64(time.Second)))))
		default:
			fmt.Fprintf(b, "; the answer was not confirmed by a %s run.", esc(capacity.FormatLength(time.Duration(c.ConfirmSeconds*float64(time.Second)))))
		}
	}
	if c.LimitedReason != "" {
		fmt.Fprintf(b, " The client held the search back: %s.", esc(c.LimitedReason))
	}
	if c.StoppedEarly {
		b.WriteString(" <strong>Stopped early</strong>: the search reached --max-time.")
	}
	if c.Interrupted {
		b.WriteString(" <strong>Interrupted</strong>: the search was stopped by a signal.")
	}
	if len(c.Objectives) == 0 && len(c.SLO) > 0 {
		b.WriteString(" The file records the objectives as text only (written before <code>objectives</code>): the chart shows p99 without the objective's line.")
	}
	b.WriteString("</p>\n")
	p.capacityChart(c, loadName, unit)

	var rows [][]cell
	for i := range c.Steps {
		s := &c.Steps[i]
		cls := "verdict v-better"
		if !s.Pass {
			cls = "verdict v-worse"
		}
		rows = append(rows, []cell{{text: esc(level(offered(c, s))), class: "num", th: true}, num(fmt.Sprintf("%.1f", s.AchievedRPS)),
			num(fmt.Sprintf("%.2f", s.P50Ms)), num(fmt.Sprintf("%.2f", s.P99Ms)), num(fmt.Sprintf("%.2f%%", s.ErrorRate*100)),
			{text: esc(stepVerdict(s)), class: cls}})
	}
	first := "rate (req/s)"
	if closedModel(c) {
		first = "concurrency"
	}
	p.table("Every step of the search, in the order run", []string{first, "achieved req/s", "p50 (ms)", "p99 (ms)", "errors", "verdict"}, rows)
	// Files that keep the steps' run records (written since records were
	// kept) say what the records add up to.
	var complete, failed int64
	recorded := 0
	for i := range c.Steps {
		if sum, ok := stepRecord(&c.Steps[i]); ok {
			complete, failed, recorded = complete+sum.Complete, failed+sum.Failed, recorded+1
		}
	}
	if recorded > 0 {
		fmt.Fprintf(b, "<p>From the run records of %s: %d requests complete, %d failed.</p>\n", plural(recorded, "step"), complete, failed)
	}
}

// stepRecord is the summary of a step's run records merged as trials that
// ran in turn (stats.InTurn: a step's records are its trials, run one
// after the other); false for a step without records (files written
// before they were kept).
func stepRecord(s *capacity.StepJSON) (stats.Summary, bool) {
	if len(s.Records) == 0 {
		return stats.Summary{}, false
	}
	m, err := stats.MergeAs(stats.InTurn, s.Records...)
	if err != nil {
		return stats.Summary{}, false
	}
	return stats.SummaryOf(m), true
}

// capacityChart draws each latency objective's metric (p99 when there is
// none) against the offered load, one horizontal line per objective.
func (p *pager) capacityChart(c *capacity.JSONReport, loadName, unit string) {
	var metrics []string
	bounds := map[string][]capacity.ObjectiveJSON{}
	for _, o := range c.Objectives {
		if o.Metric == "errors" {
			continue
		}
		if _, ok := bounds[o.Metric]; !ok {
			metrics = append(metrics, o.Metric)
		}
		bounds[o.Metric] = append(bounds[o.Metric], o)
	}
	if len(metrics) == 0 {
		metrics = []string{"p99"}
	}
	steps := make([]*capacity.StepJSON, len(c.Steps))
	for i := range c.Steps {
		steps[i] = &c.Steps[i]
	}
	sort.SliceStable(steps, func(i, j int) bool { return offered(c, steps[i]) < offered(c, steps[j]) })
	for _, m := range metrics {
		ch := &chart{id: p.id("c"), title: m + " of the request time against the " + loadName + ", objective as a line",
			xLabel: loadName + " (" + unit + ")", yLabel: m + " latency (ms)", logY: true}
		l := &line{label: m}
		for _, s := range steps {
			v, ok := stepValue(s, m, bounds[m])
			if !ok {
				continue
			}
			tip := fmt.Sprintf("%s %s: %s %.3f ms; %s", level(offered(c, s)), unit, m, v, stepVerdict(s))
			if s.ErrorRate > 0 {
				tip += fmt.Sprintf("; %.2f%% errors", s.ErrorRate*100)
			}
			if sum, ok := stepRecord(s); ok {
				tip += fmt.Sprintf("; its record: %d complete, %d failed, mean %.2f ms", sum.Complete, sum.Failed, report.LatencyOf(&sum).Mean)
			}
			l.pts = append(l.pts, point{x: offered(c, s), y: v, tip: tip, failed: s.ErrorRate > 0})
		}
		ch.lines = []*line{l}
		for _, o := range bounds[m] {
			ch.refs = append(ch.refs, ref{y: o.Bound, label: "objective " + o.Objective})
		}
		ch.svg(&p.b)
	}
}

// stepValue is the step's value of a latency metric: the objective's
// verdict value, or the step's p50 and p99 keys.
func stepValue(s *capacity.StepJSON, metric string, objs []capacity.ObjectiveJSON) (float64, bool) {
	for _, o := range objs {
		for _, r := range s.SLO {
			if r.Objective == o.Objective {
				return r.Value, true
			}
		}
	}
	switch metric {
	case "p99":
		return s.P99Ms, true
	case "p50":
		return s.P50Ms, true
	}
	return 0, false
}
