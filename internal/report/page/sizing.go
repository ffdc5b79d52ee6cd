package page

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/backbench/backbench/internal/study"
	"github.com/backbench/backbench/internal/trials"
)

// mib is a mebibyte, the memory chart's unit.
const mib = 1 << 20

// sizingGroups are the combinations of the other factors' levels of a
// sizing study's points ("" when there are none), in the points' order:
// the order of its answers.
func sizingGroups(sz *study.Sizing) []string {
	var gs []string
	for _, p := range sz.Points {
		if !slices.Contains(gs, p.Others) {
			gs = append(gs, p.Others)
		}
	}
	return gs
}

// sizingXs places each level of the sized factor on the x axis: at its
// number when every level is one, else at 1, 2, 3 ... in the points'
// order, with names for the ticks.
func sizingXs(sz *study.Sizing) (map[string]float64, map[float64]string) {
	xs := map[string]float64{}
	numeric := true
	for _, p := range sz.Points {
		v, err := strconv.ParseFloat(p.Level, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			numeric = false
			break
		}
		xs[p.Level] = v
	}
	if numeric {
		return xs, nil
	}
	xs, names := map[string]float64{}, map[float64]string{}
	for _, p := range sz.Points {
		if _, ok := xs[p.Level]; !ok {
			x := float64(len(xs) + 1)
			xs[p.Level], names[x] = x, p.Level
		}
	}
	return xs, names
}

// sizingCharts draws a sizing study's two charts, after its answers: the
// capacity against the pool size (the median of the confirmed searches,
// its interval as a whisker with its real confidence, their range as a shaded box, the knee as a dotted
// line), and the memory against the pool size at the capacity (one
// worker's PSS at p50, p95 and max, the pool's PSS in all, and with a
// memory budget the budget less its margin as a dashed line, with how
// many workers fit). A line per combination of the other factors' levels.
func (p *pager) sizingCharts(st *study.Result) {
	sz := st.Sizing
	if sz == nil || len(sz.Points) == 0 {
		return
	}
	groups := sizingGroups(sz)
	xOf, names := sizingXs(sz)
	slo := strings.Join(sz.Objectives, ", ")
	xLabel := "pool size: " + sz.Factor + " (worker processes)"
	capc := &chart{id: p.id("c"), title: "capacity within " + slo + " against " + sz.Factor + ", median of the searches",
		xLabel: xLabel, yLabel: "capacity (requests / second)", levelTicks: true, linearY: true, tickNames: names, marksLow: true}
	for _, pt := range sz.Points {
		if pt.Counted > 0 { // a document that counts its confirmed searches
			capc.whiskers = "an interval of the searches' own capacities, its confidence in its tooltip (the range of 2 searches is a 50% one)"
			if sz.ConfirmSeconds > 0 {
				capc.title = "capacity within " + slo + " against " + sz.Factor + ", median of the confirmed searches"
			}
			break
		}
	}
	mem := &chart{id: p.id("c"), title: "memory under load at the capacity against " + sz.Factor + ": one worker's PSS and the pool's",
		xLabel: xLabel, yLabel: "PSS (MiB)", levelTicks: true, tickNames: names, marksLow: true}
	in := func(label, group string) string {
		if group == "" {
			return label
		}
		return label + ", " + group
	}
	for gi, g := range groups {
		capLine := &line{label: in("capacity", g), style: gi}
		base := len(groups) + 4*gi
		pool := &line{label: in("pool PSS, in all", g), style: base}
		workers := []*line{
			{label: in("one worker's PSS, p50", g), style: base + 1},
			{label: in("one worker's PSS, p95", g), style: base + 2},
			{label: in("one worker's PSS, max", g), style: base + 3},
		}
		for i := range sz.Points {
			pt := &sz.Points[i]
			if pt.Others != g || len(pt.Searches) == 0 {
				continue
			}
			x := xOf[pt.Level]
			at := pt.Label + ": "
			capLine.pts = append(capLine.pts, point{x: x, y: pt.Capacity.Median, tip: at + capacityTip(sz, pt, slo)})
			if pt.Capacity.Median <= 0 {
				continue // no confirmed search: no figure to draw
			}
			if ci := pt.Capacity.CI95; len(ci) == 2 {
				capLine.bars = append(capLine.bars, bar{band: band{x, ci[0], ci[1]},
					tip: fmt.Sprintf("%s%s of the capacity %.1f to %.1f req/s", at, intervalName(pt), ci[0], ci[1])})
			}
			n, what := counted(sz, pt)
			capLine.bars = append(capLine.bars, bar{band: band{x, pt.Min, pt.Max}, rng: true,
				tip: fmt.Sprintf("%srange of the %d %s %.1f to %.1f req/s", at, n, what, pt.Min, pt.Max)})
			if pt.PoolPSSBytes > 0 {
				tip := fmt.Sprintf("%spool PSS %.1f MiB in all (median over the searches at the answer; peak %.1f MiB; %s)",
					at, pt.PoolPSSBytes/mib, float64(pt.PeakPSSBytes)/mib, pt.WorkersText())
				pool.pts = append(pool.pts, point{x: x, y: pt.PoolPSSBytes / mib, tip: tip})
			}
			for k, v := range []float64{pt.WorkerPSS.P50, pt.WorkerPSS.P95, pt.WorkerPSS.Max} {
				if v <= 0 {
					continue
				}
				tip := fmt.Sprintf("%sone worker's PSS %.1f MiB at %s (over every worker and sample at the answer)", at, v/mib, []string{"p50", "p95", "the max"}[k])
				workers[k].pts = append(workers[k].pts, point{x: x, y: v / mib, tip: tip})
			}
		}
		capc.lines = append(capc.lines, capLine)
		mem.lines = append(mem.lines, pool)
		mem.lines = append(mem.lines, workers...)
	}
	// The knee of each answer (and the pool to set, where the knee does
	// not fit the budget), on both charts.
	for i, a := range st.Answers {
		if i >= len(groups) {
			break
		}
		knee := a.Knee
		if knee == "" {
			knee = a.Level // a file written before the knee was kept
		}
		x, ok := xOf[knee]
		if !ok {
			continue
		}
		at := ""
		if groups[i] != "" {
			at = " at " + groups[i]
		}
		label := "knee" + at + ": " + knee
		if knee == a.Knee && kneeNotReached(sz, groups[i], a) {
			// Capacity still grew at the largest pool measured: the knee
			// is there or beyond, as the answer says.
			label = "knee" + at + " ≥ " + knee + " (capacity still grew)"
		}
		marks := []mark{{x: x, label: label}}
		if xs, ok := xOf[a.Level]; ok && a.Level != knee {
			marks = append(marks, mark{x: xs, label: "set" + at + ": " + a.Level + " (the knee does not fit the budget)"})
		}
		capc.marks = append(capc.marks, marks...)
		mem.marks = append(mem.marks, marks...)
	}
	if sz.MemoryBudgetBytes > 0 {
		budget(mem, sz, groups, names == nil)
	}
	capc.svg(&p.b)
	if !mem.empty() {
		mem.svg(&p.b)
	}
}

// kneeNotReached reports whether a's knee, at the other factors' levels
// group, was not reached: capacity still grew at the largest pool
// measured. A file written before the answer kept what limits its knee
// tells it by the knee being the largest pool measured, limited by
// neither the machine's cores nor the client.
func kneeNotReached(sz *study.Sizing, group string, a study.Answer) bool {
	if a.KneeLimit != "" {
		return a.KneeLimit == study.KneeNotReached
	}
	var last *study.SizingPoint
	for i := range sz.Points {
		if p := &sz.Points[i]; p.Others == group && p.Capacity.Median > 0 {
			last = p
		}
	}
	return last != nil && last.Level == a.Knee && last.LimitedBy != study.LimitCores && last.LimitedBy != study.LimitClient
}

// capacityTip is a pool size's capacity in words: its median, interval
// and range, and who limited it.
func capacityTip(sz *study.Sizing, pt *study.SizingPoint, slo string) string {
	if pt.Capacity.Median <= 0 {
		s := fmt.Sprintf("no confirmed rate within %s (%s", slo, searches(len(pt.Searches)))
		if pt.Unconfirmed > 0 {
			s += fmt.Sprintf("; %d found a rate they could not confirm", pt.Unconfirmed)
		}
		return s + ")"
	}
	n, what := counted(sz, pt)
	s := fmt.Sprintf("capacity %.1f req/s within %s (median of %d %s", pt.Capacity.Median, slo, n, what)
	if ci := pt.Capacity.CI95; len(ci) == 2 {
		s += fmt.Sprintf("; %s %.1f to %.1f", intervalName(pt), ci[0], ci[1])
	}
	s += fmt.Sprintf("; range %.1f to %.1f", pt.Min, pt.Max)
	if pt.Unconfirmed > 0 {
		s += fmt.Sprintf("; %d more not confirmed, left out", pt.Unconfirmed)
	}
	s += ")"
	switch pt.LimitedBy {
	case study.LimitClient:
		s += "; the client's limit"
	case study.LimitCores:
		s += "; the machine's cores"
	}
	if pt.Reason != "" && pt.LimitedBy != study.LimitBackend {
		s += " (" + pt.Reason + ")"
	}
	if pt.CPUPerRequestMs > 0 {
		s += fmt.Sprintf("; CPU %.2f ms a request; backend %.2f, client %.2f, machine %.2f cores busy of %d",
			pt.CPUPerRequestMs, pt.BackendCores, pt.ClientCores, pt.MachineCores, sz.Cores)
	}
	return s
}

// counted is how many searches a pool size's figures come from, and what
// they are: "confirmed searches" where the study asked for confirmation,
// else "searches". A document written before the confirmed searches were
// counted (no counted_searches) took every search.
func counted(sz *study.Sizing, pt *study.SizingPoint) (int, string) {
	if pt.Counted == 0 {
		return len(pt.Searches), "searches"
	}
	if sz.ConfirmSeconds > 0 {
		return pt.Counted, "confirmed searches"
	}
	return pt.Counted, "searches"
}

// intervalName names a pool size's interval by its real confidence: "50%
// interval" for the range of two searches, "75% interval" of three, and
// so on. A document written before the confidence was kept took the
// searches' range as the interval (labelled 95% then): its confidence is
// the range's, trials.MedianConfidence of the searches' count.
func intervalName(pt *study.SizingPoint) string {
	conf := pt.Confidence
	if conf == 0 {
		conf = trials.MedianConfidence(len(pt.Searches))
	}
	return fmt.Sprintf("%.0f%% interval", math.Floor(100*conf))
}

// budget marks a memory budget on the memory chart as the answer fits
// pools in it: a dashed line at the budget less its margin, and for each
// group the number of workers that fit at its largest per-worker PSS at
// p95, as a dotted line where that number lies among the pool sizes
// measured (numeric levels only), else in the dashed line's label.
func budget(mem *chart, sz *study.Sizing, groups []string, numeric bool) {
	room := float64(sz.MemoryBudgetBytes) * (1 - sz.MemoryMargin)
	label := fmt.Sprintf("budget %s less %.0f%% margin", study.Bytes(sz.MemoryBudgetBytes), 100*sz.MemoryMargin)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range mem.lines {
		for _, pt := range l.pts {
			lo, hi = math.Min(lo, pt.x), math.Max(hi, pt.x)
		}
	}
	var beyond []string
	for _, g := range groups {
		var perWorker float64
		for i := range sz.Points {
			if sz.Points[i].Others == g {
				perWorker = max(perWorker, sz.Points[i].WorkerPSS.P95)
			}
		}
		if perWorker <= 0 {
			continue
		}
		n := math.Floor(room / perWorker)
		fit := fmt.Sprintf("fits %s at %.1f MiB each", plural(int(n), "worker"), perWorker/mib)
		if g != "" {
			fit += " at " + g
		}
		if numeric && n >= lo && n <= hi {
			mem.marks = append(mem.marks, mark{x: n, label: "budget " + fit})
		} else {
			beyond = append(beyond, fit)
		}
	}
	if len(beyond) > 0 {
		label += ": " + strings.Join(beyond, "; ")
	}
	mem.refs = append(mem.refs, ref{y: room / mib, label: label})
}

// searches is "1 search", "3 searches".
func searches(n int) string {
	if n == 1 {
		return "1 search"
	}
	return strconv.Itoa(n) + " searches"
}
