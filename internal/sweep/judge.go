package sweep

import (
	"fmt"
	"io"
	"strings"

	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/execute"
)

// Judgement is what --slo's objectives say of a sweep (Judge).
type Judgement struct {
	// Lines say it: a title, then per series its highest passing level
	// and every level's verdict.
	Lines []string
	// Highest is each series' highest level that passes (0: none).
	Highest []int
	// Failed names every series and level that failed ("t at c=8").
	Failed []string
}

// Judge applies the objectives objs to every level of every series: it
// fills each level's SLO verdicts (stats.Summary.SLO) and says each
// series' highest passing level. Without objectives it does nothing and
// returns the zero Judgement.
func Judge(series []SeriesResult, objs []capacity.Objective) Judgement {
	var j Judgement
	if len(objs) == 0 {
		return j
	}
	j.Lines = []string{"", "Objectives " + strings.Join(capacity.Texts(objs), ", ") + ":"}
	for i := range series {
		se := &series[i]
		highest, verdicts := 0, []string{}
		for k := range se.Levels {
			l := &se.Levels[k]
			m := capacity.FromSummary(l, objs)
			l.SLO = capacity.Evaluate(objs, &m)
			v := fmt.Sprintf("c=%d pass", l.Concurrency)
			if capacity.Passed(l.SLO) {
				highest = max(highest, l.Concurrency)
			} else {
				var why []string
				for n, r := range l.SLO {
					if !r.Pass {
						why = append(why, objs[n].Metric+" "+objs[n].Format(r.Value))
					}
				}
				v = fmt.Sprintf("c=%d FAIL (%s)", l.Concurrency, strings.Join(why, ", "))
				j.Failed = append(j.Failed, fmt.Sprintf("%s at c=%d", se.Label, l.Concurrency))
			}
			verdicts = append(verdicts, v)
		}
		j.Highest = append(j.Highest, highest)
		best := "none"
		if highest > 0 {
			best = fmt.Sprintf("c=%d", highest)
		}
		j.Lines = append(j.Lines, fmt.Sprintf("  %s: highest level that passes: %s; %s", se.Label, best, strings.Join(verdicts, ", ")))
	}
	return j
}

// CheckSockets makes sure, without connecting, that the Unix socket
// paths of the series' targets are sockets (execute.CheckSockets, once per
// address); TCP targets are checked by their series' own first dials (see
// Unreachable). It returns an error per address that failed, naming its
// series, and whether every series failed.
func CheckSockets(series []Series) (errs []error, all bool) {
	type reach struct {
		err    error
		labels []string
	}
	var order []string
	reached := map[string]*reach{}
	failed := 0
	for _, se := range series {
		r := se.Plan
		key := r.Target.Network + " " + r.Target.Address
		pr := reached[key]
		if pr == nil {
			pr = &reach{err: execute.CheckSockets(r.Target, r.Upstreams, io.Discard)}
			reached[key] = pr
			order = append(order, key)
		}
		pr.labels = append(pr.labels, se.Label)
		if pr.err != nil {
			failed++
		}
	}
	for _, key := range order {
		if pr := reached[key]; pr.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", strings.Join(pr.labels, ", "), pr.err))
		}
	}
	return errs, failed == len(series)
}

// Unreachable returns an error per series of res that could not reach its
// target at its first run (it stopped; the others went on), naming the
// series, and whether none could (an interrupted sweep excepted).
func Unreachable(res Result, series []Series) (errs []error, all bool) {
	for i, sr := range res.Series {
		if sr.Unreachable != nil {
			r := series[i].Plan
			errs = append(errs, fmt.Errorf("%s: %w", sr.Label, execute.DialError(r.Target, r.Upstreams, 0, sr.Unreachable)))
		}
	}
	return errs, len(errs) == len(res.Series) && !res.Interrupted
}
