package procstat

import (
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
	s := Start([]int{cmd.Process.Pid}, 20*time.Millisecond)
	time.Sleep(400 * time.Millisecond)
	u := s.Stop()
	if u.MaxProcs != 3 || u.Samples < 5 {
		t.Errorf("procs %d samples %d, want 3 and several", u.MaxProcs, u.Samples)
	}
	// Two busy loops for 0.4 s: up to 0.8 s of CPU on two free cores; at
	// least a little on a loaded machine.
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
