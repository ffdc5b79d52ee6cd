package studyrun_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/studyfile"
)

// pinnedCPUsAllowed reads Cpus_allowed_list from a /proc status file (""
// when it cannot be read: the process or thread is gone).
func pinnedCPUsAllowed(status string) string {
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

// pinnedStudyServes lists the live processes of `backbench serve` whose
// environment holds a serveStudy marker of this test process.
func pinnedStudyServes() []int {
	want := []byte(fmt.Sprintf("%s=%d-", serveStudyMark, os.Getpid()))
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		argv, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(argv, []byte("\x00serve\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// pinnedStudyFile is a study of a prefork pool (a master and 2 or 3
// children) pinned to CPU 1, the client to CPU 0.
const pinnedStudyFile = `question: Does a pinned pool of 3 serve more than one of 2?
factors:
  workers: [2, 3]
backends:
  - name: pool
    cpus: "1"
    command: [backbench, serve, --protocol, fcgi, --processes, "{workers}", --model, serial, --delay, 1ms, --listen, "{listen}"]
    url: "fcgi://{target}/"
measure:
  kind: bench
  concurrency: 2
  duration: 1s
  repeat: 2
  client_cpus: 0
`

// TestStudyPinned: a prefork pool started with cpus: "1" runs every
// process of its tree (the children its master forks after it starts)
// on CPU 1, the study's own threads (this process's) run on CPU 0
// (client_cpus: 0), both read from /proc while the study runs, and the
// result records them.
func TestStudyPinned(t *testing.T) {
	if v := pinnedCPUsAllowed("/proc/self/status"); v != "0-1" && !strings.HasPrefix(v, "0-") {
		t.Skipf("needs CPUs 0 and 1 (this process may use %q)", v)
	}
	serveStudyBinary(t) // skips (-short, the second pass) before the poller starts
	var mu sync.Mutex
	backends := map[int]string{}  // PID of a process of a pool -> its CPUs
	client := map[string]string{} // thread of the study -> its CPUs
	// A thread of the study seen on other CPUs, first and last: the
	// thread that forks a backend carries the backend's mask for the
	// fork and exec, then ends; a client thread would stay.
	firstBad, lastBad := map[string]time.Time{}, map[string]time.Time{}
	maxPool := 0
	stop, polled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			pool := 0
			mu.Lock()
			for _, pid := range pinnedStudyServes() {
				pool++
				if v := pinnedCPUsAllowed(fmt.Sprintf("/proc/%d/status", pid)); v != "" {
					backends[pid] = v
				}
			}
			maxPool = max(maxPool, pool)
			if pool > 0 {
				// A backend runs: the client's CPUs were set before it started.
				now := time.Now()
				dir := fmt.Sprintf("/proc/%d/task", os.Getpid())
				ents, _ := os.ReadDir(dir)
				for _, e := range ents {
					v := pinnedCPUsAllowed(filepath.Join(dir, e.Name(), "status"))
					if v == "" {
						continue
					}
					client[e.Name()] = v
					if v != "0" {
						if _, ok := firstBad[e.Name()]; !ok {
							firstBad[e.Name()] = now
						}
						lastBad[e.Name()] = now
					}
				}
			}
			mu.Unlock()
		}
	}()
	r := serveStudy(t, writeServeStudy(t, pinnedStudyFile), studyfile.Overrides{})
	close(stop)
	<-polled
	r.ok(t)
	if maxPool < 3 {
		t.Errorf("saw at most %d processes of a pool at once, want a master and its children", maxPool)
	}
	for pid, v := range backends {
		if v != "1" {
			t.Errorf("backend process %d: Cpus_allowed_list %s, want 1", pid, v)
		}
	}
	if len(client) == 0 {
		t.Error("no thread of the study read")
	}
	good := 0
	for tid, v := range client {
		if v == "0" {
			good++
		}
		if lastBad[tid].Sub(firstBad[tid]) > time.Second {
			t.Errorf("the study's thread %s ran on CPUs %s for more than a second, want 0", tid, v)
		}
	}
	if good == 0 {
		t.Errorf("no thread of the study ran on CPU 0: %v", client)
	}
	res := r.res
	if !slices.Equal(res.Measure.ClientCPUs, []int{0}) {
		t.Errorf("study.json: client CPUs %v, want [0]", res.Measure.ClientCPUs)
	}
	for _, c := range res.Configurations {
		if !slices.Equal(c.CPUs, []int{1}) {
			t.Errorf("study.json: %s ran on %v, want [1]", c.Name, c.CPUs)
		}
	}
	if strings.Contains(strings.Join(res.Notes, "\n"), "nothing was pinned") {
		t.Errorf("notes say nothing was pinned: %v", res.Notes)
	}
}
