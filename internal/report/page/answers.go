package page

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// answerRow is one comparison as the answers block reads it: the pair (or
// the factor group it belongs to), the level, the metric, the estimate and
// its verdict, and the caveats that change its reading at that level (the
// listen queue overflowed, a share failed, the client was short of CPU).
// It is the one shape the sentence builder takes, so that comparisons
// grouped by the factor they differ in need only set Group.
type answerRow struct {
	// Group names the comparison group (a factor: "transport",
	// "keep-alive"); empty groups the rows by series and baseline.
	Group            string
	Series, Baseline string
	// Level is the concurrency; nil for a comparison of whole files.
	Level   *int
	Metric  string
	Ratio   *float64
	CI      []float64
	Verdict string
	// Trials is the smaller trial count of the two sides (0: unknown).
	Trials  int
	Caveats []string
	// Why says, for a side that never answered (Verdict noAnswer), what
	// its requests failed on.
	Why string
}

// noAnswer is the verdict of a row whose side never answered: every
// request failed, so there is no verdict (trials.Comparison.Unanswered).
const noAnswer = "no answer"

// tooManyFailed is the verdict of a row withheld for a side's failures:
// more than trials.MaxFailedRatio of its requests failed
// (trials.Comparison.MostlyFailed).
const tooManyFailed = "too many failed"

// maxFailedPct is trials.MaxFailedRatio in percent.
const maxFailedPct = 100 * trials.MaxFailedRatio

// metricWords names a metric in a sentence.
func metricWords(m string) string {
	switch m {
	case "requests_per_second":
		return "req/s"
	case "mean_ms":
		return "mean"
	case "p50_ms":
		return "p50"
	case "p99_ms":
		return "p99"
	case "max_ms":
		return "max"
	case "backend_cpu_seconds_per_request":
		return "backend CPU per request"
	case "backend_pss_bytes":
		return "backend memory (PSS)"
	}
	return strings.ReplaceAll(m, "_", " ")
}

// groupKey is the heading of a row's sentence: its group and its pair.
func (r *answerRow) groupKey() string {
	pair := r.Series + " vs " + r.Baseline
	if r.Group != "" {
		return r.Group + ": " + pair
	}
	return pair
}

// answerSentences turns comparison rows into one sentence per group (the
// group's name, or the pair): for each metric, the estimate (one level's
// ratio, or the range of the ratios where several levels agree), the span
// of their 95% intervals and the levels where that verdict holds, then the
// levels that are the same or undecided; the caveats of the levels named follow in
// the same sentence. Groups, metrics and levels keep the order of rows.
func answerSentences(rows []answerRow) []string {
	type metricRows struct {
		name string
		rows []*answerRow
	}
	type group struct {
		key     string
		metrics []*metricRows
	}
	var groups []*group
	byKey := map[string]*group{}
	for i := range rows {
		r := &rows[i]
		g := byKey[r.groupKey()]
		if g == nil {
			g = &group{key: r.groupKey()}
			byKey[g.key] = g
			groups = append(groups, g)
		}
		var m *metricRows
		for _, x := range g.metrics {
			if x.name == r.Metric {
				m = x
			}
		}
		if m == nil {
			m = &metricRows{name: r.Metric}
			g.metrics = append(g.metrics, m)
		}
		m.rows = append(m.rows, r)
	}
	var out []string
	for _, g := range groups {
		var clauses []string
		var cv caveats
		// Metrics with one verdict at every level and no direction
		// (same, undecided or no verdict) are named together at the end.
		var same []string
		tail := map[string][]string{}
		at := map[string]string{}
		fewest := 0
		for _, m := range g.metrics {
			if v, ok := oneVerdict(m.rows); ok && !directional(v) {
				if tail[v] == nil {
					same = append(same, v)
					at[v] = levelsPhrase(m.rows)
				}
				tail[v] = append(tail[v], metricWords(m.name))
				for _, r := range m.rows {
					if r.Trials > 0 && (fewest == 0 || r.Trials < fewest) {
						fewest = r.Trials
					}
				}
			} else {
				clauses = append(clauses, metricClause(m.name, m.rows))
			}
			for _, r := range m.rows {
				for _, c := range r.Caveats {
					cv.add(c, r.Level)
				}
				if r.Why != "" {
					cv.add(r.Why, r.Level)
				}
			}
		}
		for _, v := range same {
			words := wordsPhrase(tail[v])
			var c string
			switch v {
			case noAnswer:
				c = "no verdict on " + words + ", a side never answered"
			case tooManyFailed:
				c = fmt.Sprintf("no verdict on %s, more than %.0f%% of a side's requests failed", words, maxFailedPct)
			case trials.NoVerdict, "no verdict":
				c = "no verdict on " + words
				if fewest > 0 {
					c += " (" + plural(fewest, "trial") + " a side, too few for the test)"
				}
			default:
				c = v + " in " + words
			}
			if at[v] != "" {
				c += " at " + at[v]
			}
			clauses = append(clauses, c)
		}
		out = append(out, g.key+": "+strings.Join(clauses, "; ")+cv.text()+".")
	}
	return out
}

// caveats collects caveats in order, each with the levels it holds at.
type caveats struct {
	order  []string
	levels map[string][]int
}

// add notes caveat c at level l (nil: no level).
func (cv *caveats) add(c string, l *int) {
	if cv.levels == nil {
		cv.levels = map[string][]int{}
	}
	ls, ok := cv.levels[c]
	if !ok {
		cv.order = append(cv.order, c)
	}
	if l != nil && !slices.Contains(ls, *l) {
		ls = append(ls, *l)
	}
	cv.levels[c] = ls
}

// text is "; but C1 at c = 1 and 4, C2 at c = 8", or "" without caveats.
func (cv *caveats) text() string {
	if len(cv.order) == 0 {
		return ""
	}
	parts := make([]string, len(cv.order))
	for i, c := range cv.order {
		parts[i] = c
		if ls := cv.levels[c]; len(ls) > 0 {
			parts[i] += " at " + intsPhrase(ls)
		}
	}
	return "; but " + strings.Join(parts, ", ")
}

// intsPhrase lists levels: "c = 1", "c = 101 and 301", "c = 1, 2 and 4".
func intsPhrase(ls []int) string {
	ss := make([]string, len(ls))
	for i, l := range ls {
		ss[i] = strconv.Itoa(l)
	}
	if len(ss) == 1 {
		return "c = " + ss[0]
	}
	return "c = " + strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}

// metricClause says one metric's verdicts: "1.41× the req/s [1.12, 1.75]
// at c = 101 and 301, same at c = 1".
func metricClause(metric string, rows []*answerRow) string {
	type verdictRows struct {
		verdict string
		rows    []*answerRow
	}
	var vs []*verdictRows
	for _, r := range rows {
		v := r.Verdict
		if v == "" || v == trials.NoVerdict {
			v = "no verdict"
		}
		var x *verdictRows
		for _, y := range vs {
			if y.verdict == v {
				x = y
			}
		}
		if x == nil {
			x = &verdictRows{verdict: v}
			vs = append(vs, x)
		}
		x.rows = append(x.rows, r)
	}
	// The verdicts that hold a difference first, then the rest.
	sort.SliceStable(vs, func(i, j int) bool { return directional(vs[i].verdict) && !directional(vs[j].verdict) })
	words := metricWords(metric)
	var parts []string
	for i, x := range vs {
		at := levelsPhrase(x.rows)
		if !directional(x.verdict) {
			part := x.verdict
			if i == 0 {
				part = words + ": " + part
			}
			if at != "" {
				part += " at " + at
			}
			parts = append(parts, part)
			continue
		}
		lo, hi := rangeOf(x.rows, func(r *answerRow) []float64 {
			if r.Ratio == nil {
				return nil
			}
			return []float64{*r.Ratio, *r.Ratio}
		})
		est := ratioText(lo) + "×"
		if hi != lo {
			est = ratioText(lo) + "–" + ratioText(hi) + "×"
		}
		part := fmt.Sprintf("%s the %s (%s)", est, words, x.verdict)
		if clo, chi := rangeOf(x.rows, func(r *answerRow) []float64 { return r.CI }); clo > 0 || chi > 0 {
			part += " [" + ratioText(clo) + ", " + ratioText(chi) + "]"
		}
		if at != "" {
			part += " at " + at
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// oneVerdict is the verdict of every row, when they all have the same.
func oneVerdict(rows []*answerRow) (string, bool) {
	if len(rows) == 0 {
		return "", false
	}
	v := rows[0].Verdict
	for _, r := range rows[1:] {
		if r.Verdict != v {
			return "", false
		}
	}
	return cmp.Or(v, "no verdict"), true
}

// wordsPhrase joins words: "a", "a and b", "a, b and c".
func wordsPhrase(ws []string) string {
	if len(ws) < 2 {
		return strings.Join(ws, "")
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}

// directional reports whether a verdict says the series differs.
func directional(v string) bool { return trials.Directional(v) }

// rangeOf is the lowest first and highest second value of get over rows
// (0, 0 when none has them).
func rangeOf(rows []*answerRow, get func(*answerRow) []float64) (lo, hi float64) {
	first := true
	for _, r := range rows {
		v := get(r)
		if len(v) != 2 {
			continue
		}
		if first || v[0] < lo {
			lo = v[0]
		}
		if first || v[1] > hi {
			hi = v[1]
		}
		first = false
	}
	return lo, hi
}

// ratioText formats a ratio with two decimals.
func ratioText(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// levelsPhrase lists the rows' levels: "c = 1", "c = 101 and 301",
// "c = 1, 2 and 4"; "" when no row has a level.
func levelsPhrase(rows []*answerRow) string {
	var ls []int
	for _, r := range rows {
		if r.Level != nil {
			ls = append(ls, *r.Level)
		}
	}
	if len(ls) == 0 {
		return ""
	}
	return intsPhrase(ls)
}

// levelCaveats are the conditions at one level of a series that change
// the reading of its figures: the listen queue overflowed (SYNs dropped
// and retried after a second), a share of the requests failed, the client
// was short of CPU. Each names the series.
func levelCaveats(se *document.SweepSeries, level int) []string {
	s := levelOf(se, level)
	if s == nil {
		return nil
	}
	var out []string
	if n, wide := s.ListenOverflow(); n > 0 && wide {
		out = append(out, fmt.Sprintf("the machine's listen queues overflowed (a machine-wide counter) during %s", se.Label))
	} else if n > 0 {
		out = append(out, fmt.Sprintf("%s's listen queue overflowed", se.Label))
	}
	if s.Failed > 0 {
		// The share rounded to a whole percent (at least 1%), so that
		// levels that failed alike read as one caveat.
		out = append(out, fmt.Sprintf("%s had %s failed", se.Label, pctText(s.FailureRatio())))
	}
	if len(s.Client.Warnings) > 0 {
		out = append(out, fmt.Sprintf("the client was short of CPU for %s", se.Label))
	}
	return out
}

// sweepAnswerRows turns a sweep's comparisons into answer rows, with the
// caveats of both sides at each level.
func sweepAnswerRows(sw *document.Sweep) []answerRow {
	series := map[string]*document.SweepSeries{}
	for i := range sw.Series {
		series[sw.Series[i].Label] = &sw.Series[i]
	}
	rows := compareAnswerRows(sweepTrials(sw).Comparisons)
	for i := range rows {
		r := &rows[i]
		if r.Level == nil {
			continue
		}
		r.Caveats = nil
		for _, name := range []string{r.Series, r.Baseline} {
			if se := series[name]; se != nil {
				r.Caveats = append(r.Caveats, levelCaveats(se, *r.Level)...)
			}
		}
	}
	return rows
}

// compareAnswerRows turns saved comparisons into answer rows; the failed
// share recorded in a row is its caveat.
func compareAnswerRows(cs []trials.Comparison) []answerRow {
	rows := make([]answerRow, 0, len(cs))
	for _, c := range cs {
		level := c.Concurrency
		r := answerRow{Series: c.Series, Baseline: c.Baseline, Level: &level, Metric: c.Metric,
			Ratio: c.Ratio, CI: c.RatioCI95, Verdict: c.Verdict, Group: c.Factor,
			Trials: min(c.Trials, c.BaselineTrials)}
		if c.Unanswered != "" {
			r.Verdict, r.Why = noAnswer, c.Why
		} else if c.MostlyFailed != "" {
			r.Verdict = tooManyFailed
		}
		if r.Series == "" {
			r.Series = c.File
		}
		if r.Baseline == "" {
			r.Baseline = c.BaselineFile
		}
		if f := maxNumber(c.FailedRatio); f > 0 {
			r.Caveats = []string{fmt.Sprintf("up to %.1f%% failed", f*100)}
		}
		rows = append(rows, r)
	}
	return rows
}

// seriesHeadline is a sweep series' answer without comparisons: its
// highest rate and where, its p99 there, and the levels with caveats.
func seriesHeadline(se *document.SweepSeries) string {
	best := -1
	for i := range se.Levels {
		if best < 0 || se.Levels[i].RequestsPerSecond > se.Levels[best].RequestsPerSecond {
			best = i
		}
	}
	if best < 0 {
		return se.Label + ": no level was run."
	}
	s := &se.Levels[best]
	out := fmt.Sprintf("%s: at most %.0f req/s, at c = %d (p99 %.2f ms)", se.Label, s.RequestsPerSecond, s.Concurrency, s.Percentiles["99"])
	var cv caveats
	for i := range se.Levels {
		l := se.Levels[i].Concurrency
		for _, c := range levelCaveats(se, l) {
			cv.add(c, &l)
		}
	}
	return out + cv.text() + "."
}

// benchHeadline is a bench result's headline figures.
func benchHeadline(name string, s *stats.Summary) string {
	out := fmt.Sprintf("%s: %.2f req/s", name, s.RequestsPerSecond)
	if iv := rpsCI95(s); len(iv) == 2 {
		out += " [" + ci(iv, 2) + "]"
	}
	out += fmt.Sprintf(", mean %.3f ms, p99 %.3f ms, %d failed of %d", s.ConnectionTimes.Total.Mean, s.Percentiles["99"], s.Failed, s.Finished())
	if s.Failed > 0 {
		out += fmt.Sprintf(" (%.1f%%: %s)", s.FailureRatio()*100, classes(s.Failures))
	}
	if len(s.Client.Warnings) > 0 {
		out += "; but the client was short of CPU"
	}
	return out + "."
}

// answers writes the answers block: per result, its sentences (one per
// comparison group, a capacity search's answer, a bench run's headline
// figures, a sweep's best level per series without comparisons).
func (p *pager) answers(results []*Result, ids []string) {
	b := &p.b
	b.WriteString("<section class=\"answers\" id=\"answers\" aria-labelledby=\"answers-h\">\n<h2 id=\"answers-h\">Answers</h2>\n")
	for i, r := range results {
		var ss []string
		switch r.Kind() {
		case KindSweep:
			sw := r.sweep()
			if len(sweepTrials(sw).Comparisons) > 0 {
				ss = answerSentences(sweepAnswerRows(sw))
			} else {
				for k := range sw.Series {
					ss = append(ss, seriesHeadline(&sw.Series[k]))
				}
			}
		case KindCompare:
			ss = answerSentences(compareAnswerRows(r.compare().Comparisons))
		case KindCapacity:
			ss = []string{r.capacity().Answer}
		case KindStudy:
			ss = studyAnswers(r.study())
		case KindBench:
			ss = []string{benchHeadline(r.Name, r.bench())}
		case KindProbe:
			ss = r.probe().Summary
		}
		if len(ss) == 0 {
			continue
		}
		fmt.Fprintf(b, "<p class=\"answer-of\"><a href=\"#%s\">%s: %s</a></p>\n<ul class=\"answer-list\">\n", ids[i], r.Kind(), esc(r.Name))
		for _, s := range ss {
			fmt.Fprintf(b, "<li class=\"answer-item\">%s</li>\n", esc(s))
		}
		b.WriteString("</ul>\n")
		// The notes of the whole set (too few trials for a verdict, a
		// forced comparison) change how every sentence above reads.
		var notes []string
		switch r.Kind() {
		case KindSweep:
			notes = sweepTrials(r.sweep()).Notes
		case KindCompare:
			notes = r.compare().Notes
		case KindStudy:
			notes = r.study().Notes
		}
		for _, n := range notes {
			fmt.Fprintf(b, "<p class=\"answer-note\">Note: %s</p>\n", esc(n))
		}
	}
	b.WriteString("</section>\n")
}

// pctText is a failed share in whole percent, "<1%" below one.
func pctText(f float64) string {
	if f < 0.01 {
		return "<1%"
	}
	return fmt.Sprintf("%.0f%%", f*100)
}
