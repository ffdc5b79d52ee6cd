package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/gate"
	"github.com/backbench/backbench/internal/trials"
)

// Comparisons writes a sweep's comparisons table under its title, then
// its notes ("Note: ..."), each fitted to width columns (0: as wide as
// they are); nothing when st is nil (a sweep without trials).
func Comparisons(w io.Writer, st *SweepTrials, width int) error {
	if st == nil {
		return nil
	}
	if len(st.Comparisons) > 0 {
		fmt.Fprintf(w, "\nComparisons (ratio series / baseline, %s, Mann-Whitney p, noise threshold ±%g%%):\n", trials.RatioLabel(st.Comparisons), 100*st.Noise)
		if err := ComparisonTableFit(w, st.Comparisons, width); err != nil {
			return err
		}
	}
	for _, n := range st.Notes {
		if _, err := fmt.Fprintln(w, Wrap("Note: "+n, width, "  ")); err != nil {
			return err
		}
	}
	return nil
}

// CompareText writes compare's text of res: the files, what differs, the
// noise threshold, the table, the notes and the gate's judgement, each
// fitted to width columns (0: as wide as they are, --wide).
func CompareText(w io.Writer, res *document.Comparison, width int) error {
	old := res.Files[0]
	rows := res.Comparisons
	swapped := slices.ContainsFunc(rows, func(c trials.Comparison) bool { return c.BaselineFile != old })
	if len(res.Files) == 2 && !swapped {
		// One pair of files: named once, above the table.
		fmt.Fprintf(w, "Baseline: %s\nNew:      %s\n", old, res.Files[1])
		rows = slices.Clone(rows)
		for i := range rows {
			rows[i].File, rows[i].BaselineFile = "", ""
		}
	} else if swapped {
		// The factor's rule chose some baselines (TCP, keep-alive off...)
		// in later files: each row names its files.
		fmt.Fprintf(w, "Files:    %s (each pair's baseline by its factor's rule)\n", strings.Join(res.Files, ", "))
	} else {
		fmt.Fprintf(w, "Baseline: %s\n", old)
	}
	for _, d := range res.Differences {
		fmt.Fprintln(w, Wrap("Differs:  "+d, width, "          "))
	}
	fmt.Fprintf(w, "Noise threshold: ±%g%%\n\n", 100*res.Noise)
	if err := ComparisonTableFit(w, rows, width); err != nil {
		return err
	}
	if len(res.TargetComparisons) > 0 {
		trows := slices.Clone(res.TargetComparisons)
		if len(res.Files) == 2 && !swapped {
			for i := range trows {
				trows[i].File, trows[i].BaselineFile = "", ""
			}
		}
		fmt.Fprintf(w, "\nPer target (p50 and p99 of each target's requests):\n")
		if err := ComparisonTableFit(w, trows, width); err != nil {
			return err
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "\n%s", Wrap("Note: "+n, width, "  "))
	}
	if len(res.Notes) > 0 {
		fmt.Fprintln(w)
	}
	GateText(w, res.Gate, width)
	return nil
}

// GateText writes a gate's judgement under a report: its summary and a
// line per comparison that tripped it or that it could not judge;
// nothing without a gate.
func GateText(w io.Writer, g *gate.Result, width int) {
	if g == nil {
		return
	}
	fmt.Fprintf(w, "\n%s\n", Wrap("Gate: "+g.Summary(), width, "  "))
	for _, f := range g.Tripped {
		fmt.Fprintln(w, Wrap("  tripped: "+f.Line(), width, "    "))
	}
	for _, f := range g.Unjudged {
		fmt.Fprintln(w, Wrap("  cannot judge: "+f.Line(), width, "    "))
	}
}
