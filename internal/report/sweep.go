package report

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/backbench/backbench/internal/stats"
)

// Sweep is the result of a concurrency sweep as the sweep renderers see it:
// one SweepSeries per series, each with a Summary per level it ran.
type Sweep struct {
	// Levels are the concurrency levels asked for, in order.
	Levels []int `json:"levels"`
	// RequestsPerLevel is -n (0 with a time limit alone).
	RequestsPerLevel int64 `json:"requests_per_level"`
	// SecondsPerLevel is -t in seconds (0 if none).
	SecondsPerLevel float64 `json:"seconds_per_level"`
	// StopErrorRate is the stop rule's bound, a ratio from 0 to 1; absent
	// (null) when there is no stop rule.
	StopErrorRate *float64 `json:"stop_error_rate"`
	// TimeTaken is the sweep's wall time, warm-ups included, in seconds.
	TimeTaken float64 `json:"time_taken_seconds"`
	// Series holds the series in the order they were given.
	Series []SweepSeries `json:"series"`
	// Interrupted reports a sweep stopped by a signal.
	Interrupted bool `json:"interrupted"`
}

// SweepSeries is one series of a sweep.
type SweepSeries struct {
	// Label names the series.
	Label string `json:"label"`
	// Target is what the series measured.
	Target stats.TargetInfo `json:"target"`
	// KeepAlive reports whether the series kept connections open.
	KeepAlive bool `json:"keep_alive"`
	// Levels holds one Summary per level run, in order.
	Levels []stats.Summary `json:"levels"`
	// Records holds the run record of every level, in the order of
	// Levels (absent when not known).
	Records []*stats.Record `json:"records,omitempty"`
	// Stop is set when the stop rule ended the series early.
	Stop *SweepStop `json:"stopped,omitempty"`
	// SLOHighestPass is the highest level at which every --slo objective
	// held (each level's verdicts are its Summary's SLO); 0 when none did,
	// absent without objectives.
	SLOHighestPass *int `json:"slo_highest_passing_level,omitempty"`
}

// SweepStop says where and why a series was stopped.
type SweepStop struct {
	// Concurrency is the level at which the rule fired (the last one run).
	Concurrency int `json:"concurrency"`
	// ErrorRate is the failure ratio of that level, from 0 to 1.
	ErrorRate float64 `json:"error_rate"`
	// Reason is a sentence for the user.
	Reason string `json:"reason"`
}

// SweepCSVHeader is the header row of SweepCSV.
var SweepCSVHeader = []string{"label", "concurrency", "requests", "complete", "failed", "non_2xx",
	"requests_per_second", "mean_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms", "transfer_rate_kbytes_per_second",
	"backend_cpu_seconds", "backend_peak_rss_bytes", "backend_processes_max",
	"fpm_listen_queue", "fpm_active_processes", "fpm_max_children_reached",
	"listen_overflows", "backend_peak_pss_bytes", "backend_mean_pss_bytes"}

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
// not read (the target is not a local TCP address).
func SweepCSV(w io.Writer, sw *Sweep) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(SweepCSVHeader); err != nil {
		return err
	}
	f2 := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	f3 := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, se := range sw.Series {
		for k := range se.Levels {
			s := &se.Levels[k]
			row := []string{se.Label, strconv.Itoa(s.Concurrency), i(s.Requests), i(s.Complete), i(s.Failed), i(s.Non2xx),
				f2(s.RequestsPerSecond), f3(s.ConnectionTimes.Total.Mean),
				f3(s.Percentiles["50"]), f3(s.Percentiles["90"]), f3(s.Percentiles["99"]), f3(s.ConnectionTimes.Total.Max),
				f2(s.TransferRate), "", "", ""}
			if b := s.Backend; b != nil && b.Samples > 0 {
				row[13], row[14], row[15] = f3(b.CPUSeconds), i(b.PeakRSSBytes), strconv.Itoa(b.ProcessesMax)
			}
			for _, f := range fpmCSVFields {
				var v string
				if s.Backend != nil {
					v = s.Backend.FPMStatusEnd[f]
				}
				row = append(row, v)
			}
			lo, pssPeak, pssMean := "", "", ""
			if s.ListenOverflows != nil {
				lo = i(*s.ListenOverflows)
			}
			if b := s.Backend; b != nil && b.Samples > 0 {
				pssPeak, pssMean = i(b.PeakPSSBytes), i(b.MeanPSSBytes)
			}
			row = append(row, lo, pssPeak, pssMean)
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// SweepJSON writes sw as one indented JSON object (sweep.json).
func SweepJSON(w io.Writer, sw *Sweep) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sw)
}

// Column widths of SweepTable's group per series: req/s, p99 ms, failed.
const (
	tabRPS    = 9
	tabP99    = 8
	tabFailed = 7
	tabGroup  = tabRPS + 1 + tabP99 + 1 + tabFailed
	tabSep    = "   "
)

// SweepTable writes the compact terminal table: a header with the series
// labels, one row per level with a column group per series (req/s, p99 ms,
// failed), "-" where a series did not run the level, then a line per
// stopped series saying where and why, and for a cluster target the
// per-address lines of every level, as bench prints them.
func SweepTable(w io.Writer, sw *Sweep) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%-11s", "")
	for _, se := range sw.Series {
		label := se.Label
		if len(label) > tabGroup {
			label = label[:tabGroup-1] + "~"
		}
		fmt.Fprintf(bw, "%s%*s", tabSep, tabGroup, label)
	}
	fmt.Fprintf(bw, "\n%-11s", "concurrency")
	for range sw.Series {
		fmt.Fprintf(bw, "%s%*s %*s %*s", tabSep, tabRPS, "req/s", tabP99, "p99 ms", tabFailed, "failed")
	}
	bw.WriteString("\n")
	for _, level := range sw.Levels {
		var row strings.Builder
		ran := false
		fmt.Fprintf(&row, "%11d", level)
		for _, se := range sw.Series {
			s := levelOf(&se, level)
			if s == nil {
				fmt.Fprintf(&row, "%s%*s %*s %*s", tabSep, tabRPS, "-", tabP99, "-", tabFailed, "-")
				continue
			}
			ran = true
			p99 := "-"
			if s.Complete > 0 {
				p99 = strconv.FormatFloat(s.Percentiles["99"], 'f', 1, 64)
			}
			fmt.Fprintf(&row, "%s%*.1f %*s %*d", tabSep, tabRPS, s.RequestsPerSecond, tabP99, p99, tabFailed, s.Failed)
		}
		if ran {
			bw.WriteString(strings.TrimRight(row.String(), " ") + "\n")
		}
	}
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
	if sw.Interrupted {
		bw.WriteString("Interrupted: the sweep was stopped by a signal; the last level is partial.\n")
	}
	return bw.Flush()
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
