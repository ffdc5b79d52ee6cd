package stats

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/backbench/backbench/internal/load"
)

// Environment is where a run was made: the machine and the build of
// backbench.
type Environment struct {
	// Hostname is the machine's host name ("" with --no-hostname).
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
	// Command is the command line, as an argv array, with its credentials
	// replaced by load.Redacted unless --keep-secrets (Privacy).
	Command []string `json:"command"`
	// Engine is the engine that ran the workers: "poller" or "uring"
	// (empty in records made before engines were chosen).
	Engine string `json:"engine,omitempty"`
}

// Privacy says what an Environment leaves out, so that a result file is
// safe to share. The zero value redacts credentials and keeps the host name.
type Privacy struct {
	// KeepSecrets keeps the credentials of the command line (--keep-secrets):
	// for a private file only.
	KeepSecrets bool
	// NoHostname leaves the host name out (--no-hostname).
	NoHostname bool
	// ValueShorts lists the one-letter flags that take a value, for
	// load.RedactArgs ("": load.DefaultValueShorts).
	ValueShorts string
}

// Apply makes e follow p: the command's credentials replaced by
// load.Redacted unless p.KeepSecrets, the host name emptied if
// p.NoHostname. It is applied again to the environments of saved files
// that are written anew (merge), since they may come from older versions.
func (p Privacy) Apply(e *Environment) {
	if !p.KeepSecrets && e.Command != nil {
		e.Command = load.RedactArgs(e.Command, p.ValueShorts)
	}
	if p.NoHostname {
		e.Hostname = ""
	}
}

// URL returns a URL (or a label that holds one) as p shows it: its
// credentials (load.RedactURL: the password of its user information, the
// values of its query parameters that load.SecretQuery marks) replaced by
// load.Redacted unless p.KeepSecrets. A string without "://" is returned
// as it is.
func (p Privacy) URL(s string) string {
	if p.KeepSecrets || !strings.Contains(s, "://") {
		return s
	}
	return load.RedactURL(s)
}

// ApplyPlan makes a record's plan follow p: the credentials of its target
// URL and of its document path's query replaced by load.Redacted unless
// p.KeepSecrets. A run's plan is recorded so already (execute.Plan.Record);
// this is applied again to the plans of saved files written anew (merge),
// which may come from older versions.
func (p Privacy) ApplyPlan(pl *Plan) {
	if p.KeepSecrets {
		return
	}
	pl.Target.URL = p.URL(pl.Target.URL)
	pl.Path = load.RedactQuery(pl.Path)
}

// CommandLine is the command line "backbench CMD ARGS..." as a shell
// would take it back, for a report others read (the Markdown of bench,
// sweep and compare): arguments with spaces or shell characters in single
// quotes, credentials replaced by load.Redacted unless p.KeepSecrets
// (load.RedactArgs).
func (p Privacy) CommandLine(cmd string, args []string) string {
	if !p.KeepSecrets {
		args = load.RedactArgs(args, p.ValueShorts)
	}
	words := []string{"backbench", cmd}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// CurrentEnvironment describes this machine and process, with the
// credentials of the command line redacted (Privacy's zero value). version
// is backbench's version; empty, it is read from the build information.
func CurrentEnvironment(version string) Environment {
	return CurrentEnvironmentFor(version, Privacy{})
}

// CurrentEnvironmentFor is CurrentEnvironment under the privacy p.
func CurrentEnvironmentFor(version string, p Privacy) Environment {
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
	p.Apply(&e)
	return e
}
