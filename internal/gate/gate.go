// Package gate is the regression gate of saved comparisons: rules such as
// "req/s slower, p99 higher by 10%" (compare --fail-on, and bench and
// sweep --against) judged against the verdicts of internal/trials.
//
// A rule names a metric and the direction of its verdict that counts as a
// regression, with an optional least effect ("by 10%"): the whole ratio
// interval must then lie beyond 1 ± 10%, as the noise threshold asks of
// any verdict. The gate reads verdicts and never makes its own: "same"
// never trips it, and a comparison without a verdict (one trial a side,
// or too few for the test) or "undecided" (its interval reaches both
// inside and outside the noise band) leaves it unable to judge, which it
// says rather than passing. The item "undecided pass" (or "undecided
// trip") in the rules says otherwise for undecided comparisons. It judges the pairs of one series in two
// runs (FactorNone) or of two backends (FactorBackend), the pairs a saved
// baseline and a new run make; pairs of other factors (a Unix series
// against a TCP one) are not regressions and are left out.
//
// Its false-trip rate is the verdict's: on two runs of one thing, a rule
// of one metric and one direction trips at one level in at most 5% of the
// experiments (half of the verdict's two-sided rate, in theory). A gate of
// several rules, levels or series is several chances: their rates add up.
package gate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/backbench/backbench/internal/trials"
)

// Rule is one regression a gate trips on: a metric (trials.Metric*) and
// the verdict that counts (trials.Slower...), with a least effect By (a
// fraction, 0 for any verdict).
type Rule struct {
	// Text is the rule as the user wrote it, normalized: "p99 higher by 10%".
	Text string `json:"rule"`
	// Metric is a trials.Metric* name.
	Metric string `json:"metric"`
	// Verdict is the verdict that trips the rule.
	Verdict string `json:"verdict"`
	// By is the least effect, a fraction: the ratio interval must lie
	// wholly beyond 1 ± By (0: the verdict alone).
	By float64 `json:"by,omitempty"`
	// Target, in a rule "... on PATH", is PATH: the rule then judges the
	// comparisons of the targets of a mix (--targets) it names
	// (MatchesTarget), and only them; empty, it judges the whole runs'.
	Target string `json:"target,omitempty"`
	// Undecided, in the rule "undecided pass" or "undecided trip" (Metric
	// empty), is how every rule treats an undecided comparison: UndecidedPass
	// or UndecidedTrip (by default, the gate cannot judge it).
	Undecided string `json:"undecided,omitempty"`
}

// The treatments of undecided comparisons a rule may ask for.
const (
	UndecidedPass = "pass"
	UndecidedTrip = "trip"
)

// metric is a metric as a rule names it, with the two words of its
// verdicts (above 1, below 1).
type metric struct {
	names    []string
	metric   string
	up, down string
}

// metrics are the names a rule may use, the first one the rule's own.
var metrics = []metric{
	{[]string{"req/s", "rps", trials.MetricRequestsPerSecond}, trials.MetricRequestsPerSecond, trials.Faster, trials.Slower},
	{[]string{"mean", trials.MetricMeanMs}, trials.MetricMeanMs, trials.Higher, trials.Lower},
	{[]string{"p50", trials.MetricP50Ms}, trials.MetricP50Ms, trials.Higher, trials.Lower},
	{[]string{"p99", trials.MetricP99Ms}, trials.MetricP99Ms, trials.Higher, trials.Lower},
	{[]string{"max", trials.MetricMaxMs}, trials.MetricMaxMs, trials.Higher, trials.Lower},
	{[]string{"cpu", trials.MetricBackendCPUPerRequest}, trials.MetricBackendCPUPerRequest, trials.Larger, trials.Smaller},
	{[]string{"pss", trials.MetricBackendPSSBytes}, trials.MetricBackendPSSBytes, trials.Larger, trials.Smaller},
}

// MetricNames lists the metric names a rule takes, for messages.
func MetricNames() string {
	var n []string
	for _, m := range metrics {
		n = append(n, m.names[0])
	}
	return strings.Join(n, ", ")
}

// Parse reads a comma-separated list of rules: "METRIC DIRECTION [by
// N%]", as in "req/s slower, p99 higher by 10%". METRIC is req/s (rps),
// mean, p50, p99, max, cpu (the backend's CPU per request) or pss (the
// backend's PSS), or a metric's JSON name; DIRECTION one of its two
// verdicts (req/s: faster, slower; mean, p50, p99, max: higher, lower;
// cpu, pss: larger, smaller). The item "undecided pass" or "undecided
// trip" says how undecided comparisons count (else the gate cannot judge
// them). A rule may end with "on PATH" ("p99 higher by 10% on
// /checkout"): it then judges the targets of a mix (--targets) that PATH
// names (MatchesTarget) alone, on p50 or p99 (the metrics compared per
// target); PATH keeps its case. An unknown metric or direction is an
// error naming the rule.
func Parse(spec string) ([]Rule, error) {
	var rules []Rule
	for _, item := range strings.Split(spec, ",") {
		fields := strings.Fields(item)
		target := ""
		if i := slices.IndexFunc(fields, func(w string) bool { return strings.EqualFold(w, "on") }); i >= 0 {
			target = strings.Join(fields[i+1:], " ")
			fields = fields[:i]
			if target == "" {
				return nil, fmt.Errorf("%q: no target after \"on\" (want METRIC DIRECTION [by N%%] on PATH, as in 'p99 higher by 10%% on /checkout')", strings.TrimSpace(item))
			}
		}
		words := strings.Fields(strings.ToLower(strings.Join(fields, " ")))
		if len(words) == 0 {
			if target != "" {
				return nil, fmt.Errorf("%q: no metric before \"on\"", strings.TrimSpace(item))
			}
			continue
		}
		r, err := parseRule(words)
		if err == nil && target != "" {
			switch {
			case r.Metric == "":
				err = fmt.Errorf("%q takes no target", r.Text)
			case !slices.Contains(trials.TargetMetrics, r.Metric):
				err = fmt.Errorf("a target is compared on p50 and p99 only, not %s", r.Text[:strings.IndexByte(r.Text, ' ')])
			}
			r.Target = target
			r.Text += " on " + target
		}
		if err != nil {
			return nil, fmt.Errorf("%q: %v", strings.TrimSpace(item), err)
		}
		rules = append(rules, r)
	}
	if !slices.ContainsFunc(rules, func(r Rule) bool { return r.Metric != "" }) {
		return nil, fmt.Errorf("no rule in %q: want METRIC DIRECTION [by N%%], as in 'req/s slower, p99 higher by 10%%'", spec)
	}
	return rules, nil
}

// Metrics returns the metrics (trials.Metric* names) of the rules that
// judge whole runs (not a target of a mix, not "undecided ..."), each
// once, in the rules' order: the comparisons a gate of rules reads.
func Metrics(rules []Rule) []string {
	var out []string
	for _, r := range rules {
		if r.Metric != "" && r.Target == "" && !slices.Contains(out, r.Metric) {
			out = append(out, r.Metric)
		}
	}
	return out
}

func parseRule(words []string) (Rule, error) {
	if words[0] == trials.Undecided {
		if len(words) != 2 || (words[1] != UndecidedPass && words[1] != UndecidedTrip) {
			return Rule{}, fmt.Errorf("want %s %s or %s %s", trials.Undecided, UndecidedPass, trials.Undecided, UndecidedTrip)
		}
		return Rule{Undecided: words[1], Text: trials.Undecided + " " + words[1]}, nil
	}
	var m *metric
	for i := range metrics {
		for _, n := range metrics[i].names {
			if words[0] == n {
				m = &metrics[i]
			}
		}
	}
	if m == nil {
		return Rule{}, fmt.Errorf("unknown metric %q (want one of %s)", words[0], MetricNames())
	}
	if len(words) < 2 {
		return Rule{}, fmt.Errorf("no direction (want %s %s or %s %s)", m.names[0], m.up, m.names[0], m.down)
	}
	if words[1] != m.up && words[1] != m.down {
		return Rule{}, fmt.Errorf("unknown direction %q of %s (want %s or %s)", words[1], m.names[0], m.up, m.down)
	}
	r := Rule{Metric: m.metric, Verdict: words[1], Text: m.names[0] + " " + words[1]}
	switch {
	case len(words) == 2:
	case len(words) == 4 && words[2] == "by":
		p := strings.TrimSuffix(words[3], "%")
		f, err := strconv.ParseFloat(p, 64)
		if p == words[3] || err != nil || f <= 0 || f >= 100 || math.IsNaN(f) {
			return Rule{}, fmt.Errorf("bad effect %q (want a percentage above 0%% and below 100%%: by 10%%)", words[3])
		}
		r.By = f / 100
		r.Text += " by " + strconv.FormatFloat(f, 'g', -1, 64) + "%"
	default:
		return Rule{}, fmt.Errorf("unexpected %q (want METRIC DIRECTION [by N%%])", strings.Join(words[2:], " "))
	}
	return r, nil
}

// Status is what a gate found.
type Status string

// The gate's statuses: a rule tripped; none tripped but some comparison
// could not be judged; every comparison judged and none tripped.
const (
	Tripped  Status = "tripped"
	Unjudged Status = "unjudged"
	Passed   Status = "passed"
)

// Finding is a comparison that tripped a rule, or one the rule could not
// judge (then Why says why).
type Finding struct {
	// Rule is the rule's text.
	Rule string `json:"rule"`
	// Series, Baseline, File, BaselineFile and Concurrency say which
	// comparison (empty for a rule with no comparison at all).
	Series       string `json:"series,omitempty"`
	Baseline     string `json:"baseline,omitempty"`
	File         string `json:"file,omitempty"`
	BaselineFile string `json:"baseline_file,omitempty"`
	Concurrency  int    `json:"concurrency,omitempty"`
	// Target is the comparison's target of a mix ("GET /checkout"), for
	// a rule "... on PATH".
	Target string `json:"target,omitempty"`
	// Verdict is the comparison's verdict; Ratio and RatioCI95 its ratio
	// (new over baseline) and 95% interval.
	Verdict   string    `json:"verdict,omitempty"`
	Ratio     *float64  `json:"ratio,omitempty"`
	RatioCI95 []float64 `json:"ratio_ci95,omitempty"`
	// Why says why a rule could not judge.
	Why string `json:"why,omitempty"`
}

// Result is a gate's judgement: the JSON object "gate" of compare (and
// of bench and sweep with --against).
type Result struct {
	// Rules are the rules' texts.
	Rules []string `json:"rules"`
	// Status is tripped, unjudged or passed.
	Status Status `json:"status"`
	// Judged counts the comparisons judged (with a verdict), over all
	// rules.
	Judged int `json:"judged"`
	// Tripped are the comparisons that tripped a rule; Unjudged the
	// comparisons (or rules) that could not be judged.
	Tripped  []Finding `json:"tripped"`
	Unjudged []Finding `json:"unjudged"`
}

// Judges reports whether the gate judges comparisons of factor f: the
// same series in two runs, or two backends.
func Judges(f string) bool { return f == trials.FactorNone || f == trials.FactorBackend || f == "" }

// Judge judges cs by rules. Tripped when some comparison (of a factor the
// gate judges) has the rule's metric and verdict, beyond its least
// effect (or, with "undecided trip", is undecided); else unjudged when
// some comparison of a rule's metric has no verdict or is undecided (but
// with "undecided pass"), or a rule has no comparison of its metric at
// all; else passed.
func Judge(rules []Rule, cs []trials.Comparison) Result {
	res := Result{Status: Passed, Tripped: []Finding{}, Unjudged: []Finding{}}
	undecided := ""
	for _, r := range rules {
		if r.Metric == "" {
			undecided = r.Undecided
		}
	}
	for _, r := range rules {
		res.Rules = append(res.Rules, r.Text)
		if r.Metric == "" {
			continue
		}
		seen := 0
		for i := range cs {
			c := &cs[i]
			if c.Metric != r.Metric || !Judges(c.Factor) || (r.Target == "") != (c.Target == "") ||
				(r.Target != "" && !MatchesTarget(r.Target, c.Target)) {
				continue
			}
			seen++
			f := Finding{Rule: r.Text, Series: c.Series, Baseline: c.Baseline, File: c.File, BaselineFile: c.BaselineFile,
				Concurrency: c.Concurrency, Target: c.Target, Verdict: c.Verdict, Ratio: c.Ratio, RatioCI95: c.RatioCI95}
			switch {
			case c.Verdict == trials.NoVerdict && (c.MostlyFailed != "" || c.Unanswered != ""):
				f.Why = failedWhy(c)
				res.Unjudged = append(res.Unjudged, f)
			case c.Verdict == trials.NoVerdict:
				n := min(c.Trials, c.BaselineTrials)
				f.Why = fmt.Sprintf("no verdict with %d trial(s) a side: the test needs %d (--repeat %d or more)", n,
					trials.MinTrialsForVerdict(), trials.MinTrialsForVerdict())
				res.Unjudged = append(res.Unjudged, f)
			case c.Verdict == trials.Undecided && undecided == UndecidedPass:
				res.Judged++
			case c.Verdict == trials.Undecided && undecided == UndecidedTrip:
				res.Judged++
				res.Tripped = append(res.Tripped, f)
			case c.Verdict == trials.Undecided:
				f.Why = "undecided: its interval reaches both inside and outside the noise band"
				if m := c.MoreText(); m != "" {
					f.Why += "; " + m + " would decide it"
				}
				f.Why += " (or --fail-on 'undecided pass')"
				res.Unjudged = append(res.Unjudged, f)
			case c.Verdict == r.Verdict && beyond(c, r):
				res.Judged++
				res.Tripped = append(res.Tripped, f)
			default:
				res.Judged++
			}
		}
		if seen == 0 {
			why := "no comparison of this metric between two runs of one series (or two backends): nothing to judge"
			if r.Target != "" {
				why = fmt.Sprintf("no target %s in the mixes (--targets) of both sides of a pair: nothing to judge", r.Target)
			}
			res.Unjudged = append(res.Unjudged, Finding{Rule: r.Text, Why: why})
		}
	}
	switch {
	case len(res.Tripped) > 0:
		res.Status = Tripped
	case len(res.Unjudged) > 0:
		res.Status = Unjudged
	}
	return res
}

// MatchesTarget reports whether a rule's PATH names target, a target of
// a mix as its file gives it ("METHOD URL"): PATH is the whole target
// ("POST /checkout"), its URL ("/checkout?step=2",
// "http://shop/checkout"), or the URL's path alone ("/checkout"), so
// that "on /checkout" names every method's /checkout, whatever its query.
func MatchesTarget(path, target string) bool {
	if path == target {
		return true
	}
	_, u, ok := strings.Cut(target, " ")
	if !ok {
		return false
	}
	if path == u {
		return true
	}
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		if j := strings.IndexByte(u, '/'); j >= 0 {
			u = u[j:]
		} else {
			u = "/"
		}
	}
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	return path == u
}

// failedWhy says why c, withheld for its sides' failures
// (trials.Comparison.Unanswered, MostlyFailed), has no verdict: "no
// verdict: 99% of the series' requests failed (more than 10%)".
func failedWhy(c *trials.Comparison) string {
	var fs []string
	var sr, br float64
	if c.FailedRatio != nil {
		sr, br = c.FailedRatio.Series, c.FailedRatio.Baseline
	}
	side := c.MostlyFailed + c.Unanswered
	if side != trials.UnansweredBaseline {
		fs = append(fs, fmt.Sprintf("%.0f%% of the series' requests failed", 100*sr))
	}
	if side != trials.UnansweredSeries {
		fs = append(fs, fmt.Sprintf("%.0f%% of the baseline's requests failed", 100*br))
	}
	why := "no verdict: " + strings.Join(fs, ", ")
	if c.Unanswered == "" {
		why += fmt.Sprintf(" (more than %.0f%%: no latency or CPU-per-request verdict)", 100*trials.MaxFailedRatio)
	}
	if c.Why != "" {
		why += ": " + c.Why
	}
	return why
}

// beyond reports whether c's ratio interval lies wholly beyond 1 ± r.By
// in the rule's direction (always, without a least effect).
func beyond(c *trials.Comparison, r Rule) bool {
	if r.By == 0 {
		return true
	}
	if c.RatioCI95 == nil {
		return false
	}
	switch r.Verdict {
	case trials.Faster, trials.Higher, trials.Larger:
		return c.RatioCI95[0] >= 1+r.By
	}
	return c.RatioCI95[1] <= 1-r.By
}

// Line is a finding as one line of text: "req/s slower: api at c=4:
// slower, ratio 0.801 [0.795, 0.806]", or the rule and why it could not
// judge.
func (f Finding) Line() string {
	where := f.Series
	if f.Series != f.Baseline && f.Baseline != "" {
		where = f.Series + " against " + f.Baseline
	}
	if f.File != "" {
		where += " (" + f.File + " against " + f.BaselineFile + ")"
	}
	if f.Series == "" {
		return f.Rule + ": " + f.Why
	}
	where += fmt.Sprintf(" at c=%d", f.Concurrency)
	if f.Target != "" {
		where += ", " + f.Target
	}
	if f.Why != "" {
		return f.Rule + ": " + where + ": " + f.Why
	}
	c := trials.Comparison{Ratio: f.Ratio, RatioCI95: f.RatioCI95}
	return f.Rule + ": " + where + ": " + f.Verdict + ", ratio " + c.RatioText()
}

// Summary is the gate's verdict in one sentence: "the gate tripped: 2
// comparisons (req/s slower)", "the gate cannot judge: ...", "the gate
// passed: 10 comparisons judged, none tripped (req/s slower)".
func (r Result) Summary() string {
	rules := strings.Join(r.Rules, ", ")
	switch r.Status {
	case Tripped:
		return fmt.Sprintf("regression: %s tripped the gate (%s)", count(len(r.Tripped), "comparison"), rules)
	case Unjudged:
		return fmt.Sprintf("the gate cannot judge: %s without a verdict or undecided (%s), and it does not pass what it cannot judge", count(len(r.Unjudged), "comparison"), rules)
	}
	return fmt.Sprintf("the gate passed: %s judged, none tripped (%s)", count(r.Judged, "comparison"), rules)
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
