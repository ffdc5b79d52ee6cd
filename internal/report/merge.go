package report

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/summary"
)

// Generator is one input of a merge (one generator's file) with its own
// figures.
type Generator struct {
	// File is the input file as named on the command line.
	File string `json:"file"`
	// Host is the generator's host name, from the record's environment.
	Host string `json:"host"`
	// Complete counts its complete requests (every level of a sweep).
	Complete int64 `json:"complete_requests"`
	// RequestsPerSecond is its complete requests over its own run time;
	// P99Ms its 99th percentile of the total time, in ms (not set for a
	// sweep: see Levels).
	RequestsPerSecond float64 `json:"requests_per_second"`
	P99Ms             float64 `json:"p99_ms"`
	// ClientCPUPercent is its client CPU in percent of one core (the
	// sweep's highest level).
	ClientCPUPercent float64 `json:"client_cpu_percent"`
	// Levels, for a sweep, has its figures per series and level.
	Levels []GeneratorLevel `json:"levels,omitempty"`
}

// GeneratorLevel is one generator's figures at one level of a sweep.
type GeneratorLevel struct {
	Label             string  `json:"label"`
	Concurrency       int     `json:"concurrency"`
	Complete          int64   `json:"complete_requests"`
	RequestsPerSecond float64 `json:"requests_per_second"`
	P99Ms             float64 `json:"p99_ms"`
}

// MergeInfo says how records were merged.
type MergeInfo struct {
	// WindowSeconds is the merged window: from the earliest start to the
	// latest end of the inputs, in seconds (the lowest across the levels
	// of a sweep).
	WindowSeconds float64 `json:"window_seconds"`
	// Overlap is the part of the window during which every input ran,
	// from 0 to 1 (the lowest across the levels of a sweep).
	Overlap float64 `json:"overlap"`
	// Forced reports records of different plans merged with --force;
	// PlanDifferences says how they differ.
	Forced          bool     `json:"forced"`
	PlanDifferences []string `json:"plan_differences,omitempty"`
	// Warnings are the merge's warnings (windows that overlap too little,
	// levels left out).
	Warnings []string `json:"warnings"`
}

// MergeText writes the merged run as Text does, then the merge's lines:
// the window, whether it was forced, its warnings and one line per
// generator.
func MergeText(w io.Writer, s *summary.Summary, gens []Generator, info *MergeInfo, o TextOptions) error {
	if err := Text(w, s, o); err != nil {
		return err
	}
	return mergeLines(w, gens, info)
}

// MergeJSON writes the merged run as JSON does, with "generators" (one
// object per input file) and "merge" (MergeInfo).
func MergeJSON(w io.Writer, s *summary.Summary, rec *stats.Record, gens []Generator, info *MergeInfo) error {
	return stats.EncodeJSON(w, struct {
		*summary.Summary
		Record     *stats.Record `json:"record"`
		Generators []Generator   `json:"generators"`
		Merge      *MergeInfo    `json:"merge"`
	}{s, rec, gens, info})
}

// MergeSweepText writes a merged sweep: a title, SweepTable fitted to
// width columns (SweepTableFit; 0: as wide as it is), then the merge's
// lines.
func MergeSweepText(w io.Writer, sw *Sweep, gens []Generator, info *MergeInfo, width int) error {
	fmt.Fprintf(w, "Merged sweep: %d generators, %d series, %d levels (concurrency summed over the generators)\n\n",
		len(gens), len(sw.Series), len(sw.Levels))
	if err := SweepTableFit(w, sw, width); err != nil {
		return err
	}
	return mergeLines(w, gens, info)
}

// MergeSweepJSON writes a merged sweep as SweepJSON does, with
// "generators" and "merge".
func MergeSweepJSON(w io.Writer, sw *Sweep, gens []Generator, info *MergeInfo) error {
	return stats.EncodeJSON(w, struct {
		*Sweep
		Generators []Generator `json:"generators"`
		Merge      *MergeInfo  `json:"merge"`
	}{sw, gens, info})
}

// mergeLines writes the merge's own lines, labels in ab's column.
func mergeLines(w io.Writer, gens []Generator, info *MergeInfo) error {
	bw := bufio.NewWriter(w)
	line := func(label, format string, a ...any) {
		fmt.Fprintf(bw, "%-24s"+format+"\n", append([]any{label + ":"}, a...)...)
	}
	bw.WriteString("\n")
	line("Merged", "%d generators, window %.3f s (earliest start to latest end), all running for %.1f%% of it",
		len(gens), info.WindowSeconds, info.Overlap*100)
	if info.Forced {
		line("Merge forced", "--force merged records of different plans: %s", strings.Join(info.PlanDifferences, "; "))
	}
	for _, m := range info.Warnings {
		line("Merge warning", "%s", m)
	}
	sweep := len(gens) > 0 && gens[0].Levels != nil
	if sweep {
		fmt.Fprintf(bw, "  %-28s %-20s %10s %11s\n", "file", "host", "requests", "client CPU")
	} else {
		fmt.Fprintf(bw, "  %-28s %-20s %10s %10s %10s %11s\n", "file", "host", "requests", "req/s", "p99 ms", "client CPU")
	}
	for _, g := range gens {
		name := g.File
		if len(name) > 28 {
			name = "~" + filepath.Base(name)
			if len(name) > 28 {
				name = name[:27] + "~"
			}
		}
		if sweep {
			fmt.Fprintf(bw, "  %-28s %-20s %10d %10.0f%%\n", name, g.Host, g.Complete, g.ClientCPUPercent)
		} else {
			fmt.Fprintf(bw, "  %-28s %-20s %10d %10.2f %10.3f %10.0f%%\n", name, g.Host, g.Complete, g.RequestsPerSecond, g.P99Ms, g.ClientCPUPercent)
		}
	}
	return bw.Flush()
}
