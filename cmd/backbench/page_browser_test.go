package main

import (
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// browserTab is a page open in headless Chromium (no network: every name
// resolves to nothing), with what the page said on its console.
type browserTab struct {
	t        *testing.T
	ctx      context.Context
	mu       sync.Mutex
	requests []string
	problems []string
	// pages are the URLs loaded (the only requests allowed).
	pages []string
}

// openInBrowser starts headless Chromium at a window of w × h, with a
// fresh profile, and loads url; the browser ends with the test. A browser
// that fails to start (its launcher timed out on a busy machine) is
// started again, up to three times.
func openInBrowser(t *testing.T, bin, url string, w, h int) *browserTab {
	t.Helper()
	var err error
	for range 3 {
		var b *browserTab
		if b, err = startBrowser(t, bin, w, h); err == nil {
			b.visit(url)
			return b
		}
		t.Logf("chromium: %v; starting it again", err)
	}
	t.Fatalf("chromium: %v", err)
	return nil
}

// startBrowser starts headless Chromium at a window of w × h with a
// fresh profile, on a blank page.
func startBrowser(t *testing.T, bin string, w, h int) (*browserTab, error) {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(w, h),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelA)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(cancelC)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelT)
	b := &browserTab{t: t, ctx: ctx}
	// chromedp enables the Runtime, Log and Network domains of the tab
	// before the first action, so every event of the page arrives here.
	err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, e.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
				b.problems = append(b.problems, fmt.Sprintf("console.%s", e.Type))
			}
		case *runtime.EventExceptionThrown:
			b.problems = append(b.problems, "exception: "+e.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
				b.problems = append(b.problems, fmt.Sprintf("log %s: %s %s", e.Entry.Level, e.Entry.Text, e.Entry.URL))
			}
		}
	})
	if err != nil {
		return nil, err
	}
	// The first action starts the browser.
	if _, err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil {
		cancelT()
		cancelC()
		cancelA()
		return nil, err
	}
	b.mu.Lock()
	b.requests = nil
	b.mu.Unlock()
	return b, nil
}

// visit loads url in the tab and waits for its main element.
func (b *browserTab) visit(url string) {
	b.t.Helper()
	b.pages = append(b.pages, url)
	b.step(chromedp.Navigate(url))
	b.step(chromedp.WaitReady(chromedp.CSS("main")))
}

// step runs one browser action.
func (b *browserTab) step(a chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, a); err != nil {
		b.t.Fatalf("chromium: %v", err)
	}
}

// eval evaluates js in the page and decodes its JSON value into v.
func (b *browserTab) eval(js string, v any) {
	b.t.Helper()
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]byte](js))
	if err != nil {
		b.t.Fatalf("chromium: %v", err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		b.t.Fatalf("%v: %s", err, raw)
	}
}

// checkQuiet fails the test on any console error or warning, on any
// request but the pages visited, and when one of them was not seen.
func (b *browserTab) checkQuiet() {
	b.t.Helper()
	b.step(chromedp.Sleep(200 * time.Millisecond)) // late console messages
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.requests {
		if !slices.Contains(b.pages, r) {
			b.t.Errorf("the page made a request: %s", r)
		}
	}
	for _, p := range b.pages {
		if !slices.Contains(b.requests, p) {
			b.t.Errorf("no request seen for the page itself (%q): the network listener saw nothing", p)
		}
	}
	for _, p := range b.problems {
		b.t.Errorf("console: %s", p)
	}
}

// pageLayout is what TestPageInBrowser reads from the page.
type pageLayout struct {
	ViewportH    float64 `json:"viewportH"`
	AnswersTop   float64 `json:"answersTop"`
	FirstChart   float64 `json:"firstChart"`
	FirstAnswer  float64 `json:"firstAnswerBottom"`
	ScrollWidth  float64 `json:"scrollWidth"`
	ClientWidth  float64 `json:"clientWidth"`
	Wide         []string
	WideOpen     []string `json:"wideOpen"`
	ScrollOpen   float64  `json:"scrollOpen"`
	Answers      map[string][]string
	Rings        []string
	Unexplained  []string
	Legend       map[string]string
	CauseCells   map[string]map[string]string `json:"causeCells"`
	Provenance   map[string][]string
	ListenTitles map[string][]string `json:"listenTitles"`
	Multiples    []float64           `json:"multiples"`
}

// readLayout measures the page: where the answers block lies against the
// first viewport and the first chart, the answers per section, elements
// wider than the viewport (with every <details> closed, then open), every
// ringed point's tooltip, each legend entry's colour, the cause cell of
// every level row and each section's provenance terms.
const readLayout = `(() => {
  const vw = document.documentElement.clientWidth;
  const wide = () => [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > vw + 0.5)
    .slice(0, 5).map(e => e.tagName + '.' + e.getAttribute('class') + ' ' + (e.textContent || '').slice(0, 40) + ' ' + Math.round(e.getBoundingClientRect().right));
  const out = {viewportH: window.innerHeight, clientWidth: vw, scrollWidth: document.documentElement.scrollWidth};
  const ans = document.querySelector('section.answers');
  out.answersTop = ans ? ans.getBoundingClientRect().top : -1;
  const li = ans ? ans.querySelector('li') : null;
  out.firstAnswerBottom = li ? li.getBoundingClientRect().bottom : -1;
  const fc = document.querySelector('figure.chart');
  out.firstChart = fc ? fc.getBoundingClientRect().top : -1;
  out.Answers = {};
  if (ans) ans.querySelectorAll('p.answer-of').forEach(p => {
    const id = p.querySelector('a').getAttribute('href').slice(1);
    out.Answers[id] = [...p.nextElementSibling.querySelectorAll('li')].map(l => l.textContent);
  });
  out.Wide = wide();
  out.Rings = []; out.Unexplained = [];
  document.querySelectorAll('.series circle.fail').forEach(c => {
    const t = c.nextElementSibling && c.nextElementSibling.querySelector('title');
    const s = t ? t.textContent : '';
    out.Rings.push(s);
    if (!/ failed of |; cause: |errors/.test(s)) out.Unexplained.push(s);
  });
  out.Legend = {};
  document.querySelectorAll('section.sweep .legend-item').forEach(g => {
    out.Legend[g.closest('section').id + ' ' + g.querySelector('title').textContent] = getComputedStyle(g).color;
  });
  out.causeCells = {};
  document.querySelectorAll('section.sweep').forEach(sec => {
    const m = {};
    const t = [...sec.querySelectorAll('table')].find(t => t.querySelector('caption').textContent.startsWith('Every level:'));
    if (t) t.querySelectorAll('tbody tr').forEach(tr => { m[tr.cells[0].textContent + ' ' + tr.cells[1].textContent] = tr.cells[tr.cells.length - 1].textContent; });
    out.causeCells[sec.id] = m;
  });
  out.listenTitles = {};
  document.querySelectorAll('section.sweep').forEach(sec => {
    out.listenTitles[sec.id] = [...sec.querySelectorAll('.series .pt > title')].map(t => t.textContent).filter(s => /listen queue[^;]*overflowed/.test(s));
  });
  out.Provenance = {};
  document.querySelectorAll('section.result').forEach(sec => {
    out.Provenance[sec.id] = [...sec.querySelectorAll('dl.prov dt')].map(d => d.textContent);
  });
  out.multiples = [...document.querySelectorAll('#r5 .multiples figure.chart.small')].map(f => f.getBoundingClientRect().width);
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  out.wideOpen = wide();
  out.scrollOpen = document.documentElement.scrollWidth;
  document.querySelectorAll('details').forEach(d => { d.open = false; });
  return out;
})()`

// rgb is a "#RRGGBB" colour as the browser computes it, "rgb(r, g, b)".
func rgb(hex string) string {
	v, _ := strconv.ParseUint(hex[1:], 16, 32)
	return fmt.Sprintf("rgb(%d, %d, %d)", v>>16, v>>8&0xff, v&0xff)
}

// pngHas reports how many pixels of the PNG at path are exactly hex.
func pngHas(t *testing.T, path, hex string) int {
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
	want := rgb(hex)
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

// sweepDoc reads the parts of a sweep.json the browser test checks.
type sweepDocument struct {
	Series []struct {
		Label  string          `json:"label"`
		Levels []stats.Summary `json:"levels"`
	} `json:"series"`
	Comparisons []struct {
		Series   string `json:"series"`
		Baseline string `json:"baseline"`
	} `json:"comparisons"`
}

func readSweepDoc(t *testing.T, path string) sweepDocument {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d sweepDocument
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return d
}

// TestPageInBrowser makes a page of real runs against built-in backends
// (a bench run, a sweep with trials of two series, a sweep of a serial
// backend with a listen backlog of 2 at a level of 8 connections, a
// capacity search, a sweep of seven series) and opens it in headless
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
	onceAcrossEngines(t)
	bin := chromium(t)
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		code, out, errs := runMain(t, context.Background(), args...)
		if code != 0 && !(args[0] == "capacity" && code == exitSLO) {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		return out
	}
	unix := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{BodyBytes: 100})
	tcp := fixtures.StartTB(t, fixtures.ProtoFCGI, "tcp", fixtures.Options{BodyBytes: 100, Delay: time.Millisecond})
	// One connection at a time, 5 ms each, a backlog of 2: at 8
	// connections the accept queue is full and SYNs are dropped.
	serial := fixtures.StartTB(t, fixtures.ProtoHTTP, "tcp", fixtures.Options{Model: fixtures.Model{Kind: fixtures.ModelSerial},
		Delay: 5 * time.Millisecond, Backlog: 2})

	benchPath := filepath.Join(dir, "bench.json")
	if err := os.WriteFile(benchPath, []byte(run("bench", "-q", "--format", "json", "-n", "100", "-c", "2", unix.URL("/x.php"))), 0o644); err != nil {
		t.Fatal(err)
	}
	trialsDir, queueDir := filepath.Join(dir, "trials"), filepath.Join(dir, "queue")
	run("sweep", "-q", "-n", "30", "-c", "1,2", "--repeat", "3", "--out", trialsDir,
		"tcp="+tcp.URL("/x.php"), "unix="+unix.URL("/x.php"))
	run("sweep", "-q", "-n", "40", "-c", "1,8", "--out", queueDir, "serial="+serial.URL("/"))
	manyDir := filepath.Join(dir, "many")
	many := []string{"sweep", "-q", "-n", "10", "-c", "1,2", "--out", manyDir}
	for i := range 7 {
		many = append(many, fmt.Sprintf("s%d=%s", i+1, unix.URL("/x.php")))
	}
	run(many...)
	capName, capRep := capacityInput(t, filepath.Join(dir))
	trials, queue := readSweepDoc(t, filepath.Join(trialsDir, "sweep.json")), readSweepDoc(t, filepath.Join(queueDir, "sweep.json"))

	page := filepath.Join(dir, "page.html")
	run("report", "-o", page, benchPath, filepath.Join(trialsDir, "sweep.json"), filepath.Join(queueDir, "sweep.json"), capName, filepath.Join(manyDir, "sweep.json"))
	url := "file://" + page
	tab := openInBrowser(t, bin, url, 1280, 800)
	var l pageLayout
	tab.eval(readLayout, &l)
	// The page a sweep writes itself reads the same way: answers first,
	// one per pair, nothing wider than the window.
	var own pageLayout
	tab.visit("file://" + filepath.Join(trialsDir, "sweep.html"))
	tab.eval(readLayout, &own)
	tab.checkQuiet()
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
		if got := l.Legend["r2 "+se.Label]; got != rgb(hex) {
			t.Errorf("series %s is %q on the page, want %s (%s)", se.Label, got, rgb(hex), hex)
		}
		if n := pngHas(t, filepath.Join(trialsDir, "sweep.png"), hex); n < 20 {
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
