package execute

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/backbench/backbench/internal/stats"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/sockets"
)

// withRing makes io_uring look available (err nil) or not for the test.
func withRing(t *testing.T, err error) {
	old := ringAvailable
	ringAvailable = func() error { return err }
	t.Cleanup(func() { ringAvailable = old })
}

// TestResolveEngine: auto picks uring for closed-model runs without
// keep-alive to plain targets when io_uring can be set up, poller
// otherwise; an explicit uring where it cannot run is an error, and
// BACKBENCH_ENGINE replaces auto only.
func TestResolveEngine(t *testing.T) {
	unix := sockets.Target{Scheme: sockets.SchemeHTTP, Network: "unix", Address: "/run/app.sock"}
	fcgi := sockets.Target{Scheme: sockets.SchemeFCGI, Network: "unix", Address: "/run/fpm.sock"}
	two := []sockets.Addr{{Network: "tcp", Address: "127.0.0.1:9000"}, {Network: "tcp", Address: "127.0.0.1:9001"}}
	noRing := fmt.Errorf("%w (io_uring_setup: operation not permitted)", sockets.ErrNoRing)
	for _, c := range []struct {
		name      string
		p         Plan
		env       string
		ring      error
		want, err string
	}{
		{"auto, close", Plan{Target: unix}, "", nil, EngineUring, ""},
		{"auto, keep-alive", Plan{Target: unix, KeepAlive: true}, "", nil, EnginePoller, ""},
		{"auto, fcgi", Plan{Target: fcgi}, "", nil, EnginePoller, ""},
		{"uring, fcgi", Plan{Target: fcgi, Engine: EngineUring}, "", nil, EngineUring, ""},
		{"env uring, fcgi", Plan{Target: fcgi}, "uring", nil, EngineUring, ""},
		{"auto, open model", Plan{Shape: stats.Shape{Rate: 10}, Target: unix}, "", nil, EnginePoller, ""},
		{"auto, TLS", Plan{Target: unix, TLS: &tls.Config{}}, "", nil, EnginePoller, ""},
		{"auto, cluster", Plan{Target: unix, Upstreams: two}, "", nil, EnginePoller, ""},
		{"auto, no io_uring", Plan{Target: unix}, "", noRing, EnginePoller, ""},
		{"poller", Plan{Target: unix, Engine: EnginePoller}, "uring", nil, EnginePoller, ""},
		{"uring, keep-alive", Plan{Target: unix, KeepAlive: true, Engine: EngineUring}, "", nil, EngineUring, ""},
		{"uring, no io_uring", Plan{Target: unix, Engine: EngineUring}, "", noRing, "", "--engine uring: io_uring is not available"},
		{"uring, open model", Plan{Shape: stats.Shape{Rate: 10}, Target: unix, Engine: EngineUring}, "", nil, "", "closed model only"},
		{"uring, cluster", Plan{Target: unix, Upstreams: two, Engine: EngineUring}, "", nil, "", "not https or clusters"},
		{"env poller", Plan{Target: unix}, "poller", nil, EnginePoller, ""},
		{"env uring, keep-alive", Plan{Target: unix, KeepAlive: true}, "uring", nil, EngineUring, ""},
		{"env uring, open model", Plan{Shape: stats.Shape{Rate: 10}, Target: unix}, "uring", nil, EnginePoller, ""},
		{"env uring, no io_uring", Plan{Target: unix}, "uring", noRing, EnginePoller, ""},
		{"env bad", Plan{Target: unix}, "epoll", nil, "", "BACKBENCH_ENGINE: bad engine"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(EngineEnv, c.env)
			withRing(t, c.ring)
			got, err := c.p.ResolveEngine()
			switch {
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Errorf("error %v, want %q", err, c.err)
			case c.err == "" && (err != nil || got != c.want):
				t.Errorf("%q, %v; want %q", got, err, c.want)
			}
			if c.ring != nil && c.err != "" && !errors.Is(err, sockets.ErrNoRing) {
				t.Errorf("%v does not wrap ErrNoRing", err)
			}
		})
	}
}

// TestEngineFallback: where io_uring cannot be set up, a run that auto
// would give the ring engine runs on the poller and its record says so:
// whether the probe says so first, or the probe passed and no ring can be
// set up when the run starts.
func TestEngineFallback(t *testing.T) {
	refused := fmt.Errorf("%w (simulated)", sockets.ErrNoRing)
	for _, tc := range []struct {
		name              string
		probe, ringsSetUp error
	}{
		{"probe refuses", refused, nil},
		{"rings refused after the probe", nil, refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EngineEnv, "")
			withRing(t, tc.probe)
			if tc.ringsSetUp != nil {
				old := runOnRings
				runOnRings = func(int, int, func(int, *sockets.RingSlot), func(int)) error { return tc.ringsSetUp }
				t.Cleanup(func() { runOnRings = old })
			}
			srv, err := fixtures.Start(fixtures.ProtoHTTP, "tcp", "127.0.0.1:0", fixtures.Options{BodyBytes: 5})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			tgt, err := sockets.ParseTarget(srv.URL("/"))
			if err != nil {
				t.Fatal(err)
			}
			p := &Plan{Shape: stats.Shape{Concurrency: 3, Requests: 50}, Target: tgt, Timeout: 5 * time.Second}
			run, err := Run(context.Background(), p, Options{Quiet: true})
			if err != nil {
				t.Fatal(err)
			}
			m := run.Record
			if m.Environment.Engine != EnginePoller || m.Client.Engine != EnginePoller || m.Counts.Complete != 50 || srv.Requests() != 50 {
				t.Errorf("engine %q/%q, complete %d, served %d", m.Environment.Engine, m.Client.Engine, m.Counts.Complete, srv.Requests())
			}
		})
	}
}

// TestAutoThreads: half the CPUs only for a closed-model run on kept
// connections to this machine, without --threads or GOMAXPROCS set.
func TestAutoThreads(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	half := max(1, runtime.NumCPU()/2)
	if half >= runtime.GOMAXPROCS(0) {
		half = 0 // one CPU: nothing to leave to the backend
	}
	unix := sockets.Target{Network: "unix", Address: "/run/app.sock"}
	local := sockets.Target{Network: "tcp", Address: "127.0.0.1:9000"}
	remote := sockets.Target{Network: "tcp", Address: "192.0.2.1:9000"} // TEST-NET-1
	for _, c := range []struct {
		name string
		p    Plan
		want int
	}{
		{"unix, keep-alive", Plan{Target: unix, KeepAlive: true}, half},
		{"loopback, keep-alive", Plan{Target: local, KeepAlive: true}, half},
		{"loopback cluster, keep-alive", Plan{Target: local, KeepAlive: true,
			Upstreams: []sockets.Addr{{Network: "tcp", Address: "127.0.0.1:9000"}, {Network: "tcp", Address: "127.0.0.1:9001"}}}, half},
		{"cluster with a remote upstream", Plan{Target: local, KeepAlive: true,
			Upstreams: []sockets.Addr{{Network: "tcp", Address: "127.0.0.1:9000"}, {Network: "tcp", Address: "192.0.2.1:9001"}}}, 0},
		{"remote, keep-alive", Plan{Target: remote, KeepAlive: true}, 0},
		{"unix, no keep-alive", Plan{Target: unix}, 0},
		{"unix, open model", Plan{Shape: stats.Shape{Rate: 100}, Target: unix, KeepAlive: true}, 0},
		{"unix, --threads", Plan{Target: unix, KeepAlive: true, Threads: 2}, 0},
	} {
		if got := c.p.AutoThreads(); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	t.Setenv("GOMAXPROCS", "2")
	if got := (&Plan{Target: unix, KeepAlive: true}).AutoThreads(); got != 0 {
		t.Errorf("GOMAXPROCS set in the environment: %d, want 0", got)
	}
}

// TestCapThreadsOverlap: runs that overlap in one process restore
// GOMAXPROCS whatever order they end in; the first cap holds until the
// last ends.
func TestCapThreadsOverlap(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	for _, order := range [][2]int{{0, 1}, {1, 0}} {
		r := [2]func(){capThreads(1), capThreads(3)}
		if got := runtime.GOMAXPROCS(0); got != 1 {
			t.Errorf("during the runs: GOMAXPROCS %d, want the first cap, 1", got)
		}
		r[order[0]]()
		r[order[0]]() // a second call is harmless
		if got := runtime.GOMAXPROCS(0); got != 1 {
			t.Errorf("one run ended: GOMAXPROCS %d, want 1", got)
		}
		r[order[1]]()
		if got := runtime.GOMAXPROCS(0); got != before {
			t.Errorf("both ended (order %v): GOMAXPROCS %d, want %d", order, got, before)
		}
	}
	capThreads(0)()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("no cap: GOMAXPROCS %d, want %d", got, before)
	}
}
