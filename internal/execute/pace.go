package execute

import (
	"context"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/backbench/backbench/internal/load"
)

// Pacing of the open model. A Go timer or sleep wakes 0.5 to 1 ms after its
// time (the runtime's poller sleeps in whole milliseconds), which the open
// model would charge to every latency it corrects. A thread of its own
// sleeping in nanosleep is precise, but a goroutine in a blocking system
// call keeps its P until the runtime's monitor takes it back, up to 10 ms
// later: with a few workers asleep at once on a 2-core machine, no
// goroutine could run, responses included: in trials the uncorrected p99
// grew from 0.5 to 4 ms at 1,000 requests a second, and from 0.2 to 2 or
// 3 ms at 10,000 even with only the last 300 µs slept that way.
//
// So each worker owns a timerfd (a kernel high-resolution timer that
// becomes readable when it expires), read through the runtime's poller:
// the goroutine parks like one waiting for a socket, holds no P and no
// thread, and the poller wakes it within microseconds of the expiry. It is
// armed paceSpin before the intended start, and the worker spins on the
// monotonic clock for the rest. The spin counts in the client's CPU like
// the rest of its work. Where no timerfd can be made, a runtime timer
// stands in (precise to about a millisecond).
const paceSpin = 20 * time.Microsecond

// timerfd_create flags (TFD_NONBLOCK, TFD_CLOEXEC) and CLOCK_MONOTONIC.
const (
	tfdFlags       = syscall.O_NONBLOCK | syscall.O_CLOEXEC
	clockMonotonic = 1
)

// pacer waits for intended start times, for one worker.
type pacer struct {
	fd    int
	f     *os.File // fd, read through the runtime's poller
	buf   [8]byte
	timer *time.Timer // without a timerfd
	stop  func() bool
}

// newPacer makes a worker's pacer; close releases it. When ctx is done the
// pacer's timer fires at once, which ends a wait in progress.
func newPacer(ctx context.Context) *pacer {
	p := &pacer{fd: -1}
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdFlags, 0)
	if errno != 0 {
		p.timer = time.NewTimer(time.Hour)
		p.timer.Stop()
		return p
	}
	p.fd = int(fd)
	p.f = os.NewFile(fd, "timerfd")
	p.stop = context.AfterFunc(ctx, func() { p.arm(1) })
	return p
}

func (p *pacer) close() {
	if p.f != nil {
		p.stop()
		p.f.Close()
	}
}

// arm sets the timerfd to expire once, ns nanoseconds from now.
func (p *pacer) arm(ns int64) {
	its := [2]syscall.Timespec{{}, syscall.NsecToTimespec(ns)} // interval, value
	_, _, _ = syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, uintptr(p.fd), 0, uintptr(unsafe.Pointer(&its)), 0, 0, 0)
}

// waitUntil returns true at due (load.Now nanoseconds) or just after, or
// false as soon as ctx is done.
func (p *pacer) waitUntil(ctx context.Context, due int64) bool {
	if wait := due - load.Now() - int64(paceSpin); wait > 0 {
		if p.f == nil {
			p.timer.Reset(time.Duration(wait))
			select {
			case <-p.timer.C:
			case <-ctx.Done():
				p.timer.Stop()
				return false
			}
		} else {
			p.arm(wait)
			// Armed after the cancellation's own arming, this one would
			// hide it: look at ctx once more.
			if ctx.Err() != nil {
				return false
			}
			if _, err := p.f.Read(p.buf[:]); err != nil {
				return false
			}
		}
	}
	if ctx.Err() != nil {
		return false
	}
	for load.Now() < due {
	}
	return true
}
