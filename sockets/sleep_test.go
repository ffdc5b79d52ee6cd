package sockets

import (
	"sort"
	"testing"
	"time"
)

// TestSleepPrecise: Sleep never returns early, and it overshoots less than
// half as much as time.Sleep, measured interleaved in one run, for delays
// that are not whole milliseconds. time.Sleep in an idle program wakes from
// epoll, whose timeout counts whole milliseconds (10.2 ms measured
// 11.55 ms); Sleep waits out the last stretch in the kernel's timer. The
// comparison is of medians of 21 pairs taken in turn, so that a busy
// machine, which delays both alike, does not fail it; both medians are
// logged (Sleep's about 60 µs on a quiet machine, 110 µs on a loaded one).
// A delay's comparison is tried up to 5 times: a burst of load during
// one try can push Sleep's median past half of time.Sleep's, five bursts
// in turn are what a broken Sleep gives.
func TestSleepPrecise(t *testing.T) {
	median := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	for _, d := range []time.Duration{
		500 * time.Microsecond,
		10200 * time.Microsecond,
		10500 * time.Microsecond,
		3300 * time.Microsecond,
	} {
		var m, g time.Duration
		for try := 0; try < 5 && (try == 0 || m > g/2); try++ {
			m, g = sleepMedians(t, d, median)
		}
		if m > g/2 {
			t.Errorf("Sleep(%v): median overshoot %v, not under half of time.Sleep's %v, in 5 tries", d, m, g)
		}
	}
	Sleep(0)
	Sleep(-time.Second)
}

// sleepMedians takes 21 pairs of Sleep(d) and time.Sleep(d) in turn and
// returns the median overshoot of each.
func sleepMedians(t *testing.T, d time.Duration, median func([]time.Duration) time.Duration) (time.Duration, time.Duration) {
	t.Helper()
	var ours, goTimer []time.Duration
	for i := 0; i < 21; i++ {
		start := time.Now()
		Sleep(d)
		got := time.Since(start)
		if got < d {
			t.Fatalf("Sleep(%v) returned after %v: early", d, got)
		}
		ours = append(ours, got-d)
		start = time.Now()
		time.Sleep(d)
		goTimer = append(goTimer, time.Since(start)-d)
	}
	m, g := median(ours), median(goTimer)
	t.Logf("Sleep(%v): median overshoot %v; time.Sleep's %v", d, m, g)
	return m, g
}
