// Package browsertest opens backbench's pages in Debian's headless
// Chromium for the page tests (internal/report/page, cmd/backbench): a tab
// with no network (every name resolves to nothing) that records every
// request and every console error, warning or exception, so that a test
// can hold a page to making no request and saying nothing. A test helper:
// only tests import it.
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/backbench/backbench/internal/realbackend"
)

// Chromium returns the path of Debian's chromium, or skips the test
// (fails it under CI=true, where .ci/run installs it).
func Chromium(t testing.TB) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	realbackend.Missing(t, "chromium is not installed (apt-get install chromium)")
	return ""
}

// Tab is a page open in headless Chromium (no network: every name
// resolves to nothing), with what the page said on its console.
type Tab struct {
	t        testing.TB
	ctx      context.Context
	mu       sync.Mutex
	requests []string
	problems []string
	// pages are the URLs loaded (the only requests allowed).
	pages []string
}

// Open starts headless Chromium at a window of w × h, with a
// fresh profile, and loads url; the browser ends with the test. A browser
// that fails to start (its launcher timed out on a busy machine) is
// started again, up to three times.
func Open(t testing.TB, bin, url string, w, h int) *Tab {
	t.Helper()
	var err error
	for range 3 {
		var b *Tab
		if b, err = start(t, bin, w, h); err == nil {
			b.Visit(url)
			return b
		}
		t.Logf("chromium: %v; starting it again", err)
	}
	t.Fatalf("chromium: %v", err)
	return nil
}

// start starts headless Chromium at a window of w × h with a
// fresh profile, on a blank page.
func start(t testing.TB, bin string, w, h int) (*Tab, error) {
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
	b := &Tab{t: t, ctx: ctx}
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

// Visit loads url in the tab and waits for its main element.
func (b *Tab) Visit(url string) {
	b.t.Helper()
	b.pages = append(b.pages, url)
	b.Step(chromedp.Navigate(url))
	b.Step(chromedp.WaitReady(chromedp.CSS("main")))
}

// Step runs one browser action.
func (b *Tab) Step(a chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, a); err != nil {
		b.t.Fatalf("chromium: %v", err)
	}
}

// Eval evaluates js in the page and decodes its JSON value into v.
func (b *Tab) Eval(js string, v any) {
	b.t.Helper()
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]byte](js))
	if err != nil {
		b.t.Fatalf("chromium: %v", err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		b.t.Fatalf("%v: %s", err, raw)
	}
}

// CheckQuiet fails the test on any console error or warning, on any
// request but the pages visited, and when one of them was not seen.
func (b *Tab) CheckQuiet() {
	b.t.Helper()
	b.Step(chromedp.Sleep(200 * time.Millisecond)) // late console messages
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

// Screenshot returns the whole page as a PNG (quality 90), for a person to
// look at (BACKBENCH_SCREENSHOT in the page tests).
func (b *Tab) Screenshot() ([]byte, error) {
	return chromedp.Run(b.ctx, chromedp.FullScreenshot(90))
}
