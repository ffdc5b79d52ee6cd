package main

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/recorder"
	"github.com/backbench/backbench/internal/sweep"
)

// ProgressEvery is how often a live line is redrawn (at most 4 times a
// second); a variable so that tests can shorten it.
var ProgressEvery = 250 * time.Millisecond

// heartbeatEvery is how often the heartbeat looks at the counters.
var heartbeatEvery = 50 * time.Millisecond

// LiveWriter is a terminal that shows one status line under what other
// writers write: a Write (whole lines, from any goroutine) first erases the
// line, which the next redraw puts back.
type LiveWriter struct {
	mu    sync.Mutex
	w     io.Writer
	shown bool
}

// NewLiveWriter returns a LiveWriter on the terminal w.
func NewLiveWriter(w io.Writer) *LiveWriter { return &LiveWriter{w: w} }

// Write erases the status line, if shown, and writes p.
func (l *LiveWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.eraseLocked()
	return l.w.Write(p)
}

func (l *LiveWriter) show(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprint(l.w, "\r\x1b[K"+s)
	l.shown = true
}

func (l *LiveWriter) erase() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.eraseLocked()
}

func (l *LiveWriter) eraseLocked() {
	if l.shown {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.shown = false
	}
}

// StartLiveLine redraws one status line on the terminal lw, text() every
// ProgressEvery (nothing while it returns ""), until the returned function
// is called, which erases it. It reads counters only: the run's hot path
// never waits for it.
func StartLiveLine(lw *LiveWriter, text func() string) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(ProgressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				lw.erase()
				return
			case <-tick.C:
				if s := text(); s != "" {
					lw.show(s)
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// ProgressOptions say what Progress shows of a run, and where.
type ProgressOptions struct {
	Requests  int64         // the run's request count (-n), 0 for none
	Limit     time.Duration // the run's time limit (-t), 0 for none
	Quiet     bool          // -q: nothing is shown
	Verbosity int           // -v: from 2 up, no live line (the heads would tear it)
	Live      *LiveWriter   // stderr when it is a terminal, else nil
}

// Progress shows how the run recorded by rec goes on stderr (o.Live, when
// it is a terminal), unless o.Quiet, and returns the function that ends it
// before the report (with ran false, when the target could not be reached,
// the heartbeat's last line is left out). On a terminal (and below -v 2):
// one live line, see benchLine. Elsewhere ab's heartbeat: "Completed N
// requests" every tenth of -n (every 100 at least, and only for runs over
// 150 requests, as ab), or with -t alone every tenth of the time limit,
// then "Finished N requests".
func Progress(rec *recorder.Recorder, stderr io.Writer, o ProgressOptions) func(ran bool) {
	if o.Quiet {
		return func(bool) {}
	}
	requests, timeLimit := o.Requests, o.Limit
	start := load.Now()
	if o.Live != nil && o.Verbosity < 2 {
		var prevDone, prevAt int64 = 0, start
		stop := StartLiveLine(o.Live, func() string {
			now, done := load.Now(), rec.Done()
			rate := 0.0
			if now > prevAt {
				rate = float64(done-prevDone) / (float64(now-prevAt) / 1e9)
			}
			prevDone, prevAt = done, now
			return benchLine(now-start, done, rec.Failed(), requests, timeLimit, rate) + recentPart(rec.Recent(now))
		})
		return func(bool) { stop() }
	}
	var every time.Duration // the time step with -t alone
	var step int64          // the request step with -n
	switch {
	case requests > 150:
		step = max(requests/10, 100)
	case requests == 0 && timeLimit > 0:
		every = timeLimit / 10
	default:
		return func(bool) {}
	}
	done := make(chan bool)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(heartbeatEvery)
		defer tick.Stop()
		next, nextAt := step, start+int64(every)
		beat := func() {
			if every > 0 {
				for ; load.Now() >= nextAt && nextAt-start < int64(timeLimit); nextAt += int64(every) {
					fmt.Fprintf(stderr, "Completed %d requests\n", rec.Done())
				}
				return
			}
			for n := rec.Done(); n >= next && next < requests; next += step {
				fmt.Fprintf(stderr, "Completed %d requests\n", next)
			}
		}
		for {
			select {
			case ran := <-done:
				if !ran {
					return
				}
				if every == 0 {
					beat()
				}
				fmt.Fprintf(stderr, "Finished %d requests\n", rec.Done())
				return
			case <-tick.C:
				beat()
			}
		}
	}()
	return func(ran bool) { done <- ran; wg.Wait() }
}

// recentPart is what the live line adds of the last finished window of
// the run's timeline: its req/s, p99 and failures ("" before the first
// window has ended).
func recentPart(r recorder.Recent) string {
	if !r.OK {
		return ""
	}
	return fmt.Sprintf(" | last window %.0f req/s, p99 %.1f ms, %d failed", r.Rate, float64(r.P99)/1e6, r.Failed)
}

// benchLine is the live line of a run elapsed ns in: requests done (of n
// when a count applies), the current rate, failures so far, and the time
// left: from the rate towards n, or to the time limit, whichever is first.
func benchLine(elapsed, done, failed, n int64, limit time.Duration, rate float64) string {
	count := fmt.Sprintf("%d requests", done)
	if n > 0 {
		count = fmt.Sprintf("%d/%d requests", done, n)
	}
	left := time.Duration(-1)
	if n > 0 && rate > 0 {
		left = time.Duration(float64(n-done) / rate * 1e9)
	}
	if limit > 0 && (left < 0 || limit-time.Duration(elapsed) < left) {
		left = max(limit-time.Duration(elapsed), 0)
	}
	eta := ""
	if left >= 0 {
		eta = ", ETA " + (left + time.Second - 1).Truncate(time.Second).String()
	}
	return fmt.Sprintf("%.1f s: %s, %.0f req/s, %d failed%s", float64(elapsed)/1e9, count, rate, failed, eta)
}

// StartSweepProgress redraws one progress line on the terminal stderr
// (level, series, requests done, ETA) until the returned function is
// called, which erases it. It hooks cfg.Progress.
func StartSweepProgress(cfg *sweep.Config, stderr io.Writer) func() {
	var cur atomic.Pointer[sweep.Progress]
	cfg.Progress = func(p sweep.Progress) { cur.Store(&p) }
	levels, start := len(cfg.Levels), load.Now()
	return StartLiveLine(NewLiveWriter(stderr), func() string {
		if p := cur.Load(); p != nil {
			return progressLine(p, levels, load.Now()-start, load.Now())
		}
		return ""
	})
}

// StartSweepLines prints on stderr one line per finished level (its
// measured runs of every series done): "level 2/5 (c=10) done, 4.2 s in".
// It hooks cfg.Progress: a level is done when the first measured run of
// another level starts, the last one when the returned function is called
// with true (a sweep that ended well).
func StartSweepLines(cfg *sweep.Config, stderr io.Writer) func(ok bool) {
	levels, start := len(cfg.Levels), load.Now()
	last, conc := -1, 0
	done := func() {
		fmt.Fprintf(stderr, "level %d/%d (c=%d) done, %.1f s in\n", last+1, levels, conc, float64(load.Now()-start)/1e9)
	}
	cfg.Progress = func(p sweep.Progress) {
		if p.Warmup || p.LevelIndex == last {
			return
		}
		if last >= 0 {
			done()
		}
		last, conc = p.LevelIndex, p.Concurrency
	}
	return func(ok bool) {
		if ok && last >= 0 {
			done()
		}
	}
}

// progressLine is the text of the sweep's progress line for run p, elapsed
// ns into the sweep, at time now (load.Now).
func progressLine(p *sweep.Progress, levels int, elapsed, now int64) string {
	done := p.Done()
	var frac float64
	var count string
	switch {
	case p.Requests > 0:
		frac = min(float64(done)/float64(p.Requests), 1)
		count = fmt.Sprintf("%d/%d requests", done, p.Requests)
	case p.Duration > 0:
		frac = min(float64(now-p.Start)/float64(p.Duration), 1)
		count = fmt.Sprintf("%d requests", done)
	}
	phase := ""
	if p.Warmup {
		phase, frac = " warm-up", 0
	}
	eta := "?"
	if total := float64(p.RunsDone + p.RunsLeft); total > 0 {
		if f := (float64(p.RunsDone) + frac) / total; f > 0 {
			eta = (time.Duration(float64(elapsed)*(1-f)/f) / time.Second * time.Second).String()
		}
	}
	return fmt.Sprintf("level %d/%d (c=%d) %s%s: %s, ETA %s", p.LevelIndex+1, levels, p.Concurrency, p.Series, phase, count, eta)
}
