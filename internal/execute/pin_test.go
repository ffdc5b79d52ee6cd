package execute

import (
	"io"
	"runtime"
	"slices"
	"testing"

	"github.com/backbench/backbench/sockets"
)

// TestPrepareClientCPUs: a plan's ClientCPUs put every thread on them and
// cap GOMAXPROCS at their count while the setup lasts; Done gives both
// back.
func TestPrepareClientCPUs(t *testing.T) {
	mine, err := sockets.Affinity(0)
	if err != nil || len(mine) < 2 {
		t.Skipf("needs 2 CPUs (this process may use %v)", mine)
	}
	procs := runtime.GOMAXPROCS(0)
	want := []int{mine[len(mine)-1]}
	s := Prepare(&Plan{ClientCPUs: want}, 1, true, io.Discard)
	if !slices.Equal(s.CPUs, want) || s.PinError != nil {
		t.Errorf("setup CPUs %v, error %v; want %v", s.CPUs, s.PinError, want)
	}
	tids, _ := sockets.Threads()
	for _, tid := range tids {
		if got, err := sockets.Affinity(tid); err == nil && !slices.Equal(got, want) {
			t.Errorf("thread %d may run on %v, want %v", tid, got, want)
		}
	}
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("GOMAXPROCS %d while pinned to one CPU", n)
	}
	s.Done()
	if got, _ := sockets.Affinity(0); !slices.Equal(got, mine) {
		t.Errorf("after Done the thread may run on %v, want %v", got, mine)
	}
	if n := runtime.GOMAXPROCS(0); n != procs {
		t.Errorf("GOMAXPROCS %d after Done, want %d", n, procs)
	}
	s = Prepare(&Plan{ClientCPUs: []int{5000}}, 1, true, io.Discard)
	defer s.Done()
	if s.PinError == nil || len(s.CPUs) > 0 {
		t.Errorf("CPU 5000: setup CPUs %v, error %v", s.CPUs, s.PinError)
	}
}
