package backend

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/backbench/backbench/internal/procstat"
)

// StopReport is what Stop did.
type StopReport struct {
	Signal  syscall.Signal // the stop signal sent
	Killed  bool           // SIGKILL was needed: the tree had not ended within the grace period after the stop signal
	Elapsed time.Duration  // from the stop signal until the tree was gone (or Stop gave up)
	Left    []int          // PIDs of the tree still alive after everything: should be empty, and is a failure to report loudly
}

// Stop stops p's whole tree: the stop signal to its process group and to
// each process of the tree outside it, then up to the grace period for
// every process of the tree to be gone (the leader reaped), then SIGKILL
// to all that remain, and up to 5 s more. It is safe to call more than
// once, concurrently, and after the leader died: later calls return the
// first call's report.
func (p *Process) Stop() StopReport {
	p.stopOnce.Do(func() {
		p.report = p.stop()
		track(p, false)
		if len(p.report.Left) == 0 {
			watchSend(fmt.Sprintf("untree %d", p.pid))
		}
	})
	return p.report
}

func (p *Process) stop() StopReport {
	start := time.Now()
	rep := StopReport{Signal: p.spec.StopSignal}
	left := p.signal(p.spec.StopSignal)
	if len(left) > 0 || !p.exited() {
		left = p.waitGone(p.spec.Grace)
	}
	if len(left) > 0 || !p.exited() {
		rep.Killed = true
		left = p.signal(syscall.SIGKILL)
		deadline := time.Now().Add(killWait)
		for (len(left) > 0 || !p.exited()) && time.Now().Before(deadline) {
			time.Sleep(pollInterval)
			// Kill again: a process may have forked meanwhile.
			left = p.signal(syscall.SIGKILL)
		}
	}
	rep.Elapsed = time.Since(start)
	rep.Left = left
	if !p.exited() && !contains(left, p.pid) {
		rep.Left = append(rep.Left, p.pid)
	}
	// Let the reader take the last output (up to 1 s), then end it: a
	// process that escaped may hold the pipe open forever.
	select {
	case <-p.outEOF:
	case <-time.After(time.Second):
	}
	p.outR.Close()
	return rep
}

// signal sends sig to p's process group and to every live process of the
// tree outside it, and returns the tree's live PIDs as found before.
func (p *Process) signal(sig syscall.Signal) []int {
	live := p.tree()
	// The group: ESRCH once it is empty; its number is not reused while
	// it has a member.
	p.mu.Lock()
	groupGone := p.groupGone
	p.mu.Unlock()
	if !groupGone {
		syscall.Kill(-p.pid, sig)
	}
	var pids []int
	for pid, start := range live {
		pids = append(pids, pid)
		pi, err := procstat.ReadStat(pid)
		if err != nil || pi.Start != start || pi.PGID == p.pid && !groupGone {
			continue
		}
		syscall.Kill(pid, sig)
	}
	sortInts(pids)
	return pids
}

// waitGone waits up to d for the tree to be gone and the leader reaped,
// and returns what is left.
func (p *Process) waitGone(d time.Duration) []int {
	deadline := time.Now().Add(d)
	for {
		left := p.PIDs()
		if len(left) == 0 && p.exited() || !time.Now().Before(deadline) {
			return left
		}
		select {
		case <-p.done:
			if len(left) > 0 {
				time.Sleep(pollInterval)
			}
		case <-time.After(pollInterval):
		}
	}
}

// exited reports whether the leader has been reaped.
func (p *Process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func contains(a []int, x int) bool {
	for _, v := range a {
		if v == x {
			return true
		}
	}
	return false
}

// StopAll stops several backends at once and returns their reports in
// order; a nil Process gets a zero report.
func StopAll(ps []*Process) []StopReport {
	reps := make([]StopReport, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		if p == nil {
			continue
		}
		wg.Go(func() { reps[i] = p.Stop() })
	}
	wg.Wait()
	return reps
}

// Gone reports whether no process of PID pid runs: none exists, or it is a
// zombie (it has exited; only its parent can reap it). For tests and
// checks after Stop.
func Gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	pi, err := procstat.ReadStat(pid)
	return err != nil || !pi.Alive()
}

// String says what Stop did in one line: "stopped by SIGTERM in 120ms",
// "did not stop on SIGTERM within the grace period: killed (5.2s)", and
// "STILL RUNNING after SIGKILL: pids 12 13" when something is left.
func (r StopReport) String() string {
	sig := signalName(r.Signal)
	if r.Signal == 0 {
		sig = "SIGTERM"
	}
	var s string
	if r.Killed {
		s = fmt.Sprintf("did not stop on %s within the grace period: killed (%v)", sig, r.Elapsed.Round(time.Millisecond))
	} else {
		s = fmt.Sprintf("stopped by %s in %v", sig, r.Elapsed.Round(time.Millisecond))
	}
	if len(r.Left) > 0 {
		var pids []string
		for _, pid := range r.Left {
			pids = append(pids, strconv.Itoa(pid))
		}
		s += "; STILL RUNNING after SIGKILL: pids " + strings.Join(pids, " ")
	}
	return s
}

// live holds the processes started and not yet stopped, for KillAll.
var live struct {
	mu sync.Mutex
	ps map[*Process]bool
}

// track adds p to the live processes (on = true) or removes it.
func track(p *Process, on bool) {
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.ps == nil {
		live.ps = map[*Process]bool{}
	}
	if on {
		live.ps[p] = true
	} else {
		delete(live.ps, p)
	}
}

// KillAll sends SIGKILL to the trees of every process started and not yet
// stopped, without waiting: for a program about to exit at once (a second
// SIGINT), so that no backend it started outlives it.
func KillAll() {
	live.mu.Lock()
	ps := make([]*Process, 0, len(live.ps))
	for p := range live.ps {
		ps = append(ps, p)
	}
	live.mu.Unlock()
	for _, p := range ps {
		p.signal(syscall.SIGKILL)
	}
}

// signalNames are the names of the usual signals, for messages.
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
	syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
}

// signalName returns "SIGTERM" for SIGTERM, "signal 40" for one without a name here.
func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return "signal " + strconv.Itoa(int(s))
}
