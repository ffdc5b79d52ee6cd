package merge

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/stats"
)

// MinOverlap is the part of the merged window that every run must cover
// without a warning.
const MinOverlap = 0.9

// ErrNoRun is the error of a merge that was given no run.
var ErrNoRun = errors.New("no run to merge")

// Options are a merge's choices.
type Options struct {
	// Force merges runs whose plans differ (MergeInfo says how) and a
	// sweep's levels that not every file has (left out).
	Force bool
	// Privacy is applied to the merged record's environment (the inputs
	// may come from a version that kept credentials) and to the
	// generators' host names.
	Privacy stats.Privacy
}

// host is a generator's host name as Options show it.
func (o Options) host(name string) string {
	if o.Privacy.NoHostname {
		return ""
	}
	return name
}

// Merge merges the runs of its inputs, read one after the other (Read):
// bench runs as they are read (only the merged record is kept), sweeps
// when done (Result). Two inputs holding the same run, or a bench run
// and a sweep, are refused.
type Merge struct {
	o          Options
	info       *document.MergeInfo
	runs       *Runs
	gens       []document.Generator
	sweeps     []Input
	firstFile  string
	firstSweep bool
	content    map[[sha256.Size]byte]string
	// paths are the files read (ReadFile), by absolute path.
	paths map[string]string
}

// New returns an empty Merge.
func New(o Options) *Merge {
	info := &document.MergeInfo{Warnings: []string{}}
	return &Merge{o: o, info: info, runs: NewRuns(o, info, ""), content: map[[sha256.Size]byte]string{}, paths: map[string]string{}}
}

// ReadFile reads the runs of the file name (Read), "-" being stdin. A
// file named twice is refused before it is read again, whatever its
// spelling: its requests would count twice.
func (m *Merge) ReadFile(name string, stdin io.Reader) error {
	abs, err := filepath.Abs(name)
	if err != nil {
		return err
	}
	if prev, ok := m.paths[abs]; ok && name != "-" {
		return fmt.Errorf("%s and %s are the same file: given twice, its requests would count twice", prev, name)
	}
	m.paths[abs] = name
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	return m.Read(name, r)
}

// Read reads the runs of the input name, whose content is r (Each).
func (m *Merge) Read(name string, r io.Reader) error {
	first := len(m.gens) + len(m.sweeps)
	return Each(name, r, func(k int, in Input) error {
		if k == 2 {
			// The file holds several runs: name them FILE#K, the first
			// one too.
			if len(m.sweeps) > first {
				m.sweeps[first].File = name + "#1"
			} else if len(m.gens) > first {
				m.gens[first].File = name + "#1"
				m.runs.Relabel(first, name+"#1")
			}
		}
		if prev, ok := m.content[in.ID]; ok {
			return fmt.Errorf("%s and %s hold the same run: given twice, its requests would count twice", prev, in.File)
		}
		m.content[in.ID] = in.File
		if m.firstFile == "" {
			m.firstFile, m.firstSweep = in.File, in.Sweep != nil
		} else if (in.Sweep != nil) != m.firstSweep {
			return fmt.Errorf("%s and %s: cannot merge a bench run with a sweep", m.firstFile, in.File)
		}
		if in.Sweep != nil {
			m.sweeps = append(m.sweeps, in)
			return nil
		}
		s := stats.SummaryOf(in.Record)
		m.gens = append(m.gens, document.Generator{File: in.File, Host: m.o.host(in.Record.Environment.Hostname), Complete: s.Complete,
			RequestsPerSecond: s.RequestsPerSecond, P99Ms: s.Percentiles["99"], ClientCPUPercent: s.Client.CPUPercent})
		// Merged as it is read: only the merged record is kept.
		return m.runs.Add(in.Record, in.File)
	})
}

// Sweeps reports whether the inputs are sweeps.
func (m *Merge) Sweeps() bool { return len(m.sweeps) > 0 }

// Result is the merge of the inputs read: a *document.MergedRun of bench
// runs, a *document.MergedSweep of sweeps (Sweeps).
func (m *Merge) Result() (document.Result, error) {
	if m.Sweeps() {
		return Sweeps(m.sweeps, m.o)
	}
	rec, err := m.runs.Result()
	if err != nil {
		return nil, err
	}
	sum := stats.SummaryOf(rec)
	return &document.MergedRun{Summary: &sum, Record: rec, Generators: m.gens, Info: m.info}, nil
}

// Runs is the one merge (stats.Merger) of generators that ran together
// (stats.Together), for one bench run or one level of a sweep: the
// merge's refusals in merge's words, its plan differences and its window
// and overlap set in info when done. Only the merged record and the file
// names are kept, so that its memory does not grow with the runs'
// histograms. where prefixes messages ("series X, c=4: ") for a sweep's
// level.
type Runs struct {
	o     Options
	info  *document.MergeInfo
	where string
	m     stats.Merger
	files []string
}

// NewRuns returns a merge of runs that reports into info.
func NewRuns(o Options, info *document.MergeInfo, where string) *Runs {
	return &Runs{o: o, info: info, where: where, m: stats.Merger{Policy: stats.Together, Force: o.Force}}
}

// Relabel renames the i-th run's file in later messages.
func (g *Runs) Relabel(i int, name string) {
	if i < len(g.files) {
		g.files[i] = name
	}
}

// Add merges r, read from file.
func (g *Runs) Add(r *stats.Record, file string) error {
	if err := g.m.AddFrom(file, r); err != nil {
		if pe, ok := errors.AsType[*stats.PlanError](err); ok && len(g.files) > 0 {
			return fmt.Errorf("%s%s: not the plan of %s: %s (--force merges them anyway)",
				g.where, file, g.files[0], strings.Join(pe.Differences, "; "))
		}
		return fmt.Errorf("%s%s: %v", g.where, file, strings.TrimPrefix(err.Error(), "stats: "))
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

// Result returns the merged record and sets the window and the overlap in
// info (a warning when the overlap is below MinOverlap).
func (g *Runs) Result() (*stats.Record, error) {
	m := g.m.Record()
	if m == nil {
		return nil, ErrNoRun
	}
	// The inputs may come from a version that kept credentials.
	g.o.Privacy.Apply(&m.Environment)
	g.o.Privacy.ApplyPlan(&m.Plan)
	info, overlap := g.info, g.m.Overlap()
	if info.WindowSeconds == 0 || m.Elapsed.Seconds() < info.WindowSeconds {
		info.WindowSeconds = m.Elapsed.Seconds()
	}
	if info.Overlap == 0 || overlap < info.Overlap {
		info.Overlap = overlap
	}
	if overlap < MinOverlap {
		info.Warnings = append(info.Warnings, fmt.Sprintf("%sthe runs overlap for only %.1f%% of the window (%.3f s from the earliest start to the latest end): "+
			"req/s is over the whole window; start the generators together with --start-at", g.where, overlap*100, m.Elapsed.Seconds()))
	}
	return m, nil
}

// Sweeps merges sweeps series by series and level by level (levels
// matched by their concurrency per generator), with one generator row
// per input and its figures per level. Sweeps of other series, or a
// level not in every input (unless o.Force), are refused.
func Sweeps(ins []Input, o Options) (*document.MergedSweep, error) {
	first := ins[0].Sweep
	info := &document.MergeInfo{Warnings: []string{}}
	out := document.Sweep{StopErrorRate: first.StopErrorRate, SecondsPerLevel: first.SecondsPerLevel}
	gens := make([]document.Generator, len(ins))
	for i, in := range ins {
		sw := in.Sweep
		gens[i] = document.Generator{File: in.File, Levels: []document.GeneratorLevel{}}
		if len(sw.Series) != len(first.Series) {
			return nil, fmt.Errorf("%s has %d series, %s %d", in.File, len(sw.Series), ins[0].File, len(first.Series))
		}
		for k, se := range sw.Series {
			if se.Label != first.Series[k].Label {
				return nil, fmt.Errorf("%s: series %d is %q, in %s %q", in.File, k+1, se.Label, ins[0].File, first.Series[k].Label)
			}
		}
		out.RequestsPerLevel += sw.RequestsPerLevel
		out.TimeTaken = max(out.TimeTaken, sw.TimeTaken)
		out.Interrupted = out.Interrupted || sw.Interrupted
	}
	files := make([]string, len(ins))
	for i, in := range ins {
		files[i] = in.File
	}
	levels := map[int]bool{}
	for k, se0 := range first.Series {
		ms := document.SweepSeries{Label: o.Privacy.URL(se0.Label), Target: se0.Target, KeepAlive: se0.KeepAlive,
			Levels: []stats.Summary{}, Records: []*stats.Record{}}
		ms.Target.URL = o.Privacy.URL(ms.Target.URL)
		// Levels by concurrency per generator, in the first file's order.
		var order []int
		byLevel := map[int][]*stats.Record{}
		for i, in := range ins {
			se := &in.Sweep.Series[k]
			if se.Stop != nil {
				info.Warnings = append(info.Warnings, fmt.Sprintf("%s: series %q stopped after concurrency %d: %s", in.File, o.Privacy.URL(se.Label), se.Stop.Concurrency, se.Stop.Reason))
			}
			for j, r := range se.Records {
				c := r.Plan.Concurrency
				if i == 0 {
					order = append(order, c)
				}
				byLevel[c] = append(byLevel[c], r)
				s := &se.Levels[j]
				gens[i].Host = o.host(r.Environment.Hostname)
				gens[i].Complete += s.Complete
				gens[i].ClientCPUPercent = s.Client.CPUPercent
				gens[i].Levels = append(gens[i].Levels, document.GeneratorLevel{Label: o.Privacy.URL(se.Label), Concurrency: c,
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
			where := fmt.Sprintf("series %q, concurrency %d: ", ms.Label, c)
			if len(recs) != len(ins) {
				if !o.Force {
					return nil, fmt.Errorf("%sin %d of %d files only (--force merges the levels all files have)", where, len(recs), len(ins))
				}
				info.Forced = true
				info.PlanDifferences = append(info.PlanDifferences, where+"left out: not in every file")
				continue
			}
			g := NewRuns(o, info, where)
			for i, r := range recs {
				if err := g.Add(r, files[i]); err != nil {
					return nil, err
				}
			}
			m, err := g.Result()
			if err != nil {
				return nil, err
			}
			ms.Records = append(ms.Records, m)
			ms.Levels = append(ms.Levels, stats.SummaryOf(m))
			levels[m.Plan.Concurrency] = true
		}
		out.Series = append(out.Series, ms)
	}
	for c := range levels {
		out.Levels = append(out.Levels, c)
	}
	sort.Ints(out.Levels)
	return &document.MergedSweep{Sweep: &out, Generators: gens, Info: info}, nil
}
