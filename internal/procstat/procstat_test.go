package procstat

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestParseStat reads stat lines whose command name holds spaces and
// parentheses (fields are counted from the last ')'), in the states that
// matter (a zombie and a dead process are not alive), and refuses lines
// without a ')', with too few fields or with a field that is no number.
func TestParseStat(t *testing.T) {
	for _, c := range []struct {
		pid  int
		line string
		want Proc
	}{
		{1234, "1234 (a (weird) name) S 42 1234 1234 0 -1 4194560 100 0 0 0 250 75 10 5 20 0 3 0 100 1000000 300 18446744073709551615",
			Proc{PID: 1234, PPID: 42, PGID: 1234, State: 'S', Start: 100, UTime: 250, STime: 75, CUTime: 10, CSTime: 5}},
		{4242, "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 18446744073709551615",
			Proc{PID: 4242, PPID: 1, PGID: 4242, State: 'S', Start: 987654, UTime: 1, STime: 2}},
		{7, "7 (sp ace) ) Z 3 3 3 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0 0",
			Proc{PID: 7, PPID: 3, PGID: 3, State: 'Z', Start: 55}},
		{8, "8 ()) X 3 3 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 56 0 0 0",
			Proc{PID: 8, PPID: 3, PGID: 3, State: 'X', Start: 56}},
	} {
		p, err := parseStat(c.pid, c.line)
		if err != nil || p != c.want {
			t.Errorf("%q: %+v, %v; want %+v", c.line, p, err, c.want)
		}
		if alive := c.want.State != 'Z' && c.want.State != 'X'; p.Alive() != alive {
			t.Errorf("%q: Alive %v", c.line, p.Alive())
		}
	}
	for _, bad := range []string{
		"",
		"1 (x) S 1 2",
		"1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18", // no starttime
		"1 (x) S a b c d e f g h i j k l m n o",
		"1 (x) S a b c d e f g h i j k l m n o p q r s t u",
		"1 (x) S 1 1 1 0 -1 0 0 0 0 0 x 0 0 0 20 0 1 0 5 0",  // utime
		"1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 0", // starttime
	} {
		if _, err := parseStat(1, bad); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
}

// TestReadStatSelf reads this process's stat, its comm, its place in the
// process table, its environment (as it started: PATH) and its PID
// namespace.
func TestReadStatSelf(t *testing.T) {
	me := os.Getpid()
	p, err := ReadStat(me)
	if err != nil || p.PID != me || p.PPID != os.Getppid() || !p.Alive() || p.Start == 0 {
		t.Fatalf("ReadStat(self) = %+v, %v", p, err)
	}
	all, err := Table()
	if q, ok := all[me]; err != nil || !ok || q.Start != p.Start || q.PGID != p.PGID {
		t.Errorf("Table()[self] = %+v, %v; ReadStat %+v", all[me], err, p)
	}
	if c := Comm(me); c == "" {
		t.Error("Comm(self) is empty")
	}
	if _, err := ReadStat(1 << 30); err == nil {
		t.Error("ReadStat of a missing pid: no error")
	}
	if c := Comm(1 << 30); c != "" {
		t.Errorf("Comm of a missing pid: %q", c)
	}
	if v, ok := EnvValue(Environ(me), "PATH"); !ok || v != os.Getenv("PATH") {
		t.Errorf("EnvValue(Environ(self), PATH) = %q, %v", v, ok)
	}
	if ns := PIDNamespace(0); ns == "" || ns != PIDNamespace(me) {
		t.Errorf("PIDNamespace: self %q, by pid %q", ns, PIDNamespace(me))
	}
}

// TestEnvValue reads values from a NUL-separated environment block: a
// key is matched whole, a value may be empty or hold '='.
func TestEnvValue(t *testing.T) {
	env := []byte("A=1\x00BACKBENCH_RUN=12-34\x00EMPTY=\x00B=x=y\x00")
	for _, c := range []struct {
		key, want string
		ok        bool
	}{
		{"BACKBENCH_RUN", "12-34", true}, {"EMPTY", "", true}, {"B", "x=y", true},
		{"BACKBENCH", "", false}, {"C", "", false},
	} {
		if v, ok := EnvValue(env, c.key); v != c.want || ok != c.ok {
			t.Errorf("%s: %q, %v", c.key, v, ok)
		}
	}
}

// TestSocketInodes listens on a Unix socket and finds its inode among
// this process's descriptors, and this process among its holders.
func TestSocketInodes(t *testing.T) {
	for _, c := range []struct {
		link string
		ino  uint64
		ok   bool
	}{
		{"socket:[12345]", 12345, true}, {"pipe:[12345]", 0, false}, {"socket:[x]", 0, false},
		{"socket:[12", 0, false}, {"/dev/null", 0, false},
	} {
		if ino, ok := socketInode(c.link); ino != c.ino || ok != c.ok {
			t.Errorf("%q: %d, %v", c.link, ino, ok)
		}
	}
	before := map[uint64]bool{}
	SocketInodes(os.Getpid(), before)
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	after := map[uint64]bool{}
	SocketInodes(os.Getpid(), after)
	var added []uint64
	for ino := range after {
		if !before[ino] {
			added = append(added, ino)
		}
	}
	if len(added) != 1 {
		t.Fatalf("sockets added by one listener: %v", added)
	}
	if h := SocketHolders(added, 3); !slices.Contains(h, os.Getpid()) {
		t.Errorf("SocketHolders = %v, want this process %d", h, os.Getpid())
	}
}

// TestSamplerSeesTreeCPUAndProcesses samples a shell that forks two busy
// children: the CPU time grows, the process count includes the children.
func TestSamplerSeesTreeCPUAndProcesses(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "(while :; do :; done) & (while :; do :; done) & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		// Stop the whole tree, by the process group the shell leads.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	time.Sleep(100 * time.Millisecond)
	if err := Check([]int{cmd.Process.Pid}); err != nil {
		t.Fatal(err)
	}
	// Two busy loops for 0.4 s: up to 0.8 s of CPU on two free cores. On a
	// machine loaded by other work they may get far less, so a window that
	// saw under 0.1 s is sampled again, up to three times.
	var u Usage
	for try := 0; try < 3; try++ {
		s := Start([]int{cmd.Process.Pid}, 20*time.Millisecond)
		time.Sleep(400 * time.Millisecond)
		u = s.Stop()
		if u.UserSeconds+u.SysSeconds >= 0.1 {
			break
		}
	}
	if u.MaxProcs != 3 || u.Samples < 5 {
		t.Errorf("procs %d samples %d, want 3 and several", u.MaxProcs, u.Samples)
	}
	if cpu := u.UserSeconds + u.SysSeconds; cpu < 0.1 {
		t.Errorf("cpu %.2f s over 0.4 s of two busy loops", cpu)
	}
	if u.PeakRSS <= 0 || u.MeanRSS <= 0 {
		t.Errorf("rss %d %d", u.PeakRSS, u.MeanRSS)
	}
	if err := Check([]int{1 << 30}); err == nil {
		t.Error("Check accepted a missing pid")
	}
}

func TestParseRollup(t *testing.T) {
	in := "5633e4e73000-7ffeddfbf000 ---p 00000000 00:00 0                          [rollup]\n" +
		"Rss:                1768 kB\nPss:                 235 kB\nPss_Dirty:           108 kB\n" +
		"Shared_Clean:       1620 kB\nPrivate_Clean:        40 kB\nPrivate_Dirty:       108 kB\n"
	r, err := parseRollup(in)
	if err != nil || r != (rollup{rss: 1768 << 10, pss: 235 << 10, uss: 148 << 10}) {
		t.Errorf("parseRollup = %+v, %v", r, err)
	}
	if _, err := parseRollup("Rss: 1 kB\n"); err == nil {
		t.Error("a rollup without Pss: no error")
	}
	if _, err := parseRollup("Rss: x kB\nPss: 1 kB\nPrivate_Clean: 1 kB\nPrivate_Dirty: 1 kB\n"); err == nil {
		t.Error("a bad number: no error")
	}
	if _, err := readRollup(os.Getpid()); err != nil {
		t.Errorf("own smaps_rollup: %v", err)
	}
}
