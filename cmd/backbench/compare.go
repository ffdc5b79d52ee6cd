package main

import (
	"context"
	"io"
	"os"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/backbench/backbench/internal/compare"
	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

const compareUsage = `Usage: backbench compare [flags] OLD.json NEW.json [MORE.json...]

Compares saved results: bench JSON (--format json) or sweep.json, with or
without trials (--repeat). Every file after the first is compared with the
first. Each series is paired with the series of the first file that differs
from it in at most one factor (transport, keep-alive, protocol, HTTP
version, TLS, upstreams, backend = bench --label or sweep's LABEL; a sweep's
series of the same label first), levels by concurrency; the usual setting
is the baseline of a pair (TCP, keep-alive off, HTTP/1.1...), the first
file's of a pair that differs in the backend or in nothing. What differs
(targets, load shapes) is printed at the top. Per pair, level and metric
(req/s, mean, p50, p99, max; the backend's CPU per request and PSS where
sampled): both medians with their intervals, the ratio with its
interval (each labelled with its real confidence: 95% from 6 trials for a
median, 4 a side for a ratio; less below), the Mann-Whitney p-value and a verdict: a direction
(faster/slower, lower/higher, smaller/larger) when the whole ratio
interval lies outside 1 ± the noise; same when it lies wholly inside;
undecided otherwise, with about how many more rounds would decide it;
"–" without enough trials.

Nothing to pair (no level in common, or every series more than one factor
apart) exits 2.

--fail-on RULES is a regression gate for CI: "req/s slower, p99 higher by
10%" (metrics req/s, mean, p50, p99, max, cpu, pss; the directions of
their verdicts; "by N%": the whole ratio interval beyond 1 ± N%). It judges
the pairs of one series in two files (or of two backends): exit status 4
when one tripped it, 5 when some comparison has no verdict (runs without
--repeat 4 or more), never a silent pass. The text and the JSON's "gate"
name what tripped it.

Flags:
`

// compareOptions are the flags of compare.
type compareOptions struct {
	format string
	noise  string
	force  bool
	failOn string
	wide   bool
}

func newCompareFlags(o *compareOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Var(NewChoice(&o.format, "text", "text", "json", "markdown"), "format", "output: text (a table), json, or markdown (the verdicts as a GitHub table, for a pull request)")
	fs.StringVar(&o.noise, "noise", "2%", "noise threshold `P`: a ratio interval wholly inside 1 ± P is \"same\", wholly outside a direction, else \"undecided\"")
	fs.StringVar(&o.failOn, "fail-on", "", "regression gate: exit status 4 when a verdict of these `RULES` shows (req/s slower, p99 higher by 10%: METRIC DIRECTION [by N%], comma-separated); 5 when some comparison has no verdict to judge")
	fs.BoolVar(&o.wide, "wide", false, "print the table as wide as it is (one row per metric with every column), not fitted to 100 columns (or the terminal's width)")
	fs.BoolVar(&o.force, "force", false, "no longer needed: files of different targets or load shapes compare by what differs")
	return fs
}

func compareCmd(_ context.Context, args []string, stdout, _ io.Writer) error {
	var o compareOptions
	fs := newCompareFlags(&o)
	if err := parseFlags(fs, compareUsage, args, stdout); err != nil {
		return err
	}
	noise, err := ParsePercent("--noise", o.noise)
	if err != nil {
		return err
	}
	rules, err := parseFailOn(fs, o.failOn)
	if err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return usagef("compare: want at least two files, OLD.json NEW.json (see backbench compare --help)")
	}
	var files []*compare.File
	for _, p := range fs.Args() {
		f, err := loadSaved(p)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	res, err := compare.Files(files, noise, o.force)
	if err != nil {
		return usagef("compare: %v", err)
	}
	compare.Judge(res, rules)
	switch o.format {
	case "json":
		if err := document.Write(stdout, res); err != nil {
			return err
		}
	case "markdown":
		if err := report.CompareMarkdown(stdout, report.MarkdownCompare{Command: commandLine("compare", args, stats.Privacy{}), Files: res.Files,
			Noise: res.Noise, Differences: res.Differences, Notes: res.Notes, Comparisons: res.Comparisons, TargetComparisons: res.TargetComparisons, Gate: res.Gate}); err != nil {
			return err
		}
	default:
		if err := report.CompareText(stdout, res, tableWidth(o.wide, stdout)); err != nil {
			return err
		}
	}
	return gateOutcome(res.Gate)
}

// loadSaved reads the saved result at path as compare pairs it
// (compare.Load); anything else is a usage error.
func loadSaved(path string) (*compare.File, error) {
	f, err := compare.Load(path)
	if err != nil {
		return nil, usagef("compare: %v", err)
	}
	return f, nil
}

// tableWidth is the columns text tables fit: none with --wide (today's
// layout), the terminal's when stdout is a terminal wider than
// report.DefaultWidth, else report.DefaultWidth.
func tableWidth(wide bool, stdout io.Writer) int {
	if wide {
		return 0
	}
	if f, ok := stdout.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > report.DefaultWidth {
			return w
		}
	}
	return report.DefaultWidth
}
