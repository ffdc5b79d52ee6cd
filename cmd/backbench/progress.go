package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/recorder"
)

// isTerminal reports whether w is a terminal; a variable so that tests can
// pretend.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressEvery is how often a live line is redrawn (at most 4 times a
// second).
var progressEvery = 250 * time.Millisecond

// heartbeatEvery is how often the heartbeat looks at the counters.
var heartbeatEvery = 50 * time.Millisecond

// liveWriter is a terminal that shows one status line under what other
// writers write: a Write (whole lines, from any goroutine) first erases the
// line, which the next redraw puts back.
type liveWriter struct {
	mu    sync.Mutex
	w     io.Writer
	shown bool
}

// Write erases the status line, if shown, and writes p.
func (l *liveWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.eraseLocked()
	return l.w.Write(p)
}

func (l *liveWriter) show(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprint(l.w, "\r\x1b[K"+s)
	l.shown = true
}

func (l *liveWriter) erase() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.eraseLocked()
}

func (l *liveWriter) eraseLocked() {
	if l.shown {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.shown = false
	}
}

// startLiveLine redraws one status line on the terminal lw, text() every
// progressEvery (nothing while it returns ""), until the returned function
// is called, which erases it. It reads counters only: the run's hot path
// never waits for it.
func startLiveLine(lw *liveWriter, text func() string) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(progressEvery)
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

// progress shows how the run goes on stderr (the terminal lw, when it is
// one), unless -q, and returns the
// function that ends it before the report (with ran false, when the target
// could not be reached, the heartbeat's last line is left out). On a terminal (and below -v 2,
// whose heads would tear it): one live line, see benchLine. Elsewhere ab's
// heartbeat: "Completed N requests" every tenth of -n (every 100 at least,
// and only for runs over 150 requests, as ab), or with -t alone every tenth
// of the time limit, then "Finished N requests".
func progress(o *loadOptions, p *execute.Plan, rec *recorder.Recorder, stderr io.Writer, lw *liveWriter) func(ran bool) {
	if o.quiet {
		return func(bool) {}
	}
	requests, timeLimit := p.Requests, p.Duration
	start := load.Now()
	if lw != nil && o.verbosity < 2 {
		var prevDone, prevAt int64 = 0, start
		stop := startLiveLine(lw, func() string {
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
