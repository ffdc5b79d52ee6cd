package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// SweepCSVHeader is the header row of SweepCSV.
var SweepCSVHeader = []string{"label", "concurrency", "requests", "complete", "failed", "non_2xx",
	"requests_per_second", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms", "transfer_rate_kbytes_per_second",
	"backend_cpu_seconds", "backend_peak_rss_bytes", "backend_processes_max",
	"fpm_listen_queue", "fpm_active_processes", "fpm_max_children_reached",
	"listen_overflows", "backend_peak_pss_bytes", "backend_mean_pss_bytes",
	"trials", "requests_per_second_ci95_low", "requests_per_second_ci95_high", "p99_ms_ci95_low", "p99_ms_ci95_high"}

// fpmCSVFields are the php-fpm status fields of the last SweepCSVHeader
// columns, as read at the end of each level (--fpm-status).
var fpmCSVFields = []string{"listen queue", "active processes", "max children reached"}

// SweepCSV writes sweep.csv: the SweepCSVHeader row, then one row per series
// and level (series in order, each with its levels in order). Times are
// total request times in ms with three decimals; rates have two.
// "requests" is the count asked for (0 with a time limit alone). The backend
// columns are empty when the level sampled no backend, the fpm_* columns
// when it read no php-fpm status page. listen_overflows is the rise of the
// kernel's machine-wide TcpExt ListenOverflows during the level, empty when
// not read (the target is not a local TCP address). With trials
// (--repeat), p50_ms and p99_ms are the medians of the trials' and the
// last five columns say how many trials ran and give the 95% intervals of
// the median req/s and p99; without trials they are empty.
func SweepCSV(w io.Writer, sw *Sweep) error {
	cw := newCSVWriter(w)
	cw.write(SweepCSVHeader, nil)
	f2 := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	f3 := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, se := range sw.Series {
		for k := range se.Levels {
			s := &se.Levels[k]
			lat := LatencyOf(s)
			// The label and the php-fpm values are text that a user or
			// a backend chose: a cell that would start a formula in a
			// spreadsheet is quoted (SafeText).
			quote := make([]bool, 0, len(SweepCSVHeader))
			label, q := SafeText(se.Label)
			quote = append(quote, q)
			row := []string{label, strconv.Itoa(s.Concurrency), i(s.Requests), i(s.Complete), i(s.Failed), i(s.Non2xx),
				f2(s.RequestsPerSecond), f3(lat.Mean),
				f3(lat.P50), f3(lat.P90), f3(lat.P99), f3(lat.Max),
				f2(s.TransferRate), "", "", ""}
			if b := s.Backend; b != nil && b.Samples > 0 {
				row[13], row[14], row[15] = f3(b.CPUSeconds), i(b.PeakRSSBytes), strconv.Itoa(b.ProcessesMax)
			}
			for _, f := range fpmCSVFields {
				var v string
				if s.Backend != nil {
					v = s.Backend.FPMStatusEnd[f]
				}
				v, q = safeValue(v)
				for len(quote) < len(row) {
					quote = append(quote, false)
				}
				row = append(row, v)
				quote = append(quote, q)
			}
			lo, pssPeak, pssMean := "", "", ""
			if s.ListenOverflows != nil {
				lo = i(*s.ListenOverflows)
			}
			if b := s.Backend; b != nil && b.Samples > 0 {
				pssPeak, pssMean = i(b.PeakPSSBytes), i(b.MeanPSSBytes)
			}
			row = append(row, lo, pssPeak, pssMean)
			row = append(row, "", "", "", "", "")
			if t := s.Repeated; t != nil {
				n := len(row)
				row[n-5] = strconv.Itoa(len(t.Trials))
				if ci := t.RequestsPerSecondCI95; ci != nil {
					row[n-4], row[n-3] = f2(ci[0]), f2(ci[1])
				}
				if ci := t.P99MsCI95; ci != nil {
					row[n-2], row[n-1] = f3(ci[0]), f3(ci[1])
				}
			}
			cw.write(row, quote)
		}
	}
	return cw.flush()
}

// SweepJSON writes sw as one indented JSON object (sweep.json,
// document.Write).
func SweepJSON(w io.Writer, sw *Sweep) error {
	return document.Write(w, sw)
}

// Column widths of SweepTable's group per series: req/s, p99 ms, failed.
const (
	tabRPS    = 9
	tabP99    = 8
	tabFailed = 7
	// With trials: the "± x%" of req/s and the verdict.
	tabPM      = 7
	tabVerdict = 13
	tabSep     = "   "
)

// SweepTable writes the compact terminal table: a header with the series
// labels, one row per level with a column group per series (req/s, p99 ms,
// failed), "-" where a series did not run the level, a last "cause"
// column when some level's listen queue overflowed or requests failed
// (the levels the PNG rings), then a line per
// stopped series saying where and why, and for a cluster target the
// per-address lines of every level, as bench prints them, and for a mix
// (--targets) each series' targets at every level (writeSweepTargets). A sweep of
// trials adds "± x%" (the interval of the median req/s, of 95% from 6
// trials, the range of the trials below: trials.MedianConfidence) after req/s
// and, to every series but the baseline, the req/s verdict against the
// baseline.
func SweepTable(w io.Writer, sw *Sweep) error {
	bw := bufio.NewWriter(w)
	all := make([]int, len(sw.Series))
	for i := range all {
		all[i] = i
	}
	sweepBlock(bw, sw, all)
	sweepTail(bw, sw)
	return bw.Flush()
}

// sweepBlock writes the table's header and rows for the series of sw at
// the indices idx (their cause column, if any, for them alone).
func sweepBlock(bw *bufio.Writer, sw *Sweep, idx []int) {
	type column struct {
		name  string
		width int
	}
	series := make([]SweepSeries, len(idx))
	for k, i := range idx {
		series[k] = sw.Series[i]
	}
	groups := make([][]column, len(series))
	for i, se := range series {
		groups[i] = []column{{"req/s", tabRPS}, {"p99 ms", tabP99}, {"failed", tabFailed}}
		if sw.SweepTrials != nil {
			groups[i] = slices.Insert(groups[i], 1, column{"±", tabPM})
			if se.Label != sw.Baseline {
				width := tabVerdict
				for _, level := range sw.Levels {
					if c := sw.Comparison(se.Label, level); c != nil {
						width = max(width, len(c.VerdictText()))
					}
				}
				groups[i] = append(groups[i], column{"vs " + sw.Baseline, width})
			}
		}
	}
	groupWidth := func(g []column) int {
		n := -1
		for _, c := range g {
			n += c.width + 1
		}
		return n
	}
	// cells writes one group's cells, right-aligned but the verdict.
	cells := func(b *strings.Builder, g []column, vals []string) {
		b.WriteString(tabSep)
		for k, c := range g {
			if k > 0 {
				b.WriteString(" ")
			}
			if strings.HasPrefix(c.name, "vs ") {
				fmt.Fprintf(b, "%-*s", c.width, vals[k])
			} else {
				fmt.Fprintf(b, "%*s", c.width, vals[k])
			}
		}
	}
	fmt.Fprintf(bw, "%-11s", "")
	for i, se := range series {
		label, gw := se.Label, groupWidth(groups[i])
		if len(label) > gw {
			label = label[:gw-1] + "~"
		}
		fmt.Fprintf(bw, "%s%*s", tabSep, gw, label)
	}
	var head strings.Builder
	fmt.Fprintf(&head, "\n%-11s", "concurrency")
	for _, g := range groups {
		names := make([]string, len(g))
		for k, c := range g {
			names[k] = c.name
			if len(names[k]) > c.width {
				names[k] = names[k][:c.width-1] + "~"
			}
		}
		cells(&head, g, names)
	}
	// The cause column, only when some level has one: what the PNG rings
	// (a full listen queue, failed requests), in a few words per series.
	hasCause := false
	for _, se := range series {
		for i := range se.Levels {
			hasCause = hasCause || levelCause(&se.Levels[i]) != ""
		}
	}
	if hasCause {
		head.WriteString(tabSep + "cause")
	}
	bw.WriteString(strings.TrimRight(head.String(), " ") + "\n")
	for _, level := range sw.Levels {
		var row strings.Builder
		ran := false
		fmt.Fprintf(&row, "%11d", level)
		var causes []string
		for i, se := range series {
			if s := levelOf(&se, level); s != nil {
				if c := levelCause(s); c != "" {
					causes = append(causes, se.Label+": "+c)
				}
			}
			g := groups[i]
			vals := make([]string, len(g))
			s := levelOf(&se, level)
			if s == nil {
				for k := range vals {
					vals[k] = "-"
				}
				cells(&row, g, vals)
				continue
			}
			ran = true
			p99 := "-"
			if s.Complete > 0 {
				p99 = strconv.FormatFloat(LatencyOf(s).P99, 'f', 1, 64)
			}
			vals[0] = strconv.FormatFloat(s.RequestsPerSecond, 'f', 1, 64)
			k := 1
			if sw.SweepTrials != nil {
				vals[1] = "-"
				if s.Repeated != nil && s.RequestsPerSecondCI95 != nil {
					e := trials.Estimate{Median: s.RequestsPerSecond, Lo: s.RequestsPerSecondCI95[0], Hi: s.RequestsPerSecondCI95[1], N: 2}
					vals[1] = e.PlusMinus()
				}
				k = 2
			}
			vals[k], vals[k+1] = p99, strconv.FormatInt(s.Failed, 10)
			if k+2 < len(vals) {
				vals[k+2] = "-"
				if c := sw.Comparison(se.Label, level); c != nil {
					vals[k+2] = c.VerdictText()
				}
			}
			cells(&row, g, vals)
		}
		if len(causes) > 0 {
			row.WriteString(tabSep + strings.Join(causes, "; "))
		}
		if ran {
			bw.WriteString(strings.TrimRight(row.String(), " ") + "\n")
		}
	}
}

// sweepTail writes what follows the table's rows: a line per stopped
// series, the per-address lines of cluster targets, the per-target
// tables of a mix (writeSweepTargets), the interruption.
func sweepTail(bw *bufio.Writer, sw *Sweep) {
	for _, se := range sw.Series {
		if se.Stop != nil {
			fmt.Fprintf(bw, "%s: stopped after concurrency %d: %s\n", se.Label, se.Stop.Concurrency, se.Stop.Reason)
		}
	}
	for _, se := range sw.Series {
		head := true
		for i := range se.Levels {
			s := &se.Levels[i]
			if len(s.Upstreams) == 0 {
				continue
			}
			if head {
				fmt.Fprintf(bw, "\n%s: per address (%s)\n", se.Label, s.Balance)
				fmt.Fprintf(bw, "%11s ", "concurrency")
				writeUpstreams(bw, "", nil, true)
				head = false
			}
			for k, u := range s.Upstreams {
				c := ""
				if k == 0 {
					c = strconv.Itoa(s.Concurrency)
				}
				fmt.Fprintf(bw, "%11s ", c)
				writeUpstreams(bw, "", []stats.UpstreamSummary{u}, false)
			}
		}
	}
	writeSweepTargets(bw, sw)
	if sw.Interrupted {
		bw.WriteString("Interrupted: the sweep was stopped by a signal; the last level is partial.\n")
	}
}

// Latency is a result's total request time in ms, each figure labelled
// with what it is: with trials (Medians), Mean, P50, P99 and Max are the
// medians of the trials' figures (as the comparisons judge them, their
// intervals in the result) while P90 is the pooled run's own (the saved
// form keeps no median of it); without trials every figure is the run's
// own.
type Latency struct {
	Mean, P50, P90, P99, Max float64
	// Medians says that Mean, P50, P99 and Max are the trials' medians.
	Medians bool
}

// LatencyOf returns the latency figures of a result, the one place that
// tells a result of trials' medians from a run's own figures. A result of
// trials saved before the medians of the mean and the maximum (0) keeps
// the pooled run's for those two; a level of trials saved by an earlier
// version with no medians at all gives its own figures (not zeros).
func LatencyOf(s *stats.Summary) Latency {
	l := Latency{Mean: s.ConnectionTimes.Total.Mean, P50: s.Percentiles["50"], P90: s.Percentiles["90"],
		P99: s.Percentiles["99"], Max: s.ConnectionTimes.Total.Max}
	if t := s.Repeated; t != nil && !oldTrialLevel(t) {
		l.Medians, l.P50, l.P99 = true, t.P50Ms, t.P99Ms
		if t.MeanMs > 0 {
			l.Mean = t.MeanMs
		}
		if t.MaxMs > 0 {
			l.Max = t.MaxMs
		}
	}
	return l
}

// oldTrialLevel reports a level of trials saved by an earlier version
// without its medians: its latency is its own pooled figures.
func oldTrialLevel(t *stats.Repeated) bool {
	return t.P50Ms == 0 && t.P99Ms == 0 && t.PooledRequestsPerSecond == 0 && t.Confidence == 0
}

// levelOf returns the Summary of se at the given concurrency, or nil.
func levelOf(se *SweepSeries, level int) *stats.Summary {
	for i := range se.Levels {
		if se.Levels[i].Concurrency == level {
			return &se.Levels[i]
		}
	}
	return nil
}

// levelCause is why a level is marked, in a few words: "listen queue
// overflowed", "70% failed (connect)", both, or "" for none.
func levelCause(s *stats.Summary) string {
	var out []string
	if n, wide := s.ListenOverflow(); n > 0 && wide {
		out = append(out, "machine's listen queues overflowed")
	} else if n > 0 {
		out = append(out, "listen queue overflowed")
	}
	if s.Failed > 0 {
		share := ""
		if s.Finished() > 0 {
			share = strconv.FormatFloat(s.FailureRatio()*100, 'f', 0, 64) + "% "
		}
		f := s.Failures
		var cls []string
		for _, c := range []struct {
			name string
			n    int64
		}{{"connect", f.Connect}, {"receive", f.Receive}, {"length", f.Length}, {"exceptions", f.Exceptions}, {"timeout", f.Timeout}, {"protocol", f.Protocol}} {
			if c.n > 0 {
				cls = append(cls, c.name)
			}
		}
		out = append(out, share+"failed ("+strings.Join(cls, ", ")+")")
	}
	return strings.Join(out, ", ")
}

// SweepTitle is the title of a sweep's table: its series, levels, the
// budget of one level and the time it took.
func SweepTitle(sw *Sweep) string {
	var parts []string
	if sw.RequestsPerLevel > 0 {
		parts = append(parts, fmt.Sprintf("%d requests per level", sw.RequestsPerLevel))
	}
	if sw.SecondsPerLevel > 0 {
		parts = append(parts, fmt.Sprintf("at most %g s per level", sw.SecondsPerLevel))
	}
	return fmt.Sprintf("Sweep: %d series, %d levels, %s, %.1f s in all", len(sw.Series), len(sw.Levels), strings.Join(parts, ", "), sw.TimeTaken)
}
