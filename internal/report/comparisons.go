package report

import (
	"fmt"
	"io"
)

// Comparisons writes a sweep's comparisons table under its title, then
// its notes ("Note: ..."), each fitted to width columns (0: as wide as
// they are); nothing when st is nil (a sweep without trials).
func Comparisons(w io.Writer, st *SweepTrials, width int) error {
	if st == nil {
		return nil
	}
	if len(st.Comparisons) > 0 {
		fmt.Fprintf(w, "\nComparisons (ratio series / baseline, 95%% interval, Mann-Whitney p, noise threshold ±%g%%):\n", 100*st.Noise)
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
