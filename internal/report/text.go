// Package report renders results as text, Markdown, CSV, JSON and charts:
// a run's ApacheBench text report (the same labels, order and column
// widths as ab 2.4, followed by a few lines of our own), JSON, ab's
// gnuplot TSV (-g) and percentile CSV (-e); a sweep's table, CSV and
// charts; a capacity search's answer, table, progress lines and chart
// (Capacity); compare's and the gate's text; a study's text (StudyText);
// and the Markdown of each. Text that wraps wraps with one function, Wrap.
//
// Renderers see only results (stats values, the result model's types),
// never clients or connections; golden files in testdata pin every format
// (go test -run Golden -update rewrites them).
package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/backbench/backbench/internal/load"
	"github.com/backbench/backbench/internal/stats"
)

// TextOptions are the choices of the text report.
type TextOptions struct {
	// Spectrum adds the full percentile spectrum (50 to 99.999 and max).
	Spectrum bool
}

// Text writes s as ab's report, then backbench's own lines.
func Text(w io.Writer, s *stats.Summary, o TextOptions) error {
	b := &strings.Builder{}
	line := func(label, format string, a ...any) {
		fmt.Fprintf(b, "%-24s"+format+"\n", append([]any{label + ":"}, a...)...)
	}
	line("Server Software", "%s", s.ServerSoftware)
	line("Server Hostname", "%s", s.ServerHostname)
	line("Server Port", "%s", s.ServerPort)
	if t := s.TLS; t != nil {
		line("SSL/TLS Protocol", "%s,%s", t.Protocol, t.Cipher)
		if t.TempKey != "" {
			line("Server Temp Key", "%s", t.TempKey)
		}
		if t.ServerName != "" {
			line("TLS Server Name", "%s", t.ServerName)
		}
	}
	b.WriteString("\n")
	line("Document Path", "%s", s.DocumentPath)
	if s.VariableLength {
		line("Document Length", "Variable")
	} else {
		line("Document Length", "%d bytes", s.DocumentLength)
	}
	b.WriteString("\n")
	if s.Open != nil {
		// -c is only the ceiling of an open-model run: the level is what
		// was in flight (stats.OpenModel.MeanInFlight).
		line("Concurrency Level", "%.2f (mean in flight, by Little's law from the run)", s.Open.MeanInFlight)
	} else {
		line("Concurrency Level", "%d", s.Concurrency)
	}
	line("Time taken for tests", "%.3f seconds", s.TimeTaken)
	line("Complete requests", "%d", s.Complete)
	line("Failed requests", "%d", s.Failed)
	if s.Failed > 0 {
		f := s.Failures.ByClass()
		var parts []string
		for c := load.ErrClass(1); c < load.NumClasses; c++ {
			name := c.String()
			parts = append(parts, fmt.Sprintf("%s%s: %d", strings.ToUpper(name[:1]), name[1:], f[c]))
		}
		fmt.Fprintf(b, "   (%s)\n", strings.Join(parts, ", "))
	}
	if s.Non2xx > 0 {
		line("Non-2xx responses", "%d", s.Non2xx)
	}
	if s.KeepAlive {
		line("Keep-Alive requests", "%d", s.KeepAliveRequests)
	}
	line("Total transferred", "%d bytes", s.TotalTransferred)
	if s.TotalBodySent > 0 {
		line("Total body sent", "%d", s.TotalBodySent)
	}
	line("HTML transferred", "%d bytes", s.HTMLTransferred)
	if s.TimeTaken > 0 && s.Complete > 0 {
		line("Requests per second", "%.2f [#/sec] (mean)", s.RequestsPerSecond)
		if s.Open != nil {
			line("Time per request", "%.3f [ms] (mean, measured: each request's own time)", s.TimePerRequest)
		} else {
			line("Time per request", "%.3f [ms] (mean)", s.TimePerRequest)
		}
		line("Time per request", "%.3f [ms] (mean, across all concurrent requests)", s.TimePerRequestAll)
		line("Transfer rate", "%.2f [Kbytes/sec] received", s.TransferRate)
		if s.TotalBodySent > 0 {
			sent := float64(s.TotalBodySent) / 1024 / s.TimeTaken
			fmt.Fprintf(b, "%24s%.2f kb/s sent\n", "", sent)
			fmt.Fprintf(b, "%24s%.2f kb/s total\n", "", sent+s.TransferRate)
		}
	}
	if s.Complete > 0 {
		ct := &s.ConnectionTimes
		b.WriteString("\nConnection Times (ms)\n")
		b.WriteString("              min  mean[+/-sd] median   max\n")
		row := func(label string, p stats.PhaseStats) {
			fmt.Fprintf(b, "%-12s%5d %4d %5.1f %6d %7d\n", label+":", ms(p.Min), ms(p.Mean), p.SD, ms(p.Median), ms(p.Max))
		}
		row("Connect", ct.Connect)
		row("Processing", ct.Processing)
		row("Waiting", ct.Waiting)
		row("Total", ct.Total)
		sane(b, "the initial connection time", ct.Connect)
		sane(b, "the processing time", ct.Processing)
		sane(b, "the waiting time", ct.Waiting)
		sane(b, "the total time", ct.Total)

		b.WriteString("\nPercentage of the requests served within a certain time (ms)\n")
		percentileTable(b, s.Percentiles)
		if ms(s.Percentiles["50"]) == 0 && s.Complete > 0 && !o.Spectrum {
			// ab's table is in whole ms: on a fast backend it reads 0 at the
			// median and says nothing. One line of backbench's own exact
			// figures, under ab's lines, which stay as ab prints them.
			fmt.Fprintf(b, "  (exact: 50%% %.3f ms, 99%% %.3f ms; --percentiles for the full spectrum)\n",
				s.Percentiles["50"], s.Percentiles["99"])
		}
		if s.Open != nil {
			b.WriteString("\nThe table above counts from each request's intended start (corrected);\n")
			if l := s.Open.ClientLatenessMs; l != nil {
				// Beside the latency it is part of: how late the client
				// itself sent (the pacer's error, not the backend's).
				fmt.Fprintf(b, "it includes the client's own lateness, p50 %.3f ms, p99 %.3f ms;\n", l.P50, l.P99)
			}
			b.WriteString("from the actual send time (uncorrected) it is:\n")
			percentileTable(b, s.UncorrectedPercentiles)
		}
		if o.Spectrum {
			b.WriteString("\nPercentile spectrum (ms)\n")
			for _, p := range stats.SpectrumRanks {
				k := strconv.FormatFloat(p, 'f', -1, 64)
				fmt.Fprintf(b, "%9s%%  %10.3f\n", k, s.Spectrum[k])
			}
		}
	}
	if len(s.Targets) > 0 {
		writeTargets(b, s.Targets)
		if s.Replay != nil {
			writeReplay(b, s.Replay)
		}
	}
	ours(b, s, line)
	_, err := io.WriteString(w, b.String())
	return err
}

func percentileTable(b *strings.Builder, pct map[string]float64) {
	for _, p := range stats.Percentiles {
		v := ms(pct[strconv.Itoa(p)])
		if p == 100 {
			fmt.Fprintf(b, " 100%%  %5d (longest request)\n", v)
		} else {
			fmt.Fprintf(b, "  %d%%  %5d\n", p, v)
		}
	}
}

// WireOf returns what the summary's protocol put on the wire, in the
// report's words: the protocol's own (stats.Wire, set by
// internal/protocol), or for a record written before they were kept, the
// same words derived from what such a record holds: an HTTP version for
// HTTP, none for FastCGI (the only two protocols of those records).
func WireOf(s *stats.Summary) stats.Wire {
	if s.Wire != nil {
		return *s.Wire
	}
	if s.HTTPVersion == "" {
		kc := "FCGI_KEEP_CONN clear"
		if s.KeepAlive {
			kc = "FCGI_KEEP_CONN set"
		}
		return stats.Wire{Protocol: "FastCGI (RESPONDER)", KeepAlive: kc, Stderr: "FastCGI stderr"}
	}
	w := stats.Wire{Protocol: "HTTP/" + s.HTTPVersion, KeepAlive: "Connection: " + s.ConnectionHeader}
	if s.ConnectionHeader == "" {
		w.KeepAlive = w.Protocol + ", no Connection header sent"
	}
	return w
}

// ours writes backbench's lines after ab's block.
func ours(b *strings.Builder, s *stats.Summary, line func(label, format string, a ...any)) {
	b.WriteString("\n")
	// Say what was sent, in the protocol's words.
	w := WireOf(s)
	ka := "off"
	if s.KeepAlive {
		ka = "on"
	}
	ka += " (" + w.KeepAlive + ")"
	line("Protocol", "%s %s", w.Protocol, s.Method)
	line("Transport", "%s %s", s.Target.Network, s.Target.Address)
	line("Keep-alive", "%s", ka)
	if s.Reconnects > 0 {
		line("Reconnects", "%d (kept connections closed by the server, redialed)", s.Reconnects)
	}
	if s.Drained > 0 {
		line("Drained", "%d (in flight when the run's window closed: let finish, not counted)", s.Drained)
	}
	if w.Stderr != "" {
		line(w.Stderr, "%d bytes", s.StderrBytes)
	}
	if s.ABCompat {
		line("Arithmetic", "ab's (--ab-compat): means truncated in µs, medians and percentiles one rank high")
	}
	if op := s.Open; op != nil {
		line("Open model", "%.2f [#/sec] asked, %.2f [#/sec] achieved", op.RateAsked, op.RateAchieved)
		unsent := fmt.Sprintf("%d unsent", op.UnsentRequests)
		if op.UnsentInFlight > 0 {
			unsent += fmt.Sprintf(" (%d cut off in flight at the end)", op.UnsentInFlight)
		}
		line("Due requests", "%d = %d complete + %d failed + %s", op.DueRequests,
			s.Complete, s.Failed-s.Failures.Length, unsent)
		if l := op.ClientLatenessMs; l != nil {
			line("Client lateness", "p50 %.3f ms, p99 %.3f ms, max %.3f ms (sent after the intended start by a free worker)",
				l.P50, l.P99, l.Max)
		}
		if op.LateRequests > 0 {
			line("Sent late", "%d requests (> 1 ms), mean %.3f ms, max %.3f ms", op.LateRequests, op.LateMeanMs, op.LateMaxMs)
		} else {
			line("Sent late", "0 requests")
		}
		if op.CeilingLate > 0 {
			pct := 0.0
			if op.DueRequests > 0 {
				pct = 100 * float64(op.CeilingLate) / float64(op.DueRequests)
			}
			line("Ceiling", "-c %d was reached and held the rate back: %d of %d due requests (%.1f%%) waited for a free worker",
				s.Concurrency, op.CeilingLate, op.DueRequests, pct)
		}
	}
	c := &s.Client
	policy := ""
	if c.Scheduling != "" {
		policy = ", " + c.Scheduling
	}
	if c.TimeSliceMs > 0 {
		policy += fmt.Sprintf(" (%g ms slice)", c.TimeSliceMs)
	}
	cores := "cores"
	if c.Cores == 1 {
		cores = "core"
	}
	share := "-" // too short a run to measure
	if s.TimeTaken >= stats.CPUShareMinSeconds {
		share = fmt.Sprintf("%.0f%%", c.CPUPercent)
	}
	if c.Engine != "" {
		policy += ", " + c.Engine + " engine"
	}
	if len(c.CPUs) > 0 {
		policy += ", pinned to CPU " + load.FormatCPUs(c.CPUs)
	}
	line("Client CPU", "%.2f s (user %.2f + sys %.2f), %s of one core, %d %s%s",
		c.CPUUserSeconds+c.CPUSysSeconds, c.CPUUserSeconds, c.CPUSysSeconds, share, c.Cores, cores, policy)
	for _, wmsg := range c.Warnings {
		line("Client warning", "%s", wmsg)
	}
	for k, st := range s.Stages {
		unit := "req/s"
		if s.Open == nil {
			unit = "connections"
		}
		asked := fmt.Sprintf("%g %s", st.Target, unit)
		if st.Ramp {
			asked = "ramp to " + asked
		}
		line(fmt.Sprintf("Stage %d", k+1), "%.3f-%.3f s, %s: %.2f req/s, p50 %.3f ms, p99 %.3f ms, max %.3f ms, %d failed",
			st.StartSeconds, st.EndSeconds, asked, st.RequestsPerSecond, st.P50Ms, st.P99Ms, st.MaxMs, st.Failed)
	}
	if w := s.WorstWindow; w != nil {
		line("Worst window", "%.3f-%.3f s: p99 %.1f ms (median window %.1f ms), max %.1f ms, %.0f req/s (median %.0f), %d failed",
			w.StartSeconds, w.EndSeconds, w.P99Ms, w.MedianP99Ms, w.MaxMs, w.RequestsPerSecond, w.MedianRequestsPerSecond, w.Failed)
	}
	if s.Interrupted {
		line("Interrupted", "yes: the report covers the requests completed before the signal")
	}
	if s.BackendLost != nil {
		line("Backend lost", "%s", s.BackendLost)
	}
	if s.TLS != nil {
		line("TLS handshakes", "%d (%d resumed a session)", s.TLS.Handshakes, s.TLS.Resumed)
	}
	if len(s.Upstreams) > 0 {
		fmt.Fprintf(b, "\nUpstreams (%s)\n", s.Balance)
		writeUpstreams(b, "  ", s.Upstreams, true)
		b.WriteString("\n")
	}
	if bu := s.Backend; bu != nil {
		if bu.Samples > 0 {
			line("Backend CPU", "%.2f s (user %.2f + sys %.2f) for PIDs %v and their descendants",
				bu.CPUSeconds, bu.CPUUserSeconds, bu.CPUSysSeconds, bu.PIDs)
			mib := func(v int64) float64 { return float64(v) / (1 << 20) }
			src := "PSS summed over the processes"
			if bu.PSSFallback > 0 {
				src += fmt.Sprintf("; RSS stood in for %d unreadable smaps_rollup readings", bu.PSSFallback)
			}
			line("Backend memory", "%.1f MiB peak, %.1f MiB mean (%s)", mib(bu.PeakPSSBytes), mib(bu.MeanPSSBytes), src)
			line("Backend RSS", "%.1f MiB peak, %.1f MiB mean (summed: counts every shared page once per process)",
				mib(bu.PeakRSSBytes), mib(bu.MeanRSSBytes))
			line("Backend USS", "%.1f MiB mean, %.1f MiB max per process (private memory: what one more worker costs)",
				mib(bu.USSMeanBytes), mib(bu.USSMaxBytes))
			line("Backend processes", "%d max, %.1f mean", bu.ProcessesMax, bu.ProcessesMean)
		}
		for _, st := range []struct {
			when string
			m    map[string]string
		}{{"start", bu.FPMStatusStart}, {"end", bu.FPMStatusEnd}} {
			if st.m == nil {
				continue
			}
			if e, ok := st.m["error"]; ok {
				line("php-fpm status", "%s: %s", st.when, e)
				continue
			}
			line("php-fpm status", "%s: listen queue %s, active processes %s, max children reached %s",
				st.when, st.m["listen queue"], st.m["active processes"], st.m["max children reached"])
		}
	}
	for _, n := range s.Notes {
		line("Note", "%s", n)
	}
	if len(s.ErrorSamples) > 0 {
		b.WriteString("Errors (sample):\n")
		for _, e := range s.ErrorSamples {
			fmt.Fprintf(b, "  %6d  %s\n", e.Count, e.Message)
		}
	}
}

// sane prints ab's warning when the mean and median of a phase are more
// than one (WARNING) or two (ERROR) standard deviations apart.
func sane(b *strings.Builder, what string, p stats.PhaseStats) {
	d := math.Abs(p.Mean - p.Median)
	switch {
	case d > 2*p.SD:
		fmt.Fprintf(b, "ERROR: The median and mean for %s are more than twice the standard\n"+
			"       deviation apart. These results are NOT reliable.\n", what)
	case d > p.SD:
		fmt.Fprintf(b, "WARNING: The median and mean for %s are not within a normal deviation\n"+
			"        These results are probably not that reliable.\n", what)
	}
}

// ms rounds a time in milliseconds to the nearest whole millisecond.
func ms(v float64) int64 { return int64(math.Round(v)) }

// targetWidth is the width of the targets table's first column: the
// table fits in 100 columns.
const targetWidth = 34

// writeTargets writes the table of a mix's targets (--targets): each
// target's weight, requests, failures, total-time percentiles and body
// bytes, fitted to 100 columns (a long target is cut in its middle).
func writeTargets(b *strings.Builder, ts []stats.TargetSummary) {
	fmt.Fprintf(b, "\nTargets (%d; times are Total, in ms)\n", len(ts))
	fmt.Fprintf(b, "  %-*s %6s %9s %7s %8s %8s %8s %11s\n", targetWidth, "target", "weight", "requests", "failed", "p50", "p99", "max", "body bytes")
	for _, t := range ts {
		fmt.Fprintf(b, "  %-*s %6d %9d %7d %8.2f %8.2f %8.2f %11d\n", targetWidth, fitTarget(t.Target), t.Weight, t.Requests, t.Failed,
			t.P50Ms, t.P99Ms, t.MaxMs, t.BodyBytes)
	}
}

// writeReplay notes what an access log replay (--access-log) sent and
// left out of the log.
func writeReplay(b *strings.Builder, r *stats.Replay) {
	fmt.Fprintf(b, "  Replayed %d of %d lines of %s (weights are counts; methods %s): %d skipped, %d malformed\n",
		r.Replayed, r.Lines, r.File, strings.Join(r.Methods, ","), r.Skipped, r.Malformed)
	if r.FirstBadLine > 0 {
		fmt.Fprintf(b, "  First left out: %s:%d: %s\n", r.File, r.FirstBadLine, r.FirstBadWhy)
	}
	if r.Truncated {
		b.WriteString("  The log was cut at 4194304 lines replayed: the rest was not read\n")
	}
}

// fitTarget cuts a target's label to targetWidth characters, keeping its
// start (the method) and its end (where paths differ).
func fitTarget(s string) string {
	r := []rune(s)
	if len(r) <= targetWidth {
		return s
	}
	head := 12
	return string(r[:head]) + "..." + string(r[len(r)-(targetWidth-head-3):])
}

// writeUpstreams writes the per-address lines of a cluster target, each
// after prefix, with the header line first when head is set.
func writeUpstreams(w io.Writer, prefix string, ups []stats.UpstreamSummary, head bool) {
	if head {
		fmt.Fprintf(w, "%s%-36s %9s %8s %10s %10s %10s\n", prefix, "address", "requests", "failed", "req/s", "mean ms", "p99 ms")
	}
	for _, u := range ups {
		fmt.Fprintf(w, "%s%-36s %9d %8d %10.2f %10.3f %10.3f\n", prefix, u.Address, u.Requests, u.Failed, u.RequestsPerSecond, u.MeanMs, u.P99Ms)
	}
}
