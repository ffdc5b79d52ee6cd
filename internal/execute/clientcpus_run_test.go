package execute_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/execute"
	"github.com/backbench/backbench/internal/plan"
)

// clientCPUsAllowed reads Cpus_allowed_list from a /proc status file (""
// when it cannot be read: the thread is gone).
func clientCPUsAllowed(status string) string {
	b, err := os.ReadFile(status)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// clientThreadCPUs reads Cpus_allowed_list of every thread of this
// process, by thread.
func clientThreadCPUs() map[string]string {
	out := map[string]string{}
	dir := fmt.Sprintf("/proc/%d/task", os.Getpid())
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if v := clientCPUsAllowed(filepath.Join(dir, e.Name(), "status")); v != "" {
			out[e.Name()] = v
		}
	}
	return out
}

// TestRunClientCPUs: a 2 s run with ClientCPUs 0 (bench --client-cpus 0)
// runs every thread of the process on CPU 0, read from /proc while it
// runs, and its record says so (CPUs [0], 1 core); without them the
// record names no CPUs. It runs once: pinning is the setup's, whatever
// the engine.
func TestRunClientCPUs(t *testing.T) {
	if os.Getenv(execute.EngineEnv) != "" {
		t.Skip("runs once, with the default engine: the pinning is the setup's")
	}
	if v := clientCPUsAllowed("/proc/self/status"); v != "0-1" && !strings.HasPrefix(v, "0-") {
		t.Skipf("needs CPUs 0 and 1 (this process may use %q)", v)
	}
	srv := fixtures.StartTB(t, fixtures.ProtoFCGI, "unix", fixtures.Options{})
	for _, pinned := range []bool{true, false} {
		po := plan.Defaults(srv.URL("/"))
		po.Requests, po.RequestsSet, po.Concurrency, po.KeepAlive = 100000000, true, 4, true
		po.Duration, po.TimeLimitSet = 2*time.Second, true
		if pinned {
			po.ClientCPUs = "0"
		}
		ld, err := po.Build()
		if err != nil {
			t.Fatal(err)
		}
		// The mask holds from the setup to the end of the run (Done
		// restores the one before), so only reads taken while some thread
		// is on CPU 0 count: a thread ever read off it then and never on
		// it was not pinned; one read off it while the threads were being
		// set, and on it at a later read, was.
		onCPU0, offCPU0 := map[string]bool{}, map[string]string{}
		var mu sync.Mutex
		stop, polled := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(polled)
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				now := clientThreadCPUs()
				if !slices.Contains(slices.Collect(maps.Values(now)), "0") {
					continue
				}
				mu.Lock()
				for tid, v := range now {
					if v == "0" {
						onCPU0[tid] = true
					} else {
						offCPU0[tid] = v
					}
				}
				mu.Unlock()
			}
		}()
		run, err := execute.Run(context.Background(), ld.Plan, execute.Options{Stderr: io.Discard, Quiet: true, Version: "test"})
		close(stop)
		<-polled
		if err != nil {
			t.Fatal(err)
		}
		if pinned {
			if len(onCPU0) == 0 {
				t.Error("no thread read on CPU 0")
			}
			for tid, v := range offCPU0 {
				if !onCPU0[tid] {
					t.Errorf("ClientCPUs 0: thread %s may run on %s", tid, v)
				}
			}
		}
		c := run.Record.Client
		switch {
		case pinned && (!slices.Equal(c.CPUs, []int{0}) || c.Cores != 1):
			t.Errorf("ClientCPUs 0: the record's client CPUs %v, %d cores; want CPUs [0] and 1 core", c.CPUs, c.Cores)
		case !pinned && c.CPUs != nil:
			t.Errorf("not pinned: the record's client CPUs %v", c.CPUs)
		}
	}
}
