package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/summary"
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

// minOverlap is the part of the merged window that every run must cover
// without a warning.
const minOverlap = 0.9

func newMergeFlags(o *mergeOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("merge", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Var(newChoice(&o.format, "text", "text", "json"), "format", "report format: text (ab's, then the generators) or json")
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
	var sweeps []mergeInput
	info := &report.MergeInfo{Warnings: []string{}}
	bench := newRecordMerge(&o, info, "")
	var gens []report.Generator
	var firstFile string
	var firstSweep bool
	seen := map[string]string{}
	content := map[[sha256.Size]byte]string{}
	for _, name := range fs.Args() {
		abs, err := filepath.Abs(name)
		if err != nil {
			return usagef("merge: %v", err)
		}
		if prev, ok := seen[abs]; ok && name != "-" {
			return usagef("merge: %s and %s are the same file: given twice, its requests would count twice", prev, name)
		}
		seen[abs] = name
		first := len(gens) + len(sweeps)
		err = eachMergeInput(name, func(k int, in mergeInput) error {
			if k == 2 {
				// The file holds several runs: name them FILE#K, the
				// first one too.
				if len(sweeps) > first {
					sweeps[first].file = name + "#1"
				} else if len(gens) > first {
					gens[first].File = name + "#1"
					bench.relabel(first, name+"#1")
				}
			}
			if prev, ok := content[in.id]; ok {
				return usagef("merge: %s and %s hold the same run: given twice, its requests would count twice", prev, in.file)
			}
			content[in.id] = in.file
			if firstFile == "" {
				firstFile, firstSweep = in.file, in.sweep != nil
			} else if (in.sweep != nil) != firstSweep {
				return usagef("merge: %s and %s: cannot merge a bench run with a sweep", firstFile, in.file)
			}
			if in.sweep != nil {
				sweeps = append(sweeps, in)
				return nil
			}
			s := summary.Of(in.rec)
			gens = append(gens, report.Generator{File: in.file, Host: o.share.host(in.rec.Environment.Hostname), Complete: s.Complete,
				RequestsPerSecond: s.RequestsPerSecond, P99Ms: s.Percentiles["99"], ClientCPUPercent: s.Client.CPUPercent})
			// Merged as it is read: only the merged record is kept.
			return bench.add(in.rec, in.file)
		})
		if err != nil {
			return err
		}
	}
	if len(sweeps) > 0 {
		if o.percentileFile != "" {
			return usagef("merge: --csv is for bench runs, not sweeps")
		}
		return mergeSweeps(sweeps, &o, stdout, stderr)
	}
	m, err := bench.result()
	if err != nil {
		return err
	}
	if o.percentileFile != "" {
		f, err := report.CreateAtomic(o.percentileFile)
		if err != nil {
			return usagef("merge: cannot create output file: %v", err)
		}
		defer f.Abort()
		if err := report.PercentileCSV(f, summary.PercentileSpectrum(m)); err != nil {
			return fmt.Errorf("writing %s: %w", o.percentileFile, err)
		}
		if err := f.Commit(); err != nil {
			return err
		}
	}
	warn(stderr, info, o.quiet)
	sum := summary.Of(m)
	if o.format == "json" {
		return document.Write(stdout, &document.MergedRun{Summary: &sum, Record: m, Generators: gens, Info: info})
	}
	return report.MergeText(stdout, &sum, gens, info, report.TextOptions{Spectrum: o.spectrum})
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

// mergeInput is one file given to merge: a bench run's record or a sweep.
// id is the SHA-256 of the run's saved content (see runID).
type mergeInput struct {
	file  string
	rec   *stats.Record
	sweep *report.Sweep
	id    [sha256.Size]byte
}

func fileNames(ins []mergeInput) []string {
	out := make([]string, len(ins))
	for i, in := range ins {
		out[i] = in.file
	}
	return out
}

// eachMergeInput reads the JSON values of a file ("-": standard input)
// one after the other and gives each to fn with its rank k (from 1) as
// soon as it is read, so that a file of many runs is never held whole:
// several generators' outputs may come in one file (GNU parallel's or
// kubectl logs' output); each is then named FILE#K.
func eachMergeInput(name string, fn func(k int, in mergeInput) error) error {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return usagef("merge: %v", err)
		}
		defer f.Close()
		r = f
	}
	st := document.NewStream(r)
	k := 0
	for {
		raw, err := st.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			return usagef("merge: %s: %v", name, err)
		}
		k++
		label := name
		if k > 1 {
			label = fmt.Sprintf("%s#%d", name, k)
		}
		in, err := decodeMergeInput(label, raw)
		if err != nil {
			return err
		}
		if err := fn(k, in); err != nil {
			return err
		}
	}
	if k == 0 {
		return usagef("merge: %s: empty", name)
	}
	return nil
}

// runID identifies a saved run by its content: the SHA-256 of its JSON
// with the white space taken out. The content, not the path, because a
// symlink, a copy, standard input or a bench report holding the same
// record are the same run; and the whole content rather than a few fields
// (host, start, end) because two generators started together by
// --start-at on one host can share those, while no two runs share every
// nanosecond sum, CPU second and histogram bucket.
func runID(raw []byte) [sha256.Size]byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return sha256.Sum256(raw)
	}
	return sha256.Sum256(b.Bytes())
}

// decodeMergeInput reads a bench JSON report (its "record"), a bare record,
// or a sweep.json (its series' "records"), merged ones too, through
// document.Read.
func decodeMergeInput(name string, b []byte) (mergeInput, error) {
	in := mergeInput{file: name}
	bad := func(err error) error { return usagef("merge: %s: %v", name, err) }
	noRecord := bad(fmt.Errorf("no run record: want the JSON of bench --format json or a sweep.json"))
	d, err := document.Read(name, b)
	var syntax *json.SyntaxError
	switch {
	case errors.Is(err, document.ErrBadContent) || errors.Is(err, document.ErrNewerSchema):
		return in, usagef("merge: %v", err)
	case errors.As(err, &syntax):
		return in, bad(fmt.Errorf("not JSON: %v", syntax))
	case err != nil:
		return in, noRecord
	}
	_, benchRec, _ := document.Bench(d)
	switch d := d.(type) {
	case *document.Sweep, *document.MergedSweep:
		in.id = runID(b)
		in.sweep = document.SweepOf(d)
		if len(in.sweep.Series) == 0 {
			return in, bad(fmt.Errorf("a sweep without series"))
		}
		for _, se := range in.sweep.Series {
			if len(se.Records) != len(se.Levels) {
				return in, bad(fmt.Errorf("series %q has no run records (made by an older backbench?)", se.Label))
			}
			for _, r := range se.Records {
				if err := checkRecord(r); err != nil {
					return in, bad(err)
				}
			}
		}
	case *document.Record, *document.Run, *document.Trials, *document.MergedRun:
		rec := benchRec
		if r, ok := d.(*document.Record); ok {
			rec = r.Record
		}
		if rec == nil {
			return in, noRecord
		}
		// The record's own content identifies the run (runID), as a bare
		// record or in a bench report.
		raw, err := json.Marshal(rec)
		if err != nil {
			return in, bad(err)
		}
		in.id, in.rec = runID(raw), rec
		if err := checkRecord(in.rec); err != nil {
			return in, bad(err)
		}
	default:
		return in, noRecord
	}
	return in, nil
}

// checkRecord refuses records that cannot be merged as they are: a
// record of another schema, with a negative count or sum (Record.Validate),
// or without its wall-clock start and end.
func checkRecord(r *stats.Record) error {
	if r == nil {
		return fmt.Errorf("an empty run record")
	}
	if err := r.Validate(); err != nil {
		return fmt.Errorf("record: %v", err)
	}
	if r.StartedAt.IsZero() || r.EndedAt.IsZero() {
		return fmt.Errorf("the run record has no wall-clock start and end")
	}
	return nil
}

// mergeRecords merges the records of the named files (see recordMerge).
func mergeRecords(recs []*stats.Record, files []string, o *mergeOptions, info *report.MergeInfo, where string) (*stats.Record, error) {
	g := newRecordMerge(o, info, where)
	for i, r := range recs {
		if err := g.add(r, files[i]); err != nil {
			return nil, err
		}
	}
	return g.result()
}

// recordMerge is the one merge (stats.Merger) of generators that ran
// together (stats.Together), for one bench run or one level of a sweep:
// the merge's refusals in the command's words, its plan differences and
// its window and overlap set in info when done. Only the merged record
// and the file names are kept, so that its memory does not grow with the
// runs' histograms. where prefixes messages ("series X, c=4: ") for a
// sweep's level.
type recordMerge struct {
	o     *mergeOptions
	info  *report.MergeInfo
	where string
	m     stats.Merger
	files []string
}

func newRecordMerge(o *mergeOptions, info *report.MergeInfo, where string) *recordMerge {
	return &recordMerge{o: o, info: info, where: where, m: stats.Merger{Policy: stats.Together, Force: o.force}}
}

// relabel renames the i-th run's file in later messages.
func (g *recordMerge) relabel(i int, name string) {
	if i < len(g.files) {
		g.files[i] = name
	}
}

// add merges r, read from file.
func (g *recordMerge) add(r *stats.Record, file string) error {
	if err := g.m.AddFrom(file, r); err != nil {
		if pe, ok := errors.AsType[*stats.PlanError](err); ok && len(g.files) > 0 {
			return usagef("merge: %s%s: not the plan of %s: %s (--force merges them anyway)",
				g.where, file, g.files[0], strings.Join(pe.Differences, "; "))
		}
		return usagef("merge: %s%s: %v", g.where, file, strings.TrimPrefix(err.Error(), "stats: "))
	}
	g.files = append(g.files, file)
	for _, d := range g.m.Differences() {
		g.info.Forced = true
		if d = g.where + d; !slices.Contains(g.info.PlanDifferences, d) {
			g.info.PlanDifferences = append(g.info.PlanDifferences, d)
		}
	}
	return nil
}

// result returns the merged record and sets the window and the overlap in
// info.
func (g *recordMerge) result() (*stats.Record, error) {
	m := g.m.Record()
	if m == nil {
		return nil, errors.New("merge: no run to merge")
	}
	// The inputs may come from a version that kept credentials.
	g.o.share.privacy(nil).Apply(&m.Environment)
	info, overlap := g.info, g.m.Overlap()
	if info.WindowSeconds == 0 || m.Elapsed.Seconds() < info.WindowSeconds {
		info.WindowSeconds = m.Elapsed.Seconds()
	}
	if info.Overlap == 0 || overlap < info.Overlap {
		info.Overlap = overlap
	}
	if overlap < minOverlap {
		info.Warnings = append(info.Warnings, fmt.Sprintf("%sthe runs overlap for only %.1f%% of the window (%.3f s from the earliest start to the latest end): "+
			"req/s is over the whole window; start the generators together with --start-at", g.where, overlap*100, m.Elapsed.Seconds()))
	}
	return m, nil
}

// mergeSweeps merges sweep files series by series and level by level
// (levels matched by their concurrency per generator).
func mergeSweeps(ins []mergeInput, o *mergeOptions, stdout, stderr io.Writer) error {
	first := ins[0].sweep
	info := &report.MergeInfo{Warnings: []string{}}
	out := report.Sweep{StopErrorRate: first.StopErrorRate, SecondsPerLevel: first.SecondsPerLevel}
	gens := make([]report.Generator, len(ins))
	for i, in := range ins {
		sw := in.sweep
		gens[i] = report.Generator{File: in.file, Levels: []report.GeneratorLevel{}}
		if len(sw.Series) != len(first.Series) {
			return usagef("merge: %s has %d series, %s %d", in.file, len(sw.Series), ins[0].file, len(first.Series))
		}
		for k, se := range sw.Series {
			if se.Label != first.Series[k].Label {
				return usagef("merge: %s: series %d is %q, in %s %q", in.file, k+1, se.Label, ins[0].file, first.Series[k].Label)
			}
		}
		out.RequestsPerLevel += sw.RequestsPerLevel
		out.TimeTaken = max(out.TimeTaken, sw.TimeTaken)
		out.Interrupted = out.Interrupted || sw.Interrupted
	}
	levels := map[int]bool{}
	for k, se0 := range first.Series {
		ms := report.SweepSeries{Label: se0.Label, Target: se0.Target, KeepAlive: se0.KeepAlive,
			Levels: []summary.Summary{}, Records: []*stats.Record{}}
		// Levels by concurrency per generator, in the first file's order.
		var order []int
		byLevel := map[int][]*stats.Record{}
		for i, in := range ins {
			se := &in.sweep.Series[k]
			if se.Stop != nil {
				info.Warnings = append(info.Warnings, fmt.Sprintf("%s: series %q stopped after concurrency %d: %s", in.file, se.Label, se.Stop.Concurrency, se.Stop.Reason))
			}
			for j, r := range se.Records {
				c := r.Plan.Concurrency
				if i == 0 {
					order = append(order, c)
				}
				byLevel[c] = append(byLevel[c], r)
				s := &se.Levels[j]
				gens[i].Host = o.share.host(r.Environment.Hostname)
				gens[i].Complete += s.Complete
				gens[i].ClientCPUPercent = s.Client.CPUPercent
				gens[i].Levels = append(gens[i].Levels, report.GeneratorLevel{Label: se.Label, Concurrency: c,
					Complete: s.Complete, RequestsPerSecond: s.RequestsPerSecond, P99Ms: s.Percentiles["99"]})
			}
		}
		for c := range byLevel {
			if !slices.Contains(order, c) {
				order = append(order, c)
			}
		}
		sort.Ints(order)
		for _, c := range order {
			recs := byLevel[c]
			where := fmt.Sprintf("series %q, concurrency %d: ", se0.Label, c)
			if len(recs) != len(ins) {
				if !o.force {
					return usagef("merge: %sin %d of %d files only (--force merges the levels all files have)", where, len(recs), len(ins))
				}
				info.Forced = true
				info.PlanDifferences = append(info.PlanDifferences, where+"left out: not in every file")
				continue
			}
			m, err := mergeRecords(recs, fileNames(ins), o, info, where)
			if err != nil {
				return err
			}
			ms.Records = append(ms.Records, m)
			ms.Levels = append(ms.Levels, summary.Of(m))
			levels[m.Plan.Concurrency] = true
		}
		out.Series = append(out.Series, ms)
	}
	for c := range levels {
		out.Levels = append(out.Levels, c)
	}
	sort.Ints(out.Levels)
	warn(stderr, info, o.quiet)
	if o.format == "json" {
		return document.Write(stdout, &document.MergedSweep{Sweep: &out, Generators: gens, Info: info})
	}
	return report.MergeSweepText(stdout, &out, gens, info, tableWidth(o.wide, stdout))
}
