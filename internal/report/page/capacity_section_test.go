package page_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/capacity"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// pageCapacityPointTitle is the tooltip of a step's point on the report's
// capacity chart.
func pageCapacityPointTitle(s capacity.StepJSON) string {
	return fmt.Sprintf("%d connections: p99 %.3f ms; %s", s.Concurrency, s.SLO[0].Value, map[bool]string{true: "pass", false: "FAIL"}[s.Pass])
}

// TestReportCapacitySection: the page renders a real capacity search's
// JSON as a capacity section: the answer line, one table row per step
// with its numbers and its verdict in words, and a chart of p99 against
// the concurrency with a point per step and the objective as a line at its
// bound.
func TestReportCapacitySection(t *testing.T) {
	pageOnceAcrossEngines(t)
	dir := t.TempDir()
	name, j := runsSerialCapacity(t, dir)
	if len(j.Objectives) != 2 || j.Objectives[0].Metric != "p99" || j.Objectives[0].Bound != 18 || j.Objectives[1].Metric != "errors" {
		t.Fatalf("objectives %+v", j.Objectives)
	}
	page := runsPage(t, dir, "report.html", name)
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
		"<p class=\"answer\"><strong>" + pageHTMLEsc(j.Answer) + "</strong></p>",
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
		if !strings.Contains(sec, "<title>"+pageCapacityPointTitle(s)) {
			t.Errorf("no point title %q", pageCapacityPointTitle(s))
		}
	}
}

// pageHTMLEsc escapes text as the page does.
func pageHTMLEsc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// TestCapacityStepRecordsOnPage: the page of an open-model capacity search
// (0.5 s steps from 10 req/s up to 40, no confirmation, no warm-up) draws
// each step's figures from its record (the point's tooltip) and says what
// the records add up to; a capacity.json of schema 1, without records, is
// still read and drawn.
func TestCapacityStepRecordsOnPage(t *testing.T) {
	pageOnceAcrossEngines(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{})
	dir := t.TempDir()
	a, j := runsCapacity(t, dir, plan.CapacityOptions{Model: capacity.ModelOpen, ConfirmSet: true, Max: 40, MaxTime: 20 * time.Second,
		Load: runsCapacityLoad(srv.URL("/"), 500*time.Millisecond, "p99<=2s")})
	html, err := os.ReadFile(runsPage(t, dir, "page.html", a))
	if err != nil {
		t.Fatal(err)
	}
	var complete, failed int64
	for _, st := range j.Steps {
		if len(st.Records) != 1 {
			t.Fatalf("step at %g req/s: %d records, want 1", st.Rate, len(st.Records))
		}
		s := stats.SummaryOf(st.Records[0])
		complete, failed = complete+s.Complete, failed+s.Failed
		tip := fmt.Sprintf("; its record: %d complete, %d failed, mean %.2f ms", s.Complete, s.Failed, report.LatencyOf(&s).Mean)
		if !strings.Contains(string(html), tip) {
			t.Errorf("step at %g req/s: no point title with %q", st.Rate, tip)
		}
	}
	if want := fmt.Sprintf("From the run records of %d steps: %d requests complete, %d failed.", len(j.Steps), complete, failed); len(j.Steps) > 1 && !strings.Contains(string(html), want) {
		t.Errorf("the page lacks %q", want)
	}
	runsPage(t, dir, "old.html", filepath.Join("..", "..", "document", "testdata", "schema1", "capacity.json"))
}
