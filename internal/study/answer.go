package study

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/backbench/backbench/internal/trials"
)

// The client-side factors' reserved names in a study file.
const (
	// FactorKeepAlive is keep-alive, on or off.
	FactorKeepAlive = "keepalive"
	// FactorHTTP is the HTTP version, 1.0 or 1.1.
	FactorHTTP = "http"
)

// metricWords are the short names of the compared metrics in a detail.
var metricWords = map[string]string{
	trials.MetricRequestsPerSecond:    "req/s",
	trials.MetricMeanMs:               "mean",
	trials.MetricP50Ms:                "p50",
	trials.MetricP99Ms:                "p99",
	trials.MetricMaxMs:                "max",
	trials.MetricBackendCPUPerRequest: "CPU/req",
	trials.MetricBackendPSSBytes:      "PSS",
}

// pair is two series that differ in exactly one declared factor.
type pair struct {
	s, b   int // series, baseline (indexes into Result.Series)
	factor string
}

// pairsOf returns the pairs of res's series that differ in exactly one
// declared factor, the baseline side at the factor's baseline level, in
// the order of the factors and then of the series. A factor of more than
// two levels pairs each other level with its baseline.
func pairsOf(res *Result) []pair {
	var out []pair
	for _, f := range res.Factors {
		for i, s := range res.Series {
			if s.Levels[f.Name] == f.Baseline {
				continue
			}
			for j, b := range res.Series {
				if b.Levels[f.Name] != f.Baseline || !sameBut(s.Levels, b.Levels, f.Name) {
					continue
				}
				out = append(out, pair{s: i, b: j, factor: f.Name})
			}
		}
	}
	return out
}

// sameBut reports whether a and b hold the same levels for every factor
// but name.
func sameBut(a, b map[string]string, name string) bool {
	for k, v := range a {
		if k != name && b[k] != v {
			return false
		}
	}
	return len(a) == len(b)
}

// context is "keepalive=off, c=4": the levels the pair shares, and the
// concurrency (left out when 0).
func (res *Result) context(p pair, concurrency int) string {
	var parts []string
	for _, f := range res.Factors {
		if f.Name != p.factor {
			parts = append(parts, f.Name+"="+res.Series[p.s].Levels[f.Name])
		}
	}
	if len(res.Measure.Levels) > 1 && concurrency > 0 {
		parts = append(parts, fmt.Sprintf("c=%d", concurrency))
	}
	return strings.Join(parts, ", ")
}

// comesWith names what differs besides the factor between the two sides'
// deployments: "over HTTP rather than FastCGI".
func (res *Result) comesWith(p pair) string {
	a, b := res.Configurations[res.Series[p.s].Config], res.Configurations[res.Series[p.b].Config]
	if a.ProtocolName != b.ProtocolName && a.ProtocolName != "" && b.ProtocolName != "" {
		return fmt.Sprintf("over %s rather than %s", a.ProtocolName, b.ProtocolName)
	}
	return ""
}

// step returns the series' step at concurrency c, or nil.
func (s *Series) step(c int) *Step {
	for i := range s.Steps {
		if s.Steps[i].Concurrency == c {
			return &s.Steps[i]
		}
	}
	return nil
}

// ShortNote is the note of a study whose verdicts rest on trials shorter
// than trials.MinTrialSeconds.
const ShortNote = "some trials lasted less than 1 s or their client CPU could not be measured: their verdicts are less to be trusted; lengthen them with the measure's requests or duration"

// Answers compares every pair (pairsOf) at every level both sides ran and
// says, per factor, what the comparisons found: a conclusion and one
// detail per pair and level. A side that answered nothing gets no verdict
// and the reason; a keep-alive side whose backend closed every kept
// connection is named: keep-alive did not apply.
func Answers(res *Result) ([]trials.Comparison, []Answer) {
	comps, answers, _ := answers(res)
	return comps, answers
}

// Answer sets res's comparisons and answers (Answers), and adds ShortNote
// to its notes when a verdict rests on short trials.
func (res *Result) Answer() {
	var short bool
	res.Comparisons, res.Answers, short = answers(res)
	res.FalseDiscoveries = nil
	if countTested(res.Comparisons) > 0 {
		f := fdrOf(res.Comparisons)
		res.FalseDiscoveries = &f
	}
	if res.Comparisons == nil {
		res.Comparisons = []trials.Comparison{}
	}
	if short && !slices.Contains(res.Notes, ShortNote) {
		res.Notes = append(res.Notes, ShortNote)
	}
}

// countTested counts the comparisons of cs with a test (a verdict other
// than trials.NoVerdict).
func countTested(cs []trials.Comparison) int {
	n := 0
	for i := range cs {
		if cs[i].Verdict != trials.NoVerdict {
			n++
		}
	}
	return n
}

// fdrOf is what the control of false discoveries did over cs, after
// answers applied it.
func fdrOf(cs []trials.Comparison) trials.FDR {
	f := trials.FDR{Method: trials.FDRMethod, Rate: trials.Alpha, Comparisons: countTested(cs)}
	for i := range cs {
		switch {
		case cs[i].Withdrawn:
			f.Withdrawn++
		case trials.Directional(cs[i].Verdict):
			f.Directions++
		}
	}
	return f
}

// levelKey names a pair's comparisons at a level.
type levelKey struct{ s, b, c int }

// compareAll compares every pair at every level where both sides answered
// and controls the false discoveries over all of them together
// (trials.ControlFDR): a direction that does not survive reads
// undecided.
func compareAll(res *Result, pairs []pair) map[levelKey][]trials.Comparison {
	type span struct{ at, n int }
	spans := map[levelKey]span{}
	walked := make([]trials.Series, len(res.Series))
	for i := range res.Series {
		s := &res.Series[i]
		walked[i] = trials.Series{Label: s.Label, Levels: make([]trials.Level, len(res.Measure.Levels))}
		for k, c := range res.Measure.Levels {
			walked[i].Levels[k].Concurrency = c
			if st := s.step(c); st != nil {
				walked[i].Levels[k].Trials = st.Trials
			}
		}
	}
	walk := make([]trials.SeriesPair, len(pairs))
	for i, p := range pairs {
		walk[i] = trials.SeriesPair{Series: p.s, Baseline: p.b, Factor: p.factor}
	}
	skip := func(at trials.LevelPair) bool {
		s, b := &res.Series[at.Series], &res.Series[at.Baseline]
		return noAnswer(res, s, s.step(at.Concurrency), b, b.step(at.Concurrency)) != ""
	}
	q, sequential := res.Sequential()
	n := 0
	all := trials.ComparePairs(walked, walk, res.Noise, skip, func(at trials.LevelPair, cs []trials.Comparison) {
		if sequential {
			// Run until decided: the verdicts are the sequential
			// rule's, whose error rates hold under the looks.
			ss, bs := res.Series[at.Series].step(at.Concurrency), res.Series[at.Baseline].step(at.Concurrency)
			for i := range cs {
				q.Judge(&cs[i], ss.Trials, bs.Trials, res.Noise)
			}
		}
		spans[levelKey{at.Series, at.Baseline, at.Concurrency}] = span{n, len(cs)}
		n += len(cs)
	})
	trials.ControlFDR(all, res.Noise)
	out := map[levelKey][]trials.Comparison{}
	for k, sp := range spans {
		out[k] = all[sp.at : sp.at+sp.n]
	}
	return out
}

// answers is Answers, and whether a verdict rests on short trials
// (trials.Trial.Short).
func answers(res *Result) ([]trials.Comparison, []Answer, bool) {
	short := false
	var comps []trials.Comparison
	var answers []Answer
	pairs := pairsOf(res)
	compared := compareAll(res, pairs)
	for _, f := range res.Factors {
		// A factor of two levels has one answer; of more, one per level
		// against the baseline.
		for _, level := range otherLevels(f) {
			a := Answer{Factor: f.Name, Level: level}
			var faster, slower, same, undecided, none int
			var lo, hi float64
			var open openSpan
			var why []string
			var with string
			var one *trials.Comparison
			var others []cost
			kaIgnored := map[string]bool{}
			for _, p := range pairs {
				if p.factor != f.Name || res.Series[p.s].Levels[f.Name] != level {
					continue
				}
				s, b := &res.Series[p.s], &res.Series[p.b]
				if w := res.comesWith(p); w != "" {
					with = w
				}
				// Many levels: one line per pair sums its levels up
				// (condensed), instead of a line per level.
				many := len(res.Measure.Levels) > maxLevelLines
				var sum pairSummary
				for _, c := range res.Measure.Levels {
					ss, bs := s.step(c), b.step(c)
					ctx := res.context(p, c)
					title := fmt.Sprintf("%s: %s vs %s", f.Name, s.Levels[f.Name], b.Levels[f.Name])
					head := fmt.Sprintf("%s vs %s", s.Levels[f.Name], b.Levels[f.Name])
					if ctx != "" {
						head += " at " + ctx
					}
					if reason := noAnswer(res, s, ss, b, bs); reason != "" {
						none++
						if !many {
							a.Details = append(a.Details, head+": no verdict: "+reason)
						}
						sum.add(c, nil, reason)
						why = append(why, reason)
						continue
					}
					cs := compared[levelKey{p.s, p.b, c}]
					var words []string
					for i := range cs {
						cs[i].Factor, cs[i].FactorTitle = f.Name, title
						if i > 0 {
							others = append(others, cost{c: cs[i], ctx: ctx, s: p.s, b: p.b, level: c,
								keepOn: f.Name == FactorKeepAlive && s.KeepAlive && !b.KeepAlive, workers: res.Configurations[s.Config].MaxProcs})
						}
						// The detail gives req/s always, the other metrics
						// where they differ; the document has them all.
						if i == 0 || (trials.Directional(cs[i].Verdict) && measured(&cs[i])) {
							words = append(words, metricText(&cs[i]))
						}
						if cs[i].ShortTrials > 0 {
							short = true
						}
					}
					mostly := ""
					for i := range cs {
						if cs[i].MostlyFailed != "" {
							mostly = cs[i].MostlyFailed
						}
					}
					switch {
					case mostly != "":
						words = append(words, fmt.Sprintf("latency and CPU per request: no verdict, more than %.0f%% of %s's requests failed",
							100*trials.MaxFailedRatio, map[string]string{trials.UnansweredSeries: s.Label, trials.UnansweredBaseline: b.Label,
								trials.UnansweredBoth: s.Label + " and " + b.Label}[mostly]))
					case len(words) == 1 && len(cs) > 1 && cs[0].Verdict != trials.NoVerdict:
						words = append(words, "other metrics: no direction")
					}
					comps = append(comps, cs...)
					rps := cs[0]
					one = &rps
					switch rps.Verdict {
					case trials.Faster:
						faster++
					case trials.Slower:
						slower++
					case trials.Same:
						same++
					case trials.Undecided:
						undecided++
						open.add(&rps)
					default:
						none++
						why = append(why, fmt.Sprintf("too few trials (%d against %d; a verdict needs %d a side)",
							rps.Trials, rps.BaselineTrials, trials.MinTrialsForVerdict()))
					}
					if rps.Ratio != nil && rps.Verdict != trials.NoVerdict {
						if faster+slower+same+undecided == 1 || *rps.Ratio < lo {
							lo = *rps.Ratio
						}
						if faster+slower+same+undecided == 1 || *rps.Ratio > hi {
							hi = *rps.Ratio
						}
					}
					line := head + ": " + strings.Join(words, "; ")
					if f.Name == FactorKeepAlive && ss.KeepAliveIgnored {
						cfg := res.Configurations[s.Config].Name
						kaIgnored[cfg] = true
						line += fmt.Sprintf(" (keep-alive did not apply: %s closed every kept connection)", cfg)
					}
					sum.add(c, &cs[0], "")
					if !many {
						a.Details = append(a.Details, line)
					}
				}
				if many {
					head := fmt.Sprintf("%s vs %s", s.Levels[f.Name], b.Levels[f.Name])
					if ctx := res.context(p, 0); ctx != "" {
						head += " at " + ctx
					}
					a.Details = append(a.Details, head+": "+sum.text())
				}
			}
			if faster+slower+same+undecided != 1 {
				one = nil
			}
			// A gain (or loss) in req/s paid (or made up) in another
			// metric is named in the conclusion, with its known causes;
			// without a direction in req/s, a decided cost is named too.
			costs := ""
			if faster == 0 || slower == 0 {
				up := slower == 0
				if opp := against(others, up); len(opp) > 0 {
					costs = costsText(opp)
					a.Details = append(a.Details, res.costNote(f.Name+" "+level, opp, up))
				}
			}
			a.Conclusion = conclusion(f, level, tally{faster, slower, same, undecided, none}, lo, hi, one, &open, with, why, kaIgnored, costs)
			answers = append(answers, a)
		}
	}
	return comps, answers, short
}

// maxLevelLines is the most concurrency levels whose comparisons get a
// detail line each; past it, a pair's levels are summed up in one line.
const maxLevelLines = 4

// pairSummary gathers a pair's req/s comparisons over the levels, for one
// line.
type pairSummary struct {
	n    int
	same int
	// open gathers the undecided levels.
	open openSpan
	// lo and hi bound the ratios judged.
	lo, hi float64
	// byVerdict holds, for faster and slower, the levels and comparisons.
	byVerdict map[string][]levelComparison
	none      []string
}

// levelComparison is a comparison at a level.
type levelComparison struct {
	level int
	c     *trials.Comparison
}

// add records the comparison c of req/s at a level (nil with why).
func (p *pairSummary) add(level int, c *trials.Comparison, why string) {
	p.n++
	if c == nil || c.Verdict == trials.NoVerdict {
		if why == "" {
			why = "too few trials"
		}
		if !slices.Contains(p.none, why) {
			p.none = append(p.none, why)
		}
		return
	}
	if c.Ratio != nil {
		if p.judged() == 0 || *c.Ratio < p.lo {
			p.lo = *c.Ratio
		}
		if *c.Ratio > p.hi {
			p.hi = *c.Ratio
		}
	}
	switch c.Verdict {
	case trials.Same:
		p.same++
		return
	case trials.Undecided:
		p.open.add(c)
		return
	}
	if p.byVerdict == nil {
		p.byVerdict = map[string][]levelComparison{}
	}
	p.byVerdict[c.Verdict] = append(p.byVerdict[c.Verdict], levelComparison{level, c})
}

// judged counts the levels with a verdict.
func (p *pairSummary) judged() int {
	return p.same + p.open.n + len(p.byVerdict[trials.Faster]) + len(p.byVerdict[trials.Slower])
}

// openSpan gathers undecided comparisons: how many, the span of their
// intervals and the most rounds one of them would still need.
type openSpan struct {
	n      int
	lo, hi float64
	// more is the largest estimate of more rounds; beyond says that one
	// needs more than trials.MaxRepeat.
	more   int
	beyond bool
}

// add counts the undecided comparison c.
func (o *openSpan) add(c *trials.Comparison) {
	if ci := c.RatioCI95; ci != nil {
		if o.n == 0 || ci[0] < o.lo || o.lo == 0 {
			o.lo = ci[0]
		}
		o.hi = max(o.hi, ci[1])
	}
	o.n++
	if c.MoreRounds < 0 {
		o.beyond = true
	}
	o.more = max(o.more, c.MoreRounds)
}

// text is "intervals from 0.47× to 2.96×; up to ~8 more rounds would
// decide them", "" without undecided comparisons.
func (o *openSpan) text() string {
	if o.n == 0 {
		return ""
	}
	s := ""
	if o.hi > 0 {
		s = fmt.Sprintf("intervals from %.2f× to %.2f×", o.lo, o.hi)
		if o.n == 1 {
			s = fmt.Sprintf("interval [%.2f, %.2f]", o.lo, o.hi)
		}
	}
	what := "them"
	if o.n == 1 {
		what = "it"
	}
	var more string
	switch {
	case o.beyond && o.more > 0:
		more = fmt.Sprintf("up to ~%d more rounds would decide most, more than %d the rest", o.more, trials.MaxRepeat)
	case o.beyond:
		more = fmt.Sprintf("more than %d rounds would be needed to decide %s", trials.MaxRepeat, what)
	case o.more > 0:
		more = fmt.Sprintf("~%d more rounds would decide %s", o.more, what)
		if o.n > 1 {
			more = "up to " + more
		}
	}
	if s != "" && more != "" {
		return s + ", " + more
	}
	return s + more
}

// text is "req/s same at 3 of 51 levels; undecided at 45 of 51 levels
// (intervals from 0.47× to 2.96×, up to ~12 more rounds would decide
// them); faster at c=141 (1.84× [1.00, 3.91])", or, for more than three
// levels of a verdict, "faster at 28 levels from c=1 to c=411 (1.40× to
// 13.27×)".
func (p *pairSummary) text() string {
	var parts []string
	if p.same > 0 {
		parts = append(parts, fmt.Sprintf("same at %d of %d levels", p.same, p.n))
	}
	if p.open.n > 0 {
		parts = append(parts, fmt.Sprintf("undecided at %d of %d levels (%s)", p.open.n, p.n, p.open.text()))
	}
	for _, v := range []string{trials.Faster, trials.Slower} {
		lcs := p.byVerdict[v]
		switch {
		case len(lcs) == 0:
		case len(lcs) <= 3:
			var at []string
			for _, lc := range lcs {
				a := fmt.Sprintf("c=%d", lc.level)
				if c := lc.c; c.Ratio != nil && c.RatioCI95 != nil {
					a += fmt.Sprintf(" (%.2f× [%.2f, %.2f])", *c.Ratio, c.RatioCI95[0], c.RatioCI95[1])
				}
				at = append(at, a)
			}
			parts = append(parts, fmt.Sprintf("%s at %s", v, strings.Join(at, ", ")))
		default:
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, lc := range lcs {
				if r := lc.c.Ratio; r != nil {
					lo, hi = min(lo, *r), max(hi, *r)
				}
			}
			parts = append(parts, fmt.Sprintf("%s at %d of %d levels, from c=%d to c=%d (%s)", v, len(lcs), p.n, lcs[0].level, lcs[len(lcs)-1].level, span(lo, hi)))
		}
	}
	if len(parts) > 0 {
		parts[0] = "req/s " + parts[0]
	}
	if p.judged() > 1 {
		parts = append(parts, fmt.Sprintf("ratios %s in all", span(p.lo, p.hi)))
	}
	if len(p.none) > 0 {
		parts = append(parts, fmt.Sprintf("no verdict at %d levels: %s", p.n-p.judged(), strings.Join(p.none, "; ")))
	}
	return strings.Join(parts, "; ")
}

// noAnswer says why a pair at a level gets no verdict before any test: a
// side not measured (its configuration failed) or whose every request
// failed.
func noAnswer(res *Result, s *Series, ss *Step, b *Series, bs *Step) string {
	for _, side := range []struct {
		se *Series
		st *Step
	}{{s, ss}, {b, bs}} {
		cfg := res.Configurations[side.se.Config]
		if side.st == nil || len(side.st.Trials) == 0 {
			if cfg.Failure != "" {
				// Said in full once, in the notes: here, named.
				return cfg.FailureRef()
			}
			return side.se.Label + " was not measured at this level"
		}
		if side.st.Complete == 0 {
			why := fmt.Sprintf("every request of %s failed", side.se.Label)
			if side.st.FailureClass != "" {
				why += " (" + side.st.FailureClass
				if side.st.FailureSample != "" {
					why += ": " + side.st.FailureSample
				}
				why += ")"
			}
			return why
		}
	}
	return ""
}

// measured reports whether both sides of c measured something (a
// backend's CPU per request reads 0 in trials shorter than the clock's
// tick): a ratio to or from 0 is no finding.
func measured(c *trials.Comparison) bool {
	return c.Value != nil && c.BaselineValue != nil && *c.Value > 0 && *c.BaselineValue > 0
}

// metricText is "req/s 1.081× [1.020, 1.150] faster", "req/s 0.935×
// [0.470, 2.961] undecided: ~40 more rounds, ~3 min".
func metricText(c *trials.Comparison) string {
	name := metricWords[c.Metric]
	if c.Ratio == nil {
		return name + " -"
	}
	v := c.Verdict
	if v == trials.NoVerdict {
		v = "no verdict"
	}
	if m := c.MoreText(); m != "" {
		v += ": " + m
	}
	if f := c.FailedRatio; f != nil && max(f.Series, f.Baseline) > trials.MaxFailedRatio {
		// A verdict beside many failures names them (trials'
		// VerdictText does the same).
		v += fmt.Sprintf(" (%.0f%% failed, baseline %.0f%%)", 100*f.Series, 100*f.Baseline)
	}
	if c.RatioCI95 == nil {
		return fmt.Sprintf("%s %.3f× %s", name, *c.Ratio, v)
	}
	return fmt.Sprintf("%s %.3f× [%.3f, %.3f] %s", name, *c.Ratio, c.RatioCI95[0], c.RatioCI95[1], v)
}

// tally counts a factor's req/s comparisons by verdict.
type tally struct{ faster, slower, same, undecided, none int }

// conclusion is the factor's sentence; costs names the decided metrics
// that go the other way from its req/s ("but p99 19× higher at c=32").
func conclusion(f Factor, level string, t tally, lo, hi float64, one *trials.Comparison, open *openSpan, with string, why []string, kaIgnored map[string]bool, costs string) string {
	faster, slower, same, undecided, none := t.faster, t.slower, t.same, t.undecided, t.none
	n := faster + slower + same + undecided + none
	subject := fmt.Sprintf("%s %s against %s", f.Name, level, f.Baseline)
	if with != "" {
		subject += " (" + with + ")"
	}
	if n == 0 {
		return subject + ": nothing to compare (no two series differ in this factor alone)"
	}
	judged := faster + slower + same + undecided
	var s string
	switch {
	case judged == 0:
		s = fmt.Sprintf("%s: no verdict in %s: %s", subject, plural(n, "comparison"), firstUnique(why))
	case one != nil && one.RatioCI95 != nil && (faster == 1 || slower == 1):
		s = fmt.Sprintf("%s: %s, %.2f× [%.2f, %.2f] the requests per second", subject, one.Verdict, *one.Ratio, one.RatioCI95[0], one.RatioCI95[1])
		if none > 0 {
			s += " in the one comparison with a verdict"
		}
	case faster == judged:
		s = fmt.Sprintf("%s: faster, %s the requests per second in %s", subject, span(lo, hi), ofN(judged, n))
	case slower == judged:
		s = fmt.Sprintf("%s: slower, %s the requests per second in %s", subject, span(lo, hi), ofN(judged, n))
	case same == judged:
		s = fmt.Sprintf("%s: same requests per second (within the noise) in %s", subject, ofN(judged, n))
	case undecided == judged:
		s = fmt.Sprintf("%s: undecided in requests per second in %s (%s)", subject, ofN(judged, n), open.text())
	default:
		var parts []string
		for _, x := range []struct {
			k int
			w string
		}{{faster, trials.Faster}, {slower, trials.Slower}, {same, trials.Same}, {undecided, trials.Undecided}} {
			if x.k > 0 {
				parts = append(parts, fmt.Sprintf("%s in %d", x.w, x.k))
			}
		}
		s = fmt.Sprintf("%s: %s of %s of requests per second (%s)", subject, strings.Join(parts, ", "), plural(n, "comparison"), span(lo, hi))
		if undecided > 0 {
			s += "; undecided: " + open.text()
		}
	}
	if costs != "" {
		s += "; " + costs
	}
	if judged > 0 && none > 0 {
		s += fmt.Sprintf("; %d without verdict: %s", none, firstUnique(why))
	}
	if len(kaIgnored) > 0 {
		s += "; " + trials.KeepAliveIgnored(slices.Sorted(maps.Keys(kaIgnored)))
	}
	return s + "."
}

// otherLevels are f's levels but its baseline.
func otherLevels(f Factor) []string {
	var out []string
	for _, l := range f.Levels {
		if l != f.Baseline {
			out = append(out, l)
		}
	}
	return out
}

// span is "1.08×" or "1.02× to 1.15×".
func span(lo, hi float64) string {
	if fmt.Sprintf("%.2f", lo) == fmt.Sprintf("%.2f", hi) {
		return fmt.Sprintf("%.2f×", lo)
	}
	return fmt.Sprintf("%.2f× to %.2f×", lo, hi)
}

// ofN is "4 of 4 comparisons" or "all 2 comparisons".
func ofN(k, n int) string {
	if k == n {
		if n == 1 {
			return "the one comparison"
		}
		return fmt.Sprintf("all %d comparisons", n)
	}
	return fmt.Sprintf("%d of %s", k, plural(n, "comparison"))
}

// plural is "1 comparison", "3 comparisons".
func plural(n int, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return fmt.Sprintf("%d %ss", n, w)
}

// firstUnique joins the distinct reasons.
func firstUnique(why []string) string {
	var out []string
	for _, w := range why {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return strings.Join(out, "; ")
}
