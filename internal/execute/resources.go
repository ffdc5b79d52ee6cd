package execute

import (
	"os"
	"runtime"
	"sync"

	"github.com/backbench/backbench/sockets"
)

// ReservedFiles is how many file descriptors a run keeps for itself beside
// its workers' connections and its rings: the standard streams, the
// runtime's network poller, the output files (-g, -e, --raw, --out, a
// profile), the backend's sampling (/proc files, the FPM status page) and
// the dials a probe makes before a sweep, with room to spare.
const ReservedFiles = 64

// FilesNeeded is how many file descriptors a run of concurrency workers
// may hold at once: one per worker's connection (a worker closes its
// connection before it dials the next one, on either engine), one ring per
// thread (the io_uring engine), and ReservedFiles.
func FilesNeeded(concurrency int) uint64 {
	return uint64(max(concurrency, 0)) + uint64(runtime.GOMAXPROCS(0)) + ReservedFiles
}

// FileLimit raises the soft RLIMIT_NOFILE as Prepare does for a run of
// concurrency workers and returns what such a run needs (FilesNeeded), the
// limit in force, and whether it is enough. When the limit cannot be read
// or set, it says nothing against the run (ok), which then meets the
// limit, if ever, as failed dials.
func FileLimit(concurrency int) (need, limit uint64, ok bool) {
	need = FilesNeeded(concurrency)
	limit, err := sockets.RaiseNoFileLimit(fileWant(concurrency))
	if err != nil {
		return need, limit, true
	}
	return need, limit, limit >= need
}

// MaxConcurrency is the highest concurrency whose run the file limit,
// raised to its hard limit, can hold (see FileLimit), at least 1.
func MaxConcurrency() int {
	_, limit, _ := FileLimit(1 << 20)
	if n := limit - FilesNeeded(0); limit > FilesNeeded(0) && n < 1<<31 {
		return max(int(n), 1)
	}
	return 1
}

// fileWant is the soft file limit Prepare asks for: twice the workers'
// connections and ReservedFiles, more than FilesNeeded so that a run near
// its need keeps headroom where the hard limit allows it.
func fileWant(concurrency int) uint64 {
	return uint64(max(concurrency, 0))*2 + ReservedFiles
}

// AutoThreads is the number of threads (GOMAXPROCS) a run of p uses when
// --threads is not given: for a closed-model run on kept connections to a
// backend on this machine (a Unix socket, or a TCP address of the machine,
// every upstream of a cluster), half the CPUs, at least one, leaving the
// others to the backend; otherwise 0, every CPU. A GOMAXPROCS set in the
// environment is the user's choice, and is kept.
//
// Why (2 cores, client and backend sharing them, 5 alternating rounds,
// see docs/performance.md): with kept connections a client on one thread
// costs 8 to 14% less CPU per request than on two, with 3 to 6% more
// requests a second, against nginx and php-fpm alike, because a response
// then wakes the thread that waits for it instead of a second one, which
// would spin and sleep again. Without keep-alive the kernel's connect and
// close work dominates and two threads do no worse; the open model keeps
// every CPU for its pacer.
func (p *Plan) AutoThreads() int {
	if p.Threads > 0 || p.Rate > 0 || !p.KeepAlive || os.Getenv("GOMAXPROCS") != "" || !p.local() {
		return 0
	}
	n := max(1, runtime.NumCPU()/2)
	if n >= runtime.GOMAXPROCS(0) {
		return 0
	}
	return n
}

// local reports whether every address of the target is on this machine.
func (p *Plan) local() bool {
	addrs := p.Upstreams
	if len(addrs) == 0 {
		addrs = []sockets.Addr{{Network: p.Target.Network, Address: p.Target.Address}}
	}
	for _, a := range addrs {
		if a.Network != "unix" && !sockets.IsLocalTCP(a.Address) {
			return false
		}
	}
	return true
}

// procs is the process-wide GOMAXPROCS cap of the runs in progress: the
// first run to cap it sets it, the last one to end restores it, so that
// runs that overlap in one process (tests, trials) never leave it changed.
var procs struct {
	sync.Mutex
	users, prev int
}

// capThreads caps GOMAXPROCS at n (0: no cap) until the returned function
// is called.
func capThreads(n int) (restore func()) {
	if n <= 0 {
		return func() {}
	}
	procs.Lock()
	defer procs.Unlock()
	if procs.users == 0 {
		procs.prev = runtime.GOMAXPROCS(n)
	}
	procs.users++
	return sync.OnceFunc(func() {
		procs.Lock()
		defer procs.Unlock()
		if procs.users--; procs.users == 0 {
			runtime.GOMAXPROCS(procs.prev)
		}
	})
}
