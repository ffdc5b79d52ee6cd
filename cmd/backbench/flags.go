package main

import (
	"io"
	"os"
	"strings"

	"github.com/backbench/backbench/internal/stats"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// newFlagSet returns the flag set of a command: errors are returned, not
// printed, and a flag name that starts with "keep-alive" is read as
// "keepalive", so that --keep-alive is an alias of --keepalive (and
// --keep-alive-modes of --keepalive-modes) in every command.
func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetNormalizeFunc(normalizeAlias)
	return fs
}

// normalizeAlias is the one alias set of every command: --keep-alive... is
// read as --keepalive.... parseFlags applies it to every flag set, also to
// one built with pflag.NewFlagSet, so that no command misses it.
func normalizeAlias(_ *pflag.FlagSet, n string) pflag.NormalizedName {
	if rest, ok := strings.CutPrefix(n, "keep-alive"); ok {
		n = "keepalive" + rest
	}
	return pflag.NormalizedName(n)
}

// stdin is where -p - and -u - read the body; a variable so that tests can
// give one.
var stdin io.Reader = os.Stdin

// stdinBody keeps the body read from stdin: sweep validates the load of
// every series, and stdin can be read once only.
var stdinBody struct {
	read bool
	data []byte
	err  error
}

// readStdin reads standard input once (-p - and -u -, as curl's
// --data-binary @-): plan.Options.Stdin.
func readStdin() ([]byte, error) {
	if !stdinBody.read {
		stdinBody.data, stdinBody.err = io.ReadAll(stdin)
		stdinBody.read = true
	}
	return stdinBody.data, stdinBody.err
}

// addOutputFlag adds -o, --output FILE: the report goes to FILE instead of
// standard output.
func addOutputFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVarP(p, "output", "o", "", "write the report (any --format) to `FILE` instead of standard output")
}

// shareOptions are the flags that say what a result file keeps of the
// command line and the machine: by default no credential (load.RedactArgs)
// and the host name.
type shareOptions struct {
	keepSecrets bool
	noHostname  bool
}

// addShareFlags adds --keep-secrets and, when hostname is true, --no-hostname.
func addShareFlags(fs *pflag.FlagSet, o *shareOptions, hostname bool) {
	fs.BoolVar(&o.keepSecrets, "keep-secrets", false, "keep the credentials of the command line (-H Authorization/Cookie values, -A, -C, secret-looking --param values, the URL's ?api_key=, ?token=... values) in what is written, for a private file; by default they read REDACTED")
	if hostname {
		fs.BoolVar(&o.noHostname, "no-hostname", false, "leave the machine's host name out of the results (environment.hostname is empty)")
	}
}

// privacy is the stats.Privacy of o, with the one-letter flags of fs that
// take a value (so that a cluster like -kHvalue is read as pflag reads it);
// a nil fs means load.DefaultValueShorts, the flags of bench and sweep.
func (o shareOptions) privacy(fs *pflag.FlagSet) stats.Privacy {
	p := stats.Privacy{KeepSecrets: o.keepSecrets, NoHostname: o.noHostname}
	if fs == nil {
		return p
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Shorthand != "" && f.NoOptDefVal == "" {
			p.ValueShorts += f.Shorthand
		}
	})
	return p
}

// host is a generator's host name as merge writes it: "" with --no-hostname.
func (o shareOptions) host(name string) string {
	if o.noHostname {
		return ""
	}
	return name
}

// isTerminal reports whether w is a terminal; a variable so that tests can
// pretend.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
