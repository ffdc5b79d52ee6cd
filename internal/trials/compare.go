package trials

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Trial is what the statistics read of one trial (one run of a series at
// a level).
type Trial struct {
	// RequestsPerSecond is the trial's complete requests over its time.
	RequestsPerSecond float64 `json:"requests_per_second"`
	// MeanMs, P50Ms, P99Ms and MaxMs are its mean, percentiles and
	// maximum of the total request time, in ms.
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
	// Failed counts its failed requests; Finished the requests that
	// finished, failed or not (a Length failure, also complete, once).
	Failed   int64 `json:"failed"`
	Finished int64 `json:"finished"`
	// Seconds is the trial's measured time; ClientCPUMeasured whether the
	// client's CPU share of it could be measured.
	Seconds           float64 `json:"seconds"`
	ClientCPUMeasured bool    `json:"client_cpu_measured"`
	// BackendSampled says whether the backend's processes were sampled
	// (--backend-pid); then BackendCPUPerRequest is its CPU seconds over
	// the complete requests and BackendPSSBytes its mean PSS.
	BackendSampled       bool    `json:"backend_sampled,omitempty"`
	BackendCPUPerRequest float64 `json:"backend_cpu_per_request,omitempty"`
	BackendPSSBytes      float64 `json:"backend_pss_bytes,omitempty"`
}

// MinTrialSeconds is the shortest trial whose figures a verdict trusts:
// below it a trial is a handful of scheduler slices, and the CPU clock's
// granularity weighs on what it measured.
const MinTrialSeconds = 1.0

// Short reports whether t is too short to trust (see MinTrialSeconds) or
// its client CPU could not be measured.
func (t Trial) Short() bool { return t.Seconds < MinTrialSeconds || !t.ClientCPUMeasured }

// Summary describes a series at a level over its trials.
type Summary struct {
	// Trials is the number of trials.
	Trials int
	// RequestsPerSecond, MeanMs, P50Ms, P99Ms and MaxMs are the medians of
	// the trials' values with their intervals.
	RequestsPerSecond, MeanMs, P50Ms, P99Ms, MaxMs Estimate
	// FailedRatio is the trials' failed requests over their finished
	// requests, pooled (0 when none finished).
	FailedRatio float64
}

// Summarize returns the Summary of ts.
func Summarize(ts []Trial) Summary {
	s := Summary{Trials: len(ts)}
	var failed, finished int64
	for _, t := range ts {
		failed += t.Failed
		finished += t.Finished
	}
	s.RequestsPerSecond = Median(values(ts, func(t Trial) float64 { return t.RequestsPerSecond }))
	s.MeanMs = Median(values(ts, func(t Trial) float64 { return t.MeanMs }))
	s.P50Ms = Median(values(ts, func(t Trial) float64 { return t.P50Ms }))
	s.P99Ms = Median(values(ts, func(t Trial) float64 { return t.P99Ms }))
	s.MaxMs = Median(values(ts, func(t Trial) float64 { return t.MaxMs }))
	if finished > 0 {
		s.FailedRatio = float64(failed) / float64(finished)
	}
	return s
}

// Metric names, as the JSON says them.
const (
	MetricRequestsPerSecond    = "requests_per_second"
	MetricMeanMs               = "mean_ms"
	MetricP50Ms                = "p50_ms"
	MetricP99Ms                = "p99_ms"
	MetricMaxMs                = "max_ms"
	MetricBackendCPUPerRequest = "backend_cpu_seconds_per_request"
	MetricBackendPSSBytes      = "backend_pss_bytes"
)

// metric is one figure compared: how to read it from a trial and the
// words of its directions (above 1, below 1).
type metric struct {
	name     string
	get      func(Trial) float64
	up, down string
	backend  bool
	// word is the metric's short name, as a --fail-on rule says it.
	word string
}

// metrics are the figures compared, in the order of the tables: every
// one the median over the trials of the trial's own figure (the p99 of a
// series is the median of its trials' p99s, its max the median of their
// maxima), compared by the Mann-Whitney test on the trials' values.
var metrics = []metric{
	{MetricRequestsPerSecond, func(t Trial) float64 { return t.RequestsPerSecond }, Faster, Slower, false, "req/s"},
	{MetricMeanMs, func(t Trial) float64 { return t.MeanMs }, Higher, Lower, false, "mean"},
	{MetricP50Ms, func(t Trial) float64 { return t.P50Ms }, Higher, Lower, false, "p50"},
	{MetricP99Ms, func(t Trial) float64 { return t.P99Ms }, Higher, Lower, false, "p99"},
	{MetricMaxMs, func(t Trial) float64 { return t.MaxMs }, Higher, Lower, false, "max"},
	{MetricBackendCPUPerRequest, func(t Trial) float64 { return t.BackendCPUPerRequest }, Larger, Smaller, true, "cpu"},
	{MetricBackendPSSBytes, func(t Trial) float64 { return t.BackendPSSBytes }, Larger, Smaller, true, "pss"},
}

// MinTrialsForVerdict returns the fewest trials a side (the same on both)
// with which the two-sided Mann-Whitney test can give p < Alpha: its
// smallest p-value, with every value of one side above every value of the
// other, is 2 / C(2n, n) (0.1 at 3 against 3, 0.029 at 4 against 4).
func MinTrialsForVerdict() int {
	n := 1
	for !CanReach(n, n) {
		n++
	}
	return n
}

// CanReach reports whether m trials against n can give p < Alpha at all:
// 2 / C(m+n, m) < Alpha.
func CanReach(m, n int) bool {
	if m < 1 || n < 1 {
		return false
	}
	return 2*math.Exp(-lchoose(m+n, m)) < Alpha
}

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
	// Factor and FactorTitle say what differs between the two sides
	// (FactorTransport...; FactorNone for the same series in two saved
	// runs) and how: "transport: unix vs tcp".
	Factor      string `json:"factor,omitempty"`
	FactorTitle string `json:"factor_title,omitempty"`
	// Metric is one of the Metric names.
	Metric string `json:"metric"`
	// Target, in a comparison of one request of a mix (--targets), is
	// that request as the targets file gives it ("GET /checkout"); empty
	// for a comparison of the whole run (see CompareTarget).
	Target string `json:"target,omitempty"`
	// Trials and BaselineTrials count the trials of each side.
	Trials         int `json:"trials"`
	BaselineTrials int `json:"baseline_trials"`
	// Value and BaselineValue are the medians of the metric, ValueCI95
	// and BaselineValueCI95 their intervals (null without one). Despite
	// the names, an interval is of 95% only from 6 trials: below it is
	// the range of the trials, of MedianConfidence (50% for 2, 93.75% for
	// 5).
	Value             *float64  `json:"value"`
	BaselineValue     *float64  `json:"baseline_value"`
	ValueCI95         []float64 `json:"value_ci95"`
	BaselineValueCI95 []float64 `json:"baseline_value_ci95"`
	// Ratio is the series' median over the baseline's (null when the
	// baseline's is 0).
	Ratio *float64 `json:"ratio"`
	// RatioCI95 is its interval, [low, high]; null with fewer than 2
	// trials on a side. Despite the name, it is of 95% only from 4 trials
	// a side: below it is the range of the pairwise ratios, of
	// RatioConfidence (66.7% for 2 against 2, 90% for 3 against 3).
	RatioCI95 []float64 `json:"ratio_ci95"`
	// Confidence, when set, is the confidence of RatioCI95 given by the
	// rule that made it: the sequential rule's interval at every look
	// (Sequential.LookConfidence, 99% for rounds 4 to 20). Absent, the
	// interval is of RatioConfidence of the trial counts.
	Confidence float64 `json:"ratio_ci_confidence,omitempty"`
	// DecidedAt is the round at which the sequential rule decided the
	// comparison (rounds run until decided; 0 otherwise, or undecided).
	DecidedAt int `json:"decided_at_round,omitempty"`
	// PValue is the Mann-Whitney U test's (1 when it cannot say).
	PValue float64 `json:"p_value"`
	// Verdict is Faster, Slower, Lower, Higher, Smaller, Larger (a
	// direction), Same, Undecided, or NoVerdict when the trials cannot
	// give one (one trial a side, or too few for the test). Files of
	// older versions say OldNoDifference (see Upgrade).
	Verdict string `json:"verdict"`
	// MoreRounds, for an Undecided comparison, estimates how many more
	// rounds (trials a side) would decide it, from the spread measured
	// so far (RoundsToDecide); -1 when more than MaxRepeat trials would
	// be needed. MoreSeconds is about how long they would take, in
	// seconds (0 when the trials' times are unknown).
	MoreRounds  int     `json:"more_rounds,omitempty"`
	MoreSeconds float64 `json:"more_seconds,omitempty"`
	// Withdrawn says that the comparison's direction was made Undecided
	// by the control of false discoveries over many comparisons
	// (ControlFDR).
	Withdrawn bool `json:"fdr_withdrawn,omitempty"`
	// ShortTrials counts the trials of both sides shorter than
	// MinTrialSeconds or without a client CPU measure (see Trial.Short):
	// the verdict then carries a marker and a note.
	ShortTrials int `json:"short_trials,omitempty"`
	// FailedRatio, when either side had failed requests, gives each
	// side's failed / finished requests.
	FailedRatio *Sides `json:"failed_ratio,omitempty"`
	// Unanswered names the side whose every request failed
	// (UnansweredSeries, UnansweredBaseline or UnansweredBoth; see
	// AllFailed): its figures measure failures,
	// so the comparison has no verdict (NoVerdict).
	Unanswered string `json:"unanswered,omitempty"`
	// Why says, for an Unanswered comparison, why its requests failed, in
	// the words of the failures recorded ("tls: connect: the server's TLS
	// certificate does not verify: ..."); set by the command that has the
	// runs' failures.
	Why string `json:"why,omitempty"`
	// MostlyFailed names the side whose failure ratio is above
	// MaxFailedRatio, though some of its requests were answered
	// (UnansweredSeries, UnansweredBaseline or UnansweredBoth; see
	// MostlyFailed), on a metric that such a side cannot be judged on
	// (latency, backend CPU per request): its verdict is NoVerdict. Its
	// req/s keeps its verdict, with its failures (VerdictText).
	MostlyFailed string `json:"mostly_failed,omitempty"`
}

// MaxFailedRatio is the largest failure ratio (failed over finished
// requests, pooled over a side's trials; docs/measurement.md#failure-ratio)
// with which a side still gets latency and backend-CPU-per-request
// verdicts: 10%. Above it a side's request times are mostly those of its
// failures (a refused connect returns at once, a timeout waits) or of the
// few requests that got through, and its CPU per complete request counts
// the work spent on the failures: no verdict on them, whichever way they
// point. Its req/s keeps its verdict, which names the failures.
const MaxFailedRatio = 0.10

// MostlyFailed reports whether more than MaxFailedRatio of the requests
// of ts failed (pooled over its trials; none finished is not failed).
func MostlyFailed(ts []Trial) bool { return Summarize(ts).FailedRatio > MaxFailedRatio }

// failedShareRule reports whether metric m is one a side with more than
// MaxFailedRatio failed cannot be judged on: its latencies and its
// backend CPU per request (not req/s, not the backend's memory).
func failedShareRule(m string) bool {
	return m != MetricRequestsPerSecond && m != MetricBackendPSSBytes
}

// The sides of a comparison that did not answer (Comparison.Unanswered).
const (
	UnansweredSeries   = "series"
	UnansweredBaseline = "baseline"
	UnansweredBoth     = "both"
)

// AllFailed reports whether every request of ts failed: at least one
// finished, and none without a failure. Such trials get no verdict.
func AllFailed(ts []Trial) bool {
	var failed, finished int64
	for _, t := range ts {
		failed += t.Failed
		finished += t.Finished
	}
	return finished > 0 && failed >= finished
}

// Sides holds a value of each side of a comparison.
type Sides struct {
	Series   float64 `json:"series"`
	Baseline float64 `json:"baseline"`
}

// CompareLevel compares series against baseline at one level, for every
// metric (see metrics): requests/sec (faster, slower), the mean, p50, p99
// and max of the request time (lower, higher) and, when every trial of
// both sides sampled the backend, its CPU seconds per request and its
// mean PSS (smaller, larger); noise is the threshold (a fraction) under
// which a difference does not count. A side of one trial, or sides too
// few for the test to reach Alpha (see CanReach), get no verdict
// (NoVerdict), never Same or Undecided; so do sides whose every request
// failed (AllFailed; Comparison.Unanswered says which). A side with more
// than MaxFailedRatio of its requests failed (MostlyFailed) gets no
// latency or CPU-per-request verdict (Comparison.MostlyFailed says
// which); its req/s keeps its verdict. This is the one place of both
// rules: sweep, compare, study and the gate read its verdicts.
func CompareLevel(series, baseline string, concurrency int, s, b []Trial, noise float64) []Comparison {
	ss, bs := Summarize(s), Summarize(b)
	short := 0
	sampled := len(s) > 0 && len(b) > 0
	for _, t := range append(slices.Clone(s), b...) {
		if t.Short() {
			short++
		}
		sampled = sampled && t.BackendSampled
	}
	var out []Comparison
	for _, m := range metrics {
		if m.backend && !sampled {
			continue
		}
		sv, bv := values(s, m.get), values(b, m.get)
		se, be := Median(sv), Median(bv)
		r := Compare(sv, bv)
		c := Comparison{Series: series, Baseline: baseline, Concurrency: concurrency, Metric: m.name,
			Trials: len(s), BaselineTrials: len(b),
			Value: num(se.Median), BaselineValue: num(be.Median),
			ValueCI95: se.Interval(), BaselineValueCI95: be.Interval(),
			Ratio: num(r.Ratio), PValue: r.P, Verdict: r.Verdict(noise, m.up, m.down), ShortTrials: short}
		if !CanReach(len(s), len(b)) {
			c.Verdict = NoVerdict
		}
		c.Unanswered = whichSides(AllFailed(s), AllFailed(b))
		if c.Unanswered != "" {
			c.Verdict = NoVerdict
		} else if failedShareRule(m.name) {
			c.MostlyFailed = whichSides(ss.FailedRatio > MaxFailedRatio, bs.FailedRatio > MaxFailedRatio)
			if c.MostlyFailed != "" {
				c.Verdict = NoVerdict
			}
		}
		if r.HasInterval() {
			c.RatioCI95 = []float64{r.Lo, r.Hi}
		}
		if ss.FailedRatio > 0 || bs.FailedRatio > 0 {
			c.FailedRatio = &Sides{Series: ss.FailedRatio, Baseline: bs.FailedRatio}
		}
		c.estimate(noise, roundSeconds(s, b))
		out = append(out, c)
	}
	return out
}

// TargetMetrics are the metrics compared per target of a mix
// (CompareTarget): the p50 and p99 of its request time.
var TargetMetrics = []string{MetricP50Ms, MetricP99Ms}

// CompareTarget compares one target of a mix (--targets), target, of
// series against baseline at one level, as CompareLevel compares the
// whole run but on TargetMetrics only: s and b are the target's trials,
// each trial's figures those of the target's requests in that trial
// (P50Ms, P99Ms, MaxMs, Failed, Finished; Seconds and ClientCPUMeasured
// the trial's). One trial a side gives the ratio without a verdict
// (NoVerdict), as for the whole run.
func CompareTarget(series, baseline, target string, concurrency int, s, b []Trial, noise float64) []Comparison {
	var out []Comparison
	for _, c := range CompareLevel(series, baseline, concurrency, s, b, noise) {
		if slices.Contains(TargetMetrics, c.Metric) {
			c.Target = target
			out = append(out, c)
		}
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

// ShortMark is appended to the verdict of a comparison with short trials
// (Comparison.ShortTrials); the note ShortNote explains it.
const ShortMark = " *"

// VerdictText is the verdict with the failures it must not hide:
// "faster (62% failed)", "slower (baseline 40% failed)"; undecided with
// what would decide it: "undecided: ~6 more rounds, ~40 s"; without a
// verdict, why: "–, 1 trial", "–, 3 trials", "–, no answer (100%
// failed)" (Unanswered), "–, too many failed (99% failed)" (MostlyFailed);
// ShortMark after a verdict from short trials.
func (c *Comparison) VerdictText() string {
	v := c.Verdict
	switch {
	case v == NoVerdict && c.MostlyFailed != "":
		v = MostlyFailedText
	case v == NoVerdict && c.Unanswered == UnansweredSeries:
		v = "–, no answer"
	case v == NoVerdict && c.Unanswered == UnansweredBaseline:
		v = "–, no answer from baseline"
	case v == NoVerdict && c.Unanswered != "":
		v = "–, no answer from either"
	case v == NoVerdict:
		n := min(c.Trials, c.BaselineTrials)
		v = fmt.Sprintf("–, %d trial", n)
		if n != 1 {
			v += "s"
		}
	}
	if m := c.MoreText(); m != "" {
		v += ": " + m
	}
	if c.FailedRatio != nil {
		var parts []string
		if f := c.FailedRatio.Series; f > 0 {
			parts = append(parts, pct(f)+" failed")
		}
		if f := c.FailedRatio.Baseline; f > 0 {
			parts = append(parts, "baseline "+pct(f)+" failed")
		}
		v += " (" + strings.Join(parts, ", ") + ")"
	}
	if c.ShortTrials > 0 {
		v += ShortMark
	}
	return v
}

// MostlyFailedText is the verdict text of a comparison with no verdict
// for a side's failures (Comparison.MostlyFailed); MostlyFailedNote
// explains it.
const MostlyFailedText = "–, too many failed"

// ShortNote is the note of ShortMark.
const ShortNote = "*: some trials lasted less than 1 s or their client CPU could not be measured, too short to trust; lengthen them with -n (more requests) or -t (more seconds)"

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

// RatioConfidence is the confidence of c's ratio interval: its
// Confidence when set, else RatioConfidence of its trial counts.
func (c *Comparison) RatioConfidence() float64 {
	if c.Confidence > 0 {
		return c.Confidence
	}
	return RatioConfidence(c.Trials, c.BaselineTrials)
}

// RatioLabel names the ratio intervals of cs with their real confidence:
// "95% interval", "interval, 66.7% to 95%" (IntervalLabel).
func RatioLabel(cs []Comparison) string {
	confs := make([]float64, 0, len(cs))
	for i := range cs {
		if cs[i].RatioCI95 != nil {
			confs = append(confs, cs[i].RatioConfidence())
		}
	}
	return IntervalLabel(confs...)
}

// whichSides names the sides for which a condition holds: UnansweredBoth,
// UnansweredSeries, UnansweredBaseline, or "" for neither.
func whichSides(series, baseline bool) string {
	switch {
	case series && baseline:
		return UnansweredBoth
	case series:
		return UnansweredSeries
	case baseline:
		return UnansweredBaseline
	}
	return ""
}
