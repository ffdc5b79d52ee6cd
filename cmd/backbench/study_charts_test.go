package main

import (
	"github.com/backbench/backbench/internal/browsertest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// threeFactorStudy is a short study of three factors on the built-in
// FastCGI backend: its model (serial or threaded), the transport and
// keep-alive, 8 series.
const threeFactorStudy = `question: Which FastCGI server model, transport and keep-alive serve the most?
factors:
  server: [serial, threaded]
  transport: [tcp, unix]
  keepalive: [off, on]
backends:
  - name: fcgi
    command: [backbench, serve, --protocol, fcgi, --model, "{server}", --listen, "{listen}"]
    url: "fcgi://{target}/small"
    verify: {status: 200}
measure:
  kind: sweep
  concurrency: [1, 2]
  requests: 40
  repeat: 2
`

// studyChartsInBrowser reads every chart of a study's factors: its
// factor, the number of its lines, and the lines drawn outside their
// chart or not drawn at all.
const studyChartsInBrowser = `[...document.querySelectorAll('section.study .factor-charts figure.chart')].map(f => {
  const svg = f.querySelector('svg').getBoundingClientRect();
  const lines = [...f.querySelectorAll('.series polyline.line')];
  const bad = lines.filter(l => {
    const r = l.getBoundingClientRect(), s = getComputedStyle(l);
    return s.display === 'none' || s.visibility !== 'visible' || s.stroke === 'none' || parseFloat(s.strokeOpacity) === 0 ||
      (r.width === 0 && r.height === 0) || r.left < svg.left - 1 || r.right > svg.right + 1 || r.top < svg.top - 1 || r.bottom > svg.bottom + 1;
  }).length;
  return {factor: f.closest('.factor-charts').dataset.factor, title: f.querySelector('svg title').textContent, lines: lines.length, bad: bad};
})`

// TestStudyThreeFactorPageInBrowser: the page of a real three-factor
// study, in headless Chromium: every chart of every factor's section
// holds at least two lines (that factor's levels side by side), each
// drawn and inside its chart, with no console error.
func TestStudyThreeFactorPageInBrowser(t *testing.T) {
	bin := browsertest.Chromium(t)
	r := runStudy(t, writeStudy(t, threeFactorStudy))
	if r.code != 0 || r.res == nil {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	page := filepath.Join(t.TempDir(), "page.html")
	if out, err := exec.Command(studyBinary(t), "report", "-o", page, filepath.Join(r.dir, "study.json")).CombinedOutput(); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if _, err := os.Stat(page); err != nil {
		t.Fatal(err)
	}
	tab := browsertest.Open(t, bin, "file://"+page, 1280, 800)
	var charts []struct {
		Factor, Title string
		Lines, Bad    int
	}
	tab.Eval(studyChartsInBrowser, &charts)
	tab.CheckQuiet()
	perFactor := map[string]int{}
	for _, c := range charts {
		perFactor[c.Factor]++
		if c.Lines < 2 || c.Bad > 0 {
			t.Errorf("factor %s, chart %q: %d lines, %d of them not drawn inside the chart", c.Factor, c.Title, c.Lines, c.Bad)
		}
	}
	for _, f := range r.res.Factors {
		// A chart of req/s and one of p99 at each of the 4 combinations
		// of the other two factors' levels.
		if perFactor[f.Name] != 8 {
			t.Errorf("factor %s: %d charts, want 8 (%v)", f.Name, perFactor[f.Name], perFactor)
		}
	}
}
