package sockets

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// allowedList reads Cpus_allowed_list of /proc/PATH/status.
func allowedList(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + path + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list in /proc/%s/status", path)
	return ""
}

// lastCPU is the highest CPU this process may use.
func lastCPU(t *testing.T) int {
	t.Helper()
	cpus, err := Affinity(0)
	if err != nil || len(cpus) == 0 {
		t.Fatalf("Affinity: %v, %v", cpus, err)
	}
	return cpus[len(cpus)-1]
}

func TestStartOnCPUs(t *testing.T) {
	cpu := lastCPU(t)
	before, _ := Affinity(0)
	// A shell that forks a child after it starts: the child inherits.
	cmd := exec.Command("sh", "-c", "sleep 30 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := StartOnCPUs([]int{cpu}, cmd.Start); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	child := strings.TrimSpace(string(buf[:n]))
	if _, err := strconv.Atoi(child); err != nil {
		t.Fatalf("child pid %q", child)
	}
	defer func() { pid, _ := strconv.Atoi(child); p, _ := os.FindProcess(pid); p.Kill() }()
	want := strconv.Itoa(cpu)
	for _, p := range []string{strconv.Itoa(cmd.Process.Pid), child} {
		if got := allowedList(t, p); got != want {
			t.Errorf("process %s: Cpus_allowed_list %s, want %s", p, got, want)
		}
	}
	// The caller's thread keeps its mask.
	if after, _ := Affinity(0); !slices.Equal(after, before) {
		t.Errorf("the caller's mask changed: %v, was %v", after, before)
	}
	if err := StartOnCPUs(nil, func() error { t.Error("start called"); return nil }); err == nil {
		t.Error("no CPUs: no error")
	}
}

func TestSetThreadsAffinity(t *testing.T) {
	cpu := lastCPU(t)
	before, _ := Affinity(0)
	defer SetThreadsAffinity(before)
	n, err := SetThreadsAffinity([]int{cpu})
	if err != nil || n == 0 {
		t.Fatalf("SetThreadsAffinity = %d, %v", n, err)
	}
	// A thread started afterwards inherits the mask.
	done := make(chan string)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		got, _ := Affinity(0)
		done <- strconv.Itoa(len(got))
	}()
	if got := <-done; got != "1" {
		t.Errorf("a thread locked afterwards may run on %s CPUs, want 1", got)
	}
	tids, err := Threads()
	if err != nil {
		t.Fatal(err)
	}
	for _, tid := range tids {
		if got := allowedList(t, "self/task/"+strconv.Itoa(tid)); got != strconv.Itoa(cpu) {
			t.Errorf("thread %d: Cpus_allowed_list %s, want %d", tid, got, cpu)
		}
	}
	if _, err := SetThreadsAffinity([]int{5000}); err == nil {
		t.Error("CPU 5000: no error")
	}
}
