package backend

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/backbench/backbench/internal/procstat"
)

// RunEnv is the environment variable every backend Start starts gets, set
// to RunID: the marker by which the watcher, and a later run, find the
// processes of a run (its children inherit it) in /proc/PID/environ.
const RunEnv = "BACKBENCH_RUN"

// DirMarker is the file ClaimDir writes into a directory a run owns (its
// content: the RunID), by which a later run finds the directory a killed
// run left.
const DirMarker = ".backbench-run"

// watcherGrace is the longest the watcher, or a later run, waits between
// SIGTERM and SIGKILL: 2 s. A run that was killed is being cleaned up, not
// shut down with care; a backend's own shorter grace is kept.
const watcherGrace = 2 * time.Second

// runID is this process's RunID, read once.
var runID = sync.OnceValue(func() string {
	start := uint64(0)
	if pi, err := procstat.ReadStat(os.Getpid()); err == nil {
		start = pi.Start
	}
	return fmt.Sprintf("%d-%d", os.Getpid(), start)
})

// RunID returns the identity of this run: "PID-START", the PID of this
// process and its start time (clock ticks after boot, /proc/PID/stat), so
// that a run is known dead once no process of that PID and start time
// runs, even after the PID is reused.
func RunID() string { return runID() }

// parseRunID returns the PID and start time of a RunID.
func parseRunID(id string) (pid int, start uint64, ok bool) {
	p, s, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(p)
	start, err2 := strconv.ParseUint(s, 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return 0, 0, false
	}
	return pid, start, true
}

// runAlive reports whether the process that owns run id still runs (a
// RunID that does not parse counts as alive: nothing of it is touched).
func runAlive(id string) bool {
	pid, start, ok := parseRunID(id)
	if !ok {
		return true
	}
	pi, err := procstat.ReadStat(pid)
	return err == nil && pi.Start == start && pi.Alive()
}

// spared returns the processes never to be touched: this one, its
// ancestors (a backbench run by a backend of another run carries that
// run's marker) and watchers.
func spared(all map[int]procstat.Proc) map[int]bool {
	s := map[int]bool{}
	for pid := os.Getpid(); pid > 1 && !s[pid]; {
		s[pid] = true
		pi, ok := all[pid]
		if !ok {
			break
		}
		pid = pi.PPID
	}
	return s
}

// marked returns the live processes of all (in this PID namespace, not
// spared, not a watcher) whose environment holds RunEnv, by run: run ID
// -> PID -> start time.
func marked(all map[int]procstat.Proc) map[string]map[int]uint64 {
	out := map[string]map[int]uint64{}
	ns := procstat.PIDNamespace(0)
	keep := spared(all)
	for pid, pi := range all {
		if keep[pid] || !pi.Alive() {
			continue
		}
		env := procstat.Environ(pid)
		id, ok := procstat.EnvValue(env, RunEnv)
		if !ok {
			continue
		}
		if _, w := procstat.EnvValue(env, WatcherEnv); w {
			continue
		}
		if procstat.PIDNamespace(pid) != ns {
			continue // a run of another PID namespace: its IDs are not ours
		}
		if out[id] == nil {
			out[id] = map[int]uint64{}
		}
		out[id][pid] = pi.Start
	}
	return out
}

// reaper stops the processes of one run: those with the run's marker,
// those seen before (PID and start time), the groups of its leaders still
// alive, and every descendant of these. It never signals a PID whose
// start time is not the one seen.
type reaper struct {
	id      string
	seen    map[int]uint64 // PID -> start time of every process found
	leaders map[int]uint64 // group leaders: PID -> start time
}

// targets returns the live processes of the run now, recording them.
func (r *reaper) targets() map[int]uint64 {
	all, err := procstat.Table()
	if err != nil {
		return nil
	}
	in := map[int]bool{}
	keep := spared(all)
	for pid, start := range r.seen {
		if pi, ok := all[pid]; ok && pi.Start == start {
			in[pid] = true
		}
	}
	for pid := range marked(all)[r.id] {
		in[pid] = true
	}
	// A group is the leader's while the leader (its PID and start time)
	// runs: its number cannot be another's.
	for pid, pi := range all {
		if start, ok := r.leaders[pi.PGID]; ok {
			if l, ok := all[pi.PGID]; ok && l.Start == start && l.Alive() {
				in[pid] = true
			}
		}
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
	live := map[int]uint64{}
	for pid := range in {
		pi := all[pid]
		if keep[pid] {
			continue
		}
		r.seen[pid] = pi.Start
		if pi.Alive() {
			live[pid] = pi.Start
		}
	}
	return live
}

// signal sends sig to the live leaders' groups and to every live process
// of the run, and returns their PIDs.
func (r *reaper) signal(sig syscall.Signal) []int {
	live := r.targets()
	for pid, start := range r.leaders {
		if live[pid] == start && start != 0 {
			syscall.Kill(-pid, sig)
		}
	}
	var pids []int
	for pid, start := range live {
		pids = append(pids, pid)
		if pi, err := procstat.ReadStat(pid); err == nil && pi.Start == start {
			syscall.Kill(pid, sig)
		}
	}
	sort.Ints(pids)
	return pids
}

// ReapReport is what stopping a run's processes did.
type ReapReport struct {
	PIDs   []int // the processes found and signalled
	Killed bool  // SIGKILL was needed
	Left   []int // still alive after SIGKILL: could not be stopped (another user's, or unkillable)
}

// stop stops every process of the run: SIGTERM, up to grace for them to
// be gone, then SIGKILL, up to 5 s more.
func (r *reaper) stop(grace time.Duration) ReapReport {
	var rep ReapReport
	found := map[int]bool{}
	note := func(pids []int) []int {
		for _, p := range pids {
			found[p] = true
		}
		return pids
	}
	left := note(r.signal(syscall.SIGTERM))
	for end := time.Now().Add(grace); len(left) > 0 && time.Now().Before(end); {
		time.Sleep(pollInterval)
		// SIGTERM again: what forked meanwhile has not had it.
		left = note(r.signal(syscall.SIGTERM))
	}
	if len(left) > 0 {
		rep.Killed = true
		for end := time.Now().Add(killWait); len(left) > 0 && time.Now().Before(end); {
			note(r.signal(syscall.SIGKILL))
			time.Sleep(pollInterval)
			left = note(pidsOf(r.targets()))
		}
	}
	for p := range found {
		rep.PIDs = append(rep.PIDs, p)
	}
	sort.Ints(rep.PIDs)
	rep.Left = left
	return rep
}

// pidsOf returns the sorted PIDs of a set.
func pidsOf(m map[int]uint64) []int {
	out := make([]int, 0, len(m))
	for pid := range m {
		out = append(out, pid)
	}
	sort.Ints(out)
	return out
}

// ClaimDir marks dir as this run's (a DirMarker file holding RunID) and,
// while a watcher runs, has the watcher remove it should this program end
// before ReleaseDir.
func ClaimDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("backend: %w", err)
	}
	if err := os.WriteFile(filepath.Join(abs, DirMarker), []byte(RunID()+"\n"), 0o644); err != nil {
		return fmt.Errorf("backend: %w", err)
	}
	watchSend("dir " + strconv.Quote(abs))
	return nil
}

// ReleaseDir removes dir (and all it holds) and tells the watcher it is
// gone.
func ReleaseDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("backend: %w", err)
	}
	err = os.RemoveAll(abs)
	watchSend("undir " + strconv.Quote(abs))
	return err
}

// KeepDir keeps dir, a directory ClaimDir claimed, past this run: it
// removes its DirMarker (a later run does not take it for a killed run's
// leftover) and tells the watcher to leave it. What it holds is the
// caller's to remove, or the user's.
func KeepDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("backend: %w", err)
	}
	err = os.Remove(filepath.Join(abs, DirMarker))
	watchSend("undir " + strconv.Quote(abs))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("backend: %w", err)
	}
	return nil
}

// Leftover is what an earlier run that was killed left: processes that
// carry its marker and directories with its DirMarker, while no process
// of the run's PID and start time runs.
type Leftover struct {
	Run      string         // its RunID
	OwnerPID int            // the PID of the backbench that ran it
	Procs    map[int]uint64 // PID -> start time of each live process of it
	Dirs     []string       // its directories
}

// PIDs returns the PIDs of its processes, sorted.
func (l *Leftover) PIDs() []int { return pidsOf(l.Procs) }

// FindLeftovers finds what earlier runs left: processes of this PID
// namespace whose environment holds RunEnv of a run whose owner is dead
// (never this run's, never this process or its ancestors), and the
// directories of this user directly under tmp whose name begins with one
// of prefixes and that hold a DirMarker of a dead run. It signals nothing.
func FindLeftovers(tmp string, prefixes ...string) ([]*Leftover, error) {
	all, err := procstat.Table()
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	byRun := map[string]*Leftover{}
	get := func(id string) *Leftover {
		l := byRun[id]
		if l == nil {
			pid, _, _ := parseRunID(id)
			l = &Leftover{Run: id, OwnerPID: pid, Procs: map[int]uint64{}}
			byRun[id] = l
		}
		return l
	}
	for id, procs := range marked(all) {
		if id == RunID() || runAlive(id) {
			continue
		}
		l := get(id)
		for pid, start := range procs {
			l.Procs[pid] = start
		}
	}
	if tmp != "" {
		ents, _ := os.ReadDir(tmp)
		for _, e := range ents {
			if !e.IsDir() || !hasPrefix(e.Name(), prefixes) {
				continue
			}
			dir := filepath.Join(tmp, e.Name())
			if fi, err := os.Lstat(dir); err != nil || !ownDir(fi) {
				continue // another user's: not a run of ours
			}
			b, err := os.ReadFile(filepath.Join(dir, DirMarker))
			if err != nil {
				continue
			}
			id := strings.TrimSpace(string(b))
			if id == RunID() || runAlive(id) {
				continue
			}
			if _, _, ok := parseRunID(id); !ok {
				continue
			}
			l := get(id)
			l.Dirs = append(l.Dirs, dir)
		}
	}
	var out []*Leftover
	for _, l := range byRun {
		sort.Strings(l.Dirs)
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Run < out[j].Run })
	return out, nil
}

// ownDir reports whether fi is a directory (not a link) of this user.
func ownDir(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return fi.IsDir() && ok && int(st.Uid) == os.Getuid()
}

// hasPrefix reports whether name begins with one of prefixes (any name,
// when there are none).
func hasPrefix(name string, prefixes []string) bool {
	if len(prefixes) == 0 {
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Stop stops l's processes (SIGTERM, up to 2 s, SIGKILL: only processes
// of its run, each known by PID and start time or by its marker, and their
// descendants) and removes its directories. The error joins the
// directories that could not be removed.
func (l *Leftover) Stop() (ReapReport, error) {
	r := &reaper{id: l.Run, seen: map[int]uint64{}, leaders: map[int]uint64{}}
	for pid, start := range l.Procs {
		r.seen[pid] = start
	}
	rep := r.stop(watcherGrace)
	var errs []error
	for _, d := range l.Dirs {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
}

// String names l in one line: "an earlier run (backbench pid 4242, no
// longer running) left pids 4250 4251 (serve) and /tmp/bbst1".
func (l *Leftover) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "an earlier run (backbench pid %d, no longer running) left ", l.OwnerPID)
	var parts []string
	if pids := l.PIDs(); len(pids) > 0 {
		var ps []string
		for _, pid := range pids {
			p := strconv.Itoa(pid)
			if c := procstat.Comm(pid); c != "" {
				p += " (" + c + ")"
			}
			ps = append(ps, p)
		}
		word := "process"
		if len(pids) > 1 {
			word = "processes"
		}
		parts = append(parts, fmt.Sprintf("%d %s: pid %s", len(pids), word, strings.Join(ps, ", ")))
	}
	if len(l.Dirs) > 0 {
		parts = append(parts, strings.Join(l.Dirs, ", "))
	}
	b.WriteString(strings.Join(parts, " and "))
	return b.String()
}
