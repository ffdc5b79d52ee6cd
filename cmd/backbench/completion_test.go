package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/fcgi"
	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/httpprobe"
	"github.com/backbench/backbench/internal/completion"
	"github.com/backbench/backbench/internal/plan"
	"github.com/backbench/backbench/internal/realbackend"
	"github.com/backbench/backbench/sockets"
)

// scriptSections splits a completion script at its "# backbench NAME"
// markers: the text of each command's part.
func scriptSections(t *testing.T, script string) map[string]string {
	t.Helper()
	parts := regexp.MustCompile(`(?m)^ *# backbench (\w+)\n`).Split(script, -1)
	names := regexp.MustCompile(`(?m)^ *# backbench (\w+)\n`).FindAllStringSubmatch(script, -1)
	sec := map[string]string{}
	for i, m := range names {
		sec[m[1]] = parts[i+1]
	}
	return sec
}

// TestCompletionEveryShell: the bash, zsh and fish scripts name every
// command, and in each command's part every flag (--name and -x) and every
// value of a flag that takes a few words, compared with the flag sets the
// commands parse with.
func TestCompletionEveryShell(t *testing.T) {
	onceAcrossEngines(t)
	// The flags whose values must be offered: a check that the
	// enumerations are found at all (a choiceValue or wordValues).
	mustHaveValues := map[string][]string{
		"bench": {"format", "engine", "balance", "client-sched"}, "sweep": {"keepalive-modes", "balance", "engine"},
		"capacity": {"model", "format", "engine", "balance"}, "serve": {"protocol", "model", "keepalive", "fault"},
		"probe": {"only", "skip"},
	}
	for _, shell := range completion.Shells {
		t.Run(shell, func(t *testing.T) {
			code, script, errs := runMain(t, context.Background(), "completion", shell)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for _, w := range topWords() {
				if !strings.Contains(script, w) {
					t.Errorf("no command %s", w)
				}
			}
			sec := scriptSections(t, script)
			for _, name := range commandNames() {
				part, ok := sec[name]
				if !ok {
					t.Errorf("no part for %s", name)
					continue
				}
				for _, f := range flagInfos(name, commands[name]()) {
					long := strings.TrimPrefix(f.Long, "--")
					want := map[string][]string{
						"bash": {"--" + long + " ", "--" + long + ")", "--" + long + "|", "--" + long + `"`},
						"zsh":  {"'--" + long + "[", "'*--" + long + "[", ",--" + long + "}'["},
						"fish": {" -l " + long + " "},
					}[shell]
					if !slices.ContainsFunc(want, func(w string) bool { return strings.Contains(part, w) }) {
						t.Errorf("%s lacks --%s", name, long)
					}
					if f.Short != "" {
						short := map[string]string{"bash": f.Short, "zsh": "{" + f.Short + ",", "fish": " -s " + strings.TrimPrefix(f.Short, "-") + " "}[shell]
						if !strings.Contains(part, short) {
							t.Errorf("%s lacks %s", name, f.Short)
						}
					}
					for _, v := range f.Choices {
						if !regexp.MustCompile(`[ "'(]` + regexp.QuoteMeta(v) + `[ "')]`).MatchString(part) {
							t.Errorf("%s --%s lacks the value %s", name, long, v)
						}
					}
					if slices.Contains(mustHaveValues[name], long) && len(f.Choices) == 0 {
						t.Errorf("%s --%s: no values to offer", name, long)
					}
				}
			}
		})
	}
}

// TestCompletionValuesParse: every value that wordValues offers is one
// its flag's parser accepts (a trailing ":" or "=" given its number).
func TestCompletionValuesParse(t *testing.T) {
	onceAcrossEngines(t)
	for _, name := range commandNames() {
		commands[name]().VisitAll(func(f *pflag.Flag) {
			for _, v := range wordValues(name, f.Name) {
				var err error
				switch {
				case f.Name == "balance":
					_, err = sockets.ParseBalance(v)
				case f.Name == "keepalive-modes":
					_, err = plan.KeepAliveModes(v, false)
				case name == "serve" && f.Name == "model":
					_, err = fixtures.ParseModel(strings.Replace(v, ":", ":2", 1))
				case name == "serve" && f.Name == "keepalive":
					_, err = fixtures.ParseKeepAlive(strings.Replace(v, "=", "=3", 1))
				case name == "serve" && f.Name == "fault":
					if fixtures.ValidFault(fixtures.ProtoFCGI, v) != nil {
						err = fixtures.ValidFault(fixtures.ProtoHTTP, v)
					}
				case name == "probe":
					if _, e := fcgi.SelectChecks([]string{v}, nil); e != nil {
						_, err = httpprobe.SelectChecks([]string{v}, nil)
					}
				default:
					t.Errorf("%s --%s: a value %q with no parser in this test", name, f.Name, v)
				}
				if err != nil {
					t.Errorf("%s --%s %s: %v", name, f.Name, v, err)
				}
			}
		})
	}
}

// TestBashCompletionQueries sources the bash script in bash and asks it
// what it completes (COMP_WORDS, COMP_CWORD), for commands, flags and
// enumerated values.
func TestBashCompletionQueries(t *testing.T) {
	onceAcrossEngines(t)
	file := completionFile(t, "bash", "backbench.bash")
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"cap"}, "capacity"},
		{[]string{"ver"}, "version"},
		{[]string{"sweep", "--keepalive-modes", ""}, "on off on,off off,on both"},
		{[]string{"sweep", "--keepalive-modes", "o"}, "on off on,off off,on"},
		{[]string{"capacity", "--model", ""}, "open closed"},
		{[]string{"capacity", "--keepa"}, "--keepalive"},
		{[]string{"capacity", "--format", ""}, "text json"},
		{[]string{"bench", "--engine", ""}, "auto poller uring"},
		{[]string{"bench", "--balance", ""}, "round-robin least-conn"},
		{[]string{"serve", "--model", "pre"}, "prefork:"},
		{[]string{"serve", "--fault", "hang"}, "hang"},
		{[]string{"probe", "--only", "keep_"}, "keep_conn"},
		{[]string{"help", "c"}, "capacity compare completion"},
		{[]string{"completion", "f"}, "fish"},
	} {
		cmd := exec.Command("bash", "-c", `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($#-1)); _backbench; printf '%s\n' "${COMPREPLY[@]}"`,
			"bash", file, "backbench")
		cmd.Args = append(cmd.Args, tc.words...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		if got := strings.Join(strings.Fields(string(out)), " "); got != tc.want {
			t.Errorf("%q completes to %q, want %q", tc.words, got, tc.want)
		}
	}
}

// needShell returns the path of a shell, skipping the test when it is not
// installed (CI installs zsh and fish: there it fails instead).
func needShell(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		// Skipped outside CI (and listed at the end of make test).
		realbackend.Missing(t, name+" is not installed (apt-get install "+name+"; .ci/run installs it)")
	}
	return p
}

// completionFile writes the completion script of shell to a file of that
// name in a temporary folder and returns its path.
func completionFile(t *testing.T, shell, name string) string {
	t.Helper()
	code, script, errs := runMain(t, context.Background(), "completion", shell)
	if code != 0 {
		t.Fatalf("completion %s: exit %d: %s", shell, code, errs)
	}
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestFishCompletionQueries loads the fish script in fish and asks it
// what it completes (complete -C).
func TestFishCompletionQueries(t *testing.T) {
	onceAcrossEngines(t)
	fish := needShell(t, "fish")
	file := completionFile(t, "fish", "backbench.fish")
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
// it for a command and a flag's values.
func TestZshCompletionRuns(t *testing.T) {
	onceAcrossEngines(t)
	zsh := needShell(t, "zsh")
	file := completionFile(t, "zsh", "_backbench")
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

// TestHelpEveryCommand: "backbench help X" and "backbench X --help" show
// X's help for every command (capacity, version and completion too), on
// stdout, exit 0, wrapped to 80 columns when not on a terminal.
func TestHelpEveryCommand(t *testing.T) {
	onceAcrossEngines(t)
	for _, name := range topWords() {
		if name == "help" {
			continue
		}
		for _, args := range [][]string{{"help", name}, {name, "--help"}, {name, "-h"}} {
			code, out, errs := runMain(t, context.Background(), args...)
			if code != 0 || errs != "" || !strings.HasPrefix(out, "Usage: backbench "+name) {
				t.Errorf("%q: exit %d, stderr %q, stdout:\n%s", args, code, errs, out)
			}
			for _, l := range strings.Split(out, "\n") {
				if utf8.RuneCountInString(l) > 80 {
					t.Errorf("%q: a line of %d columns: %q", args, utf8.RuneCountInString(l), l)
				}
			}
		}
	}
	for _, args := range [][]string{{"help"}, {"help", "help"}, {"help", "--help"}} {
		if code, out, _ := runMain(t, context.Background(), args...); code != 0 || out != topUsage {
			t.Errorf("%q: exit %d", args, code)
		}
	}
}

// TestKeepAliveAliasEveryCommand: --keep-alive is --keepalive in every
// command that takes the load flags, whether its flag set was built with
// newFlagSet or not.
func TestKeepAliveAliasEveryCommand(t *testing.T) {
	n := 0
	for _, name := range commandNames() {
		fs := commands[name]()
		f := fs.Lookup("keepalive")
		if f == nil || f.Value.Type() != "bool" {
			continue
		}
		n++
		if err := parseFlags(fs, "", []string{"--keep-alive"}, io.Discard); err != nil {
			t.Errorf("%s --keep-alive: %v", name, err)
		} else if f.Value.String() != "true" {
			t.Errorf("%s --keep-alive did not set --keepalive", name)
		}
		if code, _, errs := runMain(t, context.Background(), name, "--keep-alive", "--help"); code != 0 {
			t.Errorf("%s --keep-alive --help: exit %d %s", name, code, errs)
		}
	}
	if n < 3 { // bench, sweep, capacity
		t.Errorf("%d commands take --keepalive", n)
	}
	// sweep's --keep-alive-modes too.
	fs := commands["sweep"]()
	if err := parseFlags(fs, "", []string{"--keep-alive-modes", "both"}, io.Discard); err != nil || fs.Lookup("keepalive-modes").Value.String() != "both" {
		t.Errorf("sweep --keep-alive-modes: %v", err)
	}
}

// TestErrorStyle: every error is one line "backbench COMMAND: message",
// usage errors (exit 2) end with the hint to the command's --help, and no
// message names an internal package; against real backends where a
// backend is involved.
func TestErrorStyle(t *testing.T) {
	dead := deadTCPAddr(t)
	dir := t.TempDir()
	nodir := filepath.Join(dir, "nodir", "x.sock")
	for _, tc := range []struct {
		args []string
		code int
		line string // a regexp of the whole line
	}{
		{[]string{"bench", "--nosuch", "http://" + dead + "/"}, 2, `^backbench bench: unknown flag: --nosuch \(see 'backbench bench --help'\)$`},
		{[]string{"bench"}, 2, `^backbench bench: want exactly one URL, got 0 \(see 'backbench bench --help'\)$`},
		{[]string{"bench", "-X", "p:1", "http://" + dead + "/"}, 2, `^backbench bench: -X p:1: backbench has no proxy mode.* \(see 'backbench bench --help'\)$`},
		{[]string{"capacity", "--keep-alivex", "http://" + dead + "/"}, 2, `^backbench capacity: unknown flag: --keep-alivex \(see 'backbench capacity --help'\)$`},
		{[]string{"sweep", "-c", "0:x", "http://" + dead + "/"}, 2, `^backbench sweep: .* \(see 'backbench sweep --help'\)$`},
		{[]string{"frobnicate"}, 2, `^backbench: unknown command "frobnicate" \(want bench, capacity, .*\) \(see 'backbench --help'\)$`},
		{[]string{"help", "frobnicate"}, 2, `^backbench help: unknown command "frobnicate" .*\(see 'backbench --help'\)$`},
		{[]string{"completion", "tcsh"}, 2, `^backbench completion: want bash, zsh or fish .*\(see 'backbench completion --help'\)$`},
		{[]string{"version", "x"}, 2, `^backbench version: unexpected argument "x" \(see 'backbench version --help'\)$`},
		{[]string{"report", filepath.Join(dir, "none.json")}, 2, `^backbench report: open .*none.json: no such file or directory \(see 'backbench report --help'\)$`},
		// Not usage errors: no hint.
		{[]string{"bench", "-q", "http://" + dead + "/"}, 1, `^backbench bench: cannot connect to tcp ` + regexp.QuoteMeta(dead) + `: connection refused$`},
		{[]string{"probe", "fcgi://" + dead + "/"}, 1, `^backbench probe: cannot connect to tcp ` + regexp.QuoteMeta(dead) + `: connection refused$`},
		{[]string{"serve", "--listen", "unix:" + nodir}, 1, `^backbench serve: listen unix ` + regexp.QuoteMeta(nodir) + `: bind: no such file or directory$`},
	} {
		code, _, errs := runMain(t, context.Background(), tc.args...)
		if code != tc.code || strings.Count(errs, "\n") != 1 || !regexp.MustCompile(tc.line).MatchString(strings.TrimSuffix(errs, "\n")) {
			t.Errorf("%q: exit %d, want %d; stderr %q, want %s", tc.args, code, tc.code, errs, tc.line)
		}
		for _, p := range internalPrefixes {
			if p != tc.args[0] && strings.Contains(errs, p+": ") {
				t.Errorf("%q names the package %s: %q", tc.args, p, errs)
			}
		}
	}
}

// TestErrorLine: the rules of errorLine on messages as packages write them.
func TestErrorLine(t *testing.T) {
	for _, tc := range []struct {
		cmd, msg string
		usage    bool
		want     string
	}{
		{"serve", "fixtures: listen unix /x: bind: denied", false, "backbench serve: listen unix /x: bind: denied"},
		{"serve", "serve: --fault: fixtures: unknown fault", true, "backbench serve: --fault: unknown fault (see 'backbench serve --help')"},
		{"bench", "bench: want exactly one URL, got 2 (see backbench bench --help)", true, "backbench bench: want exactly one URL, got 2 (see 'backbench bench --help')"},
		{"probe", "probe: httpprobe: unknown check x", true, "backbench probe: unknown check x (see 'backbench probe --help')"},
		{"", "unknown command \"x\"", true, "backbench: unknown command \"x\" (see 'backbench --help')"},
	} {
		if got := errorLine(tc.cmd, tc.msg, tc.usage); got != tc.want {
			t.Errorf("errorLine(%q, %q)\n got %q\nwant %q", tc.cmd, tc.msg, got, tc.want)
		}
	}
}

// TestCompletion sources the bash script and asks it what it completes;
// the zsh script is checked for every flag (and by zsh -n when installed).
func TestCompletion(t *testing.T) {
	code, script, errs := runMain(t, context.Background(), "completion", "bash")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	file := filepath.Join(t.TempDir(), "backbench.bash")
	os.WriteFile(file, []byte(script), 0o644)
	complete := func(words ...string) []string {
		t.Helper()
		cmd := exec.Command("bash", "-c", `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($#-1)); _backbench; printf '%s\n' "${COMPREPLY[@]}"`,
			"bash", file, "backbench")
		cmd.Args = append(cmd.Args, words...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return strings.Fields(string(out))
	}
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"co"}, []string{"compare", "completion"}},
		{[]string{"sweep", "--keepalive-m"}, []string{"--keepalive-modes"}},
		{[]string{"bench", "--form"}, []string{"--format"}},
		{[]string{"bench", "--format", ""}, []string{"text", "json", "markdown"}},
		{[]string{"serve", "--protocol", "f"}, []string{"fcgi"}},
		{[]string{"probe", "--idle"}, []string{"--idle-max"}},
		{[]string{"bench", "-n", ""}, nil}, // a value: bash's own completion
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish"}},
		{[]string{"help", "sw"}, []string{"sweep"}},
	} {
		if got := complete(tc.words...); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q completes to %q, want %q", tc.words, got, tc.want)
		}
	}
	_, zsh, _ := runMain(t, context.Background(), "completion", "zsh")
	for _, name := range commandNames() {
		all := complete(name, "-")
		n := 0
		commands[name]().VisitAll(func(f *pflag.Flag) {
			n++
			if f.Hidden { // refused by the command (capacity's -n, --rate...)
				return
			}
			if !slices.Contains(all, "--"+f.Name) || (f.Shorthand != "" && !slices.Contains(all, "-"+f.Shorthand)) {
				t.Errorf("bash: %s - does not offer --%s", name, f.Name)
			}
			if !strings.Contains(zsh, "'--"+f.Name+"[") && !strings.Contains(zsh, "'*--"+f.Name+"[") && !strings.Contains(zsh, ",--"+f.Name+"}'[") {
				t.Errorf("zsh: %s lacks --%s", name, f.Name)
			}
		})
		if n == 0 { // report has one flag (-o)
			t.Errorf("%s has no flags?", name)
		}
	}
	if zshPath, err := exec.LookPath("zsh"); err == nil {
		file := filepath.Join(t.TempDir(), "_backbench")
		os.WriteFile(file, []byte(zsh), 0o644)
		if out, err := exec.Command(zshPath, "-n", file).CombinedOutput(); err != nil {
			t.Errorf("zsh -n: %v\n%s", err, out)
		}
	}
}
