package page_test

import (
	"github.com/backbench/backbench/internal/browsertest"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/study"
)

// pageSizingChart is what TestSizingPageInBrowser reads of a sizing chart, in
// CSS pixels of the window.
type pageSizingChart struct {
	Width, Height float64
	// Points are the chart's markers: their centre, size, tooltip, and
	// whether the marker is what the window shows at its centre.
	Points []struct {
		X, Y, W, H float64
		Tip        string
		OnTop      bool `json:"onTop"`
		Inside     bool
	}
	// Whiskers and Ranges are the capacity's interval whiskers and range
	// boxes; Knees the knee's dotted lines.
	Whiskers, Ranges []struct{ X, Y, W, H float64 }
	Knees            []struct {
		X, H  float64
		Label string
	}
	// Fill is the computed fill of the first marker.
	Fill string
}

// pageReadSizing measures the sizing charts of the page: each scrolled into
// view, its markers' boxes and whether each is on top at its centre.
const pageReadSizing = `(() => {
  const out = {};
  const figs = [...document.querySelectorAll('section.study figure.chart')];
  for (const [k, prefix] of [['capacity', 'capacity within'], ['memory', 'memory under load']]) {
    const f = figs.find(f => f.querySelector('svg > title').textContent.startsWith(prefix));
    if (!f) continue;
    f.scrollIntoView({block: 'center'});
    const svg = f.querySelector('svg').getBoundingClientRect();
    const box = e => { const r = e.getBoundingClientRect(); return {X: r.x + r.width / 2, Y: r.y + r.height / 2, W: r.width, H: r.height}; };
    const c = {Width: svg.width, Height: svg.height, Points: [], Whiskers: [], Ranges: [], Knees: []};
    f.querySelectorAll('.series path.pt').forEach(e => {
      const b = box(e);
      const hit = document.elementFromPoint(b.X, b.Y);
      b.Tip = e.querySelector('title').textContent;
      b.onTop = !!hit && hit.closest('path.pt') === e;
      b.Inside = b.X >= svg.left && b.X <= svg.right && b.Y >= svg.top && b.Y <= svg.bottom;
      c.Points.push(b);
    });
    f.querySelectorAll('.series path.ci').forEach(e => c.Whiskers.push(box(e)));
    f.querySelectorAll('.series rect.range').forEach(e => c.Ranges.push(box(e)));
    f.querySelectorAll('g.mark').forEach(m => {
      const t = m.querySelector('title').textContent;
      if (t.startsWith('knee')) { const b = box(m.querySelector('line')); c.Knees.push({X: b.X, H: b.H, Label: t}); }
    });
    const first = f.querySelector('.series path.pt');
    c.Fill = first ? getComputedStyle(first).fill : '';
    out[k] = c;
  }
  return out;
})()`

// TestSizingPageInBrowser: the page of a real sizing study
// (testdata/sizing-study.json: the built-in pool of 1, 2 and 4 children,
// a 1 GiB memory budget; see sizing_test.go) opens in
// headless Chromium without an error, and its capacity and memory charts
// are drawn at a size, with a visible marker per pool size (and per line
// of the memory chart), the capacity's whiskers and range boxes, and the
// knee's line through the answer's point.
func TestSizingPageInBrowser(t *testing.T) {
	pageOnceAcrossEngines(t)
	bin := browsertest.Chromium(t)
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "sizing-study.json"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := document.Read("sizing-study.json", data)
	if err != nil {
		t.Fatal(err)
	}
	res := d.(*document.Study).Result
	if res.Sizing == nil || len(res.Answers) != 1 {
		t.Fatalf("testdata/sizing-study.json: sizing %v, %d answers", res.Sizing != nil, len(res.Answers))
	}
	sz, a := res.Sizing, res.Answers[0]
	pagePath := runsPage(t, dir, "study.html", filepath.Join("testdata", "sizing-study.json"))
	tab := browsertest.Open(t, bin, "file://"+pagePath, 1280, 800)
	var charts map[string]*pageSizingChart
	tab.Eval(pageReadSizing, &charts)
	tab.CheckQuiet()
	for _, name := range []string{"capacity", "memory"} {
		c := charts[name]
		if c == nil {
			t.Fatalf("no %s chart on the page", name)
		}
		// A point per pool size: one line on the capacity chart, four
		// (the pool's PSS, one worker's p50, p95, max) on the memory one.
		want := len(sz.Points)
		if name == "memory" {
			want *= 4
		}
		if c.Width < 400 || c.Height < 150 || len(c.Points) != want {
			t.Errorf("%s chart: %.0f × %.0f px, %d points; want a size and %d points", name, c.Width, c.Height, len(c.Points), want)
		}
		if c.Fill == "" || c.Fill == "none" || c.Fill == "rgb(255, 255, 255)" {
			t.Errorf("%s chart: the markers are filled with %q", name, c.Fill)
		}
		for _, p := range c.Points {
			if p.W < 4 || p.H < 4 || !p.Inside {
				t.Errorf("%s chart: a marker of %.1f × %.1f px at %.0f, %.0f, inside the chart %v: %s", name, p.W, p.H, p.X, p.Y, p.Inside, p.Tip)
			}
		}
		// A knee not reached (capacity still grew at the largest pool)
		// is drawn as such.
		label := "knee: " + a.Knee
		if pageKneeNotReached(sz, a) {
			label = "knee ≥ " + a.Knee + " (capacity still grew)"
		}
		if len(c.Knees) != 1 || c.Knees[0].Label != label || c.Knees[0].H < 100 {
			t.Errorf("%s chart: knee lines %+v, want one labelled %q", name, c.Knees, label)
		}
	}
	c := charts["capacity"]
	if len(c.Whiskers) != len(sz.Points) || len(c.Ranges) != len(sz.Points) {
		t.Errorf("capacity chart: %d whiskers, %d range boxes; want %d each", len(c.Whiskers), len(c.Ranges), len(sz.Points))
	}
	for i, p := range c.Points {
		// The capacity's markers lie on top: nothing hides them.
		if !p.OnTop {
			t.Errorf("capacity chart: the marker of %s is not what the window shows at its centre", p.Tip)
		}
		if i < len(c.Ranges) && (math.Abs(c.Ranges[i].X-p.X) > 1 || c.Ranges[i].W < 4) {
			t.Errorf("capacity chart: the range box %+v is not at its point %.1f", c.Ranges[i], p.X)
		}
		if strings.HasPrefix(p.Tip, sz.Factor+"="+a.Knee+":") && len(c.Knees) == 1 && math.Abs(c.Knees[0].X-p.X) > 1 {
			t.Errorf("capacity chart: the knee's line at x %.1f px, its point at %.1f", c.Knees[0].X, p.X)
		}
	}
}

// pageKneeNotReached reports whether the page must draw a's knee as not
// reached: its KneeLimit says so, or, in a file written before answers
// kept it (as testdata/sizing-study.json was), the knee is the largest
// pool measured and neither the cores nor the client limited it.
func pageKneeNotReached(sz *study.Sizing, a study.Answer) bool {
	if a.KneeLimit != "" {
		return a.KneeLimit == study.KneeNotReached
	}
	var last *study.SizingPoint
	for i := range sz.Points {
		if p := &sz.Points[i]; p.Capacity.Median > 0 {
			last = p
		}
	}
	return last != nil && last.Level == a.Knee && last.LimitedBy != study.LimitCores && last.LimitedBy != study.LimitClient
}
