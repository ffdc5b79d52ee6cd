package sockets

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// schedPolicies returns the policy of every thread of this process.
func schedPolicies(t *testing.T) map[int]SchedPolicy {
	t.Helper()
	tids, err := Threads()
	if err != nil {
		t.Fatal(err)
	}
	m := map[int]SchedPolicy{}
	for _, tid := range tids {
		if p, err := SchedPolicyOf(tid); err == nil {
			m[tid] = p
		}
	}
	return m
}

// onNewThread reports the policy seen by threads the runtime starts after
// SetSchedPolicy: goroutines locked to their threads make it start more.
func onNewThread(t *testing.T, n int) []SchedPolicy {
	t.Helper()
	out := make(chan SchedPolicy, n)
	release := make(chan struct{})
	for range n {
		go func() {
			runtime.LockOSThread()
			p, err := SchedPolicyOf(0)
			if err != nil {
				t.Error(err)
			}
			out <- p
			<-release // keep the thread busy so the next goroutine needs another
		}()
	}
	ps := make([]SchedPolicy, 0, n)
	for range n {
		ps = append(ps, <-out)
	}
	close(release)
	return ps
}

func TestSetSchedPolicyEveryThreadAndInherited(t *testing.T) {
	t.Cleanup(func() {
		if _, err := SetSchedPolicy(SchedNormal); err != nil {
			t.Error(err)
		}
	})
	for _, want := range []SchedPolicy{SchedBatch, SchedNormal, SchedBatch} {
		n, err := SetSchedPolicy(want)
		if err != nil {
			t.Fatal(err)
		}
		all := schedPolicies(t)
		if n < 1 {
			t.Errorf("SetSchedPolicy(%v) switched no thread", want)
		}
		for tid, p := range all {
			if p != want {
				t.Errorf("after SetSchedPolicy(%v), thread %d has %v", want, tid, p)
			}
		}
		for _, p := range onNewThread(t, 8) {
			if p != want {
				t.Errorf("after SetSchedPolicy(%v), a thread started later has %v", want, p)
			}
		}
	}
}

func TestSchedPolicyString(t *testing.T) {
	for p, want := range map[SchedPolicy]string{SchedNormal: "SCHED_OTHER", SchedBatch: "SCHED_BATCH", 1: "SCHED_FIFO", 5: "SCHED_IDLE", 9: "policy 9"} {
		if got := p.String(); got != want {
			t.Errorf("%d: %q, want %q", int(p), got, want)
		}
	}
}

// TestSetSchedSlice: every thread gets the slice and keeps its policy;
// threads started later inherit it; 0 restores the default.
func TestSetSchedSlice(t *testing.T) {
	t.Cleanup(func() {
		if _, err := SetSchedSlice(0); err != nil {
			t.Error(err)
		}
	})
	slice := func(tid int) uint64 {
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			t.Fatal(err)
		}
		return a.Runtime
	}
	before := schedPolicies(t)
	if _, err := SetSchedSlice(100_000); err != nil {
		t.Skip(err) // before Linux 6.12
	}
	tids, err := Threads()
	if err != nil {
		t.Fatal(err)
	}
	for _, tid := range tids {
		a, err := unix.SchedGetAttr(tid, 0)
		if err == unix.ESRCH {
			continue // the thread ended after Threads listed it
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Runtime; got != 100_000 {
			t.Errorf("thread %d: slice %d ns, want 100000", tid, got)
		}
	}
	for tid, p := range schedPolicies(t) {
		if was, ok := before[tid]; ok && was != p {
			t.Errorf("thread %d: policy %v became %v", tid, was, p)
		}
	}
	got := make(chan uint64)
	go func() {
		runtime.LockOSThread() // a thread of its own, maybe a new one
		got <- slice(0)
	}()
	if s := <-got; s != 100_000 {
		t.Errorf("a thread started later: slice %d ns, want 100000", s)
	}
	if _, err := SetSchedSlice(0); err != nil {
		t.Fatal(err)
	}
	if s := slice(0); s == 100_000 {
		t.Errorf("after SetSchedSlice(0): slice %d ns, want the default", s)
	}
}
