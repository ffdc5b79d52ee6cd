package procstat

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	line := "1234 (a (weird) name) S 42 1234 1234 0 -1 4194560 100 0 0 0 250 75 10 5 20 0 3 0 100 1000000 300 18446744073709551615"
	st, err := parseStat(line)
	if err != nil || st.ppid != 42 || st.utime != 250 || st.stime != 75 || st.cutime != 10 || st.cstime != 5 {
		t.Errorf("%+v %v", st, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S a b c d e f g h i j k l m n o"} {
		if _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
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
