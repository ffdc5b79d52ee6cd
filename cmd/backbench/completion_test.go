package main

import (
	"context"
	"io"
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
// commands parse with. How the scripts complete in their shells is tested
// in internal/completion (shells_test.go).
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
				if len(flagInfos(name, commands[name]())) == 0 { // report has one flag (-o)
					t.Errorf("%s has no flags?", name)
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
