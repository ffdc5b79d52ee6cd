package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// The timeline's truth (a stall, the window width, stages landing their
// rate or concurrency) is tested in internal/execute (timeline_test.go),
// the merge of live generators' timelines in internal/merge
// (timeline_live_test.go), the refusals in internal/plan
// (stages_test.go); here, what needs the command: the file
// --timeline-csv writes, the usage errors' exit status, and a backend
// process of its own sampled with --backend-pid.

// TestTimelineCSVFlag: --timeline-csv writes the record's timeline, a
// header and a row per window, at the width --window asks.
func TestTimelineCSVFlag(t *testing.T) {
	srv := startStallServer(t, time.Hour, 0)
	csvPath := filepath.Join(t.TempDir(), "tl.csv")
	code, out, errs := runMain(t, context.Background(), "bench", "-q", "--format", "json", "-n", "20", "--window", "50ms",
		"--timeline-csv", csvPath, "http://unix:"+srv.path+":/")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Record stats.Record `json:"record"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Record.Timeline == nil || doc.Record.Timeline.Width != 50*time.Millisecond {
		t.Fatalf("timeline %+v (%v)", doc.Record.Timeline, err)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != len(doc.Record.Timeline.Windows)+1 || !strings.HasPrefix(strings.Join(rows[0], ","), "window,start_s,") {
		t.Errorf("--timeline-csv: %d rows for %d windows (%v)", len(rows), len(doc.Record.Timeline.Windows), err)
	}
}

// TestTimelineFlagsBadInput: a --window that is not positive or longer
// than the run, and stages that cannot be run or contradict other flags,
// are refused with one line and exit status 2.
func TestTimelineFlagsBadInput(t *testing.T) {
	url := "http://unix:/nonexistent.sock:/"
	for _, args := range [][]string{
		{"--window", "0"},
		{"--window", "-1"},
		{"-t", "1", "--window", "2s"},
		{"--stages", "0s:4"},
		{"--stages", "1s:4", "-n", "10"},
		{"--ramp"},
		{"--rate-stages", "1s:100", "--window", "2s"},
	} {
		code, _, errs := runMain(t, context.Background(), append(append([]string{"bench", "-q"}, args...), url)...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
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
