package report

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/stats"
)

// MergeText writes the merged run as Text does, then the merge's lines:
// the window, whether it was forced, its warnings and one line per
// generator.
func MergeText(w io.Writer, s *stats.Summary, gens []Generator, info *MergeInfo, o TextOptions) error {
	if err := Text(w, s, o); err != nil {
		return err
	}
	return mergeLines(w, gens, info)
}

// MergeJSON writes the merged run as JSON does, with "generators" (one
// object per input file) and "merge" (MergeInfo).
func MergeJSON(w io.Writer, s *stats.Summary, rec *stats.Record, gens []Generator, info *MergeInfo) error {
	return document.Write(w, &document.MergedRun{Summary: s, Record: rec, Generators: gens, Info: info})
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
	return document.Write(w, &document.MergedSweep{Sweep: sw, Generators: gens, Info: info})
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
