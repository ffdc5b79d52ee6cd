package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/recorder"
	"github.com/backbench/backbench/internal/sweep"
)

func TestBenchLine(t *testing.T) {
	cases := []struct {
		elapsed      time.Duration
		done, failed int64
		n            int64
		limit        time.Duration
		rate         float64
		want         string
	}{
		{2500 * time.Millisecond, 500, 3, 1000, 0, 200, "2.5 s: 500/1000 requests, 200 req/s, 3 failed, ETA 3s"},
		{4 * time.Second, 100, 0, 0, 10 * time.Second, 25, "4.0 s: 100 requests, 25 req/s, 0 failed, ETA 6s"},
		// -n and -t: whichever comes first.
		{time.Second, 10, 0, 1000, 3 * time.Second, 10, "1.0 s: 10/1000 requests, 10 req/s, 0 failed, ETA 2s"},
		// No rate yet: no estimate.
		{0, 0, 0, 1000, 0, 0, "0.0 s: 0/1000 requests, 0 req/s, 0 failed"},
	}
	for _, c := range cases {
		if got := benchLine(int64(c.elapsed), c.done, c.failed, c.n, c.limit, c.rate); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

// TestLiveWriter: a line written by another writer (the Benchmarking line,
// -v 2 heads) first erases the live line, which is then shown again.
func TestLiveWriter(t *testing.T) {
	var b bytes.Buffer
	lw := NewLiveWriter(&b)
	lw.erase()
	lw.show("1.0 s: 5 requests")
	fmt.Fprint(lw, "Benchmarking x (be patient)\n")
	fmt.Fprint(lw, "another line\n")
	lw.show("1.2 s: 6 requests")
	lw.erase()
	lw.erase()
	if want := "\r\x1b[K1.0 s: 5 requests\r\x1b[KBenchmarking x (be patient)\nanother line\n\r\x1b[K1.2 s: 6 requests\r\x1b[K"; b.String() != want {
		t.Errorf("got  %q\nwant %q", b.String(), want)
	}
}

func TestProgressLine(t *testing.T) {
	var done int64 = 25
	p := sweep.Progress{Series: "fpm ka", Concurrency: 11, LevelIndex: 1, Requests: 100, Done: func() int64 { return done },
		RunsDone: 3, RunsLeft: 3}
	// 3.25 of 6 runs in 13 s: 11 s to go.
	if got, want := progressLine(&p, 3, int64(13*time.Second), 0), "level 2/3 (c=11) fpm ka: 25/100 requests, ETA 11s"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	p.Warmup = true
	if got := progressLine(&p, 3, int64(12*time.Second), 0); !strings.Contains(got, "fpm ka warm-up: 25/100 requests, ETA 12s") {
		t.Errorf("warm-up: %q", got)
	}
	p = sweep.Progress{Series: "t", Duration: 2 * time.Second, Start: 0, Done: func() int64 { return 7 }, RunsLeft: 1}
	if got := progressLine(&p, 1, int64(time.Second), int64(time.Second)); got != "level 1/1 (c=0) t: 7 requests, ETA 1s" {
		t.Errorf("time limit: %q", got)
	}
	p.RunsLeft = 0
	if got := progressLine(&p, 1, 0, 0); !strings.HasSuffix(got, "ETA ?") {
		t.Errorf("no estimate: %q", got)
	}
}

// TestRecentPart: the live line's part for the last window.
func TestRecentPart(t *testing.T) {
	if got := recentPart(recorder.Recent{}); got != "" {
		t.Errorf("before the first window: %q", got)
	}
	r := recorder.Recent{OK: true, Rate: 812.4, P99: 3140 * time.Microsecond, Failed: 2}
	if got, want := recentPart(r), " | last window 812 req/s, p99 3.1 ms, 2 failed"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestStartSweepLines: one line per level once its measured runs are
// done (warm-ups and further runs of the same level say nothing), the
// last level's only when the sweep ended well.
func TestStartSweepLines(t *testing.T) {
	for _, ok := range []bool{true, false} {
		var b bytes.Buffer
		cfg := sweep.Config{Levels: []int{1, 2}}
		end := StartSweepLines(&cfg, &b)
		for _, p := range []sweep.Progress{{LevelIndex: 0, Concurrency: 1, Warmup: true}, {LevelIndex: 0, Concurrency: 1},
			{LevelIndex: 0, Concurrency: 1}, {LevelIndex: 1, Concurrency: 2, Warmup: true}, {LevelIndex: 1, Concurrency: 2}} {
			cfg.Progress(p)
		}
		end(ok)
		want := `^level 1/2 \(c=1\) done, \d+\.\d s in\n$`
		if ok {
			want = `^level 1/2 \(c=1\) done, \d+\.\d s in\nlevel 2/2 \(c=2\) done, \d+\.\d s in\n$`
		}
		if !regexp.MustCompile(want).MatchString(b.String()) {
			t.Errorf("ok %v: %q", ok, b.String())
		}
	}
}

// TestStartLiveLine: the line is drawn while text has something to say
// and erased when stopped.
func TestStartLiveLine(t *testing.T) {
	old := ProgressEvery
	ProgressEvery = time.Millisecond
	t.Cleanup(func() { ProgressEvery = old })
	var mu bytes.Buffer
	lw := NewLiveWriter(&mu)
	drawn := make(chan struct{})
	n := 0
	stop := StartLiveLine(lw, func() string {
		if n++; n == 3 {
			close(drawn)
		}
		if n == 1 {
			return ""
		}
		return fmt.Sprintf("line %d", n)
	})
	<-drawn
	stop()
	s := mu.String()
	if !strings.HasPrefix(s, "\r\x1b[Kline 2") || !strings.HasSuffix(s, "\r\x1b[K") {
		t.Errorf("got %q", s)
	}
}
