package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/stats"
)

// Capacity is a finished capacity search as the renderers see it: its
// answer (Answer), its table of steps (Table, TableFit), its progress lines
// (Searching, StepLine, Heading), the words of its chart (P99Bound,
// LevelAxis) and capacity.json (JSON, of capacity.JSONReport's shape).
type Capacity struct {
	// Model is capacity.ModelOpen (levels are rates) or
	// capacity.ModelClosed (concurrencies).
	Model string
	// Objectives are the objectives searched within.
	Objectives []capacity.Objective
	// Result is the search's outcome.
	Result capacity.Result
	// MaxTime is the search's time bound (for the early-stop sentence).
	MaxTime time.Duration
	// Started and Ended bound the search; Environment is where it ran
	// and its command line. All optional: the JSON leaves them out when
	// zero.
	Started, Ended time.Time
	Environment    *stats.Environment
}

// FormatLevel writes a level: a concurrency as a whole number, a rate as
// it was asked (capacity.FormatRate); both with thousands separators
// ("4,210").
func (r *Capacity) FormatLevel(v float64) string {
	if r.Model == capacity.ModelOpen {
		return capacity.FormatRate(v)
	}
	return capacity.FormatRate(math.Floor(v))
}

// level writes a level with its unit, as the answer names it.
func (r *Capacity) level(v float64) string {
	if r.Model == capacity.ModelOpen {
		return r.levelUnit(v)
	}
	return "a concurrency of " + r.FormatLevel(v)
}

// levelUnit writes a level after its noun: "4,420 req/s" or "21".
func (r *Capacity) levelUnit(v float64) string {
	if r.Model == capacity.ModelOpen {
		return r.FormatLevel(v) + " req/s"
	}
	return r.FormatLevel(v)
}

// levelUnit0 appends the unit to a list of levels.
func (r *Capacity) levelUnit0(list string) string {
	if r.Model == capacity.ModelOpen {
		return list + " req/s"
	}
	return list
}

func (r *Capacity) noun() string {
	if r.Model == capacity.ModelOpen {
		return "rate"
	}
	return "concurrency"
}

// values writes the objectives' values at step st: all of them, or only the
// failing ones and, failing, why the load was not held.
func (r *Capacity) values(st *capacity.Step, failing bool) string {
	var parts []string
	for i, o := range r.Objectives {
		if failing && st.Results[i].Pass {
			continue
		}
		parts = append(parts, o.Metric+" "+o.Format(st.Results[i].Value))
	}
	if failing && st.Held.Verdict != capacity.HeldYes {
		why := st.Held.Why
		if st.Held.Verdict == capacity.HeldUnsure {
			why = "not shown steady: " + why
		}
		parts = append(parts, why)
	}
	return strings.Join(parts, ", ")
}

// Answer is the report's first line: "sustains 4,210 req/s with p99 <= 50
// ms (p99 at that rate: 38.2 ms; first failing rate 4,420 req/s: p99 71.5
// ms)", with "at least" and the reason when the client, the --max bound or
// the time bound ended the search.
func (r *Capacity) Answer() string {
	res := &r.Result
	var objs []string
	for _, o := range r.Objectives {
		objs = append(objs, o.Describe())
	}
	within := strings.Join(objs, " and ")
	var b strings.Builder
	if res.Best < 0 && res.Unconfirmed {
		fmt.Fprintf(&b, "sustains no %s confirmed with %s", r.noun(), within)
	} else if res.Best < 0 {
		fmt.Fprintf(&b, "sustains no %s tried with %s", r.noun(), within)
		if ff := res.FirstFail; ff >= 0 {
			st := &res.Steps[ff]
			fmt.Fprintf(&b, " (lowest %s tried %s: %s)", r.noun(), r.levelUnit(st.Level), r.values(st, true))
		}
	} else {
		best := &res.Steps[res.Best]
		atLeast := res.LimitedBy == capacity.LimitedByClient || res.AtMax || res.StoppedEarly || res.Interrupted
		b.WriteString("sustains ")
		if atLeast {
			b.WriteString("at least ")
		}
		fmt.Fprintf(&b, "%s with %s (", r.level(res.Capacity), within)
		if len(r.Objectives) == 1 {
			fmt.Fprintf(&b, "%s at that %s: %s", r.Objectives[0].Metric, r.noun(), r.Objectives[0].Format(best.Results[0].Value))
		} else {
			fmt.Fprintf(&b, "at that %s: %s", r.noun(), r.values(best, false))
		}
		if ff := res.FirstFail; ff >= 0 {
			st := &res.Steps[ff]
			fmt.Fprintf(&b, "; first failing %s %s: %s", r.noun(), r.levelUnit(st.Level), r.values(st, true))
		}
		b.WriteString(")")
	}
	if res.Step > 0 {
		fmt.Fprintf(&b, "; %s steps", capacity.FormatLength(res.Step))
		switch {
		case res.Confirmed:
			fmt.Fprintf(&b, ", confirmed by a %s run", capacity.FormatLength(res.ConfirmLength))
		case res.Unconfirmed:
			var tried []string
			for _, st := range res.Steps {
				if l := r.FormatLevel(st.Level); st.Confirm && (len(tried) == 0 || tried[len(tried)-1] != l) {
					tried = append(tried, l)
				}
			}
			fmt.Fprintf(&b, "; no %s confirmation run passed (%s)", capacity.FormatLength(res.ConfirmLength), r.levelUnit0(strings.Join(tried, ", ")))
		case res.ConfirmLength == 0:
			b.WriteString(", not confirmed (--confirm 0)")
		case res.Best >= 0:
			b.WriteString(", not confirmed")
		}
	}
	switch {
	case res.LimitedBy == capacity.LimitedByClient:
		fmt.Fprintf(&b, "; limited by the client, not the backend: %s", res.Reason)
	case res.AtMax:
		fmt.Fprintf(&b, "; %s was the highest %s allowed (--max)", r.FormatLevel(res.Capacity), r.noun())
	case res.Confirmed && res.Reason != "":
		// Confirmed below its failed confirmations' walk (capacity.Search).
		b.WriteString("; " + res.Reason)
	}
	if res.StoppedEarly {
		fmt.Fprintf(&b, "; stopped early at --max-time %s: the best passing step so far", r.MaxTime)
	}
	if res.Interrupted {
		b.WriteString("; interrupted: the best passing step so far")
	}
	return b.String()
}

// Table writes every step: level, achieved rate, p50, p99, error rate and
// the verdict (with the failing objectives, and whether it was a
// confirmation or held back by the client).
func (r *Capacity) Table(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tlength\tachieved req/s\tp50 ms\tp99 ms\terrors\t\n", r.noun())
	for i := range r.Result.Steps {
		st := &r.Result.Steps[i]
		fmt.Fprintf(tw, "%s\t  %s\n", r.row(st), r.verdict(st))
	}
	return tw.Flush()
}

// row is a step's cells but the verdict, tab-separated.
func (r *Capacity) row(st *capacity.Step) string {
	return fmt.Sprintf("%s\t%s\t%.1f\t%.2f\t%.2f\t%.2f%%", r.FormatLevel(st.Level), capacity.FormatLength(st.Length), st.AchievedRPS, st.P50, st.P99,
		st.ErrorRate*100)
}

// verdict is a step's last cell: pass, or FAIL with the failing
// objectives, and what kind of step it was.
func (r *Capacity) verdict(st *capacity.Step) string {
	verdict := "pass"
	if !st.Pass {
		verdict = "FAIL " + r.values(st, true)
	}
	if st.Confirm {
		verdict += " (confirm)"
	}
	if st.Again {
		verdict += " (measured again)"
	}
	if st.Longer {
		verdict += " (longer: the shorter step could not tell)"
	}
	if st.ClientLimit != "" {
		verdict += " (held back by the client)"
	}
	return verdict
}

// TableFit writes Table fitted to width columns: as it is when it fits
// (or width <= 0), else a verdict that would make its row too wide goes
// on the lines under the row, indented and wrapped at spaces (Wrap).
func (r *Capacity) TableFit(w io.Writer, width int) error {
	var wide strings.Builder
	if err := r.Table(&wide); err != nil {
		return err
	}
	if width <= 0 || Width(wide.String()) <= width {
		_, err := io.WriteString(w, wide.String())
		return err
	}
	var nums strings.Builder
	tw := tabwriter.NewWriter(&nums, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tlength\tachieved req/s\tp50 ms\tp99 ms\terrors\t\n", r.noun())
	for i := range r.Result.Steps {
		fmt.Fprintf(tw, "%s\t\n", r.row(&r.Result.Steps[i]))
	}
	tw.Flush()
	lines := strings.Split(strings.TrimSuffix(nums.String(), "\n"), "\n")
	var b strings.Builder
	b.WriteString(strings.TrimRight(lines[0], " ") + "\n")
	for i := range r.Result.Steps {
		row := strings.TrimRight(lines[i+1], " ")
		v := r.verdict(&r.Result.Steps[i])
		if utf8.RuneCountInString(row)+2+utf8.RuneCountInString(v) <= width {
			b.WriteString(row + "  " + v + "\n")
			continue
		}
		b.WriteString(row + "\n")
		b.WriteString(Wrap("    "+v, width, "      ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JSON returns the JSON form of the report; concurrency is the open
// model's in-flight ceiling (the closed model's is each step's level).
func (r *Capacity) JSON(concurrency int) capacity.JSONReport {
	res := &r.Result
	j := capacity.JSONReport{Answer: r.Answer(), Model: r.Model, SLO: capacity.Texts(r.Objectives), LimitedBy: res.LimitedBy,
		StoppedEarly: res.StoppedEarly, Interrupted: res.Interrupted, Steps: []capacity.StepJSON{}, Objectives: []capacity.ObjectiveJSON{},
		Environment: r.Environment, StepSeconds: res.Step.Seconds(), ConfirmSeconds: res.ConfirmLength.Seconds(), Confirmed: res.Confirmed}
	if !r.Started.IsZero() {
		j.StartedAt = float64(r.Started.UnixNano()) / 1e9
	}
	if !r.Ended.IsZero() {
		j.EndedAt = float64(r.Ended.UnixNano()) / 1e9
	}
	for _, o := range r.Objectives {
		j.Objectives = append(j.Objectives, capacity.ObjectiveJSON{Objective: o.Text, Metric: o.Metric, Bound: o.Bound})
	}
	if res.LimitedBy == capacity.LimitedByClient {
		j.LimitedReason = res.Reason
	}
	if r.Model == capacity.ModelOpen {
		v := res.Capacity
		j.CapacityRPS = &v
	} else {
		v := int(res.Capacity)
		j.CapacityConcurrency = &v
	}
	for _, st := range res.Steps {
		sj := capacity.StepJSON{Concurrency: concurrency, AchievedRPS: st.AchievedRPS, P50Ms: st.P50, P99Ms: st.P99,
			ErrorRate: st.ErrorRate, Pass: st.Pass, Confirm: st.Confirm, ClientLimit: st.ClientLimit, SLO: st.Results}
		if sj.SLO == nil {
			sj.SLO = []stats.SLOResult{}
		}
		sj.LengthSeconds, sj.Again, sj.Longer = st.Length.Seconds(), st.Again, st.Longer
		if st.Record != nil {
			sj.Records = []*stats.Record{st.Record}
		}
		sj.Held, sj.HeldReason = [...]string{"yes", "unsure", "no"}[st.Held.Verdict], st.Held.Why
		if h := st.Held; h.Judged {
			sj.LatencyHalvesMs, sj.LatencyGrowthMs = &h.LatencyMs, &h.LatencyGrowthMs
			if r.Model == capacity.ModelOpen {
				sj.InFlightHalves, sj.InFlightGrowth, sj.ServedRPS = &h.InFlight, &h.InFlightGrowth, &h.ServedRPS
			}
		}
		if r.Model == capacity.ModelOpen {
			sj.Rate = st.Level
		} else {
			sj.Concurrency = int(st.Level)
		}
		j.Steps = append(j.Steps, sj)
	}
	return j
}

// StepLine is the progress line of step st as the search goes: its level,
// length and verdict, its p99 and error rate.
func (r *Capacity) StepLine(st capacity.Step) string {
	v := "pass"
	if !st.Pass {
		v = "FAIL"
	}
	if st.Held.Verdict != capacity.HeldYes {
		v += " (" + st.Held.Why + ")"
	}
	kind := ""
	if st.Confirm {
		kind = " confirmation"
	}
	unit := "req/s"
	if r.Model == capacity.ModelClosed {
		unit = "connections"
	}
	return fmt.Sprintf("  %s %s, %s%s: %s, p99 %s, errors %.2f%%", r.FormatLevel(st.Level), unit,
		capacity.FormatLength(st.Length), kind, v, capacity.FormatMs(st.P99), st.ErrorRate*100)
}

// Searching is the line that starts a search of url: the model, a step's
// length, the confirmation's and the time bound.
func (r *Capacity) Searching(url string, step, confirm time.Duration) string {
	return fmt.Sprintf("Searching the capacity of %s (%s model, %s per step, a %s confirmation; at most %s)", url, r.Model,
		capacity.FormatLength(step), capacity.FormatLength(confirm), r.MaxTime)
}

// Heading is the title of the steps' table of a search of url: the model
// and its ceiling of requests in flight (open model), a step's length,
// its warm-up, the confirmation and how long the search took.
func (r *Capacity) Heading(url string, ceiling int, step, warmup, confirm, took time.Duration) string {
	warm := ""
	if warmup > 0 {
		warm = " after a " + capacity.FormatLength(warmup) + " warm-up"
	}
	limit := ""
	if r.Model != capacity.ModelClosed {
		limit = fmt.Sprintf(", at most %d in flight", ceiling)
	}
	conf := ", no confirmation run"
	if confirm > 0 {
		conf = ", a " + capacity.FormatLength(confirm) + " confirmation run"
	}
	return fmt.Sprintf("Capacity search: %s, %s model%s, %s per step%s%s, %d steps in %.1f s",
		url, r.Model, limit, capacity.FormatLength(step), warm, conf, len(r.Result.Steps), took.Seconds())
}

// P99Bound is the bound of the p99 objective searched within, the
// chart's line (the last one given; 0: none).
func (r *Capacity) P99Bound() float64 {
	bound := 0.0
	for _, o := range r.Objectives {
		if o.Metric == capacity.MetricP99 {
			bound = o.Bound
		}
	}
	return bound
}

// LevelAxis names the levels as the chart's axis does: the offered rate
// or the concurrency, with its unit.
func (r *Capacity) LevelAxis() string {
	if r.Model == capacity.ModelClosed {
		return "concurrency (connections)"
	}
	return "offered rate (req/s)"
}
