package report

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
)

// JSON writes s as one indented JSON object, with the run's record under
// "record" when rec is not nil: the result model's run or trials
// (document.NewRun, document.Write).
func JSON(w io.Writer, s *stats.Summary, rec *stats.Record) error {
	return document.Write(w, document.NewRun(s, rec))
}

// ABDateLayout is the date of ab's gnuplot file, as APR's apr_ctime writes
// it: the day of the month in two digits ("Tue Dec 01 02:03:04 2026"), where
// C's ctime and Go's ANSIC pad it with a blank.
const ABDateLayout = "Mon Jan 02 15:04:05 2006"

// Gnuplot writes ab's -g file: a header "starttime	seconds	ctime	dtime	ttime	wait"
// and one row per completed request, sorted by total time as ab does:
// the start as ab's date (ABDateLayout, local time), the start in Unix seconds, then connect,
// processing, total and waiting times in whole milliseconds.
func Gnuplot(w io.Writer, rows []stats.RawRow) error {
	sorted := make([]stats.RawRow, len(rows))
	copy(sorted, rows)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Total < sorted[j].Total })
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "starttime\tseconds\tctime\tdtime\tttime\twait\n")
	for _, r := range sorted {
		t := load.Time(r.Start)
		fmt.Fprintf(bw, "%s\t%d\t%d\t%d\t%d\t%d\n", t.Format(ABDateLayout), t.Unix(),
			nsToMs(r.Connect), nsToMs(r.Processing), nsToMs(r.Total), nsToMs(r.Waiting))
	}
	return bw.Flush()
}

// PercentileCSV writes ab's -e file: "Percentage served,Time in ms" and one
// row per percentile from 0 to 100, times in ms with three decimals.
func PercentileCSV(w io.Writer, spectrum []float64) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Percentage served,Time in ms\n")
	for i, v := range spectrum {
		fmt.Fprintf(bw, "%d,%.3f\n", i, v)
	}
	return bw.Flush()
}

func nsToMs(d time.Duration) int64 { return int64(d+500*time.Microsecond) / 1_000_000 }

// RunFiles are the files of one run beside its report, each nil when not
// asked: ab's gnuplot TSV (-g), the percentile CSV (-e) and the timeline
// CSV (--timeline-csv).
type RunFiles struct {
	Gnuplot, Percentiles, Timeline io.Writer
}

// Write writes every file asked of the run's record m (its rows kept for
// -g), each committed once written whole when it is an *AtomicFile.
func (f RunFiles) Write(m *stats.Record) error {
	for _, o := range []struct {
		w     io.Writer
		write func(io.Writer) error
	}{
		{f.Gnuplot, func(w io.Writer) error { return Gnuplot(w, m.Rows()) }},
		{f.Percentiles, func(w io.Writer) error { return PercentileCSV(w, stats.PercentileSpectrum(m)) }},
		{f.Timeline, func(w io.Writer) error { return TimelineCSV(w, m.Timeline) }},
	} {
		if o.w == nil {
			continue
		}
		if err := o.write(o.w); err != nil {
			return err
		}
		if a, ok := o.w.(*AtomicFile); ok {
			if err := a.Commit(); err != nil {
				return err
			}
		}
	}
	return nil
}
