package page

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/backbench/backbench/internal/study"
)

// sizingFile is a real sizing study's document: testdata/sizing-study.yaml
// (the built-in prefork pool of 1, 2 and 4 children, 5 ms of CPU a
// request, 1 s steps, 2 s confirmations, 3 searches each, a 1 GiB memory
// budget) run on a shared 2-core machine by
//
//	backbench study -q --seed 7 --out DIR testdata/sizing-study.yaml
//
// (with the backbench under test first in PATH; the file was then named
// sizing-work.yaml, the name its "file" key keeps), DIR/study.json copied
// here as it was written. The machine was busy: the intervals are wide,
// and one search of one worker found no rate (a range from 0).
const sizingFile = "sizing-study.json"

// sizingDoc reads the sizing document, as JSON and as the study it holds.
func sizingDoc(t *testing.T) (map[string]any, *study.Result) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", sizingFile))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	var st study.Result
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	if st.Sizing == nil || len(st.Sizing.Points) < 2 || len(st.Answers) == 0 {
		t.Fatalf("%s holds no sizing study", sizingFile)
	}
	return raw, &st
}

// renderStudy renders the page of a study document given as JSON.
func renderStudy(t *testing.T, doc any) *html.Node {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	n, err := html.Parse(strings.NewReader(renderData(t, "study.json", data)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// figureTitled is the chart whose <svg> title starts with prefix; nil
// when there is none, a failure when there are more.
func figureTitled(t *testing.T, page *html.Node, prefix string) *html.Node {
	t.Helper()
	var out []*html.Node
	for _, f := range find(page, "figure") {
		if s := find(f, "svg"); len(s) > 0 && strings.HasPrefix(text(find(s[0], "title")[0]), prefix) {
			out = append(out, f)
		}
	}
	if len(out) > 1 {
		t.Fatalf("%d charts titled %q", len(out), prefix)
	}
	if len(out) == 0 {
		return nil
	}
	return out[0]
}

// withClass are the descendants of n of tag whose class is class.
func withClass(n *html.Node, tag, class string) []*html.Node {
	var out []*html.Node
	for _, e := range find(n, tag) {
		if attr(e, "class") == class {
			out = append(out, e)
		}
	}
	return out
}

// titleOf is the text of an element's own <title>.
func titleOf(n *html.Node) string {
	if ts := find(n, "title"); len(ts) > 0 {
		return text(ts[0])
	}
	return ""
}

// numbers are the numbers of an SVG path or attribute, in order.
func numbers(s string) []float64 {
	var out []float64
	for _, m := range regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?`).FindAllString(s, -1) {
		v, _ := strconv.ParseFloat(m, 64)
		out = append(out, v)
	}
	return out
}

// markerAt is the centre of a marker's path: a circle's ("M x-r y a...")
// or the middle of a polygon's corners.
func markerAt(d string) (float64, float64) {
	v := numbers(d)
	if strings.Contains(d, "a") {
		return v[0] + markerR, v[1]
	}
	x0, x1, y0, y1 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for i := 0; i+1 < len(v); i += 2 {
		x0, x1, y0, y1 = math.Min(x0, v[i]), math.Max(x1, v[i]), math.Min(y0, v[i+1]), math.Max(y1, v[i+1])
	}
	return (x0 + x1) / 2, (y0 + y1) / 2
}

// attrNum is a numeric attribute.
func attrNum(n *html.Node, key string) float64 {
	v, err := strconv.ParseFloat(attr(n, key), 64)
	if err != nil {
		panic(fmt.Sprintf("%s=%q", key, attr(n, key)))
	}
	return v
}

// drawnPoint is a chart's point as drawn: its centre and tooltip.
type drawnPoint struct {
	x, y float64
	tip  string
}

// seriesPoints are the points of each series of a chart, by legend label.
func seriesPoints(fig *html.Node) map[string][]drawnPoint {
	labels := map[string]string{}
	for _, it := range withClass(fig, "g", "legend-item") {
		labels[attr(it, "data-series")] = titleOf(it)
	}
	out := map[string][]drawnPoint{}
	for _, g := range withClass(fig, "g", "series") {
		label := labels[attr(g, "data-series")]
		for _, p := range find(g, "path") {
			if strings.HasPrefix(attr(p, "class"), "pt") {
				x, y := markerAt(attr(p, "d"))
				out[label] = append(out[label], drawnPoint{x, y, titleOf(p)})
			}
		}
	}
	return out
}

// TestSizingCharts: a real sizing study's page has, right after the
// answers, a capacity chart with one point per pool size carrying the
// document's figures, each with its interval's whisker and its range's
// box around it, and the knee's dotted line at the answer's level; and a
// memory chart with a point per pool size for the pool's PSS and one
// worker's p50, p95 and max, and the memory budget's line and fit.
func TestSizingCharts(t *testing.T) {
	raw, st := sizingDoc(t)
	sz := st.Sizing
	page := renderStudy(t, raw)
	capFig := figureTitled(t, page, "capacity within")
	memFig := figureTitled(t, page, "memory under load")
	if capFig == nil || memFig == nil {
		t.Fatalf("capacity chart %v, memory chart %v: want both", capFig != nil, memFig != nil)
	}
	if want := fmt.Sprintf("capacity searches within %s, steps of %g s, confirmations of %g s, %d searches per pool size, a memory budget of %s",
		strings.Join(sz.Objectives, ", "), sz.StepSeconds, sz.ConfirmSeconds, st.Measure.Repeat, study.Bytes(sz.MemoryBudgetBytes)); !strings.Contains(text(page), want) {
		t.Errorf("the study's design does not say %q", want)
	}
	// Right after the answers: the last answer's details, then the
	// charts, before the configurations' table.
	prev := capFig.PrevSibling
	for prev != nil && prev.Type != html.ElementNode {
		prev = prev.PrevSibling
	}
	if prev == nil || attr(prev, "class") != "details" {
		t.Errorf("the capacity chart does not follow the answers' details")
	}
	for _, f := range []*html.Node{capFig, memFig} {
		labels := find(f, "text")
		var axes []string
		for _, l := range labels {
			if attr(l, "class") == "alabel" {
				axes = append(axes, text(l))
			}
		}
		if len(axes) != 2 || !strings.Contains(axes[0], "(worker processes)") || !regexp.MustCompile(`\((requests / second|MiB)\)`).MatchString(axes[1]) {
			t.Errorf("axis labels %q: want units", axes)
		}
	}

	// Capacity: one point per pool size, in the factor's order, with the
	// document's figures in its tooltip.
	pts := seriesPoints(capFig)["capacity"]
	if len(pts) != len(sz.Points) {
		t.Fatalf("capacity chart: %d points, want one per pool size (%d)", len(pts), len(sz.Points))
	}
	whiskers, boxes := withClass(capFig, "path", "ci"), withClass(capFig, "rect", "range")
	if len(whiskers) != len(sz.Points) || len(boxes) != len(sz.Points) {
		t.Fatalf("%d whiskers and %d range boxes, want %d each", len(whiskers), len(boxes), len(sz.Points))
	}
	xAt := map[string]float64{}
	for i, p := range sz.Points {
		d := pts[i]
		xAt[p.Level] = d.x
		want := fmt.Sprintf("%s: capacity %.1f req/s within %s (median of %d searches; %s %.1f to %.1f; range %.1f to %.1f)",
			p.Label, p.Capacity.Median, strings.Join(sz.Objectives, ", "), len(p.Searches), conf(len(p.Searches)), p.Capacity.CI95[0], p.Capacity.CI95[1], p.Min, p.Max)
		if !strings.HasPrefix(d.tip, want) {
			t.Errorf("point %d's tooltip:\n%s\nwant it to start\n%s", i, d.tip, want)
		}
		if i > 0 && d.x <= pts[i-1].x {
			t.Errorf("point %d at x %.1f, not right of the one before (%.1f)", i, d.x, pts[i-1].x)
		}
		for j, q := range sz.Points {
			if q.Capacity.Median > p.Capacity.Median && pts[j].y >= d.y {
				t.Errorf("%s (%.1f req/s) drawn at y %.1f, not above %s (%.1f req/s) at %.1f", q.Label, q.Capacity.Median, pts[j].y, p.Label, p.Capacity.Median, d.y)
			}
		}
		// The whisker: caps at the interval, through the point.
		w := numbers(attr(whiskers[i], "d"))
		wx, top, bottom := w[3], w[4], w[5] // M x-cap top h 2cap M x top V bottom ...
		if math.Abs(wx-d.x) > 0.06 || top > d.y+0.06 || bottom < d.y-0.06 {
			t.Errorf("%s: whisker at x %.1f from %.1f to %.1f; the point at %.1f, %.1f", p.Label, wx, top, bottom, d.x, d.y)
		}
		if tip := titleOf(whiskers[i]); tip != fmt.Sprintf("%s: %s of the capacity %.1f to %.1f req/s", p.Label, conf(len(p.Searches)), p.Capacity.CI95[0], p.Capacity.CI95[1]) {
			t.Errorf("whisker's title %q", tip)
		}
		// The range's box around the whisker.
		b := boxes[i]
		bx, by, bw, bh := attrNum(b, "x"), attrNum(b, "y"), attrNum(b, "width"), attrNum(b, "height")
		if math.Abs(bx+bw/2-d.x) > 0.06 || by > top+0.06 || by+bh < bottom-0.06 {
			t.Errorf("%s: range box x %.1f y %.1f to %.1f around the whisker %.1f to %.1f at %.1f", p.Label, bx+bw/2, by, by+bh, top, bottom, d.x)
		}
		if tip := titleOf(b); tip != fmt.Sprintf("%s: range of the %d searches %.1f to %.1f req/s", p.Label, len(p.Searches), p.Min, p.Max) {
			t.Errorf("range box's title %q", tip)
		}
	}

	// The knee at the answer's level, on both charts: capacity still grew
	// at the largest pool measured, so the knee was not reached, "knee ≥
	// 4", as the answer says ("the knee is at 4 or beyond").
	a := st.Answers[0]
	knee := a.Knee
	if knee == "" || knee != sz.Points[len(sz.Points)-1].Level || !strings.Contains(a.Conclusion, "the knee is at "+knee+" or beyond") {
		t.Fatalf("the answer's knee is not the largest pool, not reached: %+v", a)
	}
	kneeLabel := "knee ≥ " + knee + " (capacity still grew)"
	for name, f := range map[string]*html.Node{"capacity": capFig, "memory": memFig} {
		var found bool
		for _, m := range withClass(f, "g", "mark") {
			if titleOf(m) != kneeLabel {
				continue
			}
			found = true
			l := find(m, "line")[0]
			if x := attrNum(l, "x1"); math.Abs(x-xAt[knee]) > 0.06 {
				t.Errorf("%s chart: the knee's line at x %.1f, the point of %s=%s at %.1f", name, x, sz.Factor, knee, xAt[knee])
			}
			if text(find(m, "text")[0]) != kneeLabel {
				t.Errorf("%s chart: the knee's label %q", name, text(find(m, "text")[0]))
			}
		}
		if !found {
			t.Errorf("%s chart: no mark titled %q", name, kneeLabel)
		}
	}

	// Memory: a point per pool size in each of the four lines.
	mem := seriesPoints(memFig)
	for _, line := range []struct {
		label string
		value func(p *study.SizingPoint) float64
		word  string
	}{
		{"pool PSS, in all", func(p *study.SizingPoint) float64 { return p.PoolPSSBytes }, "pool PSS"},
		{"one worker's PSS, p50", func(p *study.SizingPoint) float64 { return p.WorkerPSS.P50 }, "one worker's PSS"},
		{"one worker's PSS, p95", func(p *study.SizingPoint) float64 { return p.WorkerPSS.P95 }, "one worker's PSS"},
		{"one worker's PSS, max", func(p *study.SizingPoint) float64 { return p.WorkerPSS.Max }, "one worker's PSS"},
	} {
		got := mem[line.label]
		if len(got) != len(sz.Points) {
			t.Errorf("memory chart, %s: %d points, want %d", line.label, len(got), len(sz.Points))
			continue
		}
		for i := range sz.Points {
			p := &sz.Points[i]
			want := fmt.Sprintf("%s: %s %.1f MiB", p.Label, line.word, line.value(p)/(1<<20))
			if !strings.HasPrefix(got[i].tip, want) || math.Abs(got[i].x-xAt[p.Level]) > 0.06 {
				t.Errorf("memory chart, %s, point %d at x %.1f: %q, want %q at x %.1f", line.label, i, got[i].x, got[i].tip, want, xAt[p.Level])
			}
		}
	}
	// The pool's PSS is above one worker's, where more than one.
	pool, p50 := mem["pool PSS, in all"], mem["one worker's PSS, p50"]
	for i, p := range sz.Points {
		if p.Workers > 1 && pool[i].y >= p50[i].y {
			t.Errorf("%s: the pool's PSS drawn at y %.1f, not above one worker's at %.1f", p.Label, pool[i].y, p50[i].y)
		}
	}
	// The budget: its line less the margin, and how many workers fit.
	var perWorker float64
	for _, p := range sz.Points {
		perWorker = max(perWorker, p.WorkerPSS.P95)
	}
	n := int(float64(sz.MemoryBudgetBytes) * (1 - sz.MemoryMargin) / perWorker)
	refs := withClass(memFig, "g", "ref")
	if sz.MemoryBudgetBytes == 0 || len(refs) != 1 {
		t.Fatalf("budget %d: %d reference lines, want 1", sz.MemoryBudgetBytes, len(refs))
	}
	fits := fmt.Sprintf("fits %d workers at %.1f MiB each", n, perWorker/(1<<20))
	if got := titleOf(refs[0]); !strings.HasPrefix(got, "budget "+study.Bytes(sz.MemoryBudgetBytes)+" less 20% margin") ||
		!strings.Contains(got+strings.Join(marksOf(memFig), "|"), fits) {
		t.Errorf("the budget's line %q, marks %q: want %q", got, marksOf(memFig), fits)
	}
	if !strings.Contains(a.Conclusion, fmt.Sprintf("would fit %d workers", n)) {
		t.Errorf("the chart's fit (%d workers) is not the answer's: %s", n, a.Conclusion)
	}
}

// marksOf are a chart's marks' titles.
func marksOf(fig *html.Node) []string {
	var out []string
	for _, m := range withClass(fig, "g", "mark") {
		out = append(out, titleOf(m))
	}
	return out
}

// TestSizingChartsVariants: the pool to set marked apart from the knee
// when the knee does not fit the budget; the knee at the answer's level in
// a file written before the knee was kept; a line per combination of the
// other factors' levels, with a knee each; levels that are not numbers,
// named on the x axis; no budget line without a budget; and no sizing
// chart in a study that is not a sizing one.
func TestSizingChartsVariants(t *testing.T) {
	edit := func(f func(doc map[string]any)) *html.Node {
		raw, _ := sizingDoc(t)
		f(raw)
		return renderStudy(t, raw)
	}
	answer := func(doc map[string]any) map[string]any { return doc["answers"].([]any)[0].(map[string]any) }
	sizing := func(doc map[string]any) map[string]any { return doc["sizing"].(map[string]any) }
	_, st := sizingDoc(t)
	first, last := st.Sizing.Points[0].Level, st.Sizing.Points[len(st.Sizing.Points)-1].Level

	page := edit(func(doc map[string]any) { answer(doc)["knee"], answer(doc)["level"] = last, first })
	if got := marksOf(figureTitled(t, page, "capacity within")); len(got) != 2 || got[0] != "knee ≥ "+last+" (capacity still grew)" ||
		got[1] != "set: "+first+" (the knee does not fit the budget)" {
		t.Errorf("a knee that does not fit: marks %q", got)
	}
	page = edit(func(doc map[string]any) { delete(answer(doc), "knee"); answer(doc)["level"] = first })
	if got := marksOf(figureTitled(t, page, "capacity within")); len(got) != 1 || got[0] != "knee: "+first {
		t.Errorf("a file without the knee: marks %q, want the answer's level", got)
	}
	page = edit(func(doc map[string]any) {
		sz := sizing(doc)
		var more []any
		for _, p := range sz["points"].([]any) {
			q := map[string]any{}
			for k, v := range p.(map[string]any) {
				q[k] = v
			}
			q["others"] = "transport=unix"
			more = append(more, q)
		}
		sz["points"] = append(sz["points"].([]any), more...)
		a2 := map[string]any{}
		for k, v := range answer(doc) {
			a2[k] = v
		}
		a2["knee"], a2["level"] = first, first
		doc["answers"] = append(doc["answers"].([]any), a2)
	})
	capFig := figureTitled(t, page, "capacity within")
	pts := seriesPoints(capFig)
	if len(pts["capacity"]) != len(st.Sizing.Points) || len(pts["capacity, transport=unix"]) != len(st.Sizing.Points) {
		t.Errorf("two groups: lines %v", pts)
	}
	if got := marksOf(capFig); len(got) != 2 || got[0] != "knee ≥ "+st.Answers[0].Knee+" (capacity still grew)" || got[1] != "knee at transport=unix: "+first {
		t.Errorf("two groups: marks %q", got)
	}
	// A knee reached: the largest pool serves within noise of the one
	// before it, which is the knee, drawn as such.
	mid := st.Sizing.Points[len(st.Sizing.Points)-2].Level
	page = edit(func(doc map[string]any) {
		ps := sizing(doc)["points"].([]any)
		prev, lastP := ps[len(ps)-2].(map[string]any), ps[len(ps)-1].(map[string]any)
		lastP["capacity"] = prev["capacity"]
		answer(doc)["knee"], answer(doc)["level"] = mid, mid
	})
	if got := marksOf(figureTitled(t, page, "capacity within")); len(got) != 1 || got[0] != "knee: "+mid {
		t.Errorf("a knee reached: marks %q, want %q", got, "knee: "+mid)
	}
	// Levels that are not numbers: at 1, 2, 3 ..., the ticks named.
	names := []string{"small", "medium", "large", "huge"}
	page = edit(func(doc map[string]any) {
		for i, p := range sizing(doc)["points"].([]any) {
			p.(map[string]any)["level"] = names[i]
		}
		answer(doc)["knee"], answer(doc)["level"] = names[1], names[1]
	})
	capFig = figureTitled(t, page, "capacity within")
	var ticks []string
	for _, e := range withClass(capFig, "text", "tick") {
		if attr(e, "text-anchor") == "middle" {
			ticks = append(ticks, text(e))
		}
	}
	if want := strings.Join(names[:len(st.Sizing.Points)], " "); strings.Join(ticks, " ") != want {
		t.Errorf("named levels: x ticks %q, want %q", ticks, want)
	}
	if got, pts := marksOf(capFig), seriesPoints(capFig)["capacity"]; len(got) != 1 || got[0] != "knee: "+names[1] ||
		math.Abs(attrNum(find(withClass(capFig, "g", "mark")[0], "line")[0], "x1")-pts[1].x) > 0.06 {
		t.Errorf("named levels: marks %q, not at the second point", got)
	}
	page = edit(func(doc map[string]any) { delete(sizing(doc), "memory_budget_bytes") })
	if refs := withClass(figureTitled(t, page, "memory under load"), "g", "ref"); len(refs) != 0 {
		t.Errorf("no budget: %d reference lines", len(refs))
	}

	// A study that is not a sizing one: the document made a sweep of
	// concurrency 1 and 2, without the sizing; its factor's charts are
	// drawn, no sizing chart.
	page = edit(func(doc map[string]any) {
		delete(doc, "sizing")
		m := doc["measure"].(map[string]any)
		m["kind"], m["levels"] = "sweep", []any{1, 2}
		for _, se := range doc["series"].([]any) {
			se := se.(map[string]any)
			s1 := se["steps"].([]any)[0].(map[string]any)
			s2 := map[string]any{}
			for k, v := range s1 {
				s2[k] = v
			}
			s1["concurrency"], s2["concurrency"] = 1, 2
			se["steps"] = []any{s1, s2}
		}
	})
	if f := figureTitled(t, page, "requests per second against concurrency"); f == nil {
		t.Errorf("the sweep study's chart is not drawn")
	}
	if f := figureTitled(t, page, "capacity within"); f != nil {
		t.Errorf("a study without sizing has a capacity chart")
	}
	if f := figureTitled(t, page, "memory under load"); f != nil {
		t.Errorf("a study without sizing has a memory chart")
	}
	var b bytes.Buffer
	html.Render(&b, page)
	for _, w := range []string{`class="ci"`, `class="range"`, "knee: "} {
		if strings.Contains(b.String(), w) {
			t.Errorf("a study without sizing has %s", w)
		}
	}
}

// TestSizingChartsConfirmed: the real study summarized again as a study
// now writes it: each pool size's tooltip, whisker and range come from its
// confirmed searches only, the interval named by its real confidence
// (the range of two searches is a 50% one), the unconfirmed searches
// said; no 95% interval where no 95% interval was measured.
func TestSizingChartsConfirmed(t *testing.T) {
	raw, st := sizingDoc(t)
	st.Sizing.Summarize()
	raw["sizing"], raw["answers"] = st.Sizing, st.Sizing.Answers()
	page := renderStudy(t, raw)
	capFig := figureTitled(t, page, "capacity within")
	if capFig == nil {
		t.Fatal("no capacity chart")
	}
	var tips []string
	for _, n := range append(append(withClass(capFig, "path", "ci"), withClass(capFig, "rect", "range")...), find(capFig, "path")...) {
		if tip := titleOf(n); tip != "" {
			tips = append(tips, tip)
		}
	}
	all := strings.Join(tips, "\n") + "\n" + text(capFig)
	if w := "Searches not confirmed, left out of the figures: 1 of 3 at 2"; !strings.Contains(text(page), w) {
		t.Errorf("the page lacks %q", w)
	}
	for _, w := range []string{
		"workers=1: capacity 9.7 req/s within p99<=200ms (median of 2 confirmed searches; 50% interval 9.7 to 136.0; range 9.7 to 136.0)",
		"workers=2: capacity 38.7 req/s within p99<=200ms (median of 2 confirmed searches; 50% interval 38.7 to 58.6; range 38.7 to 58.6; 1 more not confirmed, left out)",
		"workers=4: capacity 171.0 req/s within p99<=200ms (median of 3 confirmed searches; 75% interval 170.0 to 200.0",
		"workers=2: 50% interval of the capacity 38.7 to 58.6 req/s",
		"workers=2: range of the 2 confirmed searches 38.7 to 58.6 req/s",
		"Whiskers: an interval of the searches' own capacities",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	if strings.Contains(all, "95%") {
		t.Errorf("the capacity chart names a 95%% interval no search measured:\n%s", all)
	}
}

// TestSizingTablesOneCount: a sizing study's configurations table says
// its processes include the master, and its series table shows neither a
// concurrency nor a mean (a capacity search has neither), where a sweep
// study's shows both.
func TestSizingTablesOneCount(t *testing.T) {
	heads := func(page *html.Node, prefix string) []string {
		for _, tb := range find(page, "table") {
			if strings.HasPrefix(text(find(tb, "caption")[0]), prefix) {
				var hs []string
				for _, th := range find(find(tb, "thead")[0], "th") {
					hs = append(hs, text(th))
				}
				return hs
			}
		}
		t.Fatalf("no table captioned %q", prefix)
		return nil
	}
	raw, _ := sizingDoc(t)
	page := renderStudy(t, raw)
	if h := heads(page, "Configurations"); !strings.Contains(strings.Join(h, "|"), "processes, master included") {
		t.Errorf("configurations' columns %q", h)
	}
	if h := strings.Join(heads(page, "Series"), "|"); h != "series|searches|capacity req/s|p99 ms|max ms|failed" {
		t.Errorf("a sizing study's series columns %q", h)
	}
	data, err := os.ReadFile(filepath.Join("testdata", threeFactorFile))
	if err != nil {
		t.Fatal(err)
	}
	sweep, err := html.Parse(strings.NewReader(renderData(t, "study.json", data)))
	if err != nil {
		t.Fatal(err)
	}
	if h := strings.Join(heads(sweep, "Series"), "|"); h != "series|concurrency|trials|req/s|mean ms|p99 ms|max ms|failed" {
		t.Errorf("a sweep study's series columns %q", h)
	}
}
