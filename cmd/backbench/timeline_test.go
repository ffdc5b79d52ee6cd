package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/stats"
)

// stallServer is an HTTP server on a Unix socket that stalls once: every
// request that arrives from `at` after its first request until `stall`
// later is held until the stall ends, then every other one is cut short
// (a Receive failure) and the rest answered.
type stallServer struct {
	path      string
	at, stall time.Duration
	first     atomic.Int64 // Unix ns of the first request
	held      atomic.Int64
	mu        sync.Mutex
	began     time.Time // when the stall began (wall clock)
}

func startStallServer(t *testing.T, at, stall time.Duration) *stallServer {
	t.Helper()
	dir, err := os.MkdirTemp("", "bbtl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &stallServer{path: filepath.Join(dir, "s.sock"), at: at, stall: stall}
	ln, err := net.Listen("unix", s.path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

func (s *stallServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
// stalls for 0.6 s at 1.5 s into a 3 s closed-model run. The window where
// the stall began (±1) holds the stalled requests' latency (at least half
// the stall) and the failures, no request is sent while all the workers
// are held, windows away from the stall stay below it, and the text
// figures name that window as the worst. Bounds are loose: a busy machine
// may stretch any request, but not by the stall.
func TestTimelineShowsStall(t *testing.T) {
	const at, stall = 1500 * time.Millisecond, 600 * time.Millisecond
	srv := startStallServer(t, at, stall)
	csvPath := filepath.Join(t.TempDir(), "tl.csv")
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "--format", "json", "-k", "-c", "4", "-t", "3",
		"--timeline-csv", csvPath, "http://unix:"+srv.path+":/")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		WorstWindow *stats.WorstWindow `json:"worst_window"`
		Record      stats.Record       `json:"record"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	tl := doc.Record.Timeline
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
	if failedNear == 0 || failedNear != failed || failed != doc.Record.Counts.Failed() {
		t.Errorf("%d failures near the stall, %d in the timeline, %d in the run", failedNear, failed, doc.Record.Counts.Failed())
	}
	if ww := doc.WorstWindow; ww == nil || ww.Index < idx-1 || ww.Index > idx+1 || ww.MaxMs < float64(stall/2)/1e6 {
		t.Errorf("worst window %+v, want window %d±1", ww, idx)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != len(tl.Windows)+1 || !strings.HasPrefix(strings.Join(rows[0], ","), "window,start_s,") {
		t.Errorf("--timeline-csv: %d rows for %d windows (%v)", len(rows), len(tl.Windows), err)
	}
}

// TestWindowFlag: --window sets the width; a window that is not positive
// or longer than the run is refused with one line and exit status 2.
func TestWindowFlag(t *testing.T) {
	srv := startStallServer(t, time.Hour, 0)
	url := "http://unix:" + srv.path + ":/"
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "--format", "json", "-n", "20", "--window", "50ms", url)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Record stats.Record `json:"record"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Record.Timeline == nil || doc.Record.Timeline.Width != 50*time.Millisecond {
		t.Fatalf("timeline %+v (%v)", doc.Record.Timeline, err)
	}
	for _, args := range [][]string{{"--window", "0"}, {"--window", "-1"}, {"-t", "1", "--window", "2s"}} {
		code, _, errs := runMain(t, context.Background(), append(append([]string{"bench", "-q"}, args...), url)...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
}

// TestMergeTimelinesLive: two generators started together (--start-at)
// against one backend, merged: the merged record's timeline holds every
// request of both, each generator's window in the merged window that
// holds its start (wall time), and its width is theirs.
func TestMergeTimelinesLive(t *testing.T) {
	bin := buildBinary(t)
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{Delay: 500 * time.Microsecond})
	dir := t.TempDir()
	at := time.Now().Add(2 * time.Second).Truncate(time.Millisecond)
	var cmds []*exec.Cmd
	var files []string
	for i := range 2 {
		out := filepath.Join(dir, fmt.Sprintf("gen%d.json", i))
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd := exec.Command(bin, "bench", "-q", "--format", "json", "--start-at", fmt.Sprintf("%d.%03d", at.Unix(), at.Nanosecond()/1e6),
			"-t", "1", "-c", "2", "-k", srv.URL("/"))
		cmd.Stdout, cmd.Stderr = f, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, files = append(cmds, cmd), append(files, out)
	}
	var gens []*stats.Timeline
	var total int64
	for i, cmd := range cmds {
		if code := exitCode(t, cmd, time.Minute); code != 0 {
			t.Fatalf("generator %d: exit %d", i, code)
		}
		var g struct {
			Record stats.Record `json:"record"`
		}
		b, _ := os.ReadFile(files[i])
		if err := json.Unmarshal(b, &g); err != nil || g.Record.Timeline == nil {
			t.Fatalf("generator %d: %v", i, err)
		}
		gens = append(gens, g.Record.Timeline)
		total += g.Record.Counts.Complete + g.Record.Counts.Failed()
	}
	code, out, errs := runMain(t, context.Background(), append([]string{"merge", "--format", "json"}, files...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	var m mergedRun
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.Record == nil || m.Record.Timeline == nil {
		t.Fatalf("merge JSON: %v", err)
	}
	tl := m.Record.Timeline
	if tl.Width != gens[0].Width || tl.Width != stats.WindowFor(time.Second, 0) {
		t.Errorf("merged width %v, the generators' %v", tl.Width, gens[0].Width)
	}
	want := make([]int64, len(tl.Windows))
	for _, g := range gens {
		for j := range g.Windows {
			k := int(g.Start.Add(time.Duration(j)*g.Width).Sub(tl.Start.Time) / tl.Width)
			want[k] += g.Windows[j].Complete + g.Windows[j].Failed()
		}
	}
	var got int64
	for k := range tl.Windows {
		n := tl.Windows[k].Complete + tl.Windows[k].Failed()
		got += n
		if n != want[k] {
			t.Errorf("merged window %d holds %d requests, the generators' windows there %d", k, n, want[k])
		}
	}
	if got != total || total == 0 {
		t.Errorf("the merged timeline holds %d requests, the generators made %d", got, total)
	}
}

// TestTimelinePSSGrowth is the truth test of the backend's timeline: a
// built-in backend that leaks 64 KiB per request (serve --grow), sampled
// with --backend-pid under a steady rate: the PSS of its windows grows
// by 64 KiB per request of the windows between, within the sampling's
// error (a sample every 100 ms, at either end: 25% here).
func TestTimelinePSSGrowth(t *testing.T) {
	const grow = 64 << 10
	bin := buildBinary(t)
	dir, err := os.MkdirTemp("", "bbg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv := startDocServe(t, bin, dir, "g", "--grow", strconv.Itoa(grow))
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "--format", "json", "-k", "-c", "2", "--rate", "200", "-t", "2",
		"--backend-pid", strconv.Itoa(srv.pid), "http://unix:"+srv.unix+":/")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Record stats.Record `json:"record"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Record.Timeline == nil {
		t.Fatalf("%v", err)
	}
	tl := doc.Record.Timeline
	first, last := -1, -1
	for i := range tl.Windows {
		if b := tl.Windows[i].Backend; b != nil && b.Processes > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 || last-first < 10 {
		t.Fatalf("sampled windows %d to %d of %d", first, last, len(tl.Windows))
	}
	var n int64
	for i := first + 1; i <= last; i++ {
		n += tl.Windows[i].Complete
	}
	rise := float64(tl.Windows[last].Backend.PSSBytes - tl.Windows[first].Backend.PSSBytes)
	want := float64(n * grow)
	t.Logf("PSS rose %.1f MiB from window %d to %d; %d requests × 64 KiB = %.1f MiB", rise/(1<<20), first, last, n, want/(1<<20))
	if rise < want*0.75 || rise > want*1.25 {
		t.Errorf("PSS rose by %.1f MiB, want %.1f MiB (%d requests × 64 KiB) ± 25%%", rise/(1<<20), want/(1<<20), n)
	}
}

// TestRateStagesLand is the truth test of load in stages: rate stages on
// a built-in backend land each stage's rate in every window of its
// timeline within 2% (a window counts the requests due in it, so the
// schedule alone decides: the backend only has to answer; the last
// window's requests in flight when the time ended are drained, counted
// in none), a ramp
// lands the integral of its rate, and the report gives each stage's
// figures.
func TestRateStagesLand(t *testing.T) {
	srv := fixtures.StartTB(t, fixtures.ProtoHTTP, "unix", fixtures.Options{})
	run := func(args ...string) (stats.Summary, *stats.Timeline) {
		t.Helper()
		code, out, errs := runMain(t, context.Background(), append([]string{"bench", "-q", "--format", "json", "-k", "-c", "8",
			"--window", "250ms"}, append(args, srv.URL("/"))...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var doc struct {
			stats.Summary
			Record stats.Record `json:"record"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Record.Timeline == nil {
			t.Fatalf("%v: %v", args, err)
		}
		if len(doc.Record.Plan.Stages) == 0 {
			t.Errorf("%v: the record's plan has no stages", args)
		}
		return doc.Summary, doc.Record.Timeline
	}
	within := func(what string, got int64, want float64) {
		if d := float64(got) - want; d > want*0.02+1e-9 || -d > want*0.02+1e-9 {
			t.Errorf("%s: %d requests, want %.1f ± 2%%", what, got, want)
		}
	}
	s, tl := run("--rate-stages", "1s:200,1s:600")
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
	s, tl = run("--ramp", "--rate-stages", "1s:400")
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
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "--format", "json", "-k", "--stages", "0.6s:1,0.6s:4", srv.URL("/"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s stats.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
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

// TestStagesBadInput: stages that cannot be run, or that contradict
// other flags, are refused with one line and exit status 2.
func TestStagesBadInput(t *testing.T) {
	url := "http://unix:/nonexistent.sock:/"
	for _, args := range [][]string{
		{"--stages", "0s:4"},
		{"--stages", "-1s:4"},
		{"--stages", "1s:-4"},
		{"--stages", "1s:0"},
		{"--rate-stages", "1s:0"},
		{"--stages", "1s:4", "--rate-stages", "1s:4"},
		{"--stages", "1s:4", "-n", "10"},
		{"--stages", "1s:4", "-t", "2"},
		{"--stages", "1s:4", "--rate", "10"},
		{"--stages", "1s:4", "-c", "2"},
		{"--ramp"},
		{"--rate-stages", "1s:100", "--window", "2s"},
	} {
		code, _, errs := runMain(t, context.Background(), append(append([]string{"bench", "-q"}, args...), url)...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
}
