package run

import (
	"context"
	"runtime"
	"syscall"
	"time"

	"github.com/backbench/backbench/internal/load"
)

// Pacing of the open model. A Go timer or sleep wakes 0.5 to 1 ms after its
// time (the runtime's timers), which the open model would charge to every
// latency it corrects; so a worker waits for a request's intended start in
// three steps:
//
//   - while more than paceCoarse away, on a runtime timer (no thread held,
//     and the run's cancellation is seen), until paceCoarse before the time;
//   - then on a nanosleep of its own OS thread with the thread's timer slack
//     at 1 ns (PR_SET_TIMERSLACK; the default 50 µs slack is itself a
//     lateness), until paceSpin before the time;
//   - then spinning on the monotonic clock for the last paceSpin.
//
// The nanosleep is a blocking system call (syscall.Nanosleep, not a raw
// one, which would keep the goroutine's P from the other workers): at most
// the requests due within paceCoarse hold a thread each. paceCoarse leaves
// room for a runtime timer that wakes late on a loaded machine. The spin
// and the syscalls count in the client's CPU like the rest of its work.
// Measured on a shared 2-core machine: under 10 µs late at p50, 35 to 120 µs
// at p99, from 100 to 10,000 requests a second, when no other program held
// the CPUs (time.Sleep alone: 500 µs at p50, 1 ms at p99); a thread woken on
// time still waits when the kernel gives its CPU to another program, which
// the report's client lateness shows.
const (
	paceCoarse = 5 * time.Millisecond
	paceSpin   = 20 * time.Microsecond
)

// prSetTimerSlack is prctl's PR_SET_TIMERSLACK (linux/prctl.h).
const prSetTimerSlack = 29

// waitUntil returns at due (load.Now nanoseconds) or just after, or false at
// once when ctx is done first. timer is the worker's own, stopped.
func waitUntil(ctx context.Context, due int64, timer *time.Timer) bool {
	wait := due - load.Now()
	if wait > int64(paceCoarse+time.Millisecond) {
		timer.Reset(time.Duration(wait) - paceCoarse)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return false
		}
		wait = due - load.Now()
	}
	if wait > int64(paceSpin) {
		runtime.LockOSThread()
		// Errors are ignored: without the slack or the sleep, the spin
		// below still ends the wait on time, at some CPU cost. A signal
		// (the runtime's preemption) cuts a sleep short: sleep again.
		_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
		for ; wait > int64(paceSpin); wait = due - load.Now() {
			ts := syscall.NsecToTimespec(wait - int64(paceSpin))
			if syscall.Nanosleep(&ts, nil) != syscall.EINTR {
				break
			}
		}
		runtime.UnlockOSThread()
	}
	for load.Now() < due {
	}
	return ctx.Err() == nil
}
