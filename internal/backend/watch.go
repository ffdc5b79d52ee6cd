package backend

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// WatcherEnv marks the watcher process: a program that calls StartWatcher
// must, when this variable is set, run WatcherMain and exit instead of
// doing its own work (its value is the RunID of the run it watches).
const WatcherEnv = "BACKBENCH_WATCHER"

// watcherWait is how long Watcher.Close waits for the watcher to end: 10 s.
const watcherWait = 10 * time.Second

// The watcher of this process, shared by every StartWatcher until the
// last Close.
var watcher struct {
	mu   sync.Mutex
	refs int
	w    *os.File // the write end of the pipe; only this process holds it
	cmd  *exec.Cmd
	done chan struct{} // closed when the watcher has been reaped
}

// Watcher is a handle on the watcher process StartWatcher started (or
// shares).
type Watcher struct{ once sync.Once }

// StartWatcher starts the watcher: program exe (this program; it must run
// WatcherMain when WatcherEnv is set) in a session of its own, which
// ignores SIGINT, SIGTERM, SIGHUP and SIGPIPE, and reads a pipe whose
// write end only this process holds. From then on every backend Start
// starts, every process of its tree seen, and every directory ClaimDir
// claims is told to it, and every Stop and ReleaseDir untells it. When the
// pipe ends (the last Close, or this process's death by any signal,
// SIGKILL included) the watcher stops every process still registered or
// carrying this run's marker (RunEnv=RunID), removes the directories still
// registered, says so on this program's stderr if it did anything, and
// exits. A second call while one runs shares it.
func StartWatcher(exe string) (*Watcher, error) {
	watcher.mu.Lock()
	if watcher.refs > 0 {
		watcher.refs++
		watcher.mu.Unlock()
		return &Watcher{}, nil
	}
	if exe == "" {
		watcher.mu.Unlock()
		return nil, fmt.Errorf("backend: no program to run as the watcher")
	}
	r, w, err := os.Pipe() // close-on-exec: no backend inherits the write end
	if err != nil {
		watcher.mu.Unlock()
		return nil, fmt.Errorf("backend: watcher: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), WatcherEnv+"="+RunID())
	cmd.Stdin = r
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		watcher.mu.Unlock()
		return nil, fmt.Errorf("backend: watcher: %w", err)
	}
	watcher.w, watcher.cmd, watcher.refs = w, cmd, 1
	done := make(chan struct{})
	watcher.done = done
	go func() { cmd.Wait(); close(done) }()
	watcher.mu.Unlock()
	// The backends started before the watcher are its too.
	live.mu.Lock()
	ps := make([]*Process, 0, len(live.ps))
	for p := range live.ps {
		ps = append(ps, p)
	}
	live.mu.Unlock()
	for _, p := range ps {
		p.register()
	}
	return &Watcher{}, nil
}

// Close ends this handle; the last Close closes the pipe, and waits up to
// 10 s for the watcher to stop what is still registered (normally
// nothing) and exit. Closing twice is harmless.
func (h *Watcher) Close() error {
	h.once.Do(func() {
		watcher.mu.Lock()
		watcher.refs--
		if watcher.refs > 0 {
			watcher.mu.Unlock()
			return
		}
		w, done := watcher.w, watcher.done
		watcher.w, watcher.cmd, watcher.done = nil, nil, nil
		watcher.mu.Unlock()
		if w != nil {
			w.Close()
			select {
			case <-done:
			case <-time.After(watcherWait):
			}
		}
	})
	return nil
}

// watchSend writes one line to the watcher, if one runs. A watcher that
// died makes it a no-op.
func watchSend(line string) {
	watcher.mu.Lock()
	defer watcher.mu.Unlock()
	if watcher.w == nil {
		return
	}
	if _, err := watcher.w.Write([]byte(line + "\n")); err != nil {
		watcher.w.Close()
		watcher.w = nil
	}
}

// register tells the watcher of p's leader and of every process of its
// tree seen so far.
func (p *Process) register() {
	p.mu.Lock()
	start := p.seen[p.pid]
	var members []string
	for pid, st := range p.seen {
		if pid != p.pid {
			members = append(members, fmt.Sprintf("member %d %d", pid, st))
		}
	}
	p.mu.Unlock()
	watchSend(fmt.Sprintf("tree %d %d %d", p.pid, start, int64(p.spec.Grace)))
	for _, m := range members {
		watchSend(m)
	}
}

// watchState is what the watcher knows of the run it watches.
type watchState struct {
	reaper
	grace time.Duration // the longest grace of the trees, at most watcherGrace
	dirs  map[string]bool
}

// apply applies one line of the pipe.
func (s *watchState) apply(line string) {
	verb, rest, _ := strings.Cut(line, " ")
	f := strings.Fields(rest)
	num := func(i int) uint64 {
		if i >= len(f) {
			return 0
		}
		n, _ := strconv.ParseUint(f[i], 10, 64)
		return n
	}
	switch verb {
	case "tree": // tree LEADER START GRACE_NS
		pid, start := int(num(0)), num(1)
		s.leaders[pid] = start
		s.seen[pid] = start
		s.grace = max(s.grace, min(time.Duration(num(2)), watcherGrace))
	case "member": // member PID START
		s.seen[int(num(0))] = num(1)
	case "untree": // untree LEADER: stopped, nothing left
		delete(s.leaders, int(num(0)))
	case "dir", "undir": // dir "PATH"
		p, err := strconv.Unquote(rest)
		if err != nil {
			return
		}
		if verb == "dir" {
			s.dirs[p] = true
		} else {
			delete(s.dirs, p)
		}
	}
}

// WatcherMain is the watcher process (see StartWatcher): it reads the
// registrations on its stdin until the pipe ends, then stops what is left
// and removes the directories still registered, and returns the exit
// status (0).
func WatcherMain() int {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE, syscall.SIGQUIT)
	id := os.Getenv(WatcherEnv)
	s := &watchState{reaper: reaper{id: id, seen: map[int]uint64{}, leaders: map[int]uint64{}}, dirs: map[string]bool{}}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		s.apply(sc.Text())
	}
	grace := s.grace
	if grace == 0 {
		grace = watcherGrace
	}
	rep := s.stop(grace)
	var removed []string
	for d := range s.dirs {
		if err := os.RemoveAll(d); err == nil {
			removed = append(removed, d)
		} else {
			fmt.Fprintf(os.Stderr, "backbench: watcher: %v\n", err)
		}
	}
	if len(rep.PIDs) == 0 && len(removed) == 0 {
		return 0
	}
	owner, _, _ := parseRunID(id)
	msg := fmt.Sprintf("backbench: watcher: backbench (pid %d) ended without stopping everything it started:", owner)
	if len(rep.PIDs) > 0 {
		how := "stopped"
		if rep.Killed {
			how = "stopped (SIGKILL needed)"
		}
		msg += fmt.Sprintf(" %s pids %s;", how, joinInts(rep.PIDs))
	}
	if len(removed) > 0 {
		msg += " removed " + strings.Join(removed, ", ") + ";"
	}
	if len(rep.Left) > 0 {
		msg += " STILL RUNNING: pids " + joinInts(rep.Left) + ";"
	}
	fmt.Fprintln(os.Stderr, strings.TrimSuffix(msg, ";"))
	return 0
}

// joinInts joins PIDs with spaces.
func joinInts(a []int) string {
	s := make([]string, len(a))
	for i, v := range a {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, " ")
}
