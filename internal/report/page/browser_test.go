package page_test

// The page opened in headless Chromium (Debian's chromium, driven with
// chromedp): the browser tests skip where chromium is missing, and fail
// under CI=true, where .ci/run installs it.

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

// pageChromium returns the path of Debian's chromium, or skips the test (fails
// it under CI=true, where .ci/run installs it).
func pageChromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	realbackend.Missing(t, "chromium is not installed (apt-get install chromium)")
	return ""
}

// pageTab is a page open in headless Chromium (no network: every name
// resolves to nothing), with what the page said on its console.
type pageTab struct {
	t        *testing.T
	ctx      context.Context
	mu       sync.Mutex
	requests []string
	problems []string
	// pages are the URLs loaded (the only requests allowed).
	pages []string
}

// pageOpenInBrowser starts headless Chromium at a window of w × h, with a
// fresh profile, and loads url; the browser ends with the test. A browser
// that fails to start (its launcher timed out on a busy machine) is
// started again, up to three times.
func pageOpenInBrowser(t *testing.T, bin, url string, w, h int) *pageTab {
	t.Helper()
	var err error
	for range 3 {
		var b *pageTab
		if b, err = pageStartBrowser(t, bin, w, h); err == nil {
			b.visit(url)
			return b
		}
		t.Logf("chromium: %v; starting it again", err)
	}
	t.Fatalf("chromium: %v", err)
	return nil
}

// pageStartBrowser starts headless Chromium at a window of w × h with a
// fresh profile, on a blank page.
func pageStartBrowser(t *testing.T, bin string, w, h int) (*pageTab, error) {
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
	b := &pageTab{t: t, ctx: ctx}
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
func (b *pageTab) visit(url string) {
	b.t.Helper()
	b.pages = append(b.pages, url)
	b.step(chromedp.Navigate(url))
	b.step(chromedp.WaitReady(chromedp.CSS("main")))
}

// step runs one browser action.
func (b *pageTab) step(a chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, a); err != nil {
		b.t.Fatalf("chromium: %v", err)
	}
}

// eval evaluates js in the page and decodes its JSON value into v.
func (b *pageTab) eval(js string, v any) {
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
func (b *pageTab) checkQuiet() {
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
