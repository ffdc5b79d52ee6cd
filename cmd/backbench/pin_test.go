package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The pinning itself is tested beside its code: a run's client CPUs in
// internal/execute (TestRunClientCPUs), a study's backends and client in
// internal/studyrun (TestStudyPinned).

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
