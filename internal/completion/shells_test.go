package completion_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/internal/completion"
	"github.com/backbench/backbench/internal/realbackend"
)

// The scripts run in their shells, for a program shaped as backbench's:
// its commands, and flags of every kind it has (a few words, words with
// commas, a word ending in ":", a repeated flag, a value that is bash's
// own to complete). That the scripts of cmd/backbench name each flag and
// value of its flag sets is tested there (TestCompletionEveryShell).

// shellsFlag is a flag of shellsProgram: long name, short name ("" for
// none), whether it takes a value, and its words.
func shellsFlag(long, short string, value bool, choices ...string) completion.Flag {
	f := completion.Flag{Long: "--" + long, Value: value, Choices: choices, Usage: "the " + long + " flag"}
	if short != "" {
		f.Short = "-" + short
	}
	return f
}

// shellsProgram is a program with backbench's commands and words and a
// few of the flags of each command, with their words as backbench offers
// them (serve's faults from fixtures, probe's checks of both protocols,
// some named twice).
func shellsProgram() completion.Program {
	var faults []string
	for _, f := range slices.Concat(fixtures.Faults(fixtures.ProtoFCGI), fixtures.Faults(fixtures.ProtoHTTP)) {
		faults = append(faults, f.Name)
	}
	checks := []string{"response", "keep_conn", "params", "max_requests_per_connection", "get_values_empty", "get_values",
		"unknown_type", "unknown_role", "roles", "multiplexing", "abort",
		"http11_persistent", "http10_keep_alive", "max_requests_per_connection", "idle_timeout_seconds", "pipelining", "framing", "server"}
	header := shellsFlag("header", "H", true)
	header.Repeat = true
	cmds := []completion.Command{
		{Name: "bench", Flags: []completion.Flag{shellsFlag("requests", "n", true), shellsFlag("concurrency", "c", true),
			shellsFlag("keepalive", "k", false), shellsFlag("format", "", true, "text", "json", "markdown"),
			shellsFlag("engine", "", true, "auto", "poller", "uring"), shellsFlag("balance", "", true, "round-robin", "least-conn"), header}},
		{Name: "capacity", Flags: []completion.Flag{shellsFlag("model", "", true, "open", "closed"), shellsFlag("format", "", true, "text", "json"),
			shellsFlag("keepalive", "k", false), shellsFlag("engine", "", true, "auto", "poller", "uring"), shellsFlag("out", "", true)}},
		{Name: "compare", Flags: []completion.Flag{shellsFlag("format", "", true, "text", "json", "markdown"), shellsFlag("output", "o", true)}},
		{Name: "merge", Flags: []completion.Flag{shellsFlag("output", "o", true)}},
		{Name: "probe", Flags: []completion.Flag{shellsFlag("idle-max", "", true), shellsFlag("timeout", "s", true),
			shellsFlag("only", "", true, checks...), shellsFlag("skip", "", true, checks...)}},
		{Name: "report", Flags: []completion.Flag{shellsFlag("output", "o", true)}},
		{Name: "serve", Flags: []completion.Flag{shellsFlag("protocol", "", true, "fcgi", "http"),
			shellsFlag("model", "", true, "threaded", "serial", "prefork:", "evented"), shellsFlag("keepalive", "", true, "on", "off", "max="),
			shellsFlag("fault", "", true, faults...), shellsFlag("tls", "", false)}},
		{Name: "study", Flags: []completion.Flag{shellsFlag("out", "", true)}},
		{Name: "sweep", Flags: []completion.Flag{shellsFlag("keepalive-modes", "", true, "on", "off", "on,off", "off,on", "both"),
			shellsFlag("keepalive", "k", false), shellsFlag("balance", "", true, "round-robin", "least-conn"),
			shellsFlag("engine", "", true, "auto", "poller", "uring")}},
	}
	p := completion.Program{Commands: cmds}
	for _, c := range cmds {
		p.Words = append(p.Words, c.Name)
	}
	p.Words = append(p.Words, "completion", "help", "version")
	return p
}

// shellsScriptFile writes the script of shell for shellsProgram to a file
// of that name in a temporary folder and returns its path.
func shellsScriptFile(t *testing.T, shell, name string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, []byte(completion.Script(shell, shellsProgram())), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// shellsNeed returns the path of a shell, skipping the test when it is not
// installed (CI installs zsh and fish: there it fails instead).
func shellsNeed(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		// Skipped outside CI (and listed at the end of make test).
		realbackend.Missing(t, name+" is not installed (apt-get install "+name+"; .ci/run installs it)")
	}
	return p
}

// shellsBashComplete sources the bash script in bash and returns what it
// completes for words (COMP_WORDS, COMP_CWORD).
func shellsBashComplete(t *testing.T, bash, file string, words ...string) []string {
	t.Helper()
	cmd := exec.Command(bash, "-c", `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($#-1)); _backbench; printf '%s\n' "${COMPREPLY[@]}"`,
		"bash", file, "backbench")
	cmd.Args = append(cmd.Args, words...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// TestBashCompletionQueries sources the bash script in bash and asks it
// what it completes, for commands, flags and enumerated values; for every
// command, "-" offers every flag, long and short.
func TestBashCompletionQueries(t *testing.T) {
	bash := shellsNeed(t, "bash")
	file := shellsScriptFile(t, "bash", "backbench.bash")
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"cap"}, "capacity"},
		{[]string{"ver"}, "version"},
		{[]string{"co"}, "compare completion"},
		{[]string{"sweep", "--keepalive-modes", ""}, "on off on,off off,on both"},
		{[]string{"sweep", "--keepalive-modes", "o"}, "on off on,off off,on"},
		{[]string{"sweep", "--keepalive-m"}, "--keepalive-modes"},
		{[]string{"capacity", "--model", ""}, "open closed"},
		{[]string{"capacity", "--keepa"}, "--keepalive"},
		{[]string{"capacity", "--format", ""}, "text json"},
		{[]string{"bench", "--engine", ""}, "auto poller uring"},
		{[]string{"bench", "--balance", ""}, "round-robin least-conn"},
		{[]string{"bench", "--form"}, "--format"},
		{[]string{"bench", "--format", ""}, "text json markdown"},
		{[]string{"bench", "-n", ""}, ""}, // a value: bash's own completion
		{[]string{"serve", "--model", "pre"}, "prefork:"},
		{[]string{"serve", "--fault", "hang"}, "hang"},
		{[]string{"serve", "--protocol", "f"}, "fcgi"},
		{[]string{"probe", "--only", "keep_"}, "keep_conn"},
		{[]string{"probe", "--idle"}, "--idle-max"},
		{[]string{"help", "c"}, "capacity compare completion"},
		{[]string{"help", "sw"}, "sweep"},
		{[]string{"completion", "f"}, "fish"},
		{[]string{"completion", ""}, "bash zsh fish"},
	} {
		if got := strings.Join(shellsBashComplete(t, bash, file, tc.words...), " "); got != tc.want {
			t.Errorf("%q completes to %q, want %q", tc.words, got, tc.want)
		}
	}
	for _, c := range shellsProgram().Commands {
		all := shellsBashComplete(t, bash, file, c.Name, "-")
		for _, f := range c.Flags {
			if !slices.Contains(all, f.Long) || (f.Short != "" && !slices.Contains(all, f.Short)) {
				t.Errorf("bash: %s - does not offer %s", c.Name, f.Long)
			}
		}
	}
}

// TestFishCompletionQueries loads the fish script in fish and asks it
// what it completes (complete -C).
func TestFishCompletionQueries(t *testing.T) {
	fish := shellsNeed(t, "fish")
	file := shellsScriptFile(t, "fish", "backbench.fish")
	if out, err := exec.Command(fish, "-n", file).CombinedOutput(); err != nil {
		t.Fatalf("fish -n: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"backbench cap", []string{"capacity"}},
		{"backbench sweep --keepalive-modes ", []string{"both", "off", "off,on", "on", "on,off"}},
		{"backbench capacity --model ", []string{"closed", "open"}},
		{"backbench bench --form", []string{"--format"}},
		{"backbench bench --format ", []string{"json", "markdown", "text"}},
		{"backbench completion ", []string{"bash", "fish", "zsh"}},
	} {
		out, err := exec.Command(fish, "--no-config", "-c", `source $argv[1]; complete -C $argv[2]`, file, tc.line).CombinedOutput()
		if err != nil {
			t.Fatalf("fish: %v\n%s", err, out)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			w, _, _ := strings.Cut(l, "\t")
			got = append(got, w)
		}
		slices.Sort(got)
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q completes to %q, want %q", tc.line, got, tc.want)
		}
	}
}

// TestZshCompletionRuns loads the zsh script in zsh with the completion
// system's functions replaced by ones that print their arguments, and runs
// it for a command and a flag's values; zsh -n accepts the script.
func TestZshCompletionRuns(t *testing.T) {
	zsh := shellsNeed(t, "zsh")
	file := shellsScriptFile(t, "zsh", "_backbench")
	if out, err := exec.Command(zsh, "-n", file).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	run := func(words ...string) string {
		t.Helper()
		cmd := exec.Command(zsh, "-f", "-c", `compdef() { print compdef $@ }; _arguments() { print -rl -- $@ }; _values() { print -rl -- $@ }
source $1; shift; words=($@); CURRENT=$#; _backbench`, "zsh", file, "backbench")
		cmd.Args = append(cmd.Args, words...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("zsh: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := run(""); !strings.Contains(out, "compdef _backbench backbench") || !strings.Contains(out, "\ncapacity\n") || !strings.Contains(out, "\nversion\n") {
		t.Errorf("top level:\n%s", out)
	}
	if out := run("sweep", "--keepalive-modes", ""); !strings.Contains(out, "--keepalive-modes[") || !strings.Contains(out, ":value:(on off on,off off,on both)") {
		t.Errorf("sweep:\n%s", out)
	}
	if out := run("capacity", "--mo"); !strings.Contains(out, "--model[") || !strings.Contains(out, ":value:(open closed)") {
		t.Errorf("capacity:\n%s", out)
	}
}
