package page_test

import (
	"encoding/json"
	"fmt"
	"github.com/backbench/backbench/internal/browsertest"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// pageRGB is a "#RRGGBB" colour as the browser computes it, "rgb(r, g, b)".
func pageRGB(hex string) string {
	v, _ := strconv.ParseUint(hex[1:], 16, 32)
	return fmt.Sprintf("rgb(%d, %d, %d)", v>>16, v>>8&0xff, v&0xff)
}

// pagePNGHas reports how many pixels of the PNG at path are exactly hex.
func pagePNGHas(t *testing.T, path, hex string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	want := pageRGB(hex)
	n := 0
	r := im.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := im.At(x, y).RGBA()
			if fmt.Sprintf("rgb(%d, %d, %d)", cr>>8, cg>>8, cb>>8) == want {
				n++
			}
		}
	}
	return n
}

// pageSweepDocument is the parts of a sweep.json the browser test checks.
type pageSweepDocument struct {
	Series []struct {
		Label  string          `json:"label"`
		Levels []stats.Summary `json:"levels"`
	} `json:"series"`
	Comparisons []struct {
		Series   string `json:"series"`
		Baseline string `json:"baseline"`
	} `json:"comparisons"`
}

func pageReadSweepDoc(t *testing.T, path string) pageSweepDocument {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d pageSweepDocument
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return d
}

// TestPageInBrowser makes a page of real runs against built-in backends
// (a bench run, a sweep with trials of two series, a sweep of a serial
// backend with a listen backlog of 2 at a level of 8 connections, a
// capacity search, a sweep of seven series: each sweep with the page and
// the PNG it writes itself) and opens it in headless
// Chromium at 1280×800: the
// answers block lies in the first viewport, above every chart, with one
// sentence per comparison pair of the sweep with trials and the
// capacity's answer; no element is wider than the viewport (with the
// folded tables closed and open); every ringed point's tooltip says its
// cause; the levels whose listen queue overflowed (as the record says) are
// named in the point's tooltip, the level's table row and the answers'
// caveat; each series' legend colour on the page is the palette's, and
// the sweep's PNG has pixels of exactly that colour; seven series are
// drawn as small multiples side by side; the capacity section shows its
// start and its command; nothing on the console.
func TestPageInBrowser(t *testing.T) {
	pageOnceAcrossEngines(t)
	bin := browsertest.Chromium(t)
	dir := t.TempDir()
	unix := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 100})
	tcp := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{BodyBytes: 100, Delay: time.Millisecond})
	// One connection at a time, 5 ms each, a backlog of 2: at 8
	// connections the accept queue is full and SYNs are dropped.
	serial := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial},
		Delay: 5 * time.Millisecond, Backlog: 2})

	benchPath, _ := runsBench(t, dir, "bench.json", unix.URL("/x.php"), 100, 2)
	trialsDir, queueDir := filepath.Join(dir, "trials"), filepath.Join(dir, "queue")
	runsSweep(t, trialsDir, []int{1, 2}, 30, 3, []string{"tcp", "unix"}, []string{tcp.URL("/x.php"), unix.URL("/x.php")})
	runsSweep(t, queueDir, []int{1, 8}, 40, 1, []string{"serial"}, []string{serial.URL("/")})
	manyDir := filepath.Join(dir, "many")
	var labels, urls []string
	for i := range 7 {
		labels, urls = append(labels, fmt.Sprintf("s%d", i+1)), append(urls, unix.URL("/x.php"))
	}
	runsSweep(t, manyDir, []int{1, 2}, 10, 1, labels, urls)
	capName, capRep := runsSerialCapacity(t, dir)
	trials, queue := pageReadSweepDoc(t, filepath.Join(trialsDir, "sweep.json")), pageReadSweepDoc(t, filepath.Join(queueDir, "sweep.json"))

	page := runsPage(t, dir, "page.html", benchPath, filepath.Join(trialsDir, "sweep.json"), filepath.Join(queueDir, "sweep.json"), capName, filepath.Join(manyDir, "sweep.json"))
	url := "file://" + page
	tab := browsertest.Open(t, bin, url, 1280, 800)
	var l browsertest.Layout
	tab.Eval(browsertest.ReadLayout, &l)
	// The page a sweep writes itself reads the same way: answers first,
	// one per pair, nothing wider than the window.
	var own browsertest.Layout
	tab.Visit("file://" + filepath.Join(trialsDir, "sweep.html"))
	tab.Eval(browsertest.ReadLayout, &own)
	tab.CheckQuiet()
	if got := own.Answers["r1"]; len(got) == 0 || own.FirstAnswer <= 0 || own.FirstAnswer > own.ViewportH || own.ScrollWidth > own.ClientWidth || len(own.Wide) > 0 {
		t.Errorf("sweep.html: answers %q (first ends at %.0f of %.0f), width %v of %v, wide %q", got, own.FirstAnswer, own.ViewportH, own.ScrollWidth, own.ClientWidth, own.Wide)
	} else if !slices.Equal(got, l.Answers["r2"]) {
		t.Errorf("sweep.html answers %q, the report's %q", got, l.Answers["r2"])
	}

	// Sections: r1 bench, r2 the sweep with trials, r3 the queue sweep,
	// r4 the capacity search, r5 the sweep of seven series.
	if l.AnswersTop < 0 || l.FirstAnswer > l.ViewportH || l.FirstAnswer <= 0 {
		t.Errorf("the answers block is not in the first viewport: top %.0f, first sentence's bottom %.0f, viewport %.0f", l.AnswersTop, l.FirstAnswer, l.ViewportH)
	}
	if l.FirstChart >= 0 && l.FirstChart < l.AnswersTop {
		t.Errorf("a chart (at %.0f) comes before the answers (at %.0f)", l.FirstChart, l.AnswersTop)
	}
	var pairs []string
	for _, c := range trials.Comparisons {
		if p := c.Series + " vs " + c.Baseline; !slices.Contains(pairs, p) {
			pairs = append(pairs, p)
		}
	}
	if len(pairs) == 0 {
		t.Fatalf("the sweep with trials has no comparisons")
	}
	if got := l.Answers["r2"]; len(got) != len(pairs) {
		t.Errorf("answers of the sweep with trials: %q, want one sentence per pair %q", got, pairs)
	} else {
		for i, p := range pairs {
			if !strings.Contains(got[i], p+": ") || !strings.Contains(got[i], "req/s") || !strings.Contains(got[i], "p99") || !strings.Contains(got[i], "c = ") {
				t.Errorf("answer %q: want the pair %q, both metrics and their levels", got[i], p)
			}
		}
	}
	if got := l.Answers["r4"]; len(got) != 1 || got[0] != capRep.Answer {
		t.Errorf("capacity answer %q, want %q", got, capRep.Answer)
	}
	if got := l.Answers["r1"]; len(got) != 1 || !strings.Contains(got[0], "req/s, mean ") || !strings.Contains(got[0], " failed of 100") {
		t.Errorf("bench answer %q: want its headline figures", got)
	}
	if l.ScrollWidth > l.ClientWidth || len(l.Wide) > 0 {
		t.Errorf("the page is wider than the viewport (%v > %v): %q", l.ScrollWidth, l.ClientWidth, l.Wide)
	}
	if l.ScrollOpen > l.ClientWidth || len(l.WideOpen) > 0 {
		t.Errorf("with the folded tables open, the page is wider than the viewport (%v > %v): %q", l.ScrollOpen, l.ClientWidth, l.WideOpen)
	}
	if len(l.Unexplained) > 0 {
		t.Errorf("ringed points without their cause: %q", l.Unexplained)
	}

	// The listen queue: what the record says, the page says at that
	// level, on the point, in the row and in the answers' caveat.
	var overflowed []string
	for _, lv := range queue.Series[0].Levels {
		row := l.CauseCells["r3"]["serial "+strconv.Itoa(lv.Concurrency)]
		if n, _ := lv.ListenOverflow(); n > 0 {
			overflowed = append(overflowed, strconv.Itoa(lv.Concurrency))
			if !strings.Contains(row, "listen queue overflowed") {
				t.Errorf("the row of c=%d says %q, want the listen queue (the record has %d overflows)", lv.Concurrency, row, n)
			}
			found := false
			for _, s := range l.ListenTitles["r3"] {
				found = found || strings.HasPrefix(s, fmt.Sprintf("serial, c=%d: ", lv.Concurrency))
			}
			if !found {
				t.Errorf("no point of c=%d has the listen queue in its tooltip: %q", lv.Concurrency, l.ListenTitles["r3"])
			}
		} else if strings.Contains(row, "listen queue") {
			t.Errorf("the row of c=%d says %q, but the record has no overflow", lv.Concurrency, row)
		}
	}
	if !slices.Contains(overflowed, "8") {
		t.Fatalf("the record of a serial backend with backlog 2 at 8 connections has no listen queue overflow: %+v", queue.Series[0].Levels)
	}
	want := "listen queue overflowed at c = " + overflowed[0]
	if len(overflowed) > 1 {
		want = "listen queue overflowed at c = " + strings.Join(overflowed[:len(overflowed)-1], ", ") + " and " + overflowed[len(overflowed)-1]
	}
	if got := strings.Join(l.Answers["r3"], " "); !strings.Contains(got, want) {
		t.Errorf("the queue sweep's answer %q does not say %q", got, want)
	}

	// One colour per series: the page's legend, the palette, the PNG.
	for i, se := range trials.Series {
		hex := report.SeriesColorHex(i)
		if got := l.Legend["r2 "+se.Label]; got != pageRGB(hex) {
			t.Errorf("series %s is %q on the page, want %s (%s)", se.Label, got, pageRGB(hex), hex)
		}
		if n := pagePNGHas(t, filepath.Join(trialsDir, "sweep.png"), hex); n < 20 {
			t.Errorf("series %s: %d pixels of %s in sweep.png", se.Label, n, hex)
		}
	}
	// Seven series: small multiples, one chart per series for req/s and
	// for p99, side by side and still readable.
	if len(l.Multiples) < 14 {
		t.Errorf("a sweep of 7 series has %d small charts, want one per series for req/s and p99", len(l.Multiples))
	}
	for _, w := range l.Multiples {
		if w < 400 || w > l.ClientWidth/2 {
			t.Errorf("a small chart is %.0f px wide, want 400 to half the page (%.0f)", w, l.ClientWidth/2)
		}
	}
	if p := l.Provenance["r4"]; !slices.Contains(p, "started") || !slices.Contains(p, "command") {
		t.Errorf("the capacity section's provenance: %q, want started and command", p)
	}
}
