package page_test

import (
	"fmt"
	"github.com/backbench/backbench/internal/browsertest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// pageOnceAcrossEngines skips a test in make test's second pass
// (BACKBENCH_ENGINE set): it tests what is made of the runs, which the
// engine does not change.
func pageOnceAcrossEngines(t *testing.T) {
	t.Helper()
	if os.Getenv(execute.EngineEnv) != "" {
		t.Skip("runs once, with the default engine: it tests what is made of the runs, not the load path")
	}
}

// pageReportInputs runs a bench (against a backend that resets every 4th
// request) and a sweep (a healthy FastCGI series and the failing HTTP one)
// on built-in backends and saves their JSON in dir: bench.json,
// sweep.json.
func pageReportInputs(t *testing.T, dir string) (bench stats.Summary, sw report.Sweep) {
	t.Helper()
	good := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 100})
	faulty := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 100, Fault: "reset", FaultEvery: 4})
	_, b := runsBench(t, dir, "bench.json", faulty.URL("/"), 200, 4)
	s := runsSweep(t, dir, []int{1, 2, 4}, 100, 1, []string{"good fcgi", "faulty http"}, []string{good.URL("/x.php"), faulty.URL("/")})
	return *b.Summary, *s
}

// pageReportState is what the browser test reads from the loaded page.
type pageReportState struct {
	Charts []struct {
		Title     string  `json:"title"`
		Width     float64 `json:"width"`
		Height    float64 `json:"height"`
		Points    int     `json:"points"`
		LineWidth float64 `json:"lineWidth"`
		// Columns is the number of distinct x positions of the points:
		// a line between points of one x (a capacity step measured
		// again at the same concurrency) has no width.
		Columns int `json:"columns"`
	} `json:"charts"`
	Titles   []string `json:"titles"`
	Sections []string `json:"sections"`
}

const pageReadReport = `(() => {
  const charts = [...document.querySelectorAll('figure.chart svg')].map(svg => {
    const r = svg.getBoundingClientRect();
    let lw = 0;
    svg.querySelectorAll('.series polyline').forEach(p => { lw = Math.max(lw, p.getBBox().width); });
    return {title: svg.querySelector('title').textContent, width: r.width, height: r.height,
      points: svg.querySelectorAll('.series .pt').length, lineWidth: lw,
      columns: new Set([...svg.querySelectorAll('.series .pt')].map(p => Math.round(p.getBBox().x))).size};
  });
  return {charts,
    titles: [...document.querySelectorAll('.series .pt > title')].map(t => t.textContent),
    sections: [...document.querySelectorAll('section.result')].map(s => s.id + ' ' + s.className)};
})()`

// pageShownSeries returns, for the sweep's section, how many series groups of
// series 0 and of the others are displayed.
const pageShownSeries = `(() => {
  const sec = document.getElementById('r2');
  const vis = sel => [...sec.querySelectorAll(sel)].filter(g => getComputedStyle(g).display !== 'none').length;
  return [vis('.series[data-series="0"]'), vis('.series:not([data-series="0"])'),
    sec.querySelector('.legend-item[data-series="0"]').getAttribute('aria-pressed')];
})()`

// pageCapacityState is what the browser test reads from the capacity section:
// its answer, the objective lines (title, width, height on the screen),
// each point (title, height of its centre) and the table's rows.
type pageCapacityState struct {
	Answer string `json:"answer"`
	Refs   []struct {
		Title string  `json:"title"`
		Width float64 `json:"width"`
		Y     float64 `json:"y"`
	} `json:"refs"`
	Points []struct {
		Title string  `json:"title"`
		Y     float64 `json:"y"`
	} `json:"points"`
	Rows [][]string `json:"rows"`
}

const pageReadCapacity = `(() => {
  const sec = document.getElementById('r4');
  const mid = el => { const r = el.getBoundingClientRect(); return r.top + r.height / 2; };
  return {answer: sec.querySelector('p.answer').textContent,
    refs: [...sec.querySelectorAll('figure.chart svg .ref')].map(g => ({title: g.querySelector('title').textContent,
      width: g.querySelector('line').getBoundingClientRect().width, y: mid(g.querySelector('line'))})),
    points: [...sec.querySelectorAll('figure.chart svg .series .pt')].map(p => ({title: p.querySelector('title').textContent, y: mid(p)})),
    rows: [...sec.querySelectorAll('table tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))};
})()`

// pageCheckCapacity checks the capacity section as drawn: the answer,
// the objective's line across the plot, every step a point on the right
// side of it (below when it passed, above when it failed) and a table row
// with its verdict in words.
func pageCheckCapacity(t *testing.T, cs *pageCapacityState, j capacity.JSONReport) {
	t.Helper()
	if cs.Answer != j.Answer {
		t.Errorf("capacity answer %q, want %q", cs.Answer, j.Answer)
	}
	if len(cs.Refs) != 1 || cs.Refs[0].Title != "objective p99<=18ms" || cs.Refs[0].Width < 300 {
		t.Fatalf("capacity chart's objective lines: %+v", cs.Refs)
	}
	if len(cs.Points) != len(j.Steps) || len(cs.Rows) != len(j.Steps) {
		t.Fatalf("capacity: %d points and %d rows, want %d", len(cs.Points), len(cs.Rows), len(j.Steps))
	}
	line := cs.Refs[0].Y
	for _, p := range cs.Points {
		pass := strings.Contains(p.Title, "; pass")
		if pass != (p.Y > line) {
			t.Errorf("point %q is drawn at y=%.1f, the objective at %.1f: on the wrong side", p.Title, p.Y, line)
		}
	}
	for i, s := range j.Steps {
		row := cs.Rows[i]
		want := []string{strconv.Itoa(s.Concurrency), fmt.Sprintf("%.1f", s.AchievedRPS), fmt.Sprintf("%.2f", s.P50Ms), fmt.Sprintf("%.2f", s.P99Ms)}
		if len(row) != 6 || fmt.Sprint(row[:4]) != fmt.Sprint(want) || strings.HasPrefix(row[5], "pass") != s.Pass ||
			strings.HasPrefix(row[5], "FAIL") == s.Pass {
			t.Errorf("capacity row %d: %q, want %q and pass %v", i, row, want, s.Pass)
		}
	}
}

// TestReportInBrowser opens the page of a bench, a sweep and a capacity
// search of built-in backends and a probe (testdata/probe.json) in headless Chromium with name
// resolution disabled: no console error, no request but the page itself,
// every chart drawn and not empty, the point titles carry the JSON's
// numbers, the capacity chart's objective line lies between its passing
// and failing steps, and a click on a legend entry hides that series in
// every chart of the sweep, a second click shows it again.
func TestReportInBrowser(t *testing.T) {
	pageOnceAcrossEngines(t)
	bin := browsertest.Chromium(t)
	dir := t.TempDir()
	bench, sw := pageReportInputs(t, dir)
	capName, capRep := runsSerialCapacity(t, t.TempDir())
	page := runsPage(t, dir, "report.html",
		filepath.Join(dir, "bench.json"), filepath.Join(dir, "sweep.json"), filepath.Join("testdata", "probe.json"), capName)

	// What was run and where, from the records of bench and sweep.
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if n := strings.Count(string(html), "<dt>host</dt><dd>"+host+"</dd>"); n != 3 {
		t.Errorf("the page names the host %q %d times, want 3 (bench, sweep and capacity)", host, n)
	}
	if n := strings.Count(string(html), "<dt>command</dt>"); n != 3 {
		t.Errorf("the page has %d command lines, want 3 (bench, sweep and capacity)", n)
	}

	url := "file://" + page
	tab := browsertest.Open(t, bin, url, 1200, 900)
	step, eval := tab.Step, tab.Eval
	legend := chromedp.CSS(`#r2 figure.chart .legend-item[data-series="0"]`)
	var st pageReportState
	var cs pageCapacityState
	var before, afterOff, afterOn []any
	eval(pageReadReport, &st)
	eval(pageReadCapacity, &cs)
	eval(pageShownSeries, &before)
	step(chromedp.Click(legend, chromedp.NodeVisible))
	eval(pageShownSeries, &afterOff)
	step(chromedp.Click(legend, chromedp.NodeVisible))
	eval(pageShownSeries, &afterOn)
	if shot := os.Getenv("BACKBENCH_SCREENSHOT"); shot != "" {
		if png, err := tab.Screenshot(); err == nil {
			_ = os.WriteFile(shot, png, 0o644)
		}
	}
	tab.CheckQuiet()
	if len(st.Sections) != 5 || !strings.HasPrefix(st.Sections[0], "r1 result bench") || !strings.HasPrefix(st.Sections[1], "r2 result sweep") ||
		!strings.HasPrefix(st.Sections[2], "r3 result probe") || !strings.HasPrefix(st.Sections[3], "r4 result capacity") {
		t.Errorf("sections: %q", st.Sections)
	}
	// rps, p99, failure ratio, three spectra in the sweep; p99 against
	// the concurrency in the capacity search; one spectrum for the bench;
	// besides, the bench run's timeline charts ("window by window"),
	// tested in TestTimelinePageInBrowser.
	var charts int
	for _, c := range st.Charts {
		if !strings.Contains(c.Title, "window by window") {
			charts++
		}
	}
	if charts != 8 {
		t.Errorf("%d charts besides the timeline's, want 8", charts)
	}
	pageCheckCapacity(t, &cs, capRep)
	for _, c := range st.Charts {
		// A chart whose points share one x has no line width: a
		// capacity search on a loaded machine can end after one step,
		// or measure its first failing step again at the same -c.
		if c.Width < 300 || c.Height < 100 || c.Points == 0 || (c.Columns > 1 && c.LineWidth <= 0) {
			t.Errorf("chart %q drawn empty or too small: %+v", c.Title, c)
		}
	}
	titles := strings.Join(st.Titles, "\n")
	for _, se := range sw.Series {
		for _, l := range se.Levels {
			want := fmt.Sprintf("%s, c=%d: %.2f req/s", se.Label, l.Concurrency, l.RequestsPerSecond)
			if l.Failed > 0 {
				want += fmt.Sprintf("; %d failed of %d finished", l.Failed, l.Complete+l.Failed-l.Failures.Length)
			}
			if !strings.Contains(titles, want) {
				t.Errorf("no point title %q", want)
			}
			if want := fmt.Sprintf("%s, c=%d: p99 %.3f ms", se.Label, l.Concurrency, l.Percentiles["99"]); l.Complete > 0 && !strings.Contains(titles, want) {
				t.Errorf("no point title %q", want)
			}
		}
	}
	if want := fmt.Sprintf("bench.json: p99 = %.3f ms", bench.Percentiles["99"]); !strings.Contains(titles, want) {
		t.Errorf("no point title %q", want)
	}
	// Each of the sweep's six charts draws both series.
	if fmt.Sprint(before) != "[6 6 true]" || fmt.Sprint(afterOff) != "[0 6 false]" || fmt.Sprint(afterOn) != "[6 6 true]" {
		t.Errorf("legend toggling: shown before %v, after a click %v, after a second %v (want [6 6 true], [0 6 false], [6 6 true])", before, afterOff, afterOn)
	}
}
