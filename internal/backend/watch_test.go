package backend

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backbench/backbench/internal/procstat"
)

// envDir is the directory the owner mode claims and starts its backends in.
const envDir = "BACKEND_TEST_DIR"

// ownerMain is the test binary as a program that starts backends under a
// watcher (as backbench study does) and is then killed by the test: it
// prints "pids P1 P2 ..." (its backends' trees) once they listen.
func ownerMain() int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	if _, err := StartWatcher(exe); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	dir := os.Getenv(envDir)
	if err := ClaimDir(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	var pids []string
	for i, mode := range []string{modeServe, modeFork} {
		addr := filepath.Join(dir, fmt.Sprintf("b%d.sock", i))
		p, err := Start(context.Background(), Spec{Name: mode, Argv: []string{exe},
			Env: []string{envMode + "=" + mode, envNetwork + "=unix", envAddr + "=" + addr}, Network: "unix", Addr: addr})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		for _, pid := range p.PIDs() {
			pids = append(pids, strconv.Itoa(pid))
		}
	}
	fmt.Println("pids " + strings.Join(pids, " "))
	select {}
}

// TestWatcherOutlivesOwner: a program that started two backends (one
// whose setsid child ignores SIGTERM) under a watcher is killed with
// SIGKILL; within 10 s every process of their trees is gone and the
// claimed directory removed, and the watcher itself has exited.
func TestWatcherOutlivesOwner(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "bbw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envMode+"="+modeOwner, envDir+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "pids ") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the owner said %q (%v): %s", line, err, stderr.String())
	}
	var pids []int
	for _, f := range strings.Fields(line)[1:] {
		pid, _ := strconv.Atoi(f)
		pids = append(pids, pid)
	}
	// The serve backend, the fork backend and its setsid child at least.
	if len(pids) < 3 {
		t.Fatalf("pids %v: want 3 or more", pids)
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			if !Gone(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait() // also waits for the watcher, which holds stderr
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for !Gone(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !Gone(pid) {
			t.Errorf("pid %d is alive after its owner was killed", pid)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the claimed directory is still there (%v)", err)
	}
	if !strings.Contains(stderr.String(), "watcher: backbench (pid") || !strings.Contains(stderr.String(), "SIGKILL needed") {
		t.Errorf("the watcher did not say what it did: %q", stderr.String())
	}
}

// TestWatcherCleanClose: a watcher whose owner stopped everything and
// released its directory exits at Close, silent, touching nothing.
func TestWatcherCleanClose(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w, err := StartWatcher(exe)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := ClaimDir(dir); err != nil {
		t.Fatal(err)
	}
	addr := filepath.Join(dir, "s.sock")
	p, err := Start(context.Background(), Spec{Name: "serve", Argv: []string{exe},
		Env: []string{envMode + "=" + modeServe, envNetwork + "=unix", envAddr + "=" + addr}, Network: "unix", Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	if rep := p.Stop(); len(rep.Left) > 0 {
		t.Fatal(rep)
	}
	if err := ReleaseDir(dir); err != nil {
		t.Fatal(err)
	}
	keep := t.TempDir() // not claimed: the watcher must leave it
	start := time.Now()
	w.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a directory not claimed was touched: %v", err)
	}
}

// TestLeftovers: processes carrying the marker of a run whose owner is
// dead, and its directory, are found and stopped; a process without the
// marker, one of a live run, and a directory without a marker are not
// touched.
func TestLeftovers(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("%d-1", os.Getpid()) // this PID, another start time: no such run
	ppid := os.Getppid()
	pi, err := procstat.ReadStat(ppid)
	if err != nil {
		t.Fatal(err)
	}
	alive := fmt.Sprintf("%d-%d", ppid, pi.Start)
	start := func(env ...string) int {
		cmd := exec.Command(exe)
		cmd.Env = append(append(os.Environ(), envMode+"="+modeNever), env...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-done })
		return cmd.Process.Pid
	}
	left := start(RunEnv + "=" + dead)
	plain := start()
	live := start(RunEnv + "=" + alive)
	tmp := t.TempDir()
	for name, id := range map[string]string{"bbstdead": dead, "bbstlive": alive, "bbstnone": "", "otherdead": dead} {
		d := filepath.Join(tmp, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if id != "" {
			os.WriteFile(filepath.Join(d, DirMarker), []byte(id+"\n"), 0o644)
		}
	}
	// The environments are readable once the processes have exec'd.
	// Leftovers of other runs on this machine may be found too: only
	// the one made here is looked at, and only it is stopped.
	var l *Leftover
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		ls, err := FindLeftovers(tmp, "bbst")
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ls {
			if x.Run == alive || x.Run == RunID() {
				t.Fatalf("a live run is taken for a leftover: %v", x)
			}
			if x.Run == dead {
				l = x
			}
		}
		if l != nil && len(l.Procs) == 1 {
			break
		}
	}
	if l == nil {
		t.Fatal("the leftover was not found")
	}
	if l.Run != dead || len(l.Procs) != 1 || l.Procs[left] == 0 || len(l.Dirs) != 1 || filepath.Base(l.Dirs[0]) != "bbstdead" {
		t.Fatalf("leftover %+v, want run %s, pid %d, dir bbstdead", l, dead, left)
	}
	s := l.String()
	if !strings.Contains(s, fmt.Sprintf("backbench pid %d", os.Getpid())) || !strings.Contains(s, strconv.Itoa(left)) || !strings.Contains(s, "bbstdead") {
		t.Errorf("String() = %q", s)
	}
	rep, err := l.Stop()
	if err != nil || len(rep.Left) > 0 || len(rep.PIDs) != 1 || rep.PIDs[0] != left {
		t.Errorf("Stop: %+v, %v", rep, err)
	}
	if !Gone(left) {
		t.Errorf("the leftover pid %d is alive", left)
	}
	for _, pid := range []int{plain, live} {
		if Gone(pid) {
			t.Errorf("pid %d, not a leftover, was stopped", pid)
		}
	}
	for name, want := range map[string]bool{"bbstdead": false, "bbstlive": true, "bbstnone": true, "otherdead": true} {
		_, err := os.Stat(filepath.Join(tmp, name))
		if got := err == nil; got != want {
			t.Errorf("%s exists: %v, want %v", name, got, want)
		}
	}
}

func TestParseRunID(t *testing.T) {
	for _, c := range []struct {
		in    string
		pid   int
		start uint64
		ok    bool
	}{{"12-345", 12, 345, true}, {"12", 0, 0, false}, {"x-1", 0, 0, false}, {"0-5", 0, 0, false}, {"", 0, 0, false}} {
		pid, start, ok := parseRunID(c.in)
		if pid != c.pid || start != c.start || ok != c.ok {
			t.Errorf("parseRunID(%q) = %d, %d, %v", c.in, pid, start, ok)
		}
	}
	if !runAlive(RunID()) || runAlive(fmt.Sprintf("%d-1", os.Getpid())) || !runAlive("garbage") {
		t.Error("runAlive")
	}
}
