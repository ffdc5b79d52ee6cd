package sockets

// The scheduling policy of the client's own threads (bench and sweep's
// --client-sched).
//
// Under SCHED_OTHER, a client thread woken by a response preempts a backend
// process still running on that core, often a few microseconds before it
// would block in its next read; each preemption is a context switch the
// machine pays for. SCHED_BATCH keeps the client's fair share of CPU but
// does not preempt on wake-up, so the backend finishes its turn first: more
// throughput from a fast backend that shares cores with the client, later
// wake-ups of the client beside a backend that is busy for milliseconds.
// The policy needs no privilege and is inherited by threads created later.

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// SchedPolicy is a scheduling policy for the client's threads.
type SchedPolicy int

// The policies SetSchedPolicy knows.
const (
	// SchedNormal is SCHED_OTHER (SCHED_NORMAL), the default of every process.
	SchedNormal SchedPolicy = unix.SCHED_NORMAL
	// SchedBatch is SCHED_BATCH: the same share of CPU, no preemption on wake-up.
	SchedBatch SchedPolicy = unix.SCHED_BATCH
)

// String names the policy as sched(7) does.
func (p SchedPolicy) String() string {
	switch p {
	case SchedNormal:
		return "SCHED_OTHER"
	case SchedBatch:
		return "SCHED_BATCH"
	case unix.SCHED_FIFO:
		return "SCHED_FIFO"
	case unix.SCHED_RR:
		return "SCHED_RR"
	case unix.SCHED_IDLE:
		return "SCHED_IDLE"
	case unix.SCHED_DEADLINE:
		return "SCHED_DEADLINE"
	}
	return "policy " + strconv.Itoa(int(p))
}

// SetSchedPolicy gives every thread of this process policy p (SchedNormal or
// SchedBatch), keeping each thread's nice value. Threads started later
// inherit the policy of the thread that starts them; a second pass over the
// threads catches one started by a thread not yet switched. It returns how
// many threads it switched.
func SetSchedPolicy(p SchedPolicy) (int, error) {
	return setEveryThread(func(attr *unix.SchedAttr) {
		attr.Policy, attr.Priority = uint32(p), 0
	}, fmt.Sprintf("scheduling policy %v", p))
}

// setEveryThread changes the scheduling attributes of every thread of this
// process with set, keeping the rest of each thread's attributes. Threads
// started later inherit the attributes of the thread that starts them; a
// second pass over the threads catches one started by a thread not yet
// changed. what names the change in an error. It returns how many threads
// it changed.
func setEveryThread(set func(*unix.SchedAttr), what string) (int, error) {
	done := map[int]bool{}
	for range 2 {
		tids, err := Threads()
		if err != nil {
			return len(done), err
		}
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			attr, err := unix.SchedGetAttr(tid, 0)
			if err == nil {
				set(attr)
				err = unix.SchedSetAttr(tid, attr, 0)
			}
			if err == unix.ESRCH { // the thread exited meanwhile
				continue
			}
			if err != nil {
				return len(done), fmt.Errorf("%s for thread %d: %v", what, tid, err)
			}
			done[tid] = true
		}
	}
	return len(done), nil
}

// SchedPolicyOf returns the policy of thread tid (0: the calling thread).
func SchedPolicyOf(tid int) (SchedPolicy, error) {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return 0, err
	}
	return SchedPolicy(attr.Policy), nil
}

// Threads lists the thread IDs of this process.
func Threads() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, fmt.Errorf("listing this process's threads: %v", err)
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// SetSchedSlice gives every thread of this process a custom time slice of
// ns nanoseconds under the fair scheduler (sched_attr.sched_runtime for
// SCHED_OTHER and SCHED_BATCH, Linux 6.12 and later's EEVDF; 0 restores the
// default), keeping its policy and nice value; threads started later
// inherit it. A shorter slice gives a thread an earlier virtual deadline
// when it wakes, so it preempts a task running on its core sooner instead
// of waiting for that task's slice to end: the lever for a precise wake-up
// that needs no privilege. It returns how many threads it set, or an error
// when the kernel keeps no custom slice (before 6.12 it accepts the field
// and ignores it).
func SetSchedSlice(ns uint64) (int, error) {
	if ns > 0 {
		if attr, err := unix.SchedGetAttr(0, 0); err == nil && fairPolicy(attr.Policy) {
			attr.Runtime = ns
			if err := unix.SchedSetAttr(0, attr, 0); err != nil {
				return 0, fmt.Errorf("time slice %d ns: %v", ns, err)
			}
			if got, err := unix.SchedGetAttr(0, 0); err == nil && got.Runtime != ns {
				return 0, errors.New("this kernel keeps no custom time slice for the fair scheduler (Linux 6.12 and later do)")
			}
		}
	}
	return setEveryThread(func(attr *unix.SchedAttr) {
		if fairPolicy(attr.Policy) {
			attr.Runtime = ns
		}
	}, fmt.Sprintf("time slice %d ns", ns))
}

// fairPolicy reports whether policy is one of the fair scheduler's
// (SCHED_OTHER, SCHED_BATCH, SCHED_IDLE), whose threads take a custom
// time slice; a real-time thread (SCHED_FIFO, SCHED_RR) keeps its own
// attributes, as the kernel refuses a runtime for it.
func fairPolicy(policy uint32) bool {
	return policy == unix.SCHED_NORMAL || policy == unix.SCHED_BATCH || policy == unix.SCHED_IDLE
}

// ThreadCPUTime returns the CPU time the calling OS thread has used
// (CLOCK_THREAD_CPUTIME_ID); 0 when it cannot be read. A goroutine that
// reads it twice must be locked to its thread (runtime.LockOSThread).
func ThreadCPUTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// sleepMargin is how much of a delay Sleep leaves to the kernel's own
// timer: 2 ms. A Go timer in an otherwise idle program wakes from epoll,
// whose timeout counts whole milliseconds, so time.Sleep(10.2ms) returns
// after about 11 ms.
const sleepMargin = 2 * time.Millisecond

// maxKernelSleepers bounds the threads Sleep blocks in clock_nanosleep
// at once: 256.
const maxKernelSleepers = 256

// kernelSleepers counts the callers of Sleep blocked in clock_nanosleep.
var kernelSleepers atomic.Int32

// Sleep sleeps d to within about 50 µs (the thread's default timer
// slack), where time.Sleep may overshoot by up to a millisecond: the Go
// timer for all but the last 2 ms, then clock_nanosleep(CLOCK_MONOTONIC,
// TIMER_ABSTIME) to the deadline read before the first. The second sleep
// blocks its OS thread (the runtime gives the goroutine's processor to
// another thread meanwhile), so only sleepers in their last 2 ms hold a
// thread each, and at most 256 at a time: past that the tail is
// time.Sleep's too, so that thousands of concurrent sleepers cannot
// exhaust the runtime's threads. Where the monotonic clock cannot be read
// it is time.Sleep.
func Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &now); err != nil {
		time.Sleep(d)
		return
	}
	deadline := unix.NsecToTimespec(now.Nano() + int64(d))
	if d > sleepMargin {
		time.Sleep(d - sleepMargin)
	}
	if kernelSleepers.Add(1) > maxKernelSleepers {
		kernelSleepers.Add(-1)
		var end unix.Timespec
		if unix.ClockGettime(unix.CLOCK_MONOTONIC, &end) == nil && end.Nano() < deadline.Nano() {
			time.Sleep(time.Duration(deadline.Nano() - end.Nano()))
		}
		return
	}
	defer kernelSleepers.Add(-1)
	for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &deadline, nil) == unix.EINTR {
	}
}
