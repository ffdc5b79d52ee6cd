package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/realbackend"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// reportInputs runs a bench (against a backend that resets every 4th
// request), a sweep (a healthy FastCGI series and the failing HTTP one) and
// a probe on built-in backends and saves their JSON in dir: bench.json,
// sweep.json, probe.json.
func reportInputs(t *testing.T, dir string) (bench stats.Summary, sw report.Sweep) {
	t.Helper()
	good := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 100})
	faulty := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{BodyBytes: 100, Fault: "reset", FaultEvery: 4})
	save := func(name string, args ...string) []byte {
		code, out, errs := runMain(t, context.Background(), args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		if name != "" {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return []byte(out)
	}
	if err := json.Unmarshal(save("bench.json", "bench", "-q", "--format", "json", "-n", "200", "-c", "4", faulty.URL("/")), &bench); err != nil {
		t.Fatal(err)
	}
	save("", "sweep", "-q", "-n", "100", "-c", "1,2,4", "--out", dir, "good fcgi="+good.URL("/x.php"), "faulty http="+faulty.URL("/"))
	save("probe.json", "probe", "--format", "json", good.URL("/x.php"))
	data, err := os.ReadFile(filepath.Join(dir, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sw); err != nil {
		t.Fatal(err)
	}
	return bench, sw
}

// chromium returns the path of Debian's chromium, or skips the test (fails
// it under CI=true, where .ci/run installs it).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	realbackend.Missing(t, "chromium is not installed (apt-get install chromium)")
	return ""
}

// pageState is what the browser test reads from the loaded page.
type pageState struct {
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

const readPage = `(() => {
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

// shown returns, for the sweep's section, how many series groups of
// series 0 and of the others are displayed.
const shown = `(() => {
  const sec = document.getElementById('r2');
  const vis = sel => [...sec.querySelectorAll(sel)].filter(g => getComputedStyle(g).display !== 'none').length;
  return [vis('.series[data-series="0"]'), vis('.series:not([data-series="0"])'),
    sec.querySelector('.legend-item[data-series="0"]').getAttribute('aria-pressed')];
})()`

// capacityState is what the browser test reads from the capacity section:
// its answer, the objective lines (title, width, height on the screen),
// each point (title, height of its centre) and the table's rows.
type capacityState struct {
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

const readCapacity = `(() => {
  const sec = document.getElementById('r4');
  const mid = el => { const r = el.getBoundingClientRect(); return r.top + r.height / 2; };
  return {answer: sec.querySelector('p.answer').textContent,
    refs: [...sec.querySelectorAll('figure.chart svg .ref')].map(g => ({title: g.querySelector('title').textContent,
      width: g.querySelector('line').getBoundingClientRect().width, y: mid(g.querySelector('line'))})),
    points: [...sec.querySelectorAll('figure.chart svg .series .pt')].map(p => ({title: p.querySelector('title').textContent, y: mid(p)})),
    rows: [...sec.querySelectorAll('table tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))};
})()`

// checkCapacityInBrowser checks the capacity section as drawn: the answer,
// the objective's line across the plot, every step a point on the right
// side of it (below when it passed, above when it failed) and a table row
// with its verdict in words.
func checkCapacityInBrowser(t *testing.T, cs *capacityState, j capacity.JSONReport) {
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

// TestReportInBrowser opens the page of a bench, a sweep, a probe and a
// capacity search of built-in backends in headless Chromium with name
// resolution disabled: no console error, no request but the page itself,
// every chart drawn and not empty, the point titles carry the JSON's
// numbers, the capacity chart's objective line lies between its passing
// and failing steps, and a click on a legend entry hides that series in
// every chart of the sweep, a second click shows it again.
func TestReportInBrowser(t *testing.T) {
	onceAcrossEngines(t)
	bin := chromium(t)
	dir := t.TempDir()
	bench, sw := reportInputs(t, dir)
	capName, capRep := capacityInput(t, t.TempDir())
	page := filepath.Join(dir, "report.html")
	code, out, errs := runMain(t, context.Background(), "report", "-o", page,
		filepath.Join(dir, "bench.json"), filepath.Join(dir, "sweep.json"), filepath.Join(dir, "probe.json"), capName)
	if code != 0 || !strings.Contains(out, "Wrote "+page) {
		t.Fatalf("report: exit %d: %s%s", code, out, errs)
	}

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
	tab := openInBrowser(t, bin, url, 1200, 900)
	step, eval := tab.step, tab.eval
	legend := chromedp.CSS(`#r2 figure.chart .legend-item[data-series="0"]`)
	var st pageState
	var cs capacityState
	var before, afterOff, afterOn []any
	eval(readPage, &st)
	eval(readCapacity, &cs)
	eval(shown, &before)
	step(chromedp.Click(legend, chromedp.NodeVisible))
	eval(shown, &afterOff)
	step(chromedp.Click(legend, chromedp.NodeVisible))
	eval(shown, &afterOn)
	if shot := os.Getenv("BACKBENCH_SCREENSHOT"); shot != "" {
		if png, err := chromedp.Run(tab.ctx, chromedp.FullScreenshot(90)); err == nil {
			_ = os.WriteFile(shot, png, 0o644)
		}
	}
	tab.checkQuiet()
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
	checkCapacityInBrowser(t, &cs, capRep)
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

// TestReportBadInput: a file that is not a backbench result, of a newer
// schema, or missing is one line on stderr and exit status 2.
func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notJSON := write("notes.txt", "hello\n")
	other := write("package.json", `{"name": "x", "version": "1.0.0"}`)
	newer := write("newer.json", `{"schema": 2, "levels": [1], "series": []}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{notJSON}, "notes.txt: not a backbench result"},
		{[]string{other}, "package.json: not a backbench result"},
		{[]string{newer}, "newer.json: a result of a newer backbench: schema 2 is newer than this backbench reads (1)"},
		{[]string{filepath.Join(dir, "none.json")}, "none.json: no such file"},
		{nil, "want at least one RESULT.json"},
	} {
		code, out, errs := runMain(t, context.Background(), append([]string{"report", "-o", filepath.Join(dir, "r.html")}, tc.args...)...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (want 2 and one line with %q)", tc.args, code, out, errs, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "r.html")); err == nil {
		t.Error("a page was written for bad input")
	}
}

// capacityInput runs a short closed-model capacity search on a serial
// 10 ms built-in backend (c=1 passes p99<=18ms, c=2 queues each request
// behind another and fails it) and returns the path of its capacity.json
// and the report it holds.
func capacityInput(t *testing.T, dir string) (string, capacity.JSONReport) {
	t.Helper()
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{
		Model: fixtures.Model{Kind: fixtures.ModelSerial}, Delay: 10 * time.Millisecond})
	code, _, errs := runMain(t, context.Background(), "capacity", "-q", "--model", "closed", "-t", "0.5", "--confirm", "2.5", "--warmup", "0",
		"--max", "8", "--slo", "p99<=18ms", "--slo", "errors<=1%", "--out", dir, srv.URL("/"))
	if code != 0 && code != exitSLO {
		t.Fatalf("capacity: exit %d: %s", code, errs)
	}
	name := filepath.Join(dir, "capacity.json")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var j capacity.JSONReport
	if err := json.Unmarshal(data, &j); err != nil || len(j.Steps) == 0 {
		t.Fatalf("capacity.json: %v: %s", err, data)
	}
	return name, j
}

// capacityPointTitle is the tooltip of a step's point on the report's
// capacity chart.
func capacityPointTitle(s capacity.StepJSON) string {
	return fmt.Sprintf("%d connections: p99 %.3f ms; %s", s.Concurrency, s.SLO[0].Value, map[bool]string{true: "pass", false: "FAIL"}[s.Pass])
}

// TestReportCapacitySection: report renders a real capacity search's
// JSON as a capacity section: the answer line, one table row per step
// with its numbers and its verdict in words, and a chart of p99 against
// the concurrency with a point per step and the objective as a line at its
// bound.
func TestReportCapacitySection(t *testing.T) {
	onceAcrossEngines(t)
	dir := t.TempDir()
	name, j := capacityInput(t, dir)
	if len(j.Objectives) != 2 || j.Objectives[0].Metric != "p99" || j.Objectives[0].Bound != 18 || j.Objectives[1].Metric != "errors" {
		t.Fatalf("objectives %+v", j.Objectives)
	}
	page := filepath.Join(dir, "report.html")
	if code, out, errs := runMain(t, context.Background(), "report", "-o", page, name); code != 0 {
		t.Fatalf("report: exit %d: %s%s", code, out, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	start := strings.Index(html, `<section class="result capacity" id="r1"`)
	if start < 0 {
		t.Fatalf("no capacity section:\n%s", html)
	}
	sec := html[start:]
	sec = sec[:strings.Index(sec, "</section>")]
	for _, want := range []string{
		"<h2 id=\"r1-h\">Capacity: " + name + "</h2>",
		"<p class=\"answer\"><strong>" + htmlEsc(j.Answer) + "</strong></p>",
		"<th scope=\"col\">concurrency</th><th scope=\"col\">achieved req/s</th><th scope=\"col\">p50 (ms)</th><th scope=\"col\">p99 (ms)</th><th scope=\"col\">errors</th><th scope=\"col\">verdict</th>",
		"<title>objective p99&lt;=18ms</title>",
		"Dashed horizontal line: objective p99&lt;=18ms.",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("the section lacks %q:\n%s", want, sec)
		}
	}
	if n := strings.Count(sec, "<tr><th scope=\"row\" class=\"num\">"); n != len(j.Steps) {
		t.Errorf("%d step rows, want %d", n, len(j.Steps))
	}
	if n := len(regexp.MustCompile(`<path class="pt[^"]*" d="[^"]*"><title>`).FindAllString(sec, -1)); n != len(j.Steps) {
		t.Errorf("%d points, want %d", n, len(j.Steps))
	}
	for _, s := range j.Steps {
		verdict := "better\">pass"
		if !s.Pass {
			verdict = "worse\">FAIL (p99&lt;=18ms"
		}
		row := fmt.Sprintf("<tr><th scope=\"row\" class=\"num\">%d</th><td class=\"num\">%.1f</td><td class=\"num\">%.2f</td><td class=\"num\">%.2f</td><td class=\"num\">%.2f%%</td><td class=\"verdict v-",
			s.Concurrency, s.AchievedRPS, s.P50Ms, s.P99Ms, s.ErrorRate*100)
		if i := strings.Index(sec, row); i < 0 || !strings.HasPrefix(sec[i+len(row):], verdict) {
			t.Errorf("no row %q with verdict %q", row, verdict)
		}
		if !strings.Contains(sec, "<title>"+capacityPointTitle(s)) {
			t.Errorf("no point title %q", capacityPointTitle(s))
		}
	}
}

// htmlEsc escapes text as the page does.
func htmlEsc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}
