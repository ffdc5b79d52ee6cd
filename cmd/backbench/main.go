// Command backbench benchmarks and probes web application backends directly:
// FastCGI workers (php-fpm, fcgiwrap, ...) and HTTP/1.x app servers, over TCP
// or Unix sockets, with no frontend in between.
//
// Subcommands:
//
//	backbench bench [flags] URL     an ab-style run with ab's report, or JSON
//	backbench sweep [flags] URL...  a concurrency sweep over several targets
//	backbench capacity [flags] URL  the highest load within objectives
//	backbench compare OLD NEW       saved results compared: ratios, intervals, verdicts
//	backbench probe [flags] URL     what a backend supports
//	backbench serve [flags]         built-in FastCGI and HTTP backends
//	backbench merge FILE.json...    one report from runs made on several generators
//	backbench version               the version, from the build info
//	backbench completion bash|zsh|fish  a shell completion script
//	backbench report FILE...        an HTML page of saved results
//	backbench study FILE            a study file run: backends started, measured, stopped, answered
//
// Run "backbench COMMAND --help" or "backbench help COMMAND" for the flags
// of each. Every error is one line, "backbench COMMAND: message" (with a
// hint to the command's --help on a bad command line). Exit status: 0 on
// success, 1 when the target cannot be reached, 2 for a bad command line,
// 3 when a --slo objective failed, 4 when a regression gate (--fail-on)
// tripped, 5 when it could not judge (no verdict without trials), 6 when
// a study's configuration failed (did not start, listen or verify, or was
// lost; its files are written all the same), 130 or 143 when interrupted
// by SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/backbench/backbench/internal/backend"
	"github.com/backbench/backbench/internal/gate"
	"github.com/backbench/backbench/internal/plan"
)

// Exit statuses.
const (
	exitOK          = 0
	exitUnreachable = 1
	exitUsage       = 2
	exitSLO         = 3
	exitRegression  = 4
	exitUnjudged    = 5
	exitStudyFailed = 6
	exitSIGINT      = 130
	exitSIGTERM     = 143
)

// usageError is a bad command line: exit status 2.
type usageError = UsageError

// usagef returns a usageError formatted as fmt.Sprintf does.
func usagef(format string, a ...any) error { return Usagef(format, a...) }

// unreachableError is a target that cannot be reached at all: exit status 1.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }

// gateError is a regression gate that tripped (exit status 4) or could
// not judge (exit status 5).
type gateError struct{ g *gate.Result }

func (e *gateError) Error() string {
	msg := e.g.Summary()
	switch {
	case len(e.g.Tripped) > 0:
		msg += ": " + e.g.Tripped[0].Line()
	case len(e.g.Unjudged) > 0:
		msg += ": " + e.g.Unjudged[0].Line()
	}
	if n := len(e.g.Tripped) + len(e.g.Unjudged); n > 1 {
		msg += fmt.Sprintf(" (and %d more in the report)", n-1)
	}
	return msg
}

// status is the exit status of the gate's judgement.
func (e *gateError) status() int {
	if e.g.Status == gate.Tripped {
		return exitRegression
	}
	return exitUnjudged
}

// studyFailedError is a study whose configurations failed (exit status
// 6), after its files were written: whys are their failures, of total
// configurations.
type studyFailedError struct {
	whys  []string
	total int
	// names, when the progress lines have said every failure already,
	// are the failed configurations' names: the line names them only.
	names []string
}

func (e *studyFailedError) Error() string {
	if len(e.names) > 0 {
		return fmt.Sprintf("%d of %d configurations failed (said above, and in the report's notes): %s", len(e.names), e.total, strings.Join(e.names, "; "))
	}
	msg := fmt.Sprintf("%d of %d configurations failed: %s", len(e.whys), e.total, e.whys[0])
	if len(e.whys) > 1 {
		msg += fmt.Sprintf(" (and %d more in the report)", len(e.whys)-1)
	}
	return msg
}

// errInterrupted reports a run stopped by a signal, after its report.
var errInterrupted = errors.New("interrupted")

const topUsage = `backbench benchmarks web backends directly: FastCGI and HTTP/1.x, TCP or Unix sockets.

Usage:
  backbench bench [flags] URL     ab-style benchmark of one target
  backbench sweep [flags] -c SPEC URL...
                                  concurrency sweep over several targets: table, CSV, JSON, chart
  backbench capacity --slo OBJECTIVE [flags] URL
                                  the highest rate (or concurrency) within latency/error objectives
  backbench serve [flags]         run built-in FastCGI/HTTP backends
  backbench probe [flags] URL     what a backend supports at the protocol level
  backbench merge [flags] FILE.json...
                                  one report from the JSON of runs made together on several generators
  backbench compare OLD.json NEW.json
                                  compare saved results: ratios, intervals, verdicts
  backbench report [-o FILE] RESULT.json...
                                  one self-contained HTML page of saved results
  backbench study [flags] FILE    run a study file: start each backend configuration, measure,
                                  stop, and answer its question factor by factor
  backbench version               version, commit and Go version (also --version, -V)
  backbench completion bash|zsh|fish
                                  print a completion script for the shell

URL forms:
  http://HOST:PORT/PATH?QUERY        fcgi://HOST:PORT/PATH?QUERY
  http://unix:/run/app.sock:/PATH    fcgi://unix:/run/php/fpm.sock:/PATH

Run "backbench COMMAND --help" or "backbench help COMMAND" for the flags of a command.
`

func main() {
	if os.Getenv(backend.WatcherEnv) != "" {
		// The watcher of a study's backends (study.go), this program
		// run again: it outlives a backbench that is killed.
		os.Exit(backend.WatcherMain())
	}
	ctx, sig := signalContext()
	os.Exit(Main(ctx, sig, os.Args[1:], os.Stdout, os.Stderr))
}

// signalContext returns a context cancelled by the first SIGINT or SIGTERM,
// and a function that tells which signal it was. A second SIGINT exits at
// once.
func signalContext() (context.Context, func() os.Signal) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	var got os.Signal
	done := make(chan struct{})
	go func() {
		got = <-ch
		close(done)
		cancel()
		s := <-ch
		// Exiting at once: the backends a study started die with it.
		backend.KillAll()
		if s == syscall.SIGINT {
			os.Exit(exitSIGINT)
		}
		os.Exit(exitSIGTERM)
	}()
	return ctx, func() os.Signal {
		select {
		case <-done:
			return got
		default:
			return nil
		}
	}
}

// Main runs backbench with args (without the program name) and returns the
// exit status. ctx stops a run; sig names the signal that cancelled ctx (nil
// if none), to choose the exit status.
func Main(ctx context.Context, sig func() os.Signal, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage)
		return exitUsage
	}
	var err error
	cmd := args[0]
	switch cmd {
	case "bench":
		err = benchCmd(ctx, args[1:], stdout, stderr)
	case "sweep":
		err = sweepCmd(ctx, args[1:], stdout, stderr)
	case "capacity":
		err = capacityCmd(ctx, args[1:], stdout, stderr)
	case "serve":
		err = serveCmd(ctx, args[1:], stdout, stderr)
	case "probe":
		err = probeCmd(ctx, args[1:], stdout, stderr)
	case "merge":
		err = mergeCmd(ctx, args[1:], stdout, stderr)
	case "compare":
		err = compareCmd(ctx, args[1:], stdout, stderr)
	case "report":
		err = reportCmd(args[1:], stdout)
	case "study":
		err = studyCmd(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-V":
		cmd = "version"
		switch {
		case len(args) > 1 && (args[1] == "-h" || args[1] == "--help"):
			fmt.Fprint(stdout, versionUsage)
		case len(args) > 1:
			err = usagef("unexpected argument %q", args[1])
		default:
			fmt.Fprint(stdout, versionLine())
		}
	case "completion":
		err = completionCmd(args[1:], stdout)
	case "help":
		switch {
		case len(args) > 2:
			err = usagef("want one command, got %d words", len(args)-1)
		case len(args) == 1 || args[1] == "help" || args[1] == "-h" || args[1] == "--help":
			fmt.Fprint(stdout, topUsage)
		case slices.Contains(topWords(), args[1]):
			return Main(ctx, sig, []string{args[1], "--help"}, stdout, stderr)
		default:
			err = usagef("unknown command %q (want one of %s)", args[1], strings.Join(topWords(), ", "))
		}
	case "-h", "--help":
		fmt.Fprint(stdout, topUsage)
		return exitOK
	default:
		cmd = ""
		err = usagef("unknown command %q (want %s)", args[0], strings.Join(topWords(), ", "))
	}
	return exitStatus(cmd, err, sig, stderr)
}

// exitStatus prints err, if any, as one line on stderr and returns the
// exit status it calls for. cmd is the command that failed ("" before one
// was known).
func exitStatus(cmd string, err error, sig func() os.Signal, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	var pe *plan.Error
	var re *unreachableError
	var se *sloError
	var ge *gateError
	var fe *studyFailedError
	switch {
	case errors.Is(err, errHelp):
		return exitOK
	case errors.Is(err, errInterrupted):
		if sig != nil && sig() == syscall.SIGTERM {
			return exitSIGTERM
		}
		return exitSIGINT
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, errorLine(cmd, ue.Error(), true))
		return exitUsage
	case errors.As(err, &pe):
		fmt.Fprintln(stderr, errorLine(cmd, pe.Msg, true))
		return exitUsage
	case errors.As(err, &se):
		fmt.Fprintln(stderr, errorLine(cmd, se.Error(), false))
		return exitSLO
	case errors.As(err, &ge):
		fmt.Fprintln(stderr, errorLine(cmd, ge.Error(), false))
		return ge.status()
	case errors.As(err, &fe):
		fmt.Fprintln(stderr, errorLine(cmd, fe.Error(), false))
		return exitStudyFailed
	case errors.As(err, &re):
		fmt.Fprintln(stderr, errorLine(cmd, re.err.Error(), false))
		return exitUnreachable
	}
	fmt.Fprintln(stderr, errorLine(cmd, err.Error(), false))
	return exitUnreachable
}

// internalPrefixes are the prefixes that backbench's own packages put on
// their errors ("fixtures: listen unix ..."): the names of Go packages,
// which mean nothing to a user, so errorLine drops them.
var internalPrefixes = []string{"fixtures", "execute", "sockets", "httpprobe", "fcgi",
	"procstat", "realbackend", "stats", "trials", "load", "probe", "report", "sweep", "capacity"}

// errorLine is the one line an error is shown as: "backbench COMMAND:
// message", without the command's name repeated in the message nor the
// names of internal packages, and, for a bad command line (usage), a hint
// to the command's help.
func errorLine(cmd, msg string, usage bool) string {
	prefix, help := "backbench", "backbench --help"
	if cmd != "" {
		prefix = "backbench " + cmd
		if cmd != "help" {
			help = "backbench " + cmd + " --help"
		}
		msg = strings.TrimPrefix(msg, cmd+": ")
	}
	// Hints written into messages before there was one style.
	msg = strings.ReplaceAll(msg, " (see "+help+")", "")
	msg = strings.ReplaceAll(msg, "; see "+help, "")
	for again := true; again; {
		again = false
		for _, p := range internalPrefixes {
			if p == cmd {
				continue // "probe: ..." from the probe command is its own
			}
			if rest, ok := strings.CutPrefix(msg, p+": "); ok {
				msg, again = rest, true
			}
			msg = strings.ReplaceAll(msg, ": "+p+": ", ": ")
		}
	}
	line := prefix + ": " + msg
	if usage && !strings.Contains(msg, "--help") {
		line += " (see '" + help + "')"
	}
	return line
}

const versionUsage = `Usage: backbench version

Prints backbench's version, the commit it was built from (with +modified for
uncommitted changes) and its time, the Go version and the platform, from the
build info. Also spelt backbench --version, backbench -V and bench -V (ab's).
`

// Set at link time by make build (-ldflags "-X main.stampCommit=..."):
// the build info has no VCS settings when GOFLAGS says -buildvcs=false, as
// some machines and CI set it, so the Makefile stamps them itself. Empty
// when not stamped (go install, go build): then the build info's are used.
var (
	stampVersion  string // git describe --tags --dirty (empty without a tag)
	stampCommit   string // git rev-parse HEAD
	stampTime     string // the commit's time, RFC 3339
	stampModified string // "true" when the work tree had uncommitted changes
)

// versionLine is what --version prints: the module version, the commit and
// its time when the binary was built from a Git checkout, the Go version and
// the platform, all from the build info the Go toolchain embeds.
func versionLine() string {
	v, goVersion := buildVersion()
	return fmt.Sprintf("backbench %s %s %s/%s\n", v, goVersion, runtime.GOOS, runtime.GOARCH)
}

// version is backbench's version as a run record keeps it: the module
// version, and the commit and its time when known.
func version() string {
	v, _ := buildVersion()
	return v
}

// buildVersion reads the version (with commit, +modified and time when
// known) and the Go version from the build info.
func buildVersion() (string, string) {
	version, commit, when, dirty, goVersion := "(unknown)", "", "", false, runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		version, goVersion = bi.Main.Version, bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	// What make build stamped wins: it is there even with -buildvcs=false.
	if stampCommit != "" {
		commit, when, dirty = stampCommit, stampTime, stampModified == "true"
	}
	if stampVersion != "" && (version == "" || version == "(devel)") {
		version = stampVersion
	}
	if version == "" {
		version = "(devel)"
	}
	line := version
	if commit != "" {
		line += " commit " + commit[:min(12, len(commit))]
		if dirty {
			line += "+modified"
		}
		if when != "" {
			line += " " + when
		}
	}
	return line, goVersion
}
