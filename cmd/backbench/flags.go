package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
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

// UsageError is a bad command line: the command exits with status 2.
type UsageError struct{ msg string }

// Error returns the message, without the command's name.
func (e *UsageError) Error() string { return e.msg }

// Usagef returns a UsageError formatted as fmt.Sprintf does.
func Usagef(format string, a ...any) error { return &UsageError{fmt.Sprintf(format, a...)} }

// Choice is a flag Value restricted to a few words.
type Choice struct {
	p       *string
	choices []string
}

// NewChoice returns a Choice of choices for p, set to def.
func NewChoice(p *string, def string, choices ...string) *Choice {
	*p = def
	return &Choice{p, choices}
}

// Choices returns the words the value may take (shell completion offers
// them).
func (v *Choice) Choices() []string { return v.choices }

// String returns the word chosen.
func (v *Choice) String() string { return *v.p }

// Set takes s when it is one of the choices.
func (v *Choice) Set(s string) error {
	for _, c := range v.choices {
		if s == c {
			*v.p = s
			return nil
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(v.choices, ", "))
}

// Type is the choices joined by "|", as help shows them.
func (v *Choice) Type() string { return strings.Join(v.choices, "|") }

// StartAt is the flag Value of --start-at: a wall-clock time as RFC 3339
// (2026-12-01T04:00:00Z, fractions allowed) or Unix seconds (1764561600,
// 1764561600.25).
type StartAt struct{ t *time.Time }

// NewStartAt returns a StartAt for p, which keeps its value (the zero time:
// not given).
func NewStartAt(p *time.Time) *StartAt { return &StartAt{p} }

// String returns the time as RFC 3339, "" when not given.
func (v *StartAt) String() string {
	if v.t == nil || v.t.IsZero() {
		return ""
	}
	return v.t.Format(time.RFC3339Nano)
}

// Set reads RFC 3339 or Unix seconds with at most 9 decimals.
func (v *StartAt) Set(s string) error {
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

// Type is the word help shows for the value.
func (v *StartAt) Type() string { return "TIME" }

// AnnounceStart says on stderr, unless quiet, when a --start-at run will
// start (nothing for the zero time).
func AnnounceStart(stderr io.Writer, t time.Time, quiet bool) {
	if t.IsZero() || quiet {
		return
	}
	fmt.Fprintf(stderr, "Starting at %s (in %.1f s)\n", t.Format(time.RFC3339Nano), max(time.Until(t).Seconds(), 0))
}

// Finite is a flag Value for a float64 that must be a finite number: NaN,
// Inf and values beyond float64 are refused when the flag is parsed, so
// that a bad number is a usage error before any load, never a run whose
// figures are NaN or a JSON encoding that fails at the end.
type Finite struct{ p *float64 }

// NewFinite returns a Finite for p, set to def.
func NewFinite(p *float64, def float64) *Finite {
	*p = def
	return &Finite{p}
}

// String returns the number.
func (v *Finite) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*v.p, 'g', -1, 64)
}

// Set reads a finite number (ParseFinite).
func (v *Finite) Set(s string) error {
	f, err := ParseFinite(s)
	if err != nil {
		return err
	}
	*v.p = f
	return nil
}

// Type is the word help shows for the value.
func (v *Finite) Type() string { return "float" }

// ParseFinite reads a finite float64.
func ParseFinite(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("want a finite number")
	}
	return f, nil
}

// ParseRatio reads the value s of flag name, a ratio ("0.05") or a
// percentage ("5%"), from 0 to 1 (load.ParseRatio); anything else is
// a UsageError.
func ParseRatio(name, s string) (float64, error) {
	f, err := load.ParseRatio(s)
	if err != nil {
		return 0, Usagef("bad %s %q: %v", name, s, err)
	}
	return f, nil
}

// ParsePercent reads the value s of flag name, "2%" or "0.02", as a
// fraction from 0 to below 1 (load.ParsePercent); anything else is a
// UsageError.
func ParsePercent(name, s string) (float64, error) {
	f, err := load.ParsePercent(s)
	if err != nil {
		return 0, Usagef("bad %s %q: %v", name, s, err)
	}
	return f, nil
}

// HelpWidth is the width help is wrapped to: the terminal's when w is one
// (at least 40 columns), else 80.
func HelpWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols >= 40 {
			return cols
		}
	}
	return 80
}

// WrapText breaks the lines of text longer than width at spaces
// (report.Wrap); a continuation starts under the text after a line's first
// run of two spaces or more ("  name   description" lists), else under its
// indent. A line whose first word is longer than the line is left whole.
func WrapText(text string, width int) string {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
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
		lines[i] = report.Wrap(line, width, strings.Repeat(" ", indent))
	}
	return strings.Join(lines, "\n")
}

// OpenOutput opens the file of -o, before any connection so that a bad
// path costs nothing (a UsageError); "" and "-" are stdout. The command
// defers done with the address of its error: done renames the report into
// place, setting that error when the rename fails, or, when the command
// failed, drops the report and leaves the previous file as it was.
func OpenOutput(name string, stdout io.Writer) (w io.Writer, done func(cmdErr *error), err error) {
	if name == "" || name == "-" {
		return stdout, func(*error) {}, nil
	}
	// Written whole or not at all, as every output file: a run that
	// fails leaves the previous file as it was.
	f, err := report.CreateAtomic(name)
	if err != nil {
		return nil, nil, Usagef("cannot create -o file: %v", err)
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

// Commit renames w into place when it is a report.AtomicFile (an output
// file); standard output has nothing to commit.
func Commit(w io.Writer) error {
	if a, ok := w.(*report.AtomicFile); ok {
		return a.Commit()
	}
	return nil
}
