package study

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/backbench/backbench/internal/trials"
)

// cost is a decided comparison of a metric other than req/s that goes
// the other way from the factor's req/s: a latency higher (or lower) on
// the side whose requests per second are higher (or lower).
type cost struct {
	c       trials.Comparison
	ctx     string // "keepalive=off, c=32": where
	s, b    int    // the pair's series and baseline (Result.Series)
	level   int    // concurrency
	keepOn  bool   // the series is the keep-alive side of a keep-alive pair
	workers int    // the series' backend's most processes (0 unknown)
}

// better reports whether v is the better direction of its metric: faster,
// lower, smaller.
func better(v string) bool {
	return v == trials.Faster || v == trials.Lower || v == trials.Smaller
}

// against keeps of cs the decided comparisons of metrics other than req/s
// whose direction goes against up: worse (higher, larger) when the req/s
// went up, better when down.
func against(cs []cost, up bool) []cost {
	var out []cost
	for _, c := range cs {
		v := c.c.Verdict
		if c.c.Metric == trials.MetricRequestsPerSecond || !trials.Directional(v) || !measured(&c.c) {
			continue
		}
		if better(v) != up {
			out = append(out, c)
		}
	}
	return out
}

// factorText is a ratio as a factor: "19×" from 10 up, "1.45×" below;
// a ratio under 1 as its inverse ("2.5× lower" for 0.4).
func factorText(r float64) string {
	if r < 1 && r > 0 {
		r = 1 / r
	}
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.2f×", r)
}

// costsText names every metric of cs, in the order of metricWords' keys
// as the comparisons come: "but p99 19× higher at c=32, max 24× higher at
// c=8"; with several comparisons of a metric, the largest: "p99 higher in
// 3 comparisons, up to 19× at c=32". "" without any.
func costsText(cs []cost) string {
	var order []string
	by := map[string][]cost{}
	for _, c := range cs {
		m := c.c.Metric
		if by[m] == nil {
			order = append(order, m)
		}
		by[m] = append(by[m], c)
	}
	var parts []string
	for _, m := range order {
		list := by[m]
		top := list[0]
		for _, c := range list[1:] {
			if distance(*c.c.Ratio) > distance(*top.c.Ratio) {
				top = c
			}
		}
		where := ""
		if top.ctx != "" {
			where = " at " + top.ctx
		}
		name := metricWords[m]
		if len(list) == 1 {
			parts = append(parts, fmt.Sprintf("%s %s %s%s", name, factorText(*top.c.Ratio), top.c.Verdict, where))
		} else {
			parts = append(parts, fmt.Sprintf("%s %s in %d comparisons, up to %s%s", name, top.c.Verdict, len(list), factorText(*top.c.Ratio), where))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "but " + strings.Join(parts, ", ")
}

// distance is how far a ratio is from 1, either way.
func distance(r float64) float64 {
	if r <= 0 {
		return 0
	}
	return max(r, 1/r)
}

// costNote gives the known causes of a gain in req/s paid in another
// metric (or of a loss with a gain elsewhere), those seen in cs named:
// kept connections outnumbering a pool's workers, failures that make a
// side look fast, a knee passed. subject is the factor's level ("keepalive
// on").
func (res *Result) costNote(subject string, cs []cost, up bool) string {
	// Each cause once, with the levels it was seen at: a sweep of 51
	// levels names a cause in one sentence, not 51.
	var outnumber, generic []int
	workers := 0
	failed := map[int][]int{} // series → levels with failures
	failedN := map[int]int64{}
	knees := map[int][]int{} // series → levels after which req/s stopped rising
	var order []int          // series in the order first seen
	seen := func(i int) {
		if !slices.Contains(order, i) {
			order = append(order, i)
		}
	}
	for _, c := range cs {
		switch {
		case c.keepOn && up && c.workers > 1 && c.level > c.workers:
			outnumber = append(outnumber, c.level)
			workers = max(workers, c.workers)
		case c.keepOn && up:
			generic = append(generic, c.level)
		}
		// The side that looks fast, and whether its requests failed.
		fast, slow := c.s, c.b
		if !up {
			fast, slow = c.b, c.s
		}
		if st := res.Series[fast].step(c.level); st != nil && st.Failed > 0 && !slices.Contains(failed[fast], c.level) {
			failed[fast] = append(failed[fast], c.level)
			failedN[fast] += st.Failed
			seen(fast)
		}
		for _, side := range []int{slow, fast} {
			if k := res.kneeBefore(side, c.level); k > 0 {
				if !slices.Contains(knees[side], k) {
					knees[side] = append(knees[side], k)
				}
				seen(side)
				break
			}
		}
	}
	var causes []string
	if len(outnumber) > 0 {
		causes = append(causes, fmt.Sprintf("kept connections outnumber the pool's workers: %s the backend ran at most %d processes, "+
			"and each kept connection holds a worker between its requests, so requests on the other connections queue "+
			"behind them (more req/s without the connects, a longer tail)", levelsText(outnumber), workers))
	} else if len(generic) > 0 {
		causes = append(causes, "kept connections can outnumber a pool's workers: each holds a worker between its requests, "+
			"so with c above the pool size requests queue behind them (more req/s without the connects, a longer tail)")
	}
	for _, i := range order {
		if ls := failed[i]; len(ls) > 0 {
			causes = append(causes, fmt.Sprintf("failures make a side look fast: %s had %d failed requests %s, and a failed request ends early",
				res.Series[i].Label, failedN[i], levelsText(ls)))
		}
	}
	for _, i := range order {
		if ls := knees[i]; len(ls) > 0 {
			slices.Sort(ls)
			more := ""
			if len(ls) > 1 {
				more = fmt.Sprintf(" (flat after %d higher levels too)", len(ls)-1)
			}
			causes = append(causes, fmt.Sprintf("a knee passed: %s's req/s stopped rising after c=%d%s, and past a knee more connections only queue",
				res.Series[i].Label, ls[0], more))
		}
	}
	if len(causes) == 0 {
		return fmt.Sprintf("Note (%s): the known causes of such a trade are kept connections outnumbering a pool's workers "+
			"(keep-alive on, c above the pool size), failures that make a side look fast, and a knee passed; none was seen here.", subject)
	}
	return fmt.Sprintf("Note (%s): %s.", subject, strings.Join(causes, "; "))
}

// levelsText is "at c=32", "at c=11 and 21", "at c=11, 21 and 31", or with
// more than four levels "at c=11, 21, 31 and 9 more levels", the levels
// sorted.
func levelsText(ls []int) string {
	ls = slices.Clone(ls)
	slices.Sort(ls)
	ls = slices.Compact(ls)
	words := make([]string, 0, 4)
	for _, l := range ls[:min(len(ls), 3)] {
		words = append(words, strconv.Itoa(l))
	}
	switch {
	case len(ls) == 1:
		return "at c=" + words[0]
	case len(ls) <= 3:
		return "at c=" + strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
	case len(ls) == 4:
		return "at c=" + strings.Join(words, ", ") + " and " + strconv.Itoa(ls[3])
	}
	return fmt.Sprintf("at c=%s and %d more levels", strings.Join(words, ", "), len(ls)-3)
}

// kneeBefore returns the level below c after which series i's median
// req/s stopped rising (at c no more than 5% above that level's), 0 when
// it still rose or there is no lower level measured.
func (res *Result) kneeBefore(i, c int) int {
	se := &res.Series[i]
	cur := se.step(c)
	if cur == nil {
		return 0
	}
	prev := 0
	for _, l := range res.Measure.Levels {
		if l < c && l > prev && se.step(l) != nil {
			prev = l
		}
	}
	if prev == 0 {
		return 0
	}
	if p := se.step(prev).RequestsPerSecond.Median; p > 0 && cur.RequestsPerSecond.Median <= 1.05*p {
		return prev
	}
	return 0
}
