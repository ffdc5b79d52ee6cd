package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/backbench/backbench/internal/report"
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

// helpWidth is the width help is wrapped to: the terminal's when w is one,
// else 80.
func helpWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && isTerminal(w) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols >= 40 {
			return cols
		}
	}
	return 80
}

// secondsValue is a pflag Value for a duration given in seconds ("30",
// "2.5") as ab takes it, or as a Go duration ("500ms", "1m").
type secondsValue struct{ d *time.Duration }

func newSeconds(p *time.Duration, def time.Duration) *secondsValue {
	*p = def
	return &secondsValue{p}
}

func (v *secondsValue) String() string {
	if v.d == nil {
		return "0"
	}
	return strconv.FormatFloat(v.d.Seconds(), 'f', -1, 64)
}

func (v *secondsValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil || strings.Contains(err.Error(), "out of range") {
		// !(f >= 0) also refuses NaN, which compares false to anything.
		if !(f >= 0) || f > 1e9 {
			return fmt.Errorf("want seconds from 0 to 1e9")
		}
		*v.d = time.Duration(f * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("want seconds (30, 2.5) or a duration (500ms)")
	}
	if d > 1e9*time.Second {
		return fmt.Errorf("want seconds from 0 to 1e9")
	}
	*v.d = d
	return nil
}

func (v *secondsValue) Type() string { return "seconds" }

// choiceValue is a pflag Value restricted to a few words.
type choiceValue struct {
	p       *string
	choices []string
}

func newChoice(p *string, def string, choices ...string) *choiceValue {
	*p = def
	return &choiceValue{p, choices}
}

func (v *choiceValue) String() string { return *v.p }

func (v *choiceValue) Set(s string) error {
	for _, c := range v.choices {
		if s == c {
			*v.p = s
			return nil
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(v.choices, ", "))
}

func (v *choiceValue) Type() string { return strings.Join(v.choices, "|") }

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

// startAtValue is the pflag Value of --start-at: a wall-clock time as RFC
// 3339 (2026-12-01T04:00:00Z, fractions allowed) or Unix seconds
// (1764561600, 1764561600.25).
type startAtValue struct{ t *time.Time }

func (v *startAtValue) String() string {
	if v.t == nil || v.t.IsZero() {
		return ""
	}
	return v.t.Format(time.RFC3339Nano)
}

func (v *startAtValue) Set(s string) error {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		*v.t = t
		return nil
	}
	secs, frac, _ := strings.Cut(s, ".")
	sec, err1 := strconv.ParseInt(secs, 10, 64)
	_, err2 := strconv.ParseUint("0"+frac, 10, 64)
	if err1 != nil || err2 != nil || sec < 0 || len(frac) > 9 {
		return fmt.Errorf("want RFC 3339 (2026-12-01T04:00:00Z) or Unix seconds (1764561600)")
	}
	ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	*v.t = time.Unix(sec, ns)
	return nil
}

func (v *startAtValue) Type() string { return "TIME" }

// announceStart says on stderr, unless quiet, when a --start-at run will
// start.
func announceStart(stderr io.Writer, t time.Time, quiet bool) {
	if t.IsZero() || quiet {
		return
	}
	fmt.Fprintf(stderr, "Starting at %s (in %.1f s)\n", t.Format(time.RFC3339Nano), max(time.Until(t).Seconds(), 0))
}

// wrapText breaks the lines of text longer than width at spaces; a
// continuation starts under the text after a line's first run of two
// spaces or more ("  name   description" lists), else under its indent.
func wrapText(text string, width int) string {
	var b strings.Builder
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if j := strings.Index(line[indent:], "  "); j > 0 {
			k := indent + j
			for k < len(line) && line[k] == ' ' {
				k++
			}
			if k < width/2 {
				indent = k
			}
		}
		for len(line) > width {
			cut := strings.LastIndexByte(line[:width+1], ' ')
			if cut <= indent {
				break // one word longer than the line: leave it
			}
			b.WriteString(strings.TrimRight(line[:cut], " ") + "\n")
			line = strings.Repeat(" ", indent) + strings.TrimLeft(line[cut:], " ")
		}
		b.WriteString(line)
	}
	return b.String()
}

// addOutputFlag adds -o, --output FILE: the report goes to FILE instead of
// standard output.
func addOutputFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVarP(p, "output", "o", "", "write the report (any --format) to `FILE` instead of standard output")
}

// openOutput opens the file of -o, before any connection so that a bad
// path costs nothing; "" and "-" are stdout. The command defers done with
// the address of its error: done renames the report into place, setting
// that error when the rename fails, or, when the command failed, drops the
// report and leaves the previous file as it was.
func openOutput(name string, stdout io.Writer) (w io.Writer, done func(cmdErr *error), err error) {
	if name == "" || name == "-" {
		return stdout, func(*error) {}, nil
	}
	// Written whole or not at all, as every output file: a run that
	// fails leaves the previous file as it was.
	f, err := report.CreateAtomic(name)
	if err != nil {
		return nil, nil, usagef("cannot create -o file: %v", err)
	}
	return f, func(cmdErr *error) {
		if *cmdErr != nil {
			f.Abort()
			return
		}
		if cerr := f.Commit(); cerr != nil {
			*cmdErr = fmt.Errorf("writing %s: %w", name, cerr)
		}
	}, nil
}

// commit renames w into place when it is a report.AtomicFile (an output
// file); standard output has nothing to commit.
func commit(w io.Writer) error {
	if a, ok := w.(*report.AtomicFile); ok {
		return a.Commit()
	}
	return nil
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
	fs.BoolVar(&o.keepSecrets, "keep-secrets", false, "keep the credentials of the command line (-H Authorization/Cookie values, -A, -C, secret-looking --param values) in what is written, for a private file; by default they read REDACTED")
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
