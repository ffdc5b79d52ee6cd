package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTimelinePageInBrowser: the page of a bench run that stalled shows,
// in Chromium at 1280×800, the timeline's charts within the window's
// width, a tooltip on every point, and the marks of the first failure and
// the slowest request; the page stays quiet (no console error, no
// request).
func TestTimelinePageInBrowser(t *testing.T) {
	onceAcrossEngines(t)
	bin := chromium(t)
	srv := startStallServer(t, 800*time.Millisecond, 400*time.Millisecond)
	dir := t.TempDir()
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "--format", "json", "-k", "-c", "2", "-t", "2",
		"http://unix:"+srv.path+":/")
	if code != 0 {
		t.Fatalf("bench: exit %d: %s", code, errs)
	}
	benchPath, page := filepath.Join(dir, "bench.json"), filepath.Join(dir, "page.html")
	if err := os.WriteFile(benchPath, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runMain(t, context.Background(), "report", "-o", page, benchPath); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	tab := openInBrowser(t, bin, "file://"+page, 1280, 800)
	var got struct {
		Charts []struct {
			Title  string   `json:"title"`
			Width  float64  `json:"width"`
			Height float64  `json:"height"`
			Points int      `json:"points"`
			Tips   int      `json:"tips"`
			Marks  []string `json:"marks"`
		} `json:"charts"`
		Viewport float64 `json:"viewport"`
		Scroll   float64 `json:"scroll"`
	}
	tab.eval(`(() => {
  const out = {charts: [], viewport: document.documentElement.clientWidth, scroll: document.documentElement.scrollWidth};
  document.querySelectorAll('figure.chart').forEach(f => {
    const title = f.querySelector('svg > title');
    if (!title || !title.textContent.includes('window by window')) return;
    const r = f.getBoundingClientRect();
    const pts = f.querySelectorAll('.series path.pt');
    let tips = 0;
    pts.forEach(p => { const t = p.querySelector('title'); if (t && t.textContent.includes(' s: ')) tips++; });
    out.charts.push({title: title.textContent, width: r.width, height: r.height, points: pts.length, tips: tips,
      marks: Array.from(f.querySelectorAll('g.mark title')).map(t => t.textContent)});
  });
  return out;
})()`, &got)
	tab.checkQuiet()
	if len(got.Charts) < 2 {
		t.Fatalf("timeline charts on the page: %+v", got.Charts)
	}
	if got.Scroll > got.Viewport {
		t.Errorf("the page is wider than the window: %v > %v", got.Scroll, got.Viewport)
	}
	titles := ""
	for _, c := range got.Charts {
		titles += c.Title + "; "
		if c.Width <= 0 || c.Width > got.Viewport || c.Height < 100 {
			t.Errorf("%s: %v × %v px in a window %v wide", c.Title, c.Width, c.Height, got.Viewport)
		}
		if c.Points < 16 || c.Tips != c.Points {
			t.Errorf("%s: %d points, %d with a tooltip", c.Title, c.Points, c.Tips)
		}
		marks := strings.Join(c.Marks, "; ")
		if !strings.Contains(marks, "first failure") || !strings.Contains(marks, "slowest request") {
			t.Errorf("%s: marks %q, want the first failure and the slowest request", c.Title, marks)
		}
	}
	for _, want := range []string{"requests per second, window by window", "latency, window by window"} {
		if !strings.Contains(titles, want) {
			t.Errorf("no chart %q among %s", want, titles)
		}
	}
}
