package capacity

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/backbench/backbench/internal/stats"
)

// Models of a search.
const (
	ModelOpen   = "open"
	ModelClosed = "closed"
)

// Report is a finished search as the renderers see it.
type Report struct {
	// Model is ModelOpen (levels are rates) or ModelClosed (concurrencies).
	Model string
	// Objectives are the objectives searched within.
	Objectives []Objective
	// Result is the search's outcome.
	Result Result
	// MaxTime is the search's time bound (for the early-stop sentence).
	MaxTime time.Duration
	// Started and Ended bound the search; Environment is where it ran
	// and its command line. All optional: the JSON leaves them out when
	// zero.
	Started, Ended time.Time
	Environment    *stats.Environment
}

// FormatLevel writes a level: a concurrency as a whole number, a rate as
// it was asked (FormatRate); both with thousands separators ("4,210").
func (r *Report) FormatLevel(v float64) string {
	if r.Model == ModelOpen {
		return FormatRate(v)
	}
	return FormatRate(math.Floor(v))
}

// FormatRate writes a rate with the digits it has and no more, never
// rounded ("193.75", "4,210", "9.6875"), with thousands separators.
func FormatRate(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	whole, frac, dot := strings.Cut(s, ".")
	neg := strings.HasPrefix(whole, "-")
	whole = strings.TrimPrefix(whole, "-")
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	if neg {
		whole = "-" + whole
	}
	if dot {
		return whole + "." + frac
	}
	return whole
}

// FormatLength writes a step's length in seconds: "2 s", "0.5 s", "1.25 s".
func FormatLength(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// level writes a level with its unit, as the answer names it.
func (r *Report) level(v float64) string {
	if r.Model == ModelOpen {
		return r.levelUnit(v)
	}
	return "a concurrency of " + r.FormatLevel(v)
}

// levelUnit writes a level after its noun: "4,420 req/s" or "21".
func (r *Report) levelUnit(v float64) string {
	if r.Model == ModelOpen {
		return r.FormatLevel(v) + " req/s"
	}
	return r.FormatLevel(v)
}

// levelUnit0 appends the unit to a list of levels.
func (r *Report) levelUnit0(list string) string {
	if r.Model == ModelOpen {
		return list + " req/s"
	}
	return list
}

func (r *Report) noun() string {
	if r.Model == ModelOpen {
		return "rate"
	}
	return "concurrency"
}

// values writes the objectives' values at step st: all of them, or only the
// failing ones and, failing, why the load was not held.
func (r *Report) values(st *Step, failing bool) string {
	var parts []string
	for i, o := range r.Objectives {
		if failing && st.Results[i].Pass {
			continue
		}
		parts = append(parts, o.Metric+" "+o.Format(st.Results[i].Value))
	}
	if failing && st.Held.Verdict != HeldYes {
		why := st.Held.Why
		if st.Held.Verdict == HeldUnsure {
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
func (r *Report) Answer() string {
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
		atLeast := res.LimitedBy == LimitedByClient || res.AtMax || res.StoppedEarly || res.Interrupted
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
		fmt.Fprintf(&b, "; %s steps", FormatLength(res.Step))
		switch {
		case res.Confirmed:
			fmt.Fprintf(&b, ", confirmed by a %s run", FormatLength(res.ConfirmLength))
		case res.Unconfirmed:
			var tried []string
			for _, st := range res.Steps {
				if l := r.FormatLevel(st.Level); st.Confirm && (len(tried) == 0 || tried[len(tried)-1] != l) {
					tried = append(tried, l)
				}
			}
			fmt.Fprintf(&b, "; no %s confirmation run passed (%s)", FormatLength(res.ConfirmLength), r.levelUnit0(strings.Join(tried, ", ")))
		case res.ConfirmLength == 0:
			b.WriteString(", not confirmed (--confirm 0)")
		case res.Best >= 0:
			b.WriteString(", not confirmed")
		}
	}
	switch {
	case res.LimitedBy == LimitedByClient:
		fmt.Fprintf(&b, "; limited by the client, not the backend: %s", res.Reason)
	case res.AtMax:
		fmt.Fprintf(&b, "; %s was the highest %s allowed (--max)", r.FormatLevel(res.Capacity), r.noun())
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
func (r *Report) Table(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tlength\tachieved req/s\tp50 ms\tp99 ms\terrors\t\n", r.noun())
	for i := range r.Result.Steps {
		st := &r.Result.Steps[i]
		fmt.Fprintf(tw, "%s\t  %s\n", r.row(st), r.verdict(st))
	}
	return tw.Flush()
}

// row is a step's cells but the verdict, tab-separated.
func (r *Report) row(st *Step) string {
	return fmt.Sprintf("%s\t%s\t%.1f\t%.2f\t%.2f\t%.2f%%", r.FormatLevel(st.Level), FormatLength(st.Length), st.AchievedRPS, st.P50, st.P99,
		st.ErrorRate*100)
}

// verdict is a step's last cell: pass, or FAIL with the failing
// objectives, and what kind of step it was.
func (r *Report) verdict(st *Step) string {
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
// on the lines under the row, indented and wrapped at spaces.
func (r *Report) TableFit(w io.Writer, width int) error {
	var wide strings.Builder
	if err := r.Table(&wide); err != nil {
		return err
	}
	widest := 0
	for _, l := range strings.Split(wide.String(), "\n") {
		widest = max(widest, utf8.RuneCountInString(l))
	}
	if width <= 0 || widest <= width {
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
		b.WriteString(wrap("    "+v, width, "      ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrap breaks text at spaces into lines of at most width columns, the
// lines after the first indented by indent (a word longer than a line
// stays whole).
func wrap(text string, width int, indent string) string {
	lead := len(text) - len(strings.TrimLeft(text, " "))
	var b strings.Builder
	b.WriteString(text[:lead])
	line := lead
	for i, word := range strings.Fields(text) {
		n := utf8.RuneCountInString(word)
		switch {
		case i == 0:
		case line+1+n > width:
			b.WriteString("\n" + indent)
			line = utf8.RuneCountInString(indent)
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += n
	}
	return b.String()
}

// StepJSON is one step in the JSON report.
type StepJSON struct {
	// Rate is the asked rate in requests per second (open model; 0 in the
	// closed model).
	Rate float64 `json:"rate"`
	// Concurrency is the number of workers: the level in the closed model,
	// the in-flight ceiling in the open model.
	Concurrency int `json:"concurrency"`
	// AchievedRPS is the rate sent (open) or completed (closed).
	AchievedRPS float64 `json:"achieved_rps"`
	// P50Ms and P99Ms are latencies in ms.
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	// ErrorRate is from 0 to 1.
	ErrorRate float64 `json:"error_rate"`
	// Pass reports that every objective held.
	Pass bool `json:"pass"`
	// Confirm marks a confirmation run.
	Confirm bool `json:"confirm"`
	// ClientLimit, when not empty, says how the client held the step back
	// (such a step is run again, up to twice).
	ClientLimit string `json:"client_limit,omitempty"`
	// LengthSeconds is how long the step ran (its counted time).
	LengthSeconds float64 `json:"length_seconds"`
	// Held is "yes" (the load was held: served within 2% of the rate, no
	// growth of the requests in flight or the latency from the step's
	// first half to its second), "unsure" (growth above noise but not
	// clearly: the step is run longer) or "no"; HeldReason says what grew
	// or fell short.
	Held       string `json:"held"`
	HeldReason string `json:"held_reason,omitempty"`
	// LatencyHalvesMs and InFlightHalves are the step's halves' mean
	// latency (ms) and mean requests in flight (open model); ServedRPS
	// the rate of finished requests after the first tenth of the step
	// (open model). Absent when the step was not judged.
	LatencyHalvesMs *[2]float64 `json:"latency_halves_ms,omitempty"`
	InFlightHalves  *[2]float64 `json:"in_flight_halves,omitempty"`
	ServedRPS       *float64    `json:"served_rps,omitempty"`
	// Again marks a second look at a failing level (the first level, or
	// one below a passing level); Longer a step run longer because the one
	// before it could not tell.
	Again  bool `json:"again,omitempty"`
	Longer bool `json:"longer,omitempty"`
	// SLO are the step's verdicts on the objectives, in order: the
	// measured value of each objective's metric and whether it held.
	SLO []stats.SLOResult `json:"slo_results"`
	// Records are the step's run records (one per run: a step is one);
	// absent in files written before they were kept.
	Records []*stats.Record `json:"records,omitempty"`
}

// ObjectiveJSON is one objective, parsed, in the JSON report.
type ObjectiveJSON struct {
	// Objective is the objective as given ("p99<=50ms").
	Objective string `json:"objective"`
	// Metric is p50, p90, p99, p99.9, max or errors.
	Metric string `json:"metric"`
	// Bound is the highest passing value: ms, or percent for errors.
	Bound float64 `json:"bound"`
}

// JSONReport is the JSON form of a Report.
type JSONReport struct {
	// Answer is the report's first line.
	Answer string `json:"answer"`
	// Model is "open" or "closed".
	Model string `json:"model"`
	// CapacityRPS (open model) or CapacityConcurrency (closed model) is
	// the answer; 0 when no step passed.
	CapacityRPS         *float64 `json:"capacity_rps,omitempty"`
	CapacityConcurrency *int     `json:"capacity_concurrency,omitempty"`
	// SLO are the objectives as given.
	SLO []string `json:"slo"`
	// Objectives are the objectives parsed, in the order of SLO.
	Objectives []ObjectiveJSON `json:"objectives"`
	// LimitedBy is "backend" or "client"; LimitedReason says why the
	// client limited the search.
	LimitedBy     string `json:"limited_by"`
	LimitedReason string `json:"limited_reason,omitempty"`
	// StoppedEarly reports that --max-time ended the search.
	StoppedEarly bool `json:"stopped_early"`
	// Interrupted reports that a signal ended the search.
	Interrupted bool `json:"interrupted"`
	// StepSeconds is the length of a step (-t) and ConfirmSeconds that of
	// the confirmation run (--confirm; 0: none); Confirmed reports that the
	// answer passed its confirmation run.
	StepSeconds    float64 `json:"step_seconds"`
	ConfirmSeconds float64 `json:"confirm_seconds"`
	Confirmed      bool    `json:"confirmed"`
	// Steps are every step run, in order.
	Steps []StepJSON `json:"steps"`
	// StartedAt and EndedAt are the search's start and end in Unix
	// seconds, Environment where it ran (with its command line), as in
	// a run record; absent in files written before they were recorded.
	StartedAt   float64            `json:"started_at,omitempty"`
	EndedAt     float64            `json:"ended_at,omitempty"`
	Environment *stats.Environment `json:"environment,omitempty"`
}

// JSON returns the JSON form of the report; concurrency is the open
// model's in-flight ceiling (the closed model's is each step's level).
func (r *Report) JSON(concurrency int) JSONReport {
	res := &r.Result
	j := JSONReport{Answer: r.Answer(), Model: r.Model, SLO: Texts(r.Objectives), LimitedBy: res.LimitedBy,
		StoppedEarly: res.StoppedEarly, Interrupted: res.Interrupted, Steps: []StepJSON{}, Objectives: []ObjectiveJSON{},
		Environment: r.Environment, StepSeconds: res.Step.Seconds(), ConfirmSeconds: res.ConfirmLength.Seconds(), Confirmed: res.Confirmed}
	if !r.Started.IsZero() {
		j.StartedAt = float64(r.Started.UnixNano()) / 1e9
	}
	if !r.Ended.IsZero() {
		j.EndedAt = float64(r.Ended.UnixNano()) / 1e9
	}
	for _, o := range r.Objectives {
		j.Objectives = append(j.Objectives, ObjectiveJSON{Objective: o.Text, Metric: o.Metric, Bound: o.Bound})
	}
	if res.LimitedBy == LimitedByClient {
		j.LimitedReason = res.Reason
	}
	if r.Model == ModelOpen {
		v := res.Capacity
		j.CapacityRPS = &v
	} else {
		v := int(res.Capacity)
		j.CapacityConcurrency = &v
	}
	for _, st := range res.Steps {
		sj := StepJSON{Concurrency: concurrency, AchievedRPS: st.AchievedRPS, P50Ms: st.P50, P99Ms: st.P99,
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
			sj.LatencyHalvesMs = &h.LatencyMs
			if r.Model == ModelOpen {
				sj.InFlightHalves, sj.ServedRPS = &h.InFlight, &h.ServedRPS
			}
		}
		if r.Model == ModelOpen {
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
func (r *Report) StepLine(st Step) string {
	v := "pass"
	if !st.Pass {
		v = "FAIL"
	}
	if st.Held.Verdict != HeldYes {
		v += " (" + st.Held.Why + ")"
	}
	kind := ""
	if st.Confirm {
		kind = " confirmation"
	}
	unit := "req/s"
	if r.Model == ModelClosed {
		unit = "connections"
	}
	return fmt.Sprintf("  %s %s, %s%s: %s, p99 %s, errors %.2f%%", r.FormatLevel(st.Level), unit,
		FormatLength(st.Length), kind, v, FormatMs(st.P99), st.ErrorRate*100)
}

// Searching is the line that starts a search of url: the model, a step's
// length, the confirmation's and the time bound.
func (r *Report) Searching(url string, step, confirm time.Duration) string {
	return fmt.Sprintf("Searching the capacity of %s (%s model, %s per step, a %s confirmation; at most %s)", url, r.Model,
		FormatLength(step), FormatLength(confirm), r.MaxTime)
}

// Heading is the title of the steps' table of a search of url: the model
// and its ceiling of requests in flight (open model), a step's length,
// its warm-up, the confirmation and how long the search took.
func (r *Report) Heading(url string, ceiling int, step, warmup, confirm, took time.Duration) string {
	warm := ""
	if warmup > 0 {
		warm = " after a " + FormatLength(warmup) + " warm-up"
	}
	limit := ""
	if r.Model != ModelClosed {
		limit = fmt.Sprintf(", at most %d in flight", ceiling)
	}
	conf := ", no confirmation run"
	if confirm > 0 {
		conf = ", a " + FormatLength(confirm) + " confirmation run"
	}
	return fmt.Sprintf("Capacity search: %s, %s model%s, %s per step%s%s, %d steps in %.1f s",
		url, r.Model, limit, FormatLength(step), warm, conf, len(r.Result.Steps), took.Seconds())
}

// P99Bound is the bound of the p99 objective searched within, the
// chart's line (the last one given; 0: none).
func (r *Report) P99Bound() float64 {
	bound := 0.0
	for _, o := range r.Objectives {
		if o.Metric == MetricP99 {
			bound = o.Bound
		}
	}
	return bound
}

// LevelAxis names the levels as the chart's axis does: the offered rate
// or the concurrency, with its unit.
func (r *Report) LevelAxis() string {
	if r.Model == ModelClosed {
		return "concurrency (connections)"
	}
	return "offered rate (req/s)"
}
