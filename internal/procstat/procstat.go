// Package procstat is the one reader of /proc's per-process files in
// backbench: /proc/PID/stat (ReadStat; the process table, Table), comm,
// statm, smaps_rollup (PSS), environ, ns/pid and the socket links under
// fd (SocketInodes, SocketHolders). internal/backend finds, identifies
// (PID and start time) and stops a backend's process tree with it; the
// Sampler samples the resource use of a backend's processes while a run
// goes: CPU time (user and system, of the given processes and all their
// descendants, plus what their exited children left in cutime/cstime),
// memory summed over the process tree, and the number of processes.
// Linux only; standard library only. The kernel's socket tables
// (/proc/net/tcp, tcp6, unix), which say what listens at an address, are
// not per-process files and are read by internal/backend.
//
// Memory: RSS counts a page shared by several processes once in each, as
// ps does, which overstates a prefork pool (its children share the code
// and data loaded before the fork, and php-fpm's OPcache shared memory)
// several times over. PSS, from /proc/PID/smaps_rollup, divides each page
// among the processes that map it, so the tree's summed PSS is the memory
// the pool really uses; USS (private pages) is what one more worker would
// cost. Reading smaps_rollup needs the right to ptrace the process (the
// same user, or root); where it cannot be read, RSS stands in and the
// Usage says how often.
//
// Limits: CPU used by a descendant that exited between two samples and was
// not waited for by a sampled process is lost; the interval bounds that
// error (100 ms by default).
package procstat

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultInterval is the sampling interval: 100 ms.
const DefaultInterval = 100 * time.Millisecond

// clockTicks is USER_HZ, the unit of /proc CPU times; 100 on Linux.
const clockTicks = 100

// Usage is what a Sampler measured.
type Usage struct {
	// UserSeconds and SysSeconds are the CPU time used between Start and
	// Stop by the process trees.
	UserSeconds, SysSeconds float64
	// PeakRSS and MeanRSS are of the tree's summed resident memory, in bytes.
	PeakRSS, MeanRSS int64
	// PeakPSS and MeanPSS are of the tree's summed proportional set size,
	// in bytes (RSS where smaps_rollup could not be read: PSSFallback
	// counts those process readings).
	PeakPSS, MeanPSS int64
	PSSFallback      int
	// USSMean is the mean private memory of one process over the
	// processes and samples, USSMax the largest seen, in bytes.
	USSMean, USSMax int64
	// MaxProcs and MeanProcs count the processes of the trees.
	MaxProcs  int
	MeanProcs float64
	// Samples is the number of samples taken.
	Samples int
}

// Sampler reads /proc for a set of root processes at a fixed interval.
type Sampler struct {
	roots    []int
	interval time.Duration
	stop     chan struct{}
	wg       sync.WaitGroup

	each                  func(Reading)
	mu                    sync.Mutex
	first, last           snapshot
	rssSum, procsSum      int64
	pssSum, ussSum        int64
	ussN                  int64
	usage                 Usage
	firstTaken, lastTaken bool
}

// snapshot is one reading of the process trees.
type snapshot struct {
	utime, stime int64 // ticks, with the children's
	rss          int64 // bytes
	pss, uss     int64 // bytes; uss summed over the processes
	ussMax       int64
	fallback     int // processes whose smaps_rollup could not be read
	procs        int
}

// Check reports an error when a root process does not exist.
func Check(pids []int) error {
	if len(pids) == 0 {
		return errors.New("procstat: no process to sample")
	}
	for _, p := range pids {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d/stat", p)); err != nil {
			return fmt.Errorf("procstat: no process %d", p)
		}
	}
	return nil
}

// Reading is one sample of the process trees, for a timeline of the run.
type Reading struct {
	// CPUSeconds is the trees' CPU time (user + system, with waited-for
	// children) so far: a counter, compared between readings.
	CPUSeconds float64
	// PSS is the trees' summed proportional set size, in bytes (RSS where
	// smaps_rollup could not be read).
	PSS int64
	// Procs is the number of processes of the trees.
	Procs int
}

// Start samples the trees of pids every interval (DefaultInterval if 0)
// until Stop. It takes the first sample before it returns.
func Start(pids []int, interval time.Duration) *Sampler {
	return StartEach(pids, interval, nil)
}

// StartEach is Start that also passes every sample to each (when not
// nil), from the sampling goroutine, as it is taken.
func StartEach(pids []int, interval time.Duration, each func(Reading)) *Sampler {
	if interval <= 0 {
		interval = DefaultInterval
	}
	s := &Sampler{roots: pids, interval: interval, stop: make(chan struct{}), each: each}
	s.sample()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

// Stop takes a last sample and returns the usage.
func (s *Sampler) Stop() Usage {
	close(s.stop)
	s.wg.Wait()
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.usage
	u.UserSeconds = float64(s.last.utime-s.first.utime) / clockTicks
	u.SysSeconds = float64(s.last.stime-s.first.stime) / clockTicks
	if u.Samples > 0 {
		u.MeanRSS = s.rssSum / int64(u.Samples)
		u.MeanPSS = s.pssSum / int64(u.Samples)
		u.MeanProcs = float64(s.procsSum) / float64(u.Samples)
	}
	if s.ussN > 0 {
		u.USSMean = s.ussSum / s.ussN
	}
	return u
}

func (s *Sampler) sample() {
	snap := readTrees(s.roots)
	if s.each != nil {
		s.each(Reading{CPUSeconds: float64(snap.utime+snap.stime) / clockTicks, PSS: snap.pss, Procs: snap.procs})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.firstTaken {
		s.first, s.firstTaken = snap, true
	}
	// CPU counters only grow; a tree that lost a process (not waited for)
	// would look like it went back: keep the highest reading.
	if snap.utime+snap.stime >= s.last.utime+s.last.stime {
		s.last.utime, s.last.stime = snap.utime, snap.stime
	}
	s.usage.Samples++
	s.rssSum += snap.rss
	s.procsSum += int64(snap.procs)
	s.usage.PeakRSS = max(s.usage.PeakRSS, snap.rss)
	s.pssSum += snap.pss
	s.usage.PeakPSS = max(s.usage.PeakPSS, snap.pss)
	s.ussSum += snap.uss
	s.ussN += int64(snap.procs)
	s.usage.USSMax = max(s.usage.USSMax, snap.ussMax)
	s.usage.PSSFallback += snap.fallback
	s.usage.MaxProcs = max(s.usage.MaxProcs, snap.procs)
}

// readTrees reads the process table and sums the trees of roots (each
// process once, zombies counted): CPU ticks, RSS from /proc/PID/statm,
// PSS and USS from smaps_rollup (RSS where it cannot be read).
func readTrees(roots []int) snapshot {
	all, _ := Table()
	children := map[int][]int{}
	for pid, p := range all {
		children[p.PPID] = append(children[p.PPID], pid)
	}
	var snap snapshot
	seen := map[int]bool{}
	page := int64(os.Getpagesize())
	var walk func(int)
	walk = func(pid int) {
		p, ok := all[pid]
		if !ok || seen[pid] {
			return
		}
		seen[pid] = true
		snap.procs++
		snap.utime += p.UTime + p.CUTime
		snap.stime += p.STime + p.CSTime
		rss := rssPages(pid) * page
		snap.rss += rss
		if m, err := readRollup(pid); err == nil {
			snap.pss += m.pss
			snap.uss += m.uss
			snap.ussMax = max(snap.ussMax, m.uss)
		} else {
			snap.pss += rss
			snap.uss += rss
			snap.ussMax = max(snap.ussMax, rss)
			snap.fallback++
		}
		for _, c := range children[pid] {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return snap
}

// rssPages returns the resident set size of process pid in pages, the
// second field of /proc/PID/statm (0 if it cannot be read).
func rssPages(pid int) int64 {
	m, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	var n int64
	if f := strings.Fields(string(m)); len(f) > 1 {
		n, _ = strconv.ParseInt(f[1], 10, 64)
	}
	return n
}

// rollup is what /proc/PID/smaps_rollup says of a process, in bytes.
type rollup struct {
	rss, pss, uss int64
}

// readRollup reads /proc/PID/smaps_rollup.
func readRollup(pid int) (rollup, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return rollup{}, err
	}
	return parseRollup(string(b))
}

// parseRollup reads the Rss, Pss, Private_Clean and Private_Dirty lines
// (in kB) of an smaps_rollup text; USS is the two Private lines.
func parseRollup(s string) (rollup, error) {
	var r rollup
	found := 0
	for line := range strings.Lines(s) {
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch name {
		case "Rss":
			dst = &r.rss
		case "Pss":
			dst = &r.pss
		case "Private_Clean", "Private_Dirty":
			dst = &r.uss
		default:
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 1 {
			continue
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return rollup{}, fmt.Errorf("procstat: bad smaps_rollup line %q", strings.TrimSpace(line))
		}
		*dst += v << 10
		found++
	}
	if found < 4 {
		return rollup{}, errors.New("procstat: smaps_rollup lacks Rss, Pss or Private lines")
	}
	return r, nil
}
