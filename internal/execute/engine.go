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
