package page

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/report"
)

// drawn renders a chart and returns its HTML.
func drawn(c *chart) string {
	var b strings.Builder
	c.svg(&b)
	return b.String()
}

// xTicks are the labels of a chart's x ticks (the ones under the plot).
func xTicks(html string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<text class="tick" x="[0-9.]+" y="356" text-anchor="middle">([^<]*)</text>`).FindAllStringSubmatch(html, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestChartAxes: series that span more than 20 times get a log y axis,
// closer ones a linear one; x ticks are the levels measured, on a log x
// axis when the levels double; each series is drawn in the palette's
// colour; more than six series are small multiples, one chart each.
func TestChartAxes(t *testing.T) {
	mk := func(levels []float64, ys ...float64) *chart {
		c := &chart{id: "c", title: "t", xLabel: "x", yLabel: "y", levelTicks: true}
		for i, y := range ys {
			l := &line{label: fmt.Sprintf("s%d", i), style: i}
			for _, x := range levels {
				l.pts = append(l.pts, point{x: x, y: y * x, tip: "tip"})
			}
			c.lines = append(c.lines, l)
		}
		return c
	}
	wide := drawn(mk([]float64{1, 2, 4, 8, 16, 32}, 370, 60000))
	if !strings.Contains(wide, "y, log scale") || !strings.Contains(wide, "x, log scale") {
		t.Errorf("370 against 60,000 req/s on doubling levels: want log y and log x axes")
	}
	if got := strings.Join(xTicks(wide), " "); got != "1 2 4 8 16 32" {
		t.Errorf("x ticks %q, want the levels", got)
	}
	for i := range 2 {
		if !strings.Contains(wide, fmt.Sprintf(`data-series="%d" style="color:%s"`, i, report.SeriesColorHex(i))) {
			t.Errorf("series %d not in the palette's colour %s", i, report.SeriesColorHex(i))
		}
	}
	near := drawn(mk([]float64{10, 11, 21, 31}, 90, 100))
	if strings.Contains(near, "log scale") {
		t.Errorf("levels 10 to 31 and a span under 20x: want linear axes")
	}
	if got := strings.Join(xTicks(near), " "); got != "10 11 21 31" {
		t.Errorf("x ticks %q, want the levels", got)
	}
	if c := mk([]float64{1, 2}, 1, 100); true {
		c.linearY = true
		if strings.Contains(drawn(c), "y, log scale") {
			t.Errorf("a chart asked to stay linear got a log y axis")
		}
	}
	many := drawn(mk([]float64{1, 2, 4}, 1, 2, 3, 4, 5, 6, 7))
	if n := strings.Count(many, `<figure class="chart small"`); !strings.Contains(many, `<div class="multiples"`) || n != 7 {
		t.Errorf("7 series: %d small charts, want 7 in a multiples block", n)
	}
	if n := strings.Count(many, `<g class="series"`); n != 7 {
		t.Errorf("7 small charts draw %d series, want one each", n)
	}
}
