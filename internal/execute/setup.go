package execute

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/sockets"
)

// The engines that run a closed-model run's workers (--engine).
const (
	// EngineAuto picks EngineUring for the runs it wins on (see
	// Plan.ResolveEngine), EnginePoller otherwise.
	EngineAuto = "auto"
	// EnginePoller runs a goroutine per worker over the runtime's network
	// poller.
	EnginePoller = "poller"
	// EngineUring runs the workers as coroutines, one io_uring driver per
	// thread but one (sockets.RunOnRings).
	EngineUring = "uring"
)

// EngineEnv names the environment variable that replaces the default engine
// (auto) when --engine is not given: tests run the whole suite with each.
const EngineEnv = "BACKBENCH_ENGINE"

// ParseEngine checks an --engine value.
func ParseEngine(s string) (string, error) {
	switch s {
	case "", EngineAuto:
		return EngineAuto, nil
	case EnginePoller, EngineUring:
		return s, nil
	}
	return "", fmt.Errorf("bad engine %q: want auto, poller or uring", s)
}

// ringAvailable says whether io_uring can be set up here; a test hook.
var ringAvailable = sockets.RingAvailable

// ResolveEngine returns the engine the plan runs with: Plan.Engine, or when
// that is auto (or empty) the value of BACKBENCH_ENGINE if set, and for auto
// uring on the path where it costs less client CPU per request than the
// poller (a closed-model HTTP run without keep-alive to a plain TCP or Unix
// target with one address; see docs/performance.md), when io_uring can be
// set up here; poller otherwise. An explicit --engine uring where it cannot
// run is an error; BACKBENCH_ENGINE=uring there falls back to poller.
func (p *Plan) ResolveEngine() (string, error) {
	e, err := ParseEngine(p.Engine)
	if err != nil {
		return "", err
	}
	forced := e == EngineUring
	if e == EngineAuto {
		if env := os.Getenv(EngineEnv); env != "" {
			if e, err = ParseEngine(env); err != nil {
				return "", fmt.Errorf("%s: %v", EngineEnv, err)
			}
		}
	}
	if e == EnginePoller {
		return e, nil
	}
	var why error
	switch {
	case p.Rate > 0:
		why = errors.New("--engine uring runs the closed model only, not --rate")
	case p.TLS != nil || len(p.Upstreams) > 1:
		why = errors.New("--engine uring runs plain TCP and Unix targets with one address, not https or clusters")
	case e == EngineAuto && (p.Target.UsesTLS() || !ringByDefault(p)):
		// Measured: with keep-alive, and for FastCGI without KEEP_CONN to
		// php-fpm, the ring engine costs more client CPU than the poller
		// (each protocol says where it wins: Protocol.RingByDefault).
		return EnginePoller, nil
	default:
		if err := ringAvailable(); err != nil {
			why = fmt.Errorf("--engine uring: %w", err)
		}
	}
	switch {
	case why == nil:
		return EngineUring, nil
	case forced:
		return "", why
	}
	return EnginePoller, nil
}

// ringByDefault says whether the plan's protocol prefers the ring engine
// for its keep-alive setting; a plan without a known protocol does not.
func ringByDefault(p *Plan) bool {
	pr, err := p.Protocol()
	return err == nil && pr.RingByDefault(p.KeepAlive)
}

// ringEngine runs a run's workers over io_uring (sockets.RunOnRings): one
// ring driver per thread but one, at least one (a thread stays free for the
// rest of the process: timers, the network poller), each running its share
// of the workers as coroutines. A worker whose client cannot use a ring
// runs in a goroutine of its own, as does every worker when no ring can be
// set up (fellBack then says so, for the record).
type ringEngine struct {
	fellBack atomic.Bool
}

// runOnRings is sockets.RunOnRings (a variable for tests).
var runOnRings = sockets.RunOnRings

// ringUser is a client that can do its I/O through a ring slot
// (sockets.Loop).
type ringUser interface {
	UseRing(*sockets.RingSlot)
}

// Run runs work(i) for every client i; see Engine.
func (e *ringEngine) Run(clients []load.Client, work func(i int)) {
	var wg sync.WaitGroup
	var ring []int
	for i, c := range clients {
		if _, ok := c.(ringUser); ok {
			ring = append(ring, i)
		} else {
			wg.Go(func() { work(i) })
		}
	}
	threads := min(runtime.GOMAXPROCS(0)-1, len(ring))
	err := runOnRings(threads, len(ring),
		func(k int, s *sockets.RingSlot) { clients[ring[k]].(ringUser).UseRing(s) },
		func(k int) { work(ring[k]) })
	if err != nil {
		e.fellBack.Store(true)
		for _, i := range ring {
			wg.Go(func() { work(i) })
		}
	}
	wg.Wait()
}

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
