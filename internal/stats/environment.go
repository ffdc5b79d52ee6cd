package stats

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// Environment is where a run was made: the machine and the build of
// backbench.
type Environment struct {
	// Hostname is the machine's host name.
	Hostname string `json:"hostname"`
	// Kernel is the kernel release, as uname -r prints it.
	Kernel string `json:"kernel"`
	// CPUModel is the first "model name" of /proc/cpuinfo.
	CPUModel string `json:"cpu_model"`
	// CPUs is the number of CPUs the process may use.
	CPUs int `json:"cpus"`
	// Version is backbench's version.
	Version string `json:"version"`
	// GoVersion is the Go release backbench was built with.
	GoVersion string `json:"go_version"`
	// Command is the command line, as an argv array.
	Command []string `json:"command"`
	// Engine is the engine that ran the workers: "poller" or "uring"
	// (empty in records made before engines were chosen).
	Engine string `json:"engine,omitempty"`
}

// CurrentEnvironment describes this machine and process. version is
// backbench's version; empty, it is read from the build information.
func CurrentEnvironment(version string) Environment {
	e := Environment{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Version: version,
		Command: append([]string(nil), os.Args...)}
	e.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = strings.TrimSpace(string(b))
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				e.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if e.Version == "" {
		e.Version = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			e.Version = bi.Main.Version
		}
	}
	return e
}
