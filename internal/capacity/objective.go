// Package capacity finds the highest load a backend sustains within service
// level objectives ("p99<=50ms", "errors<=1%"), as MLPerf LoadGen's server
// scenario does for inference servers.
//
// The search is independent of how a run is made: it calls a StepFunc with
// a load level (an arrival rate in requests per second in the open model, a
// concurrency in the closed model) and a length, and judges the Measure it
// returns. It starts at Config.Start and doubles the level until a step
// fails (halving instead when the first step fails), then bisects between
// the highest passing and the lowest failing level until they are within
// Config.Resolution of each other, and confirms the answer by one run of
// Config.Confirm before giving it.
//
// A step passes when its objectives hold and its load was held (Judge): the
// backend served the asked rate within 2%, and neither the requests in
// flight nor the latency grew through the step by more than half of what
// an overload of the resolution (5%) would add. At a utilisation near 100%
// a queue grows for as long as a step lasts, so that a short step's
// percentiles pass where an hour's would not; the trends see the growth,
// and a pause of the machine, whose backlog drains, does not move them. A
// step whose growth is above that but not clearly a queue (HeldUnsure) is
// run again twice as long, up to MaxLengthen times Config.Step. A failure at the first level, or below a level that passed
// at the same length or longer, is measured again before the search moves
// below it: one noisy step does not collapse the search. A failed
// confirmation steps down (by the resolution, at least StepDown) and
// confirms again, at most MaxConfirms levels; a step-down level passed its
// short step, so its failure is measured again too.
//
// A step that the client, not the backend, held back (its CPU, its own
// lateness, the in-flight ceiling) is run again, up to twice; if the client
// still held it back, the search ends with a lower bound ("at least"),
// confirmed like any answer. The client is the limit only while the
// backend answered as it does unloaded: a failing step whose backend
// served less than asked while the requests it got waited in it (their
// median from the actual send, Measure.SentP50, above QueuedFactor times
// the quickest passing step's) found the backend saturated, whatever the
// client says it held back (a ceiling full of requests the backend has
// not answered), and the search bisects below it.
// Config.MaxTime bounds the whole search: a step that would end past it is
// not started, and the best passing level so far is the answer.
//
// Rates are bisected to three significant digits, rounded down, and
// written as asked (FormatRate): never rounded up.
//
// The same objectives serve as a pass/fail gate on any run (Evaluate). The
// package also renders its answer and step table as text and JSON; the
// chart is drawn by internal/report.
package capacity

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/backbench/backbench/internal/stats"
)

// Metrics an objective can bound: latency percentiles of the total request
// time (from the intended start in the open model), the longest request,
// and the error rate.
const (
	MetricP50    = "p50"
	MetricP90    = "p90"
	MetricP99    = "p99"
	MetricP999   = "p99.9"
	MetricMax    = "max"
	MetricErrors = "errors"
)

// Objective is one bound on a measure: Metric <= Bound. Bound is in ms for
// the latency metrics and in percent for MetricErrors.
type Objective struct {
	// Text is the objective as given ("p99<=50ms").
	Text string
	// Metric is one of the Metric* constants.
	Metric string
	// Bound is the highest value that passes: ms, or percent for errors.
	Bound float64
}

// Latency reports whether the objective bounds a latency (ms).
func (o Objective) Latency() bool { return o.Metric != MetricErrors }

// Describe returns the objective for a sentence: "p99 <= 50 ms".
func (o Objective) Describe() string {
	if o.Latency() {
		return o.Metric + " <= " + strconv.FormatFloat(o.Bound, 'f', -1, 64) + " ms"
	}
	return o.Metric + " <= " + strconv.FormatFloat(o.Bound, 'f', -1, 64) + "%"
}

// Format writes a value of the objective's metric with its unit: "38.2 ms"
// or "0.50%".
func (o Objective) Format(v float64) string {
	if o.Latency() {
		return FormatMs(v)
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "%"
}

// FormatMs writes a time in ms with a precision that suits its size.
func FormatMs(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64) + " ms"
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(v, 'f', 3, 64) + " ms"
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

// Parse reads one objective: p50|p90|p99|p99.9|max<=DURATION (a Go
// duration with its unit: 50ms, 1.5s) or errors<=PERCENT (1%, 0.5%).
// Spaces around the parts are allowed.
func Parse(s string) (Objective, error) {
	metric, bound, ok := strings.Cut(s, "<=")
	metric, bound = strings.TrimSpace(strings.ToLower(metric)), strings.TrimSpace(bound)
	if !ok {
		return Objective{}, fmt.Errorf("bad objective %q: want METRIC<=BOUND, e.g. p99<=50ms or errors<=1%%", s)
	}
	o := Objective{Text: strings.TrimSpace(s), Metric: metric}
	switch metric {
	case MetricP50, MetricP90, MetricP99, MetricP999, MetricMax:
		d, err := time.ParseDuration(bound)
		if err != nil || d <= 0 {
			return Objective{}, fmt.Errorf("bad objective %q: want a duration with its unit after <=, e.g. 50ms", s)
		}
		o.Bound = float64(d) / 1e6
	case MetricErrors:
		v, pct := strings.CutSuffix(bound, "%")
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !pct || err != nil || !(f >= 0 && f <= 100) {
			return Objective{}, fmt.Errorf("bad objective %q: want a percentage from 0%% to 100%% after <=, e.g. errors<=1%%", s)
		}
		o.Bound = f
	default:
		return Objective{}, fmt.Errorf("bad objective %q: unknown metric %q (want p50, p90, p99, p99.9, max or errors)", s, metric)
	}
	return o, nil
}

// ParseAll reads every objective; at least one is required.
func ParseAll(list []string) ([]Objective, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("no objective: want at least one --slo, e.g. --slo 'p99<=50ms'")
	}
	objs := make([]Objective, 0, len(list))
	for _, s := range list {
		o, err := Parse(s)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// Texts returns the objectives as given.
func Texts(objs []Objective) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.Text
	}
	return out
}

// Measure is what one run measured, in the units of the objectives.
type Measure struct {
	// AchievedRPS is the rate of requests sent (open model) or completed
	// (closed model), per second.
	AchievedRPS float64
	// P50, P90, P99, P999 and Max are total request times in ms (from the
	// intended start in the open model). With no response at all they are
	// the run's length: nothing came back sooner.
	P50, P90, P99, P999, Max float64
	// ErrorRate is the share of requests that failed or answered a status
	// other than 2xx, from 0 to 1 (stats.Summary.ErrorRatio).
	ErrorRate float64
	// ClientLimit, when not empty, says why the client rather than the
	// backend may have set the result.
	ClientLimit string
	// SentP50 is the median latency counted from each request's actual
	// send rather than its intended start (open model), in ms; 0 when not
	// known. Beside the quickest passing step's P50 it tells whether the
	// requests the backend got waited in it (a saturated backend) or were
	// served at once (a client that could not send more).
	SentP50 float64
	// Held is the judgement of whether the load was held through the run
	// (Judge); its zero value is a run not judged, taken as held.
	Held Steadiness
	// Record is the run's record, when the step function keeps it: saved
	// in the step's JSON (StepJSON.Records) for compare, merge and report.
	Record *stats.Record
}

// Value returns the measure the objective bounds, in its unit.
func (o Objective) Value(m *Measure) float64 {
	switch o.Metric {
	case MetricP50:
		return m.P50
	case MetricP90:
		return m.P90
	case MetricP99:
		return m.P99
	case MetricP999:
		return m.P999
	case MetricMax:
		return m.Max
	}
	return m.ErrorRate * 100
}

// Evaluate judges m against every objective, in order.
func Evaluate(objs []Objective, m *Measure) []stats.SLOResult {
	out := make([]stats.SLOResult, len(objs))
	for i, o := range objs {
		v := o.Value(m)
		out[i] = stats.SLOResult{Objective: o.Text, Value: v, Pass: v <= o.Bound}
	}
	return out
}

// Passed reports whether every result passed.
func Passed(rs []stats.SLOResult) bool {
	for _, r := range rs {
		if !r.Pass {
			return false
		}
	}
	return true
}

// Verdicts writes one line per objective: "p99<=1ms: FAIL, p99 10.2 ms
// (9.2 ms over)" or "p99<=50ms: pass, p99 10.2 ms".
func Verdicts(objs []Objective, rs []stats.SLOResult) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		r := rs[i]
		if r.Pass {
			out[i] = fmt.Sprintf("%s: pass, %s %s", o.Text, o.Metric, o.Format(r.Value))
		} else {
			out[i] = fmt.Sprintf("%s: FAIL, %s %s (%s over)", o.Text, o.Metric, o.Format(r.Value), o.Format(r.Value-o.Bound))
		}
	}
	return out
}

// Judged is the verdict on each objective of one run (Verdicts), and the
// lines of the objectives it failed: nil when it met every one, a
// --slo that fails the run otherwise.
func Judged(objs []Objective, rs []stats.SLOResult) (lines, failed []string) {
	lines = Verdicts(objs, rs)
	for i, r := range rs {
		if !r.Pass {
			failed = append(failed, lines[i])
		}
	}
	return lines, failed
}

// FromSummary turns a run's summary into a Measure, and says when the
// client may have limited it: its CPU saturated; or, in the open model, a
// run that met the objectives while the client sent less than 90% of the
// asked rate; or a run that failed a latency objective counted from the
// intended send times but met it counted from the actual ones, so that the
// delay was the client's (the in-flight ceiling -c, or its own lateness);
// or, in either model, a run whose failing latencies were over their bound
// by no more than the client's goroutines waited for a CPU.
func FromSummary(s *stats.Summary, objs []Objective) Measure {
	return FromSummaryAt(s, s.RequestsPerSecond, objs)
}

// FromSummaryAt is FromSummary with the achieved requests/sec of a closed
// run given apart from the summary: rps, such as the median of trials
// beside their pooled run's summary s (an open run's achieved rate is
// still s.Open's).
func FromSummaryAt(s *stats.Summary, rps float64, objs []Objective) Measure {
	m := Measure{ErrorRate: s.ErrorRatio(), AchievedRPS: rps}
	if s.Complete > 0 {
		sp := s.Spectrum
		m.P50, m.P90, m.P99, m.P999, m.Max = sp["50"], sp["90"], sp["99"], sp["99.9"], sp["100"]
	} else {
		t := s.TimeTaken * 1000
		m.P50, m.P90, m.P99, m.P999, m.Max = t, t, t, t, t
	}
	if o := s.Open; o != nil {
		m.AchievedRPS = o.RateAchieved
		if s.Complete > 0 {
			m.SentP50 = s.UncorrectedPercentiles["50"]
		}
	}
	m.ClientLimit = clientLimit(s, objs, &m)
	return m
}

// JudgeSummary adds to s the verdicts of objectives objs (none: s is left
// as it is), measured from s (FromSummaryAt) with rps its achieved
// requests/sec: s's own for one run, the trials' median beside their
// pooled run's summary.
func JudgeSummary(s *stats.Summary, rps float64, objs []Objective) {
	if len(objs) == 0 {
		return
	}
	m := FromSummaryAt(s, rps, objs)
	s.SLO = Evaluate(objs, &m)
}

// Openings of the reasons clientLimit gives when the client's own limit,
// not its lateness on a busy machine, held requests back: its CPU, and the
// in-flight ceiling (-c).
const (
	ReasonClientCPU = "the client's CPU"
	ReasonCeiling   = "the in-flight ceiling"
)

// clientLimit says why the client may have limited the run of s, measured
// as m, or returns "".
func clientLimit(s *stats.Summary, objs []Objective, m *Measure) string {
	c := s.Client
	if c.Cores > 0 && c.CPUPercent >= stats.CPUWarnFraction*100*float64(c.Cores) {
		return fmt.Sprintf(ReasonClientCPU+" was at %.0f%% of %d cores", c.CPUPercent, c.Cores)
	}
	rs := Evaluate(objs, m)
	latencyFails, lateExplains := false, c.SchedulerLateMaxMs > 0
	for i, r := range rs {
		if r.Pass {
			continue
		}
		latencyFails = latencyFails || objs[i].Latency()
		lateExplains = lateExplains && objs[i].Latency() && r.Value-c.SchedulerLateMaxMs <= objs[i].Bound
	}
	if o := s.Open; o != nil {
		sent := s.Finished()
		// The rate sent: the requests that finished and those still in
		// flight when the run ended (RateAchieved counts the finished
		// only). A backend whose queue grows leaves many in flight: they
		// were sent on time, and the shortfall of finished ones is the
		// backend's, not the client's.
		rate := o.RateAchieved
		if s.TimeTaken > 0 {
			rate += float64(o.UnsentInFlight) / s.TimeTaken
		}
		switch {
		case Passed(rs) && rate < 0.9*o.RateAsked && o.CeilingLate*100 > sent:
			// The backend answered within the objectives, and the
			// ceiling, full, held requests back: -c's limit.
			return fmt.Sprintf(ReasonCeiling+" (-c %d) held back %d of %d requests: the client sent %.0f req/s of the %.0f asked while the backend answered within the objectives",
				s.Concurrency, o.CeilingLate, sent, rate, o.RateAsked)
		case Passed(rs) && rate < 0.9*o.RateAsked:
			return fmt.Sprintf("the client sent %.0f req/s of the %.0f asked", rate, o.RateAsked)
		case !latencyFails || !uncorrectedWithin(s, objs):
		case o.CeilingLate*100 > sent:
			return fmt.Sprintf(ReasonCeiling+" (-c %d) held back %d of %d requests while the backend answered within the objectives",
				s.Concurrency, o.CeilingLate, sent)
		default:
			return fmt.Sprintf("the client sent requests up to %.1f ms late (its own timer and CPU lag) while the backend answered within the objectives",
				o.SchedulerLateMaxMs)
		}
	}
	if latencyFails && lateExplains {
		return fmt.Sprintf("the client's goroutines waited up to %.1f ms for a CPU, as much as the latency was over the objective", c.SchedulerLateMaxMs)
	}
	return ""
}

// uncorrectedWithin reports whether the latencies from the actual send
// times (ab's ranks; p99.9 read as the longest) pass the latency
// objectives.
func uncorrectedWithin(s *stats.Summary, objs []Objective) bool {
	u := s.UncorrectedPercentiles
	if len(u) == 0 || s.Complete == 0 {
		return false
	}
	rank := map[string]string{MetricP50: "50", MetricP90: "90", MetricP99: "99", MetricP999: "100", MetricMax: "100"}
	for _, o := range objs {
		if o.Latency() && u[rank[o.Metric]] > o.Bound {
			return false
		}
	}
	return true
}

// Whether a step held its load (Judge), beside whether its objectives
// held: the two halves of a step's verdict.

// Held is the verdict on whether a step held its load: the backend served
// the asked rate and neither the requests in flight nor the latency grew
// through the step.
type Held int

// Verdicts of Held. The zero value, HeldYes, is also a step not judged
// (no windows).
const (
	// HeldYes: the load was held; the step's objectives decide.
	HeldYes Held = iota
	// HeldUnsure: the second half grew more than noise allows but not
	// clearly; a longer step must tell.
	HeldUnsure
	// HeldNo: a queue grew through the step, or the backend served less
	// than the asked rate: the step fails whatever its percentiles say.
	HeldNo
)

// StepWindows is how many windows a step is cut into for Judge.
const StepWindows = 10

// Bounds of Judge (see the package doc for why these).
const (
	// ServedShare is the least share of the asked rate the backend must
	// serve (completions per second after the first window), less
	// servedSlack requests over the step for the counting at its edges.
	ServedShare = 0.98
	servedSlack = 2
	// Overload is the overload a step must tell from a steady queue: the
	// search's resolution (5%). A backend asked (1+Overload) times what it
	// serves builds a backlog of Overload/(1+Overload) of the asked
	// requests and adds Overload of the elapsed time to every later
	// request's latency. A step whose backlog or latency trend adds more
	// than unsureShare of that over the step is unsure; more than
	// growingShare, a growing queue.
	Overload     = 0.05
	unsureShare  = 0.5
	growingShare = 0.8
	// The least growth over a step that is unsure (twice that: growing),
	// whatever the rate: a few requests' and a millisecond's worth, which
	// a slow or idle step cannot tell from counting at its edges.
	growthLatencyMs = 1.0
	growthInFlight  = 2.0
)

// Steadiness is the judgement of a step's load (Judge).
type Steadiness struct {
	// Verdict is HeldYes, HeldUnsure or HeldNo.
	Verdict Held
	// Why says what grew or fell short; "" when held.
	Why string
	// LatencyMs are the mean latencies (ms, from the intended start in the
	// open model) of the requests due in the step's first and second
	// halves; InFlight the mean requests in flight (due and not finished,
	// open model only) at the window ends of each half.
	LatencyMs [2]float64
	InFlight  [2]float64
	// LatencyGrowthMs and InFlightGrowth are the trends of the latency
	// and of the requests in flight over the whole step (the median slope
	// between every two windows, times the step's length); the verdict
	// rests on them.
	LatencyGrowthMs, InFlightGrowth float64
	// ServedRPS is the rate of finished requests after the first window
	// (open model; 0 in the closed model, whose rate is not asked).
	ServedRPS float64
	// Judged reports that there were windows to judge.
	Judged bool
}

// Judge tells whether an open-model step held its load, from its windows
// (equal slices of its time from its start, width each) and the asked
// rate; a closed-model step (rate 0) is not judged (Judged false, held).
//
// A queue that grows makes the backlog (requests due and not yet
// finished, which counts those the client could not send, read at the end
// of every window) and the latency of the requests due in each window
// rise through the step, at a rate set by the overload. Their trends are
// read as the median of the slopes between every two windows (Theil and
// Sen's estimator), so that one pause of the machine, whose backlog
// drains again, does not read as growth the way a half's mean does; a
// trend adding more than half of what an overload of Overload (the
// search's resolution) would add over the step is unsure, and more than
// 0.8 of it a growing queue. The first window is left out of the latency
// and the served rate (the pipe fills), the last out of the latency
// (requests due in it that had not finished when the step ended are
// missing from it, and they are the slowest; the backlog counts them).
//
// span is how long the step actually ran from the windows' origin (0: all
// of them): a run starts its clock after it has made its clients, so its
// end may fall short of the last window's, whose backlog and served rate
// are then read at the end of the run, not past it.
func Judge(ws []stats.Window, width, span time.Duration, rate float64) Steadiness {
	var s Steadiness
	n := len(ws)
	if width <= 0 || rate <= 0 {
		// The closed model holds at most -c in flight: its queue cannot
		// grow for as long as the step lasts, and a latency that grows
		// there is the machine slowing down, which the objectives judge.
		return s
	}
	if full := time.Duration(n) * width; span <= 0 || span > full {
		span = full
	}
	n = min(n, int((span+width-1)/width)) // windows that began before the end
	ws = ws[:n]
	if n < 4 {
		return s
	}
	s.Judged = true
	w, T := width.Seconds(), span.Seconds()
	worst := func(v Held, why string) {
		if v > s.Verdict {
			s.Verdict, s.Why = v, why
		}
	}
	grow := func(growth, overload, floor float64) Held {
		switch {
		case growth <= max(unsureShare*overload, floor):
			return HeldYes
		case growth <= max(growingShare*overload, 2*floor):
			return HeldUnsure
		}
		return HeldNo
	}
	// Latency: windows 1 .. n-2, at their middles.
	lat := ws[1 : n-1]
	h := len(lat) / 2
	s.LatencyMs = [2]float64{meanLatency(lat[:h]), meanLatency(lat[h:])}
	var lt, lv []float64
	for i, x := range lat {
		if x.Started > 0 {
			lt = append(lt, (float64(i)+1.5)*w)
			lv = append(lv, float64(x.LatencySum)/float64(x.Started)/1e6)
		}
	}
	s.LatencyGrowthMs = trend(lt, lv) * T
	worst(grow(s.LatencyGrowthMs, Overload*T*1000, growthLatencyMs), fmt.Sprintf("mean latency grew from %s to %s through the step",
		FormatMs(s.LatencyMs[0]), FormatMs(s.LatencyMs[1])))
	// Backlog: at the end of every window (or of the run).
	var finished, served int64
	var sum [2]float64
	bt, bv := make([]float64, n), make([]float64, n)
	for i, x := range ws {
		finished += x.Finished
		if i > 0 {
			served += x.Finished
		}
		// Due by the end of window i (or of the run): requests j with
		// j/rate < that time.
		end := min(float64(i+1)*w, T)
		due := math.Ceil(end * rate)
		b := max(due-float64(finished), 0)
		bt[i], bv[i] = end, b
		sum[i*2/n] += b
	}
	s.InFlight = [2]float64{sum[0] / float64(n/2), sum[1] / float64(n-n/2)}
	s.InFlightGrowth = trend(bt, bv) * T
	worst(grow(s.InFlightGrowth, Overload/(1+Overload)*rate*T, growthInFlight), fmt.Sprintf("requests in flight grew from %.1f to %.1f through the step",
		s.InFlight[0], s.InFlight[1]))
	servedSpan := T - w
	s.ServedRPS = float64(served) / servedSpan
	if float64(served) < ServedShare*rate*servedSpan-servedSlack {
		worst(HeldNo, fmt.Sprintf("the backend served %.1f req/s of the %s asked", s.ServedRPS, FormatRate(rate)))
	}
	return s
}

// trend is the median of the slopes between every two points (x, y) of
// distinct x: a line's slope that a few outlying points do not move. 0
// for fewer than two points.
func trend(x, y []float64) float64 {
	var slopes []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if x[j] != x[i] {
				slopes = append(slopes, (y[j]-y[i])/(x[j]-x[i]))
			}
		}
	}
	if len(slopes) == 0 {
		return 0
	}
	slices.Sort(slopes)
	m := len(slopes) / 2
	if len(slopes)%2 == 1 {
		return slopes[m]
	}
	return (slopes[m-1] + slopes[m]) / 2
}

// meanLatency is the mean latency of the requests started in ws, in ms.
func meanLatency(ws []stats.Window) float64 {
	var n, sum int64
	for _, w := range ws {
		n += w.Started
		sum += w.LatencySum
	}
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n) / 1e6
}
