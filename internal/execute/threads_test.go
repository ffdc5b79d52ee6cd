package execute

import (
	"runtime"
	"testing"

	"github.com/backbench/backbench/sockets"
)

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
		{"unix, open model", Plan{Target: unix, KeepAlive: true, Rate: 100}, 0},
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
