package page_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/capacity"
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
