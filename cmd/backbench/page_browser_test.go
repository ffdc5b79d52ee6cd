package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
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

// pageLayout is what the study page test reads from the page (the sweep
// page test is internal/report/page's TestPageInBrowser).
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
