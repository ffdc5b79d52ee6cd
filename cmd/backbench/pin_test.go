package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/study"
)

// cpusAllowed reads Cpus_allowed_list from a /proc status file ("" when
// it cannot be read: the process or thread is gone).
func cpusAllowed(status string) string {
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

// threadCPUs reads Cpus_allowed_list of every thread of pid, by thread.
func threadCPUs(pid int) map[string]string {
	out := map[string]string{}
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if v := cpusAllowed(filepath.Join(dir, e.Name(), "status")); v != "" {
			out[e.Name()] = v
		}
	}
	return out
}

// needTwoCPUs skips a test on a machine where backbench may use fewer
// than CPUs 0 and 1.
func needTwoCPUs(t *testing.T) {
	t.Helper()
	if v := cpusAllowed("/proc/self/status"); v != "0-1" && !strings.HasPrefix(v, "0-") {
		t.Skipf("needs CPUs 0 and 1 (this process may use %q)", v)
	}
}

// pinnedStudy is a study of a prefork pool (a master and 2 or 3
// children) pinned to CPU 1, the client to CPU 0.
const pinnedStudy = `question: Does a pinned pool of 3 serve more than one of 2?
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
// on CPU 1, the study's own threads run on CPU 0 (client_cpus: 0), both
// read from /proc while the study runs, and study.json records them.
func TestStudyPinned(t *testing.T) {
	onceAcrossEngines(t)
	needTwoCPUs(t)
	bin := studyBinary(t)
	f := writeStudy(t, pinnedStudy)
	out := t.TempDir()
	mark := fmt.Sprintf("BBPIN_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd := exec.Command(bin, "study", "-q", "--seed", "7", "--out", out, f)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), mark)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	backends := map[int]string{}  // PID of a process of a pool -> its CPUs
	client := map[string]string{} // thread of the study -> its CPUs
	// A thread of the study seen on other CPUs, first and last: the
	// thread that forks a backend carries the backend's mask for the
	// fork and exec, then ends; a client thread would stay.
	firstBad, lastBad := map[string]time.Time{}, map[string]time.Time{}
	maxPool := 0
	var err error
poll:
	for {
		select {
		case err = <-done:
			break poll
		case <-time.After(20 * time.Millisecond):
		}
		pool := 0
		for _, pid := range markedNow(mark) {
			argv, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if !bytes.Contains(argv, []byte("\x00serve\x00")) {
				continue
			}
			pool++
			if v := cpusAllowed(fmt.Sprintf("/proc/%d/status", pid)); v != "" {
				backends[pid] = v
			}
		}
		maxPool = max(maxPool, pool)
		if pool > 0 {
			// A backend runs: the client's CPUs were set before it started.
			now := time.Now()
			for tid, v := range threadCPUs(cmd.Process.Pid) {
				client[tid] = v
				if v != "0" {
					if _, ok := firstBad[tid]; !ok {
						firstBad[tid] = now
					}
					lastBad[tid] = now
				}
			}
		}
	}
	if err != nil {
		t.Fatalf("study: %v\nstdout:\n%s\nstderr:\n%s", err, so.String(), se.String())
	}
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
	b, err := os.ReadFile(filepath.Join(out, "study.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res study.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
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

// TestBenchClientCPUs: bench --client-cpus 0 runs every thread of
// backbench on CPU 0 (read from /proc while it runs), and its JSON
// records it; without the flag the record names no CPUs.

// TestClientCPUsRefused: a CPU list that is not one, or that names a CPU
// the machine lacks, is a usage error on bench, sweep and capacity.
func TestClientCPUsRefused(t *testing.T) {
	onceAcrossEngines(t)
	bin := studyBinary(t)
	for _, c := range []struct{ cmd, list, want string }{
		{"bench", "x", `--client-cpus x: "x": want CPU numbers and ranges separated by commas`},
		{"bench", "1-0", `--client-cpus 1-0: "1-0": a range goes up (0-1)`},
		{"sweep", "1023", "--client-cpus 1023: this machine has no CPU 1023"},
		{"capacity", "0;1", `--client-cpus 0;1: "0;1": want CPU numbers`},
	} {
		args := []string{c.cmd, "--client-cpus", c.list, "fcgi://127.0.0.1:1/"}
		switch c.cmd {
		case "capacity":
			args = append(args[:1], append([]string{"--slo", "p99<=10ms"}, args[1:]...)...)
		case "sweep":
			args = append(args[:1], append([]string{"-c", "1,2"}, args[1:]...)...)
		}
		out, err := exec.Command(bin, args...).CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() == 0 || !strings.Contains(string(out), c.want) {
			t.Errorf("%s --client-cpus %s: %v\n%s\nwant %q", c.cmd, c.list, err, out, c.want)
		}
	}
}
