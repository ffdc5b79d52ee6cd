package completion

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// prog is a small program: one command with a flag of each kind.
var prog = Program{
	Commands: []Command{{Name: "run", Flags: []Flag{
		{Long: "--format", Short: "-f", Value: true, Choices: []string{"text", "json"}, Usage: "output [format]: it's `text`"},
		{Long: "--header", Short: "-H", Value: true, Repeat: true, Usage: "a header"},
		{Long: "--quiet", Usage: "say less"},
	}}},
	Words: []string{"run", "completion", "help"},
}

// TestScriptParts: every script has a part per command between its
// markers, with each flag, its short form and its values, and the help
// cleaned for the shell.
func TestScriptParts(t *testing.T) {
	for _, shell := range Shells {
		s := Script(shell, prog)
		for _, want := range []string{"# backbench run\n", "# backbench end\n", "text json"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: no %q", shell, want)
			}
		}
		for _, want := range map[string][]string{
			"bash": {`--format|-f) COMPREPLY=($(compgen -W "text json"`, "--header|-H) return;;", `"--format -f --header -H --quiet"`},
			"zsh":  {`'{-f,--format}'[output (format)  its text]:value:(text json)'`, `'*'{-H,--header}'[a header]:value:_files'`, `'--quiet[say less]'`},
			"fish": {`-l format -s f -x -a 'text json' -d 'output [format]: it\'s text'`, "-l header -s H -r -F", "-l quiet -d 'say less'"},
		}[shell] {
			if !strings.Contains(s, want) {
				t.Errorf("%s: no %q in\n%s", shell, want, s)
			}
		}
	}
	if Script("tcsh", prog) != "" {
		t.Error("a script for tcsh")
	}
}

// TestBashScriptRuns sources the bash script and asks it for completions.
func TestBashScriptRuns(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	file := filepath.Join(t.TempDir(), "backbench.bash")
	if err := os.WriteFile(file, []byte(Script("bash", prog)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"r"}, "run"},
		{[]string{"run", "--format", ""}, "text json"},
		{[]string{"run", "-f", "j"}, "json"},
		{[]string{"run", "--q"}, "--quiet"},
		{[]string{"run", "--header", ""}, ""},
		{[]string{"completion", "z"}, "zsh"},
		{[]string{"help", "c"}, "completion"},
	} {
		cmd := exec.Command(bash, "-c", `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($#-1)); _backbench; printf '%s\n' "${COMPREPLY[@]}"`,
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

// TestChoicesOnce: a word given twice among a flag's choices (the same
// name in two lists) is offered once, and the description is left as it
// was.
func TestChoicesOnce(t *testing.T) {
	p := Program{Commands: []Command{{Name: "probe", Flags: []Flag{{Long: "--only", Value: true, Choices: []string{"a", "b", "a", "c", "b"}}}}}}
	for _, shell := range Shells {
		if s := Script(shell, p); !strings.Contains(s, "a b c") || strings.Contains(s, "a b a") {
			t.Errorf("%s:\n%s", shell, s)
		}
	}
	if got := strings.Join(p.Commands[0].Flags[0].Choices, " "); got != "a b a c b" {
		t.Errorf("the description changed: %s", got)
	}
}
