package sockets

// CPU affinity: the client's threads on some CPUs (--client-cpus, a
// study's client_cpus), a backend's process tree on others (a study
// backend's cpus), so that the two do not contend for the same cores.
//
// A mask set with sched_setaffinity belongs to one thread; a thread
// created later (clone) and a process forked later inherit the mask of the
// thread that creates them, and exec keeps it. So the client's mask is set
// on every thread of this process (and the runtime's later threads inherit
// it), and a backend gets its mask before its first instruction: it is
// forked from a thread that carries the mask, never moved after it runs
// (it could fork its workers before a later call reached it).

import (
	"fmt"
	"runtime"
	"sort"

	"golang.org/x/sys/unix"
)

// cpuSet builds the kernel's mask of cpus; an error names a CPU the mask
// cannot hold.
func cpuSet(cpus []int) (unix.CPUSet, error) {
	var set unix.CPUSet
	if len(cpus) == 0 {
		return set, fmt.Errorf("no CPU given")
	}
	for _, c := range cpus {
		if c < 0 || c >= len(set)*64 {
			return set, fmt.Errorf("CPU %d is out of range", c)
		}
		set.Set(c)
	}
	return set, nil
}

// cpusOf lists the CPUs of a mask, in ascending order.
func cpusOf(set *unix.CPUSet) []int {
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// Affinity returns the CPUs thread or process tid may run on (0: the
// calling thread), in ascending order.
func Affinity(tid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &set); err != nil {
		return nil, fmt.Errorf("reading the CPU affinity of %d: %v", tid, err)
	}
	return cpusOf(&set), nil
}

// SetThreadsAffinity puts every thread of this process on cpus: threads
// started later inherit the mask of the thread that starts them, and the
// passes over the threads go on until one finds no thread it had not set
// (a thread started meanwhile by one not yet set would otherwise keep the
// old mask): every thread then listed was set, so every later one
// inherits the mask. It returns how many threads it set. The kernel
// refuses a mask with no CPU this process may use (its cpuset).
func SetThreadsAffinity(cpus []int) (int, error) {
	set, err := cpuSet(cpus)
	if err != nil {
		return 0, err
	}
	done := map[int]bool{}
	// At most 100 passes: the runtime starts threads by the handful.
	for pass, fresh := 0, true; fresh && pass < 100; pass++ {
		fresh = false
		tids, err := Threads()
		if err != nil {
			return len(done), err
		}
		sort.Ints(tids)
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			err := unix.SchedSetaffinity(tid, &set)
			if err == unix.ESRCH { // the thread exited meanwhile
				continue
			}
			if err != nil {
				return len(done), fmt.Errorf("CPU affinity %v for thread %d: %v", cpus, tid, err)
			}
			done[tid], fresh = true, true
		}
	}
	return len(done), nil
}

// StartOnCPUs calls start (an exec.Cmd's Start, typically) on an OS
// thread of its own whose mask is cpus, so that the process it forks, and
// every process that one forks in turn, runs on cpus from its first
// instruction. The thread is discarded afterwards (its goroutine returns
// locked to it), so no other goroutine ever runs with its mask. An error
// setting the mask is returned without calling start.
func StartOnCPUs(cpus []int, start func() error) error {
	set, err := cpuSet(cpus)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the thread, with its mask, ends with this
		// goroutine.
		runtime.LockOSThread()
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			errc <- fmt.Errorf("CPU affinity %v: %v", cpus, err)
			return
		}
		errc <- start()
	}()
	return <-errc
}
