package execute_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// stallingServer is an HTTP server on a Unix socket that stalls once:
// every request that arrives from `at` after its first request until
// `stall` later is held until the stall ends, then every other one is cut
// short (a Receive failure) and the rest answered.
type stallingServer struct {
	path      string
	at, stall time.Duration
	first     atomic.Int64 // Unix ns of the first request
	held      atomic.Int64
	mu        sync.Mutex
	began     time.Time // when the stall began (wall clock)
}

func startStallingServer(t *testing.T, at, stall time.Duration) *stallingServer {
	t.Helper()
	// A short directory of its own: a Unix socket path has a length limit
	// that t.TempDir's long names can pass.
	dir, err := os.MkdirTemp("", "bbtl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &stallingServer{path: filepath.Join(dir, "s.sock"), at: at, stall: stall}
	ln, err := net.Listen("unix", s.path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

func (s *stallingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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

// TestTimelineShowsStall is the truth test of the timeline: a server that
// stalls for 0.6 s at 1.5 s into a 3 s closed-model run (bench -k -c 4
// -t 3). The window where the stall began (±1) holds the stalled
// requests' latency (at least half the stall) and the failures, no
// request is sent while all the workers are held, windows away from the
// stall stay below it, and the summary names that window as the worst;
// the timeline CSV (--timeline-csv) has a row per window. Bounds are
// loose: a busy machine may stretch any request, but not by the stall.
func TestTimelineShowsStall(t *testing.T) {
	const at, stall = 1500 * time.Millisecond, 600 * time.Millisecond
	srv := startStallingServer(t, at, stall)
	po := timedLoad("http://unix:"+srv.path+":/", "", 3*time.Second, 4, 0)
	po.KeepAlive = true
	run := runBenchPlan(t, context.Background(), po, execute.Options{Quiet: true, Observe: true})
	tl := run.Record.Timeline
	if tl == nil || tl.Width != 125*time.Millisecond || len(tl.Windows) < 24 {
		t.Fatalf("timeline %+v", tl)
	}
	srv.mu.Lock()
	began := srv.began
	srv.mu.Unlock()
	if began.IsZero() {
		t.Fatal("the server never stalled")
	}
	w := tl.Width
	idx := int(began.Sub(tl.Start.Time) / w)
	lastHeld := int(began.Add(stall).Sub(tl.Start.Time) / w)
	t.Logf("stall began at %v into the run: window %d; held until window %d", began.Sub(tl.Start.Time), idx, lastHeld)
	near := func(j int) bool { return j >= idx-1 && j <= idx+1 }
	var slowest time.Duration
	var failed, failedNear int64
	for j := range tl.Windows {
		win := &tl.Windows[j]
		failed += win.Failed()
		if near(j) {
			slowest = max(slowest, win.LatencyMax)
			failedNear += win.Failed()
			continue
		}
		if win.Failed() > 0 {
			t.Errorf("window %d has %d failures, away from the stall's window %d", j, win.Failed(), idx)
		}
		if (j < idx-2 || j > lastHeld+2) && win.LatencyMax >= stall {
			t.Errorf("window %d, away from the stall, has a request of %v", j, win.LatencyMax)
		}
		// Wholly inside the stall, well after it began: every worker held.
		if time.Duration(j)*w >= began.Sub(tl.Start.Time)+2*w && time.Duration(j+1)*w <= began.Add(stall).Sub(tl.Start.Time)-w {
			if win.Complete+win.Failed() != 0 {
				t.Errorf("window %d, inside the stall, sent %d requests", j, win.Complete+win.Failed())
			}
		}
	}
	if slowest < stall/2 {
		t.Errorf("the stall's windows %d±1 hold no request of at least %v (slowest %v)", idx, stall/2, slowest)
	}
	if failedNear == 0 || failedNear != failed || failed != run.Record.Counts.Failed() {
		t.Errorf("%d failures near the stall, %d in the timeline, %d in the run", failedNear, failed, run.Record.Counts.Failed())
	}
	if ww := run.Summary.WorstWindow; ww == nil || ww.Index < idx-1 || ww.Index > idx+1 || ww.MaxMs < float64(stall/2)/1e6 {
		t.Errorf("worst window %+v, want window %d±1", ww, idx)
	}
	var b bytes.Buffer
	if err := (report.RunFiles{Timeline: &b}).Write(run.Record); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != len(tl.Windows)+1 || !strings.HasPrefix(strings.Join(rows[0], ","), "window,start_s,") {
		t.Errorf("timeline CSV: %d rows for %d windows (%v)", len(rows), len(tl.Windows), err)
	}
}

// TestTimelineWindowWidth: the width asked for (bench's --window) is the
// timeline's.
func TestTimelineWindowWidth(t *testing.T) {
	srv := startStallingServer(t, time.Hour, 0)
	po := benchLoad{n: 20, c: 1, timeout: 30}.options("http://unix:" + srv.path + ":/")
	po.Window, po.WindowSet = 50*time.Millisecond, true
	run := runBenchPlan(t, context.Background(), po, execute.Options{Quiet: true, Observe: true, Window: po.Window})
	if tl := run.Record.Timeline; tl == nil || tl.Width != 50*time.Millisecond {
		t.Fatalf("timeline %+v", tl)
	}
}

// stagedRun runs bench -k -c 8 --window 250ms with the stages of set
// against url and returns the run, its record's plan checked to hold the
// stages.
func stagedRun(t *testing.T, url string, set func(po *plan.Options)) *stats.Run {
	t.Helper()
	po := plan.Defaults(url)
	po.KeepAlive, po.Concurrency, po.ConcurrencySet = true, 8, true
	po.Window, po.WindowSet = 250*time.Millisecond, true
	set(&po)
	run := runBenchPlan(t, context.Background(), po, execute.Options{Quiet: true, Observe: true, Window: po.Window})
	if run.Record.Timeline == nil {
		t.Fatalf("%+v: no timeline", po)
	}
	if len(run.Record.Plan.Stages) == 0 {
		t.Errorf("%q %q: the record's plan has no stages", po.StageSpec, po.RateStageSpec)
	}
	return run
}

// TestRateStagesLand is the truth test of load in stages: rate stages on
// a built-in backend land each stage's rate in every window of its
// timeline within 2% (a window counts the requests due in it, so the
// schedule alone decides: the backend only has to answer; the last
// window's requests in flight when the time ended are drained, counted
// in none), a ramp lands the integral of its rate, and the summary gives
// each stage's figures.
func TestRateStagesLand(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	within := func(what string, got int64, want float64) {
		if d := float64(got) - want; d > want*0.02+1e-9 || -d > want*0.02+1e-9 {
			t.Errorf("%s: %d requests, want %.1f ± 2%%", what, got, want)
		}
	}
	run := stagedRun(t, srv.URL("/"), func(po *plan.Options) { po.RateStageSpec = "1s:200,1s:600" })
	s, tl := run.Summary, run.Record.Timeline
	for i := range 8 {
		want := 200 * 0.25
		if i >= 4 {
			want = 600 * 0.25
		}
		got := tl.Windows[i].Complete + tl.Windows[i].Failed()
		if i == 7 && got < int64(want) {
			// The requests still in flight when the run's time ended are
			// drained, counted in no window: sent in the last one.
			got = min(got+s.Drained, int64(want))
		}
		within(fmt.Sprintf("held, window %d", i), got, want)
	}
	if len(s.Stages) != 2 || s.Stages[0].Target != 200 || s.Stages[1].EndSeconds != 2 || s.Open == nil || s.Open.RateAsked != 400 {
		t.Errorf("stages %+v, open model %+v", s.Stages, s.Open)
	} else {
		within("stage 2's req/s", int64(s.Stages[1].RequestsPerSecond+0.5), 600)
	}
	// 0 → 400 req/s over 1 s: n(t) = 200 t².
	run = stagedRun(t, srv.URL("/"), func(po *plan.Options) { po.Ramp, po.RateStageSpec = true, "1s:400" })
	s, tl = run.Summary, run.Record.Timeline
	for i := range 4 {
		a, b := 0.25*float64(i), 0.25*float64(i+1)
		want := 200 * (b*b - a*a)
		got := tl.Windows[i].Complete + tl.Windows[i].Failed()
		if i == 3 && float64(got) < want {
			got = min(got+s.Drained, int64(want+0.5))
		}
		if d := float64(got) - want; d > max(want*0.02, 1) || -d > max(want*0.02, 1) {
			t.Errorf("ramp, window %d: %d requests, want %.1f", i, got, want)
		}
	}
}

// TestClosedStages: concurrency stages hold back the workers above the
// stage's concurrency: against a backend that sleeps 10 ms a request,
// the stage of 4 connections completes well over twice the requests per
// second of the stage of 1 (4 times, on an idle machine).
func TestClosedStages(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 10 * time.Millisecond})
	po := plan.Defaults(srv.URL("/"))
	po.KeepAlive, po.StageSpec = true, "0.6s:1,0.6s:4"
	s := runBenchPlan(t, context.Background(), po, execute.Options{Quiet: true, Observe: true}).Summary
	if s.Concurrency != 4 || len(s.Stages) != 2 {
		t.Fatalf("concurrency %d, stages %+v", s.Concurrency, s.Stages)
	}
	one, four := s.Stages[0].RequestsPerSecond, s.Stages[1].RequestsPerSecond
	// One connection of 10 ms serves at most 100 req/s; a stage's figure
	// is counted from whole windows, whose edges can add a request or
	// two to a 0.6 s stage (110 req/s was seen), hence the margin.
	if one <= 0 || one > 150 || four < 2*one {
		t.Errorf("1 connection: %.1f req/s, 4: %.1f req/s", one, four)
	}
}
