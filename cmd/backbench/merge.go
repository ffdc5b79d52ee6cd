package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/merge"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

type mergeOptions struct {
	format         string
	force          bool
	spectrum       bool
	percentileFile string
	quiet          bool
	wide           bool
	share          shareOptions
}

const mergeUsage = `Usage: backbench merge [flags] FILE.json...

Merges the JSON of runs made at the same time on several generators (bench
--format json, or a sweep's sweep.json) into one report, as if one client
had made every request: counts summed, connection times and percentiles
from the merged histograms (exact at HDR precision), requests per second
over the window from the earliest start to the latest end, then one line
per generator. Sweep files merge level by level.

Runs of different plans (target, request, keep-alive, concurrency per
generator, ...) are refused (exit status 2) unless --force; a warning says
when the runs overlap for less than 90% of the window (start them together
with --start-at).

Flags:
`

func newMergeFlags(o *mergeOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("merge", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Var(NewChoice(&o.format, "text", "text", "json"), "format", "report format: text (ab's, then the generators) or json")
	fs.BoolVar(&o.force, "force", false, "merge runs whose plans differ (the report says so)")
	fs.BoolVar(&o.wide, "wide", false, "print a merged sweep's table as wide as it is, not fitted to 100 columns (or the terminal's width)")
	fs.BoolVar(&o.spectrum, "percentiles", false, "add the full percentile spectrum to the text report")
	fs.StringVarP(&o.percentileFile, "csv", "e", "", "write the merged percentiles 0..100 to FILE as ab's CSV (not for sweeps)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no warnings on stderr (the report keeps them)")
	addShareFlags(fs, &o.share, true)
	return fs
}

func mergeCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var o mergeOptions
	fs := newMergeFlags(&o)
	if err := parseFlags(fs, mergeUsage, args, stdout); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("merge: want at least one FILE.json (see backbench merge --help)")
	}
	m := merge.New(merge.Options{Force: o.force, Privacy: o.share.privacy(nil)})
	for _, name := range fs.Args() {
		if err := m.ReadFile(name, os.Stdin); err != nil {
			return usagef("merge: %v", err)
		}
	}
	if m.Sweeps() && o.percentileFile != "" {
		return usagef("merge: --csv is for bench runs, not sweeps")
	}
	d, err := m.Result()
	if errors.Is(err, merge.ErrNoRun) {
		return fmt.Errorf("merge: %w", err)
	} else if err != nil {
		return usagef("merge: %v", err)
	}
	if sw, ok := d.(*document.MergedSweep); ok {
		warn(stderr, sw.Info, o.quiet)
		if o.format == "json" {
			return document.Write(stdout, sw)
		}
		return report.MergeSweepText(stdout, sw.Sweep, sw.Generators, sw.Info, tableWidth(o.wide, stdout))
	}
	run := d.(*document.MergedRun) // merge.Merge's result of bench runs
	if o.percentileFile != "" {
		f, err := report.CreateAtomic(o.percentileFile)
		if err != nil {
			return usagef("merge: cannot create output file: %v", err)
		}
		defer f.Abort()
		if err := report.PercentileCSV(f, stats.PercentileSpectrum(run.Record)); err != nil {
			return fmt.Errorf("writing %s: %w", o.percentileFile, err)
		}
		if err := f.Commit(); err != nil {
			return err
		}
	}
	warn(stderr, run.Info, o.quiet)
	if o.format == "json" {
		return document.Write(stdout, run)
	}
	return report.MergeText(stdout, run.Summary, run.Generators, run.Info, report.TextOptions{Spectrum: o.spectrum})
}

// warn prints the merge's warnings on stderr too, unless quiet.
func warn(stderr io.Writer, info *report.MergeInfo, quiet bool) {
	if quiet {
		return
	}
	if info.Forced {
		fmt.Fprintf(stderr, "backbench: warning: merged with --force although the plans differ: %s\n", strings.Join(info.PlanDifferences, "; "))
	}
	for _, w := range info.Warnings {
		fmt.Fprintf(stderr, "backbench: warning: %s\n", w)
	}
}
