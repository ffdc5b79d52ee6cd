// Package completion writes backbench's shell completion scripts (bash,
// zsh and fish) from a plain description of its commands and their flags:
// the scripts complete the commands, the flags (--name and -x) and the
// values of flags that take a few words; elsewhere the shell completes file
// names. Each command's part of a script starts with a "# backbench NAME"
// line, and the last with "# backbench end".
//
// The description is built where the flags are (cmd/backbench, from its
// flag sets), so that a new flag needs no change here.
package completion

import (
	"fmt"
	"slices"
	"strings"
)

// Shells are the shells Script writes a script for.
var Shells = []string{"bash", "zsh", "fish"}

// Flag is what a completion script needs of a flag.
type Flag struct {
	Long    string   // "--name"
	Short   string   // "-x", or "" when it has none
	Value   bool     // takes a value
	Choices []string // the values it takes, when a few words (each offered once)
	Repeat  bool     // may be given more than once
	Usage   string   // its help
}

// Command is a command that takes flags.
type Command struct {
	Name  string
	Flags []Flag
}

// Program describes what the scripts complete.
type Program struct {
	// Commands are the commands that take flags, in the order of the
	// script's parts.
	Commands []Command
	// Words are the words that may follow "backbench": the commands and
	// the others (completion, help, version ...); "help" takes them too.
	Words []string
}

// Script returns the script of shell (one of Shells) for p, or "" for
// another shell.
func Script(shell string, p Program) string {
	p = p.once()
	switch shell {
	case "bash":
		return bash(p)
	case "zsh":
		return zsh(p)
	case "fish":
		return fish(p)
	}
	return ""
}

// once returns p with each flag's choices listed once, in the order of
// their first appearance.
func (p Program) once() Program {
	cmds := slices.Clone(p.Commands)
	for i, c := range cmds {
		c.Flags = slices.Clone(c.Flags)
		for j, f := range c.Flags {
			var words []string
			for _, w := range f.Choices {
				if !slices.Contains(words, w) {
					words = append(words, w)
				}
			}
			c.Flags[j].Choices = words
		}
		cmds[i] = c
	}
	p.Commands = cmds
	return p
}

// bash is a bash script completing commands, flags and the values of flags
// that take a few words; elsewhere bash completes file names.
func bash(p Program) string {
	var b strings.Builder
	top := strings.Join(p.Words, " ")
	b.WriteString(`# bash completion for backbench, generated from its flags by "backbench completion bash".
_backbench() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "` + top + `" -- "$cur"))
        return
    fi
    case "${COMP_WORDS[1]}" in
`)
	for _, c := range p.Commands {
		var words, valued []string
		fmt.Fprintf(&b, "    # backbench %s\n    %s)\n        case \"$prev\" in\n", c.Name, c.Name)
		for _, f := range c.Flags {
			names := []string{f.Long}
			if f.Short != "" {
				names = append(names, f.Short)
			}
			words = append(words, names...)
			switch {
			case len(f.Choices) > 0:
				fmt.Fprintf(&b, "        %s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return;;\n", strings.Join(names, "|"), strings.Join(f.Choices, " "))
			case f.Value:
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
`, strings.Join(Shells, " "), top)
	return b.String()
}

// zsh is a zsh script (_arguments specs with each flag's help).
func zsh(p Program) string {
	var b strings.Builder
	top := strings.Join(p.Words, " ")
	b.WriteString(`#compdef backbench
# zsh completion for backbench, generated from its flags by "backbench completion zsh".
_backbench() {
    if (( CURRENT == 2 )); then
        _values command ` + top + `
        return
    fi
    local cmd=$words[2]
    shift words
    (( CURRENT-- ))
    case $cmd in
`)
	clean := strings.NewReplacer("[", "(", "]", ")", ":", " ", "'", "", "\\", "", "`", "")
	for _, c := range p.Commands {
		fmt.Fprintf(&b, "    # backbench %s\n    %s)\n        _arguments -s \\\n", c.Name, c.Name)
		for _, f := range c.Flags {
			star := ""
			if f.Repeat {
				star = "*"
			}
			spec := "'" + star + f.Long + "[" // '--name[usage]...'
			if f.Short != "" {
				spec = "'" + star + "'{" + f.Short + "," + f.Long + "}'[" // '*'{-n,--name}'[usage]...'
			}
			spec += clean.Replace(f.Usage) + "]"
			switch {
			case len(f.Choices) > 0:
				spec += ":value:(" + strings.Join(f.Choices, " ") + ")"
			case f.Value:
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
`, strings.Join(Shells, " "), top)
	return b.String()
}

// fish is a fish script: one complete line per command and per flag, with
// the flag's help as its description.
func fish(p Program) string {
	var b strings.Builder
	// fish single quotes: only \ and \' are special.
	quote := func(s string) string {
		return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
	}
	top := quote(strings.Join(p.Words, " "))
	b.WriteString("# fish completion for backbench, generated from its flags by \"backbench completion fish\".\n")
	fmt.Fprintf(&b, "complete -c backbench -n __fish_use_subcommand -f -a %s\n", top)
	fmt.Fprintf(&b, "complete -c backbench -n '__fish_seen_subcommand_from completion' -f -a %s\n", quote(strings.Join(Shells, " ")))
	fmt.Fprintf(&b, "complete -c backbench -n '__fish_seen_subcommand_from help' -f -a %s\n", top)
	for _, c := range p.Commands {
		fmt.Fprintf(&b, "# backbench %s\n", c.Name)
		for _, f := range c.Flags {
			line := "complete -c backbench -n '__fish_seen_subcommand_from " + c.Name + "' -l " + strings.TrimPrefix(f.Long, "--")
			if f.Short != "" {
				line += " -s " + strings.TrimPrefix(f.Short, "-")
			}
			switch {
			case len(f.Choices) > 0:
				line += " -x -a " + quote(strings.Join(f.Choices, " "))
			case f.Value:
				line += " -r -F"
			}
			line += " -d " + quote(strings.ReplaceAll(f.Usage, "`", ""))
			b.WriteString(line + "\n")
		}
	}
	b.WriteString("# backbench end\n")
	return b.String()
}
