package recorder

import (
	"testing"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
)

// TestTimeline: every request goes to the window of its intended start
// (open model) or its start (closed), with its outcome, bytes and
// latency; the shards' timelines add up exactly; a run with a time limit
// gets stats.WindowFor's width.
func TestTimeline(t *testing.T) {
	const ms = int64(time.Millisecond)
	origin := int64(7_000 * ms)
	rec := New(Options{Shards: 3, Span: 2 * time.Second})
	rec.Begin(origin)
	// 2 s / 20 windows: 1 s halved to 62.5 ms.
	want := stats.WindowFor(2*time.Second, 0)
	if want != 62500*time.Microsecond {
		t.Fatalf("WindowFor(2s) = %v", want)
	}
	w := int64(want)
	for i := range 30 {
		r := ok(origin+int64(i)*w/10, 2*ms, 10) // 10 per window in windows 0..2
		rec.Shard(i).Record(&r)
	}
	slow := ok(origin+5*w+1, 900*ms, 10) // window 5, done long after
	rec.Shard(1).Record(&slow)
	late := ok(origin+9*w, 3*ms, 10)
	late.Intended = origin + 7*w + 5 // due in window 7
	rec.Shard(2).Record(&late)
	failed := load.Result{Class: load.Timeout, Start: origin + 6*w + 3, Done: origin + 60*w, BytesRead: 4}
	rec.Shard(0).Record(&failed)
	m := rec.Merge()
	tl := m.Timeline
	if tl == nil || tl.Width != want || !tl.Start.Equal(load.Time(origin)) {
		t.Fatalf("timeline %+v", tl)
	}
	if len(tl.Windows) != 8 {
		t.Fatalf("%d windows, want 8 (the last request's)", len(tl.Windows))
	}
	for i := range 3 {
		win := &tl.Windows[i]
		if win.Complete != 10 || win.Failed() != 0 || win.BytesRead != 1100 || win.LatencyMax != 2*time.Millisecond {
			t.Errorf("window %d: %+v", i, win)
		}
		if p := win.Latency(50); p < 1800*time.Microsecond || p > 2*time.Millisecond {
			t.Errorf("window %d p50 %v, want about 2 ms", i, p)
		}
	}
	if w5 := tl.Windows[5]; w5.Complete != 1 || w5.LatencyMax != 900*time.Millisecond || w5.Latency(99) < 800*time.Millisecond {
		t.Errorf("window 5: complete %d max %v p99 %v", w5.Complete, w5.LatencyMax, w5.Latency(99))
	}
	if w6 := tl.Windows[6]; w6.Complete != 0 || w6.Failures[load.Timeout] != 1 || w6.BytesRead != 4 || w6.Latency(99) != 0 {
		t.Errorf("window 6: %+v", w6)
	}
	// Open model: by the intended start, with the corrected latency.
	if w7 := tl.Windows[7]; w7.Complete != 1 || w7.Late != 1 || w7.LatencyMax != time.Duration(2*w+3*ms-5) {
		t.Errorf("window 7: complete %d late %d max %v", w7.Complete, w7.Late, w7.LatencyMax)
	}
	var sum stats.TimelineWindow
	for i := range tl.Windows {
		sum.Merge(&tl.Windows[i])
	}
	if sum.Complete != m.Counts.Complete || sum.Failed() != m.Counts.Failed() || sum.BytesRead != m.Counts.BytesRead {
		t.Errorf("the windows add up to %d complete %d failed %d bytes; the record says %+v", sum.Complete, sum.Failed(), sum.BytesRead, m.Counts)
	}
}

// TestTimelineBounded: a run without a time limit starts with narrow
// windows and widens them up to stats.DefaultWindow, then, over a long
// run (a fake clock: one request every 100 ms for 24 hours), merges
// neighbours so that a timeline never holds more than stats.TimelineCap
// windows; the counts are kept whole.
func TestTimelineBounded(t *testing.T) {
	rec := New(Options{Shards: 2})
	rec.Begin(0)
	const step = int64(100 * time.Millisecond)
	n := int64(0)
	for at := int64(0); at < int64(24*time.Hour); at += step {
		r := ok(at, 1e6, 1)
		rec.Shard(int(n)).Record(&r)
		n++
		if n == 600 { // one minute: 1 s windows by now
			tl := rec.Merge().Timeline
			if tl.Width != time.Second || len(tl.Windows) != 60 {
				t.Fatalf("after a minute: width %v, %d windows", tl.Width, len(tl.Windows))
			}
		}
	}
	for _, s := range rec.shards {
		if len(s.tl.Windows) > stats.TimelineCap || cap(s.tl.Windows) > 2*stats.TimelineCap {
			t.Errorf("a shard holds %d windows (capacity %d)", len(s.tl.Windows), cap(s.tl.Windows))
		}
	}
	tl := rec.Merge().Timeline
	if len(tl.Windows) > stats.TimelineCap || tl.Width != 256*time.Second {
		t.Errorf("24 h: %d windows of %v", len(tl.Windows), tl.Width)
	}
	var got int64
	for i := range tl.Windows {
		got += tl.Windows[i].Complete
	}
	if got != n {
		t.Errorf("the windows hold %d requests, %d were recorded", got, n)
	}
}

// TestTimelineDoesNotAllocate: recording into a timed run's timeline,
// moving through its windows, allocates nothing.
func TestTimelineDoesNotAllocate(t *testing.T) {
	rec := New(Options{Shards: 1, Span: 10 * time.Second})
	rec.Begin(0)
	sh := rec.Shard(0)
	r := ok(0, 2e6, 10)
	if n := testing.AllocsPerRun(2000, func() {
		r.Start += int64(5 * time.Millisecond) // 10 s in 2,000 steps: every window
		r.Done = r.Start + 2e6
		sh.Record(&r)
	}); n != 0 {
		t.Errorf("Record allocates %v times per call across windows", n)
	}
	if got := len(rec.Merge().Timeline.Windows); got < 20 {
		t.Errorf("%d windows, want 20", got)
	}
}

// TestRecent: the live line's figures are those of the last finished
// window.
func TestRecent(t *testing.T) {
	rec := New(Options{Shards: 2, Span: 20 * time.Second, Window: time.Second})
	rec.Begin(0)
	if r := rec.Recent(int64(500 * time.Millisecond)); r.OK {
		t.Errorf("before the first window ended: %+v", r)
	}
	for i := range 50 {
		r := ok(int64(time.Second)+int64(i)*int64(10*time.Millisecond), 3e6, 1)
		rec.Shard(i).Record(&r)
	}
	f := load.Result{Class: load.Receive, Start: int64(1500 * time.Millisecond)}
	rec.Shard(0).Record(&f)
	r := rec.Recent(int64(2100 * time.Millisecond))
	if !r.OK || r.Rate != 50 || r.Failed != 1 || r.P99 < 2500*time.Microsecond || r.P99 > 3*time.Millisecond {
		t.Errorf("recent %+v", r)
	}
}
