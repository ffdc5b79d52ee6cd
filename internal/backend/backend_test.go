package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backbench/backbench/sockets"
)

// sockDir makes a short directory for Unix sockets (t.TempDir's paths can
// pass the 107 bytes of a socket address).
func sockDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "bb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// testSpec is a Spec that runs the test binary as a backend of mode at an
// address PickAddr gives.
func testSpec(t *testing.T, mode, network string) Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addr, err := PickAddr(network, sockDir(t), t.Name())
	if err != nil {
		t.Fatal(err)
	}
	return Spec{
		Name:    mode + " " + t.Name(),
		Argv:    []string{exe},
		Env:     []string{envMode + "=" + mode, envNetwork + "=" + network, envAddr + "=" + addr},
		Network: network,
		Addr:    addr,
	}
}

// start starts spec and stops it when the test ends, checking that nothing
// of it is left.
func start(t *testing.T, spec Spec) *Process {
	t.Helper()
	p, err := Start(context.Background(), spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if rep := p.Stop(); len(rep.Left) > 0 {
			t.Errorf("left after Stop: %v", rep.Left)
		}
	})
	return p
}

// checkGone fails the test if a process of pids still runs. A zombie
// counts as gone: it has exited, and its reaper (init) is not ours.
func checkGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			continue
		}
		if !Gone(pid) {
			t.Errorf("process %d still runs (kill 0: %v)", pid, err)
		}
	}
}

// hello connects to a started test backend and reads its greeting.
func hello(t *testing.T, network, addr string) {
	t.Helper()
	c, err := net.DialTimeout(network, addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil || string(b) != "hello\n" {
		t.Fatalf("read %q, %v", b, err)
	}
}

func TestStartStop(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			spec := testSpec(t, modeServe, network)
			p, err := Start(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			inodes, err := Listening(network, spec.Addr)
			if err != nil || len(inodes) == 0 {
				t.Fatalf("Listening after Start: %v, %v", inodes, err)
			}
			if pids := p.PIDs(); !slices.Contains(pids, p.PID()) {
				t.Errorf("PIDs %v lack the leader %d", pids, p.PID())
			}
			if s := p.ExitStatus(); s != "" {
				t.Errorf("ExitStatus while running: %q", s)
			}
			hello(t, network, spec.Addr)
			rep := p.Stop()
			if rep.Killed || len(rep.Left) > 0 {
				t.Errorf("Stop: %+v", rep)
			}
			if rep.Elapsed > 10*time.Second {
				t.Errorf("Stop took %v", rep.Elapsed)
			}
			select {
			case <-p.Done():
			default:
				t.Error("Done not closed after Stop")
			}
			if s := p.ExitStatus(); s != "killed by SIGTERM" {
				t.Errorf("ExitStatus %q, want killed by SIGTERM", s)
			}
			if got := p.Tail(5); len(got) == 0 || !strings.HasPrefix(got[len(got)-1], "listening on") {
				t.Errorf("Tail %q", got)
			}
			checkGone(t, []int{p.PID()})
			if again := p.Stop(); again.Killed != rep.Killed || again.Elapsed != rep.Elapsed {
				t.Errorf("second Stop %+v, first %+v", again, rep)
			}
		})
	}
}

func TestListenLate(t *testing.T) {
	spec := testSpec(t, modeLate, "unix")
	t0 := time.Now()
	p := start(t, spec)
	if d := time.Since(t0); d < 300*time.Millisecond {
		t.Errorf("ready after %v, before the backend listened", d)
	}
	hello(t, "unix", spec.Addr)
	_ = p
}

func TestExitAtStart(t *testing.T) {
	spec := testSpec(t, modeExit, "tcp")
	_, err := Start(context.Background(), spec)
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("Start: %v, want a StartError", err)
	}
	if se.Kind != KindExited || se.ExitCode != 1 {
		t.Errorf("kind %q code %d", se.Kind, se.ExitCode)
	}
	want := `backend "` + spec.Name + `" exited at start (status 1): fatal: config.toml line 3: unknown key`
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	if !slices.Contains(se.Tail, "starting up") || len(se.Tail) > 5 {
		t.Errorf("tail %q", se.Tail)
	}
}

func TestNeverListens(t *testing.T) {
	spec := testSpec(t, modeNever, "tcp")
	spec.StartTimeout = 500 * time.Millisecond
	t0 := time.Now()
	_, err := Start(context.Background(), spec)
	var se *StartError
	if !errors.As(err, &se) || se.Kind != KindNeverListened {
		t.Fatalf("Start: %v, want never listened", err)
	}
	if d := time.Since(t0); d < 500*time.Millisecond || d > 20*time.Second {
		t.Errorf("gave up after %v", d)
	}
	if want := " did not listen on " + spec.Addr + " within 500ms"; !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error %q, want it to end with %q", err, want)
	}
}

// TestOthersListener: a listener of another process on the address is not
// the backend's.
func TestOthersListener(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			spec := testSpec(t, modeNever, network)
			spec.StartTimeout = 500 * time.Millisecond
			ln, err := net.Listen(network, spec.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			_, err = Start(context.Background(), spec)
			var se *StartError
			if !errors.As(err, &se) || se.Kind != KindNeverListened {
				t.Fatalf("Start: %v, want never listened", err)
			}
			if !slices.Contains(se.Holders, os.Getpid()) {
				t.Errorf("holders %v, want this process %d", se.Holders, os.Getpid())
			}
			if !strings.Contains(err.Error(), "another process listens there") {
				t.Errorf("error %q", err)
			}
		})
	}
}

func TestIgnoresTERM(t *testing.T) {
	spec := testSpec(t, modeIgnore, "tcp")
	spec.Grace = 200 * time.Millisecond
	p := start(t, spec)
	pids := p.PIDs()
	rep := p.Stop()
	if !rep.Killed || len(rep.Left) > 0 {
		t.Errorf("Stop: %+v, want killed and nothing left", rep)
	}
	if rep.Elapsed < 200*time.Millisecond || rep.Elapsed > 10*time.Second {
		t.Errorf("Stop took %v", rep.Elapsed)
	}
	if s := p.ExitStatus(); s != "killed by SIGKILL" {
		t.Errorf("ExitStatus %q", s)
	}
	checkGone(t, pids)
}

// TestTree: a child in a session of its own, ignoring SIGTERM like its
// parent, is stopped with it.
func TestTree(t *testing.T) {
	spec := testSpec(t, modeFork, "unix")
	spec.Grace = 200 * time.Millisecond
	p := start(t, spec)
	pids := p.PIDs()
	if len(pids) != 2 {
		t.Fatalf("PIDs %v, want the leader and its child", pids)
	}
	rep := p.Stop()
	if !rep.Killed || len(rep.Left) > 0 {
		t.Errorf("Stop: %+v", rep)
	}
	checkGone(t, pids)
}

// TestOrphan: a child that called setsid, whose parent died, is found by
// its recorded PID.
func TestOrphan(t *testing.T) {
	spec := testSpec(t, modeOrphan, "tcp")
	spec.Grace = 200 * time.Millisecond
	p := start(t, spec)
	pids := p.PIDs()
	if len(pids) != 2 {
		t.Fatalf("PIDs %v, want the leader and its child", pids)
	}
	syscall.Kill(p.PID(), syscall.SIGKILL)
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the leader did not die of SIGKILL")
	}
	if s := p.ExitStatus(); s != "killed by SIGKILL" {
		t.Errorf("ExitStatus %q", s)
	}
	if now := p.PIDs(); len(now) != 1 || now[0] == p.PID() {
		t.Fatalf("PIDs after the leader died: %v, want its child", now)
	}
	rep := p.Stop()
	if !rep.Killed || len(rep.Left) > 0 {
		t.Errorf("Stop: %+v", rep)
	}
	checkGone(t, pids)
}

func TestStopAll(t *testing.T) {
	var ps []*Process
	for _, m := range []string{modeServe, modeIgnore, modeFork} {
		spec := testSpec(t, m, "unix")
		spec.Grace = 200 * time.Millisecond
		ps = append(ps, start(t, spec))
	}
	var pids []int
	for _, p := range ps {
		pids = append(pids, p.PIDs()...)
	}
	reps := StopAll(append(ps, nil))
	if len(reps) != 4 {
		t.Fatalf("%d reports", len(reps))
	}
	for i, want := range []bool{false, true, true} {
		if reps[i].Killed != want || len(reps[i].Left) > 0 {
			t.Errorf("report %d: %+v", i, reps[i])
		}
	}
	checkGone(t, pids)
}

func TestExecError(t *testing.T) {
	spec := Spec{Name: "missing", Argv: []string{"/nonexistent/backend-xyz", "-x"}, Network: "tcp", Addr: "127.0.0.1:1"}
	_, err := Start(context.Background(), spec)
	var se *StartError
	if !errors.As(err, &se) || se.Kind != KindNotFound {
		t.Fatalf("Start: %v", err)
	}
	if want := `backend "missing": command not found: /nonexistent/backend-xyz (no such file)`; err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	spec.Argv[0] = "backend-xyz-not-on-path"
	_, err = Start(context.Background(), spec)
	if want := `backend "missing": command not found: backend-xyz-not-on-path (not on PATH)`; !errors.As(err, &se) || se.Kind != KindNotFound || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
	for _, bad := range []Spec{
		{Name: "x", Network: "tcp", Addr: "127.0.0.1:1"},
		{Name: "x", Argv: []string{"true"}, Network: "udp", Addr: "127.0.0.1:1"},
		{Name: "x", Argv: []string{"true"}, Network: "tcp", Addr: "127.0.0.1"},
		{Name: "x", Argv: []string{"true"}, Network: "unix", Addr: "/" + strings.Repeat("s", 107)},
	} {
		_, err := Start(context.Background(), bad)
		if !errors.As(err, &se) || se.Kind != KindSpec {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

func TestCanceled(t *testing.T) {
	spec := testSpec(t, modeNever, "tcp")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := Start(ctx, spec)
	var se *StartError
	if !errors.As(err, &se) || se.Kind != KindCanceled || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start: %v", err)
	}
}

func TestPickAddr(t *testing.T) {
	seen := map[string]bool{}
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var high int
		if _, err := fmtSscan(string(b), &low, &high); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		addr, err := PickAddr("tcp", "", "x")
		if err != nil {
			t.Fatal(err)
		}
		if seen[addr] {
			t.Fatalf("%s twice", addr)
		}
		seen[addr] = true
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("%s not usable: %v", addr, err)
		}
		ln.Close()
		_, port, _ := net.SplitHostPort(addr)
		var p int
		fmtSscan(port, &p)
		if low > lowestPort+1000 && (p < lowestPort || p >= low) {
			t.Errorf("port %d not in [%d, %d)", p, lowestPort, low)
		}
	}
	dir := sockDir(t)
	for _, name := range []string{"fcgi-prefork workers=4", "fcgi-prefork workers:4", "fcgi-prefork workers=4", "plain", "../../etc", strings.Repeat("long", 40), "ünïcode"} {
		addr, err := PickAddr("unix", dir, name)
		if err != nil {
			t.Fatal(err)
		}
		if seen[addr] {
			t.Fatalf("%s twice", addr)
		}
		seen[addr] = true
		if filepath.Dir(addr) != dir || !strings.HasSuffix(addr, ".sock") || len(filepath.Base(addr)) > maxSockName+len(".sock")+4 {
			t.Errorf("%q: %s", name, addr)
		}
		ln, err := net.Listen("unix", addr)
		if err != nil {
			t.Fatalf("%s not usable: %v", addr, err)
		}
		ln.Close()
	}
	if addr, _ := PickAddr("unix", dir, "plain-2"); addr == filepath.Join(dir, "plain-2.sock") && seen[addr] {
		t.Errorf("%s twice", addr)
	}
	if _, err := PickAddr("unix", "/"+strings.Repeat("d", 100), "name"); err == nil || !strings.Contains(err.Error(), "107") {
		t.Errorf("a long path: %v", err)
	}
	if _, err := PickAddr("udp", "", "x"); err == nil {
		t.Error("udp accepted")
	}
}

func TestListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if ino, err := Listening("tcp", addr); err != nil || len(ino) != 1 {
		t.Errorf("tcp %s: %v, %v", addr, ino, err)
	}
	ln.Close()
	if ino, err := Listening("tcp", addr); err != nil || len(ino) != 0 {
		t.Errorf("tcp %s after close: %v, %v", addr, ino, err)
	}
	// A wildcard listener takes 127.0.0.1.
	if ln, err := net.Listen("tcp4", "0.0.0.0:0"); err == nil {
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		if ino, err := Listening("tcp", "127.0.0.1:"+port); err != nil || len(ino) != 1 {
			t.Errorf("tcp 0.0.0.0:%s: %v, %v", port, ino, err)
		}
		ln.Close()
	}
	if ln, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		if ino, err := Listening("tcp", ln.Addr().String()); err != nil || len(ino) != 1 {
			t.Errorf("tcp %s: %v, %v", ln.Addr(), ino, err)
		}
		ln.Close()
	}
	path := filepath.Join(sockDir(t), "a b.sock")
	uln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	if ino, err := Listening("unix", path); err != nil || len(ino) != 1 {
		t.Errorf("unix %s: %v, %v", path, ino, err)
	}
	// A connected client is not a listener.
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	if ino, err := Listening("unix", path); err != nil || len(ino) != 1 {
		t.Errorf("unix %s with a client: %v, %v", path, ino, err)
	}
	c.Close()
	uln.Close()
	if ino, err := Listening("unix", path); err != nil || len(ino) != 0 {
		t.Errorf("unix %s after close: %v, %v", path, ino, err)
	}
	if _, err := Listening("sctp", "x"); err == nil {
		t.Error("sctp accepted")
	}
}

func TestExitZeroAndBadDir(t *testing.T) {
	spec := testSpec(t, modeExit, "tcp")
	spec.Dir = "/nonexistent-dir-xyz"
	_, err := Start(context.Background(), spec)
	var se *StartError
	if !errors.As(err, &se) || se.Kind != KindExec || !strings.Contains(err.Error(), "directory /nonexistent-dir-xyz") {
		t.Errorf("a missing directory: %v", err)
	}
	spec = testSpec(t, modeServe, "tcp")
	spec.Argv = []string{"/bin/sh", "-c", "echo going to the background"}
	_, err = Start(context.Background(), spec)
	if !errors.As(err, &se) || se.Kind != KindExited || se.ExitCode != 0 {
		t.Fatalf("Start: %v", err)
	}
	if want := "(status 0; a backend must stay in the foreground): going to the background"; !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error %q, want it to end with %q", err, want)
	}
}

// TestGroupOutlivesLeader: the leader stops on SIGTERM, its child in the
// group does not: SIGKILL to the group ends it.
func TestGroupOutlivesLeader(t *testing.T) {
	spec := testSpec(t, modeGroup, "tcp")
	spec.Grace = 200 * time.Millisecond
	p := start(t, spec)
	pids := p.PIDs()
	if len(pids) != 2 {
		t.Fatalf("PIDs %v, want the leader and its child", pids)
	}
	rep := p.Stop()
	if !rep.Killed || len(rep.Left) > 0 {
		t.Errorf("Stop: %+v", rep)
	}
	if s := p.ExitStatus(); s != "killed by SIGTERM" {
		t.Errorf("ExitStatus %q", s)
	}
	checkGone(t, pids)
}

// TestCPUs: a backend started with CPUs runs its whole tree on them, the
// child it forks after it starts included, and the caller keeps its own
// mask.
func TestCPUs(t *testing.T) {
	mine, err := sockets.Affinity(0)
	if err != nil {
		t.Fatal(err)
	}
	cpu := mine[len(mine)-1]
	spec := testSpec(t, modeFork, "unix")
	spec.Grace = 200 * time.Millisecond
	spec.CPUs = []int{cpu}
	p := start(t, spec)
	defer p.Stop()
	pids := p.PIDs()
	if len(pids) != 2 {
		t.Fatalf("PIDs %v, want the leader and its child", pids)
	}
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("Cpus_allowed_list:\t%d\n", cpu); !strings.Contains(string(b), want) {
			t.Errorf("process %d: want %q in its status:\n%s", pid, want, b)
		}
	}
	if after, _ := sockets.Affinity(0); !slices.Equal(after, mine) {
		t.Errorf("the caller's mask is %v, was %v", after, mine)
	}
	spec = testSpec(t, modeServe, "unix")
	spec.CPUs = []int{5000}
	if _, err := Start(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "CPU 5000") {
		t.Errorf("CPU 5000: %v", err)
	}
}
