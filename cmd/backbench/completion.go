package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/fcgi"
	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/httpprobe"
	"github.com/backbench/backbench/internal/cli"
)

// commands are the commands that take flags, each with the function that
// builds its flag set: "help COMMAND" and the completion scripts come from
// it, so that a new flag needs no other change.
var commands = map[string]func() *pflag.FlagSet{
	"bench":    func() *pflag.FlagSet { return newBenchFlags(&benchOptions{}) },
	"sweep":    func() *pflag.FlagSet { return newSweepFlags(&sweepOptions{}) },
	"capacity": func() *pflag.FlagSet { return newCapacityFlags(&capacityOptions{}) },
	"probe":    func() *pflag.FlagSet { return newProbeFlags(&probeOptions{}) },
	"serve":    func() *pflag.FlagSet { return newServeFlags(&serveOptions{}) },
	"merge":    func() *pflag.FlagSet { return newMergeFlags(&mergeOptions{}) },
	"compare":  func() *pflag.FlagSet { return newCompareFlags(&compareOptions{}) },
	"study":    func() *pflag.FlagSet { return newStudyFlags(&studyOptions{}) },
	"report": func() *pflag.FlagSet {
		var out string
		return newReportFlags(&out)
	},
}

// shells are the shells completionCmd writes a script for.
var shells = []string{"bash", "zsh", "fish"}

// commandNames returns the names in commands, sorted.
func commandNames() []string {
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// topWords are the words that may follow "backbench".
func topWords() []string {
	return append(commandNames(), "completion", "help", "version")
}

// flagInfo is what a completion script needs of a flag.
type flagInfo struct {
	long, short string
	value       bool     // takes a value
	choices     []string // the values it takes, when a few words
	repeat      bool
	usage       string
}

// wordValues are the words of the flags whose Value takes a few words
// without being a choiceValue (a plain string that a parser reads later),
// by command and flag name; the values that the code lists itself (faults,
// probe checks) come from there. TestCompletionValuesParse feeds every one
// of them to the parser of its flag.
func wordValues(cmd, flag string) []string {
	switch {
	case flag == "balance":
		return []string{"round-robin", "least-conn"}
	case cmd == "sweep" && flag == "keepalive-modes":
		return []string{"on", "off", "on,off", "off,on", "both"}
	case cmd == "serve" && flag == "model":
		return []string{"threaded", "serial", "prefork:", "evented"}
	case cmd == "serve" && flag == "keepalive":
		return []string{"on", "off", "max="}
	case cmd == "serve" && flag == "fault":
		var names []string
		for _, proto := range []string{fixtures.ProtoFCGI, fixtures.ProtoHTTP} {
			for _, f := range fixtures.Faults(proto) {
				if !slices.Contains(names, f.Name) {
					names = append(names, f.Name)
				}
			}
		}
		return names
	case cmd == "probe" && (flag == "only" || flag == "skip"):
		var names []string
		for _, n := range append(slices.Clone(fcgi.ProbeChecks), httpprobe.ProbeChecks...) {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		return names
	}
	return nil
}

func flagInfos(cmd string, fs *pflag.FlagSet) []flagInfo {
	var fl []flagInfo
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		fi := flagInfo{long: "--" + f.Name, value: f.NoOptDefVal == "",
			repeat: strings.Contains(f.Value.Type(), "Array") || strings.Contains(f.Value.Type(), "Slice"),
			usage:  f.Usage}
		if f.Shorthand != "" {
			fi.short = "-" + f.Shorthand
		}
		if c, ok := f.Value.(*cli.Choice); ok {
			fi.choices = c.Choices()
		} else {
			fi.choices = wordValues(cmd, f.Name)
		}
		fl = append(fl, fi)
	})
	return fl
}

const completionUsage = `Usage: backbench completion bash|zsh|fish

Prints a completion script for the shell, generated from the flags of every
command: commands, flags (--name and -x) and the values of flags that take a
few words (--format text|json, sweep --keepalive-modes on|off|both ...);
elsewhere the shell completes file names.

  bash: source <(backbench completion bash)
        or backbench completion bash > /etc/bash_completion.d/backbench
  zsh:  source <(backbench completion zsh)
        or backbench completion zsh > "${fpath[1]}/_backbench"
  fish: backbench completion fish | source
        or backbench completion fish > ~/.config/fish/completions/backbench.fish
`

func completionCmd(args []string, stdout io.Writer) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, completionUsage)
		return nil
	}
	if len(args) != 1 || !slices.Contains(shells, args[0]) {
		return usagef("want bash, zsh or fish (backbench completion bash > /etc/bash_completion.d/backbench)")
	}
	script := map[string]func() string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}[args[0]]
	_, err := io.WriteString(stdout, script())
	return err
}

// bashCompletion is a bash script completing commands, flags and the
// values of flags that take a few words; elsewhere bash completes file
// names.
func bashCompletion() string {
	var b strings.Builder
	b.WriteString(`# bash completion for backbench, generated from its flags by "backbench completion bash".
_backbench() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "` + strings.Join(topWords(), " ") + `" -- "$cur"))
        return
    fi
    case "${COMP_WORDS[1]}" in
`)
	for _, name := range commandNames() {
		var words, valued []string
		fmt.Fprintf(&b, "    # backbench %s\n    %s)\n        case \"$prev\" in\n", name, name)
		for _, f := range flagInfos(name, commands[name]()) {
			names := []string{f.long}
			if f.short != "" {
				names = append(names, f.short)
			}
			words = append(words, names...)
			switch {
			case len(f.choices) > 0:
				fmt.Fprintf(&b, "        %s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return;;\n", strings.Join(names, "|"), strings.Join(f.choices, " "))
			case f.value:
				valued = append(valued, names...)
			}
		}
		if len(valued) > 0 {
			fmt.Fprintf(&b, "        %s) return;;\n", strings.Join(valued, "|"))
		}
		fmt.Fprintf(&b, "        esac\n        [[ $cur == -* ]] && COMPREPLY=($(compgen -W %q -- \"$cur\"));;\n", strings.Join(words, " "))
	}
	fmt.Fprintf(&b, `    # backbench end
    completion) COMPREPLY=($(compgen -W %q -- "$cur"));;
    help) COMPREPLY=($(compgen -W %q -- "$cur"));;
    esac
}
complete -o default -F _backbench backbench
`, strings.Join(shells, " "), strings.Join(topWords(), " "))
	return b.String()
}

// zshCompletion is a zsh script (_arguments specs with each flag's help).
func zshCompletion() string {
	var b strings.Builder
	b.WriteString(`#compdef backbench
# zsh completion for backbench, generated from its flags by "backbench completion zsh".
_backbench() {
    if (( CURRENT == 2 )); then
        _values command ` + strings.Join(topWords(), " ") + `
        return
    fi
    local cmd=$words[2]
    shift words
    (( CURRENT-- ))
    case $cmd in
`)
	clean := strings.NewReplacer("[", "(", "]", ")", ":", " ", "'", "", "\\", "", "`", "")
	for _, name := range commandNames() {
		fmt.Fprintf(&b, "    # backbench %s\n    %s)\n        _arguments -s \\\n", name, name)
		for _, f := range flagInfos(name, commands[name]()) {
			star := ""
			if f.repeat {
				star = "*"
			}
			spec := "'" + star + f.long + "[" // '--name[usage]...'
			if f.short != "" {
				spec = "'" + star + "'{" + f.short + "," + f.long + "}'[" // '*'{-n,--name}'[usage]...'
			}
			spec += clean.Replace(f.usage) + "]"
			switch {
			case len(f.choices) > 0:
				spec += ":value:(" + strings.Join(f.choices, " ") + ")"
			case f.value:
				spec += ":value:_files"
			}
			fmt.Fprintf(&b, "            %s' \\\n", spec)
		}
		b.WriteString("            '*:URL:_files';;\n")
	}
	fmt.Fprintf(&b, `    # backbench end
    completion) _values shell %s;;
    help) _values command %s;;
    esac
}
if [ "$funcstack[1]" = "_backbench" ]; then
    _backbench "$@"
else
    compdef _backbench backbench
fi
`, strings.Join(shells, " "), strings.Join(topWords(), " "))
	return b.String()
}

// fishCompletion is a fish script: one complete line per command and per
// flag, with the flag's help as its description.
func fishCompletion() string {
	var b strings.Builder
	// fish single quotes: only \ and \' are special.
	quote := func(s string) string {
		return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
	}
	b.WriteString("# fish completion for backbench, generated from its flags by \"backbench completion fish\".\n")
	fmt.Fprintf(&b, "complete -c backbench -n __fish_use_subcommand -f -a %s\n", quote(strings.Join(topWords(), " ")))
	fmt.Fprintf(&b, "complete -c backbench -n '__fish_seen_subcommand_from completion' -f -a %s\n", quote(strings.Join(shells, " ")))
	fmt.Fprintf(&b, "complete -c backbench -n '__fish_seen_subcommand_from help' -f -a %s\n", quote(strings.Join(topWords(), " ")))
	for _, name := range commandNames() {
		fmt.Fprintf(&b, "# backbench %s\n", name)
		for _, f := range flagInfos(name, commands[name]()) {
			line := "complete -c backbench -n '__fish_seen_subcommand_from " + name + "' -l " + strings.TrimPrefix(f.long, "--")
			if f.short != "" {
				line += " -s " + strings.TrimPrefix(f.short, "-")
			}
			switch {
			case len(f.choices) > 0:
				line += " -x -a " + quote(strings.Join(f.choices, " "))
			case f.value:
				line += " -r -F"
			}
			line += " -d " + quote(strings.ReplaceAll(f.usage, "`", ""))
			b.WriteString(line + "\n")
		}
	}
	b.WriteString("# backbench end\n")
	return b.String()
}
