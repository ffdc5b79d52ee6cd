package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/fcgi"
	"github.com/backbench/backbench/fixtures"
	"github.com/backbench/backbench/httpprobe"
	"github.com/backbench/backbench/internal/completion"
	"github.com/backbench/backbench/internal/serve"
)

// commands are the commands that take flags, each with the function that
// builds its flag set: "help COMMAND" and the completion scripts come from
// it, so that a new flag needs no other change.
var commands = map[string]func() *pflag.FlagSet{
	"bench":    func() *pflag.FlagSet { return newBenchFlags(&benchOptions{}) },
	"sweep":    func() *pflag.FlagSet { return newSweepFlags(&sweepOptions{}) },
	"capacity": func() *pflag.FlagSet { return newCapacityFlags(&capacityOptions{}) },
	"probe":    func() *pflag.FlagSet { return newProbeFlags(&probeOptions{}) },
	"serve":    func() *pflag.FlagSet { return newServeFlags(&serve.Options{}) },
	"merge":    func() *pflag.FlagSet { return newMergeFlags(&mergeOptions{}) },
	"compare":  func() *pflag.FlagSet { return newCompareFlags(&compareOptions{}) },
	"study":    func() *pflag.FlagSet { return newStudyFlags(&studyOptions{}) },
	"report": func() *pflag.FlagSet {
		var out string
		return newReportFlags(&out)
	},
}

// commandNames returns the names in commands, sorted.
func commandNames() []string { return slices.Sorted(maps.Keys(commands)) }

// topWords are the words that may follow "backbench".
func topWords() []string {
	return append(commandNames(), "completion", "help", "version")
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
	case cmd == "serve" && flag == "fault": // both protocols' (a script offers a word once)
		var names []string
		for _, f := range slices.Concat(fixtures.Faults(fixtures.ProtoFCGI), fixtures.Faults(fixtures.ProtoHTTP)) {
			names = append(names, f.Name)
		}
		return names
	case cmd == "probe" && (flag == "only" || flag == "skip"):
		return slices.Concat(fcgi.ProbeChecks, httpprobe.ProbeChecks)
	}
	return nil
}

// program is the description of the commands that the completion scripts
// are written from: every command's flags, from its flag set.
func program() completion.Program {
	p := completion.Program{Words: topWords()}
	for _, name := range commandNames() {
		p.Commands = append(p.Commands, completion.Command{Name: name, Flags: flagInfos(name, commands[name]())})
	}
	return p
}

// flagInfos are what the completion scripts need of the flags of fs, the
// flag set of the command cmd: hidden flags left out.
func flagInfos(cmd string, fs *pflag.FlagSet) []completion.Flag {
	var fl []completion.Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		fi := completion.Flag{Long: "--" + f.Name, Value: f.NoOptDefVal == "",
			Repeat: strings.Contains(f.Value.Type(), "Array") || strings.Contains(f.Value.Type(), "Slice"),
			Usage:  f.Usage}
		if f.Shorthand != "" {
			fi.Short = "-" + f.Shorthand
		}
		if c, ok := f.Value.(*Choice); ok {
			fi.Choices = c.Choices()
		} else {
			fi.Choices = wordValues(cmd, f.Name)
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
	if len(args) != 1 || !slices.Contains(completion.Shells, args[0]) {
		return usagef("want bash, zsh or fish (backbench completion bash > /etc/bash_completion.d/backbench)")
	}
	_, err := io.WriteString(stdout, completion.Script(args[0], program()))
	return err
}
