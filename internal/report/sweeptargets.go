package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/backbench/backbench/internal/stats"
)

// SweepTargetsCSVHeader is the header row of SweepTargetsCSV.
var SweepTargetsCSVHeader = []string{"label", "concurrency", "target", "weight", "requests", "complete", "failed",
	"p50_ms", "p99_ms", "max_ms", "body_bytes"}

// SweepTargetsFile is the file SweepTargetsCSV writes beside sweep.csv,
// only for a sweep of a mix (SweepHasTargets).
const SweepTargetsFile = "sweep-targets.csv"

// SweepHasTargets reports whether some level of sw has per-target figures
// (a mix: --targets or --access-log).
func SweepHasTargets(sw *Sweep) bool {
	for _, se := range sw.Series {
		for i := range se.Levels {
			if len(se.Levels[i].Targets) > 0 {
				return true
			}
		}
	}
	return false
}

// SweepTargetsCSV writes sweep-targets.csv: the SweepTargetsCSVHeader row,
// then one row per series, level and target of a mix (series in order,
// each with its levels in order, each level with its targets in the
// targets file's order). "target" is the block's METHOD URL, "weight" its
// weight (a replayed log's count of lines); requests counts its finished
// requests (complete or failed), body_bytes the body bytes of its complete
// responses; times are the total request times of its complete requests
// in ms, three decimals. With trials (--repeat) every figure is the
// pooled trials' (their requests summed, the percentiles of all of them).
// A level without per-target figures has no row.
func SweepTargetsCSV(w io.Writer, sw *Sweep) error {
	cw := newCSVWriter(w)
	cw.write(SweepTargetsCSVHeader, nil)
	f3 := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, se := range sw.Series {
		label, lq := SafeText(se.Label)
		for k := range se.Levels {
			s := &se.Levels[k]
			for _, t := range s.Targets {
				target, tq := SafeText(t.Target)
				cw.write([]string{label, strconv.Itoa(s.Concurrency), target, strconv.Itoa(t.Weight),
					i(t.Requests), i(t.Complete), i(t.Failed), f3(t.P50Ms), f3(t.P99Ms), f3(t.MaxMs), i(t.BodyBytes)},
					[]bool{lq, false, tq})
			}
		}
	}
	return cw.flush()
}

// maxSweepTargets is the most targets a series' per-target table shows at
// each level; the others are in sweep-targets.csv and sweep.json.
const maxSweepTargets = 20

// writeSweepTargets writes, for every series of a mix, its per-target
// table: a line naming the series, then at each level one row per target
// (its requests, failures and total-time p50, p99 and max in ms, pooled
// over the trials with --repeat), 91 columns wide (a long target is cut
// in its middle, as bench's table does). A series of more than
// maxSweepTargets targets shows the maxSweepTargets with the most
// requests over its levels, in the targets file's order, and says so.
func writeSweepTargets(bw *bufio.Writer, sw *Sweep) {
	for _, se := range sw.Series {
		var n int
		var sums []int64
		for i := range se.Levels {
			ts := se.Levels[i].Targets
			if len(ts) == 0 {
				continue
			}
			n = max(n, len(ts))
			for len(sums) < len(ts) {
				sums = append(sums, 0)
			}
			for k, t := range ts {
				sums[k] += t.Requests
			}
		}
		if n == 0 {
			continue
		}
		show := make([]int, n)
		for k := range show {
			show[k] = k
		}
		what := fmt.Sprintf("%d targets", n)
		if n > maxSweepTargets {
			slices.SortStableFunc(show, func(a, b int) int {
				switch {
				case sums[a] > sums[b]:
					return -1
				case sums[a] < sums[b]:
					return 1
				}
				return 0
			})
			show = show[:maxSweepTargets]
			slices.Sort(show)
			what = fmt.Sprintf("the %d with the most requests of %d targets; all in %s", maxSweepTargets, n, SweepTargetsFile)
		}
		pooled := ""
		if sw.SweepTrials != nil {
			pooled = ", the trials pooled"
		}
		fmt.Fprintf(bw, "\n%s: per target (%s; times are Total, in ms%s)\n", se.Label, what, pooled)
		fmt.Fprintf(bw, "%11s %-*s %9s %7s %8s %8s %8s\n", "concurrency", targetWidth, "target", "requests", "failed", "p50", "p99", "max")
		for i := range se.Levels {
			s := &se.Levels[i]
			first := true
			for _, k := range show {
				if k >= len(s.Targets) {
					continue
				}
				c := ""
				if first {
					c = strconv.Itoa(s.Concurrency)
					first = false
				}
				writeSweepTarget(bw, c, s.Targets[k])
			}
		}
	}
}

// writeSweepTarget writes one row of a series' per-target table.
func writeSweepTarget(bw *bufio.Writer, c string, t stats.TargetSummary) {
	fmt.Fprintf(bw, "%11s %-*s %9d %7d %8.2f %8.2f %8.2f\n", c, targetWidth, fitTarget(t.Target), t.Requests, t.Failed, t.P50Ms, t.P99Ms, t.MaxMs)
}
