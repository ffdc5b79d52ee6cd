package page_test

import (
	"context"
	"github.com/backbench/backbench/internal/browsertest"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
)

// pageStallServer is an HTTP server on a Unix socket that stalls once: every
// request that arrives from `at` after its first request until `stall`
// later is held until the stall ends, then every other one is cut short
// (a Receive failure) and the rest answered.
type pageStallServer struct {
	path      string
	at, stall time.Duration
	first     atomic.Int64 // Unix ns of the first request
	held      atomic.Int64
	mu        sync.Mutex
	began     time.Time // when the stall began (wall clock)
}

// pageStartStallServer starts a pageStallServer that stalls at after its
// first request, for stall; it stops with the test.
func pageStartStallServer(t *testing.T, at, stall time.Duration) *pageStallServer {
	t.Helper()
	dir, err := os.MkdirTemp("", "bbtl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &pageStallServer{path: filepath.Join(dir, "s.sock"), at: at, stall: stall}
	ln, err := net.Listen("unix", s.path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

func (s *pageStallServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	s.first.CompareAndSwap(0, now.UnixNano())
	begin := time.Unix(0, s.first.Load()).Add(s.at)
	end := begin.Add(s.stall)
	if !now.Before(begin) && now.Before(end) {
		s.mu.Lock()
		if s.began.IsZero() {
			s.began = now
		}
		s.mu.Unlock()
		n := s.held.Add(1)
		time.Sleep(time.Until(end))
		if n%2 == 1 {
			if conn, bw, err := http.NewResponseController(w).Hijack(); err == nil {
				bw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
				bw.Flush()
				conn.Close()
				return
			}
		}
	}
	w.Write([]byte("ok"))
}

// TestTimelinePageInBrowser: the page of a bench run that stalled shows,
// in Chromium at 1280×800, the timeline's charts within the window's
// width, a tooltip on every point, and the marks of the first failure and
// the slowest request; the page stays quiet (no console error, no
// request).
func TestTimelinePageInBrowser(t *testing.T) {
	pageOnceAcrossEngines(t)
	bin := browsertest.Chromium(t)
	srv := pageStartStallServer(t, 800*time.Millisecond, 400*time.Millisecond)
	dir := t.TempDir()
	l := runsPlan(t, "http://unix:"+srv.path+":/", func(o *plan.Options) {
		o.KeepAlive, o.Concurrency, o.Duration, o.TimeLimitSet = true, 2, 2*time.Second, true
	})
	run, err := execute.Run(context.Background(), l.Plan, runsQuiet)
	if err != nil {
		t.Fatal(err)
	}
	benchPath := runsSave(t, dir, "bench.json", &document.Run{Summary: &run.Summary, Record: run.Record})
	page := runsPage(t, dir, "page.html", benchPath)
	tab := browsertest.Open(t, bin, "file://"+page, 1280, 800)
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
	tab.Eval(`(() => {
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
	tab.CheckQuiet()
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
