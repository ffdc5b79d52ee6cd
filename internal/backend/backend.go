// Package backend starts, watches and stops the backend processes a study
// declares: a command started as the leader of a new process group, its
// output kept (the last 64 KiB), its readiness read from the kernel's
// tables of listening sockets, its whole process tree found from /proc, and
// its stop: a signal to the tree, a grace period, SIGKILL, and a check that
// nothing of the tree is left.
//
// Readiness is never tested by connecting: some backends (Ruby's fcgi.rb)
// exit on a connection that sends nothing. A backend is ready once a socket
// at its address is in LISTEN state (/proc/net/tcp, tcp6, unix) and that
// socket is held open by a process of its tree (/proc/PID/fd), so that
// another program's listener on the address is not taken for it.
//
// The per-process files of /proc (stat and the process table, comm,
// environ, ns/pid, the socket links under fd) are read by
// internal/procstat, the one reader of them; this package reads only the
// kernel's tables of listening sockets (/proc/net/tcp, tcp6 and unix,
// listen.go), which are about addresses, not processes.
//
// Limits: Linux only (it reads /proc). The tree is the leader, the
// processes of its group, their descendants by parent links, and every
// process of the tree seen before (PIDs and Stop sample it), each known by
// its PID and start time, so that a PID the kernel reuses is not taken for
// one of the tree. A process that left both the group and the tree (a
// double fork and setsid) between two samples is not found. A zombie
// counts as gone: it has exited, and only its parent can reap it.
//
// Every backend's environment holds RunEnv=RunID (this process's PID and
// start time), which its children inherit. With a watcher (StartWatcher,
// watch.go), the backends and the directories claimed (ClaimDir) are
// stopped and removed even when the program that started them dies by any
// signal, SIGKILL included: the watcher, this program run again in a
// session of its own and deaf to SIGINT, SIGTERM and SIGHUP, reads a pipe
// whose write end only the program holds; each tree started, each process
// of it seen, each tree stopped and each directory is written on it, and
// when the pipe ends the watcher stops what is left (the trees' processes
// known by PID and start time, every process with the run's marker, the
// groups of leaders still running, their descendants: SIGTERM, at most
// 2 s, SIGKILL) and removes the directories. PR_SET_PDEATHSIG reaches only
// a direct child, and cgroup v2's cgroup.kill needs a delegated cgroup: a
// pipe's end is what every way of dying shares. When the watcher is
// killed too, FindLeftovers finds, by the marker, what a run that no
// longer runs left (run.go), and Leftover.Stop stops it; nothing without
// the marker of a dead run is touched.
package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/backbench/backbench/internal/procstat"
	"github.com/backbench/backbench/sockets"
)

// DefaultStartTimeout is how long Start waits for a backend to listen
// when Spec.StartTimeout is 0: 30 s.
const DefaultStartTimeout = 30 * time.Second

// DefaultGrace is how long Stop waits after the stop signal before
// SIGKILL when Spec.Grace is 0: 5 s.
const DefaultGrace = 5 * time.Second

// killWait is how long Stop waits for the tree to be gone after SIGKILL:
// 5 s.
const killWait = 5 * time.Second

// pollInterval is how often Start reads the kernel's tables and Stop looks
// for the tree: 25 ms.
const pollInterval = 25 * time.Millisecond

// tailLines is how many lines of output a StartError keeps.
const tailLines = 5

// Spec says how to start one backend.
type Spec struct {
	Name         string         // the configuration's name, for messages ("fcgi-prefork workers=4")
	Argv         []string       // program and arguments, placeholders already substituted
	Env          []string       // KEY=VALUE added to os.Environ() (a key given again wins)
	Dir          string         // working directory ("": the current one)
	Network      string         // "tcp" or "unix"
	Addr         string         // "127.0.0.1:PORT" or a socket path: where it must listen
	StartTimeout time.Duration  // how long Start waits for it to listen; 0: DefaultStartTimeout (30 s)
	Grace        time.Duration  // from the stop signal to SIGKILL; 0: DefaultGrace (5 s)
	StopSignal   syscall.Signal // the stop signal; 0: SIGTERM
	// CPUs, when not empty, are the CPUs its whole tree runs on: the
	// leader is forked from a thread with that mask (sockets.StartOnCPUs),
	// so it and every process it forks later inherit it.
	CPUs []int
}

// The kinds of StartError.
const (
	KindExited        = "exited"         // the leader exited before the backend listened
	KindNeverListened = "never listened" // nothing of the tree listened within the start timeout
	KindExec          = "could not run"  // the program could not be started
	KindNotFound      = "not found"      // the program is not on PATH, or no file has its path
	KindCanceled      = "canceled"       // Start's context ended first
	KindSpec          = "bad spec"       // the Spec lacks a program, a network or an address
)

// StartError says why a backend did not start. Start stopped whatever it
// had started before returning it.
type StartError struct {
	Name     string        // the configuration's name
	Kind     string        // KindExited, KindNeverListened, KindExec, KindCanceled or KindSpec
	ExitCode int           // for KindExited: its exit status, -1 if killed by a signal
	Status   string        // for KindExited: "exit status 1", "killed by SIGSEGV"
	Addr     string        // the address it was to listen on
	Prog     string        // for KindExec and KindNotFound: the program
	Timeout  time.Duration // for KindNeverListened: the start timeout
	Holders  []int         // for KindNeverListened: PIDs of other processes listening on Addr
	Tail     []string      // its last lines of output (at most 5), for KindExited, KindNeverListened and KindCanceled
	// Cause, for KindExited with status 126 or 127, is what a shell's
	// last words say went wrong (ShellCause): "command not found: php-fpm
	// (not on PATH)", "an empty command: ...".
	Cause string
	Err   error // the cause: exec's error, the context's, nil for the others
}

// Error returns one line: `backend "NAME" exited at start (status 1): LAST
// LINE`, `backend "NAME" did not listen on ADDR within 30s: LAST LINE`,
// `backend "NAME" could not run PROG: ERROR`, `backend "NAME": command
// not found: PROG (not on PATH)`.
func (e *StartError) Error() string {
	s := e.Head()
	if e.Kind == KindExited || e.Kind == KindNeverListened {
		if len(e.Tail) > 0 {
			s += ": " + e.Tail[len(e.Tail)-1]
		} else if e.Kind == KindExited {
			s += ", with no output"
		}
	}
	return s
}

// Head returns Error's line without the backend's output: `backend
// "NAME" exited at start (status 127), command not found: php-fpm (not on
// PATH)`, `backend "NAME" did not listen on ADDR within 30s`.
func (e *StartError) Head() string {
	var b strings.Builder
	fmt.Fprintf(&b, "backend %q ", e.Name)
	switch e.Kind {
	case KindExited:
		st := e.Status
		if code, ok := strings.CutPrefix(st, "exit status "); ok {
			st = "status " + code
		}
		if e.ExitCode == 0 {
			st += "; a backend must stay in the foreground"
		}
		fmt.Fprintf(&b, "exited at start (%s)", st)
		if e.Cause != "" {
			b.WriteString(", " + e.Cause)
		}
	case KindNeverListened:
		fmt.Fprintf(&b, "did not listen on %s within %v", e.Addr, e.Timeout)
		if len(e.Holders) > 0 {
			var hs []string
			for _, pid := range e.Holders {
				h := "pid " + strconv.Itoa(pid)
				if c := procstat.Comm(pid); c != "" {
					h += " (" + c + ")"
				}
				hs = append(hs, h)
			}
			fmt.Fprintf(&b, " (another process listens there: %s)", strings.Join(hs, ", "))
		}
	case KindCanceled:
		fmt.Fprintf(&b, "not started: %v", e.Err)
	case KindExec:
		fmt.Fprintf(&b, "could not run %s: %v", e.Prog, e.Err)
	case KindNotFound:
		s := b.String()
		b.Reset()
		b.WriteString(strings.TrimSuffix(s, " ") + ": " + notFound(e.Prog))
	default:
		b.WriteString(e.Kind)
		if e.Err != nil {
			b.WriteString(": ")
			b.WriteString(e.Err.Error())
		}
	}
	return b.String()
}

// notFound is "command not found: php-fpm (not on PATH)" for a program
// named without a slash, "command not found: /usr/sbin/php-fpm8.1 (no
// such file)" for a path.
func notFound(prog string) string {
	if prog == "" {
		return "an empty command: a variable or $(...) expanded to nothing (is the program on PATH?)"
	}
	if strings.Contains(prog, "/") {
		return "command not found: " + prog + " (no such file)"
	}
	return "command not found: " + prog + " (not on PATH)"
}

// ShellCause returns what a shell's last lines of output say went wrong
// when it exited with code 126 (found, could not run) or 127 (not found),
// "" for another code or words it does not know: "command not found:
// php-fpm (not on PATH)" for "sh: 1: php-fpm: not found" or "bash: line 1:
// php-fpm: command not found", "command not found: /usr/sbin/php-fpm8.1
// (no such file)" for "sh: 1: exec: /usr/sbin/php-fpm8.1: not found" or
// bash's "No such file or directory", "an empty command: ..." for "sh: 1:
// exec: : Permission denied" (dash's words for exec "$(command -v X)"
// when X is on no PATH), "cannot run PROG: permission denied".
func ShellCause(code int, tail []string) string {
	if code != 126 && code != 127 {
		return ""
	}
	for i := len(tail) - 1; i >= 0; i-- {
		parts := strings.Split(strings.TrimSpace(tail[i]), ": ")
		if len(parts) < 2 {
			continue
		}
		last, name := parts[len(parts)-1], strings.TrimSpace(parts[len(parts)-2])
		switch strings.ToLower(last) {
		case "not found", "command not found", "no such file or directory":
			return notFound(name)
		case "permission denied":
			if name == "" || name == ":" {
				return notFound("")
			}
			return "cannot run " + name + ": permission denied (not an executable file)"
		case ":": // "exec: :" cut oddly
			return notFound("")
		}
	}
	return ""
}

// Unwrap returns the cause.
func (e *StartError) Unwrap() error { return e.Err }

// Process is a started backend. Its methods are safe for concurrent use.
type Process struct {
	spec   Spec
	cmd    *exec.Cmd
	pid    int
	out    *ring
	outR   *os.File      // the read end of its output pipe
	outEOF chan struct{} // closed when every writer of its output has closed it
	done   chan struct{} // closed when the leader has been reaped
	status string        // set before done is closed

	mu   sync.Mutex
	seen map[int]uint64 // PID -> start time of every process of the tree seen
	// groupGone: the group was seen empty after the leader was reaped. A
	// group cannot come back, and its number may then be reused: no
	// process is taken for the tree by its group, nor signalled by it.
	groupGone bool
	reaped    atomic.Bool // the leader has been reaped (set before done is closed)

	stopOnce sync.Once
	report   StopReport
}

// Start starts spec's program as the leader of a new process group, its
// stdout and stderr into a buffer of the last 64 KiB, and returns once a
// socket at spec.Addr is in LISTEN state in the kernel's tables and held
// by a process of the started tree. It never connects to the address. It
// polls every 25 ms. Errors are *StartError; after an error, nothing Start
// started is left running. ctx ends the wait: the process is then stopped
// before Start returns. A leader that exits once a process of its tree
// listens (a server that goes to the background) counts as started, and
// its Done is closed: backends are best run in the foreground.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	fail := func(kind string, err error) *StartError {
		return &StartError{Name: spec.Name, Kind: kind, Addr: spec.Addr, Err: err}
	}
	switch {
	case len(spec.Argv) == 0 || spec.Argv[0] == "":
		return nil, fail(KindSpec, errors.New("the command is empty (its program is \"\")"))
	case spec.Network != "tcp" && spec.Network != "unix":
		return nil, fail(KindSpec, fmt.Errorf("network %q is not tcp or unix", spec.Network))
	case spec.Addr == "":
		return nil, fail(KindSpec, errors.New("no address"))
	case spec.Network == "unix" && len(spec.Addr) > maxSocketPath:
		return nil, fail(KindSpec, fmt.Errorf("the socket path %s is %d bytes, more than the %d a socket address takes", spec.Addr, len(spec.Addr), maxSocketPath))
	}
	if _, err := Listening(spec.Network, spec.Addr); err != nil {
		return nil, fail(KindSpec, err)
	}
	if spec.StartTimeout <= 0 {
		spec.StartTimeout = DefaultStartTimeout
	}
	if spec.Grace <= 0 {
		spec.Grace = DefaultGrace
	}
	if spec.StopSignal == 0 {
		spec.StopSignal = syscall.SIGTERM
	}
	if spec.Dir != "" {
		if fi, err := os.Stat(spec.Dir); err != nil || !fi.IsDir() {
			e := fail(KindExec, fmt.Errorf("directory %s: %w", spec.Dir, err))
			if err == nil {
				e.Err = fmt.Errorf("%s is not a directory", spec.Dir)
			}
			e.Prog = spec.Argv[0]
			return nil, e
		}
	}
	// Its own pipe rather than exec's: cmd.Wait would wait for every
	// process that holds the pipe open, not for the leader.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fail(KindExec, err)
	}
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	// The run's marker, last so that it wins: the watcher and a later run
	// find the tree by it, its children inheriting it.
	cmd.Env = append(append(os.Environ(), spec.Env...), RunEnv+"="+RunID())
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if len(spec.CPUs) > 0 {
		err = sockets.StartOnCPUs(spec.CPUs, cmd.Start)
	} else {
		err = cmd.Start()
	}
	w.Close()
	if err != nil {
		r.Close()
		e := fail(KindExec, err)
		var ee *exec.Error
		var pe *os.PathError
		if errors.As(err, &ee) {
			e.Err = ee.Err
		} else if errors.As(err, &pe) {
			e.Err = pe.Err
		}
		if e.Err == nil {
			e.Err = err
		}
		e.Prog = spec.Argv[0]
		switch {
		case errors.Is(err, exec.ErrNotFound):
			e.Kind = KindNotFound
		case errors.Is(err, os.ErrNotExist):
			// No file at the path; or the file is there and its #!
			// line names an interpreter that is not.
			path := e.Prog
			if !filepath.IsAbs(path) && spec.Dir != "" {
				path = filepath.Join(spec.Dir, path)
			}
			if _, serr := os.Stat(path); serr != nil {
				e.Kind = KindNotFound
			} else {
				e.Err = fmt.Errorf("%w (the interpreter its #! line names?)", e.Err)
			}
		}
		return nil, e
	}
	p := &Process{
		spec:   spec,
		cmd:    cmd,
		pid:    cmd.Process.Pid,
		out:    &ring{},
		outR:   r,
		outEOF: make(chan struct{}),
		done:   make(chan struct{}),
		seen:   map[int]uint64{},
	}
	track(p, true)
	// The leader is not reaped before the Wait below: its stat is its own.
	if pi, err := procstat.ReadStat(p.pid); err == nil {
		p.seen[p.pid] = pi.Start
	}
	p.register()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			p.out.Write(buf[:n])
			if err != nil {
				break
			}
		}
		close(p.outEOF)
	}()
	go func() {
		cmd.Wait()
		p.status = describe(cmd.ProcessState)
		p.reaped.Store(true)
		p.tree() // to see at once whether the group is empty
		close(p.done)
	}()
	if err := p.waitListening(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// waitListening waits until p listens at its address, it exits, the start
// timeout passes or ctx ends.
func (p *Process) waitListening(ctx context.Context) error {
	timeout := time.NewTimer(p.spec.StartTimeout)
	defer timeout.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var others []uint64 // listeners at the address not of the tree
	for {
		ready, o := p.ready()
		if ready {
			return nil
		}
		others = o
		e := &StartError{Name: p.spec.Name, Addr: p.spec.Addr}
		select {
		case <-p.done:
			if ready, _ := p.ready(); ready { // its child listens; the runner sees Done
				return nil
			}
			e.Kind = KindExited
			e.ExitCode = p.cmd.ProcessState.ExitCode()
			e.Status = p.status
			// The output is read to its end (or for a moment, if a
			// child still holds it): the shell's last words name the cause.
			select {
			case <-p.outEOF:
			case <-time.After(200 * time.Millisecond):
			}
		case <-timeout.C:
			e.Kind = KindNeverListened
			e.Timeout = p.spec.StartTimeout
			if len(others) > 0 {
				e.Holders = procstat.SocketHolders(others, 3)
			}
		case <-ctx.Done():
			e.Kind = KindCanceled
			e.Err = ctx.Err()
		case <-tick.C:
			continue
		}
		p.Stop()
		e.Tail = p.Tail(tailLines)
		if e.Kind == KindExited {
			e.Cause = ShellCause(e.ExitCode, e.Tail)
		}
		return e
	}
}

// ready reports whether a listening socket at p's address is held by a
// process of its tree; if not, it returns the inodes of the listeners at
// the address that are not.
func (p *Process) ready() (bool, []uint64) {
	inodes, err := Listening(p.spec.Network, p.spec.Addr)
	if err != nil || len(inodes) == 0 {
		p.tree() // to record the tree as it grows
		return false, nil
	}
	held := map[uint64]bool{}
	for pid := range p.tree() {
		procstat.SocketInodes(pid, held)
	}
	for _, ino := range inodes {
		if held[ino] {
			return true, nil
		}
	}
	return false, inodes
}

// describe says how a process ended: "exit status 1", "killed by SIGKILL".
func describe(st *os.ProcessState) string {
	if st == nil {
		return ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by " + signalName(ws.Signal())
	}
	return "exit status " + strconv.Itoa(st.ExitCode())
}

// PID returns the process group leader's PID.
func (p *Process) PID() int { return p.pid }

// Spec returns the Spec p was started with, its zero durations and signal
// replaced by the defaults.
func (p *Process) Spec() Spec { return p.spec }

// PIDs returns the PIDs of every live process of p's tree now: the
// leader, its group, their descendants, and the processes of the tree seen
// before that still run (also those that called setsid). It records them
// for Stop.
func (p *Process) PIDs() []int {
	t := p.tree()
	out := make([]int, 0, len(t))
	for pid := range t {
		out = append(out, pid)
	}
	sortInts(out)
	return out
}

// Done returns a channel closed when the leader has exited (and been
// reaped).
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitStatus returns "" while the leader runs, then how it ended: "exit
// status 1", "killed by SIGKILL".
func (p *Process) ExitStatus() string {
	select {
	case <-p.done:
		return p.status
	default:
		return ""
	}
}

// Tail returns the last n non-blank lines of its output (stdout and stderr
// together), without line ends.
func (p *Process) Tail(n int) []string { return p.out.tail(n) }

// tree reads /proc and returns the live processes of p's tree (PID ->
// start time), recording them.
func (p *Process) tree() map[int]uint64 {
	all, err := procstat.Table()
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	in := map[int]bool{}
	for pid, start := range p.seen {
		if pi, ok := all[pid]; ok && pi.Start == start {
			in[pid] = true
		}
	}
	members := 0
	for pid, pi := range all {
		// A PID is not reused while a group of its number exists.
		if pi.PGID == p.pid && !p.groupGone {
			in[pid] = true
			members++
		}
	}
	if members == 0 && p.reaped.Load() {
		p.groupGone = true
	}
	for grew := true; grew; {
		grew = false
		for pid, pi := range all {
			if !in[pid] && in[pi.PPID] {
				in[pid] = true
				grew = true
			}
		}
	}
	live := make(map[int]uint64, len(in))
	for pid := range in {
		pi := all[pid]
		if old, ok := p.seen[pid]; !ok || old != pi.Start {
			watchSend(fmt.Sprintf("member %d %d", pid, pi.Start))
		}
		p.seen[pid] = pi.Start
		if pi.Alive() {
			live[pid] = pi.Start
		}
	}
	return live
}

// sortInts sorts a few ints in place.
func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
