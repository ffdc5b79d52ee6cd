package page

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fixedSet is the fixed record set of the golden test: bench runs with and
// without failures, a sweep with failures and backend use, a sweep with
// trials, intervals, comparisons and a run record's environment, a probe
// and a compare result (testdata).
var fixedSet = []string{"bench.json", "bench-faulty.json", "sweep.json", "trials.json", "probe.json", "compare.json"}

// render parses the named testdata files and renders their page.
func render(t testing.TB, names ...string) []byte {
	t.Helper()
	var rs []*Result
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Parse(n, data)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	var b bytes.Buffer
	if err := Write(&b, rs, Options{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// renderData renders the page of one result file, data read as name.
// conf is the label of the interval of n trials' median: "93.75%
// interval" for 5, "75% interval" for 3 (never 95% below 6).
func conf(n int) string { return trials.IntervalLabel(trials.MedianConfidence(n)) }

func renderData(t testing.TB, name string, data []byte) string {
	t.Helper()
	r, err := Parse(name, data)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, []*Result{r}, Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestGoldenStructure pins the page's structure, not its bytes: headings,
// the provenance keys, every table's caption, columns and row count, every
// chart's title, series, points, rings and bands, and the lists.
func TestGoldenStructure(t *testing.T) {
	page := render(t, fixedSet...)
	got := outline(t, page)
	path := filepath.Join("testdata", "page.outline.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("the page's outline differs from %s:\n--- got\n%s", path, got)
	}
}

// outline summarizes the structure of an HTML page, a line per element of
// interest.
func outline(t *testing.T, page []byte) string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "h1", "h2", "h3":
				fmt.Fprintf(&b, "%s %s\n", n.Data, text(n))
				return
			case "dl":
				var keys []string
				for _, dt := range find(n, "dt") {
					keys = append(keys, text(dt))
				}
				fmt.Fprintf(&b, "dl %s\n", strings.Join(keys, ", "))
				return
			case "table":
				var cols []string
				for _, th := range find(n, "thead")[0:1] {
					for _, c := range find(th, "th") {
						cols = append(cols, text(c))
					}
				}
				fmt.Fprintf(&b, "table %q cols [%s] rows %d\n", text(find(n, "caption")[0]), strings.Join(cols, "|"), len(find(find(n, "tbody")[0], "tr")))
				return
			case "figure":
				svg := find(n, "svg")[0]
				series := find(svg, "g")
				var labels []string
				points, rings, bands := 0, 0, 0
				for _, g := range series {
					if attr(g, "class") == "legend-item" {
						labels = append(labels, text(find(g, "title")[0]))
					}
					if attr(g, "class") == "series" {
						for _, p := range find(g, "path") {
							if strings.HasPrefix(attr(p, "class"), "pt") {
								points++
							}
						}
						rings += len(find(g, "circle"))
						bands += len(find(g, "polygon"))
					}
				}
				fmt.Fprintf(&b, "chart %q series [%s] points %d rings %d bands %d\n", text(find(svg, "title")[0]), strings.Join(labels, "|"), points, rings, bands)
				return
			case "ul", "ol":
				fmt.Fprintf(&b, "%s %d items\n", n.Data, len(find(n, "li")))
				return
			case "script", "style":
				fmt.Fprintf(&b, "%s\n", n.Data)
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return b.String()
}

// find returns the descendants of n with the given tag, in document order.
func find(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == tag {
			out = append(out, c)
		}
		out = append(out, find(c, tag)...)
	}
	return out
}

// text is the text content of n, spaces collapsed.
func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// attr returns n's attribute key, or "".
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// TestSelfContained: no element of the page refers to anything outside it
// (no src, no href but in-page anchors, no CSS url() or @import).
func TestSelfContained(t *testing.T) {
	page := render(t, fixedSet...)
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for _, a := range n.Attr {
			switch a.Key {
			case "src", "srcset", "action", "poster", "data", "xlink:href", "background":
				t.Errorf("<%s %s=%q>", n.Data, a.Key, a.Val)
			case "href":
				if !strings.HasPrefix(a.Val, "#") {
					t.Errorf("<%s href=%q>: not an in-page anchor", n.Data, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, bad := range []string{"url(", "@import", "<link", "<img", "<iframe", "fetch(", "XMLHttpRequest"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("the page contains %q", bad)
		}
	}
}

// TestPointTitles: every point of the sweep's charts carries the JSON's
// numbers in its title: req/s with its interval, p99, the failed share.
func TestPointTitles(t *testing.T) {
	data, err := os.ReadFile("testdata/trials.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := document.Read("trials.json", data)
	if err != nil {
		t.Fatal(err)
	}
	sw := document.SweepOf(d)
	page := string(render(t, "trials.json"))
	n := 0
	for _, se := range sw.Series {
		for _, lv := range se.Levels {
			at := fmt.Sprintf("%s, c=%d: ", se.Label, lv.Concurrency)
			rps, p99 := lv.RequestsPerSecondCI95, lv.P99MsCI95
			want := []string{
				at + fmt.Sprintf("%.2f req/s (median of %d trials; %s %.2f to %.2f)", lv.RequestsPerSecond, len(lv.Trials), conf(len(lv.Trials)), rps[0], rps[1]),
				at + fmt.Sprintf("p99 %.3f ms (%s %.3f to %.3f)", lv.Percentiles["99"], conf(len(lv.Trials)), p99[0], p99[1]),
			}
			if lv.Failed > 0 {
				want = append(want, fmt.Sprintf("%d failed of %d finished", lv.Failed, lv.Complete+lv.Failed))
			}
			for _, w := range want {
				if !strings.Contains(page, "<title>"+html.EscapeString(w)) && !strings.Contains(page, html.EscapeString(w)) {
					t.Errorf("no point title with %q", w)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no level in trials.json")
	}
	for _, w := range []string{`class="verdict v-better">faster (25% failed)</td>`, `class="verdict v-better">lower (25% failed)</td>`,
		`class="verdict v-same">undecided: ~1 more round (25% failed)</td>`, "backbench sweep -q --repeat 5", "bench-host", "AMD EPYC 7B13, 2 CPUs", "2025-12-01 02:40:00 UTC (42.4 s)"} {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
}

// TestBadInput: a file that is not a backbench result, or of a newer
// schema, is refused with an error naming the file.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       error
	}{
		{"text", "hello\n", ErrNotResult},
		{"empty", "", ErrNotResult},
		{"array", "[1, 2]", ErrNotResult},
		{"other object", `{"name": "x", "version": 3}`, ErrNotResult},
		{"two objects", `{"comparisons": []} {}`, ErrNotResult},
		{"bad types", `{"series": 3, "levels": [1]}`, ErrNotResult},
		{"newer schema", `{"schema": 2, "series": [], "levels": []}`, ErrNewerSchema},
		{"newer schema in the record", `{"record": {"schema": 9}, "target": {}, "complete_requests": 1, "percentiles_ms": {}}`, ErrNewerSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("in.json", []byte(tc.data))
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "in.json: ") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming the file", msg)
			}
		})
	}
	for _, ok := range []string{`{"schema": 1, "comparisons": []}`, `{"comparisons": []}`} {
		if _, err := Parse("ok.json", []byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// TestSize: a 51-level, 4-series sweep with trials, backend use and
// failures stays under 2 MB.
func TestSize(t *testing.T) {
	sw := document.Sweep{RequestsPerLevel: 1000}
	for l := 1; l <= 501; l += 10 {
		sw.Levels = append(sw.Levels, l)
	}
	for i := range 4 {
		se := document.SweepSeries{Label: fmt.Sprintf("series %d with a long label", i)}
		for _, l := range sw.Levels {
			s := stats.Summary{Concurrency: l, Requests: 1000, Complete: 900, Failed: 100, TimeTaken: 1.5,
				Failures: stats.Failures{Connect: 60, Timeout: 40}, RequestsPerSecond: 600 + float64(l),
				Percentiles: map[string]float64{}, Spectrum: map[string]float64{},
				Backend: &stats.BackendUsage{Samples: 10, CPUSeconds: 1.2, PeakRSSBytes: 64 << 20, ProcessesMax: 5,
					FPMStatusEnd: map[string]string{"listen queue": "7", "active processes": "4", "max children reached": "1"}}}
			for _, p := range stats.Percentiles {
				s.Percentiles[fmt.Sprint(p)] = float64(p) / 10
			}
			for _, p := range stats.SpectrumRanks {
				s.Spectrum[fmt.Sprint(p)] = p / 10
			}
			s.Repeated = &stats.Repeated{RequestsPerSecondCI95: []float64{500, 700}, P99MsCI95: []float64{9, 11}}
			for range 5 {
				s.Trials = append(s.Trials, &stats.Record{})
			}
			se.Levels = append(se.Levels, s)
		}
		sw.Series = append(sw.Series, se)
	}
	var b bytes.Buffer
	if err := Write(&b, []*Result{{Name: "big.json", Doc: &sw}}, Options{}); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 2<<20 {
		t.Errorf("the page of a 51-level, 4-series sweep is %d bytes, over 2 MB", b.Len())
	}
	t.Logf("%d bytes", b.Len())
}

// TestCapacityWithoutObjectives: a capacity.json written before the
// `objectives` and `slo_results` keys is still a capacity result: its
// answer, a row per step with the verdict in words, and p99 drawn without
// an objective line, which the section says.
func TestCapacityWithoutObjectives(t *testing.T) {
	data := []byte(`{"answer": "sustains 40 req/s with p99 <= 50 ms", "model": "open", "capacity_rps": 40,
  "slo": ["p99<=50ms"], "limited_by": "backend", "stopped_early": false, "interrupted": false,
  "steps": [{"rate": 40, "concurrency": 256, "achieved_rps": 39.8, "p50_ms": 5, "p99_ms": 9.5, "error_rate": 0, "pass": true, "confirm": false},
    {"rate": 80, "concurrency": 256, "achieved_rps": 79.1, "p50_ms": 40, "p99_ms": 75.25, "error_rate": 0.01, "pass": false, "confirm": false}]}`)
	r, err := Parse("old-capacity.json", data)
	if err != nil || r.Kind() != KindCapacity {
		t.Fatalf("Parse: %v, kind %q", err, r.Kind())
	}
	var b bytes.Buffer
	if err := Write(&b, []*Result{r}, Options{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<strong>sustains 40 req/s with p99 &lt;= 50 ms</strong>",
		"without the objective's line",
		`<td class="verdict v-better">pass</td>`,
		`<td class="verdict v-worse">FAIL</td>`,
		"<title>80 req/s: p99 75.250 ms; FAIL; 1.00% errors</title>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, `class="ref"`) {
		t.Error("an objective line drawn without a parsed objective")
	}
}

// TestComparisonVerdictText: a comparison says what differs (in the head
// of its pair's group), says why it
// has no verdict ("–, 1 trial" rather than "none"), and carries the
// marker of short trials, as the text table does.
func TestComparisonVerdictText(t *testing.T) {
	data := []byte(`{"files": ["tcp.json", "unix.json"], "noise": 0.02, "forced": false, "notes": [], "differences": ["targets a and b"],
  "comparisons": [
    {"series": "u", "baseline": "t", "concurrency": 1, "metric": "requests_per_second", "trials": 5, "baseline_trials": 1,
     "value": 2, "baseline_value": 1, "ratio": 2, "p_value": 1, "verdict": "none", "factor": "transport", "factor_title": "transport: unix vs tcp"},
    {"series": "u", "baseline": "t", "concurrency": 1, "metric": "backend_pss_bytes", "trials": 5, "baseline_trials": 5,
     "value": 1, "baseline_value": 2, "ratio": 0.5, "ratio_ci95": [0.4, 0.6], "p_value": 0.008, "verdict": "smaller", "short_trials": 3}]}`)
	page := renderData(t, "compare.json", data)
	for _, want := range []string{`<th scope="rowgroup" colspan="8">transport: unix vs tcp: u against t</th>`,
		`<td class="verdict v-same">–, 1 trial</td>`, `<td class="verdict v-better">smaller *</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("no %s in the page", want)
		}
	}
}

// TestCapacityRatesAsAsked: the capacity section writes each rate as the
// text report does, with the digits it was asked at and never rounded up
// (187.5 stays 187.5, 4210 is 4,210), says the step length and the
// confirmation the answer rests on, and words a step whose load was not
// held.
func TestCapacityRatesAsAsked(t *testing.T) {
	data := []byte(`{"answer": "sustains 187.5 req/s with p99 <= 50 ms (p99 at that rate: 30 ms); 2 s steps, confirmed by a 10 s run",
  "model": "open", "capacity_rps": 187.5, "slo": ["p99<=50ms"], "objectives": [{"objective": "p99<=50ms", "metric": "p99", "bound": 50}],
  "limited_by": "backend", "stopped_early": false, "interrupted": false, "step_seconds": 2, "confirm_seconds": 10, "confirmed": true,
  "steps": [{"rate": 187.5, "concurrency": 256, "achieved_rps": 187.4, "p50_ms": 21, "p99_ms": 30, "error_rate": 0, "pass": true,
      "length_seconds": 2, "held": "yes", "slo_results": [{"objective": "p99<=50ms", "value": 30, "pass": true}]},
    {"rate": 4210, "concurrency": 256, "achieved_rps": 3000, "p50_ms": 21, "p99_ms": 40, "error_rate": 0, "pass": false,
      "length_seconds": 2, "held": "no", "held_reason": "requests in flight grew from 5.0 to 90.0 through the step",
      "slo_results": [{"objective": "p99<=50ms", "value": 40, "pass": true}]},
    {"rate": 187.5, "concurrency": 256, "achieved_rps": 187.5, "p50_ms": 21, "p99_ms": 31, "error_rate": 0, "pass": true, "confirm": true,
      "length_seconds": 10, "held": "yes", "slo_results": [{"objective": "p99<=50ms", "value": 31, "pass": true}]}]}`)
	page := renderData(t, "capacity.json", data)
	for _, want := range []string{
		"<strong>sustains 187.5 req/s with p99 &lt;= 50 ms (p99 at that rate: 30 ms); 2 s steps, confirmed by a 10 s run</strong>",
		"Steps of 2 s; the answer was confirmed by a 10 s run.",
		`<th scope="row" class="num">187.5</th>`,
		`<th scope="row" class="num">4,210</th>`,
		`<td class="verdict v-worse">FAIL, load not held: requests in flight grew from 5.0 to 90.0 through the step, a 2 s run</td>`,
		`<td class="verdict v-better">pass, confirmation run, a 10 s run</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, ">188<") || strings.Contains(page, "188 req/s") {
		t.Error("187.5 rounded up to 188")
	}
}

// TestSweepRowLabelled: in the table of every level, a level of trials
// with medians labels its latency figures for what they are: the mean,
// p50, p99 and max the medians of the trials', the p90 the pooled
// trials' own; a sweep without trials labels none.
func TestSweepRowLabelled(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "trials.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := document.Read("trials.json", data)
	if err != nil {
		t.Fatal(err)
	}
	sw := document.SweepOf(r)
	if sw == nil {
		t.Fatalf("trials.json read as %T", r)
	}
	for i := range sw.Series {
		for k := range sw.Series[i].Levels {
			if rep := sw.Series[i].Levels[k].Repeated; rep != nil {
				rep.P50Ms, rep.P99Ms, rep.Confidence = 1, 2, 0.9375 // medians, as saved today
			}
		}
	}
	var b bytes.Buffer
	if err := document.Write(&b, r); err != nil {
		t.Fatal(err)
	}
	page := renderData(t, "trials.json", b.Bytes())
	if !strings.Contains(page, `title="median of the trials'"`) || !strings.Contains(page, `title="the pooled trials' (no median of it is kept)"`) {
		t.Error("a level of trials without its medians and pooled p90 labelled")
	}
	page = string(render(t, "sweep.json"))
	if strings.Contains(page, `title="median of the trials'"`) || strings.Contains(page, `title="the pooled trials'`) {
		t.Error("a level without trials labelled as trials'")
	}
}
