package page

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
)

// bench writes a bench result: ab's figures, the connection times, the
// percentiles, failures by class with their samples, and backbench's own
// lines (client, upstreams, backend, TLS, notes).
func (p *pager) bench(s *stats.Summary) {
	b := &p.b
	if s.Interrupted {
		b.WriteString("<p><strong>Interrupted</strong>: the figures cover the requests completed before the signal.</p>\n")
	}
	kv := func(k, v string) []cell { return []cell{hdr(k), txt(v)} }
	rps := fmt.Sprintf("%.2f [#/sec] (mean)", s.RequestsPerSecond)
	if iv := rpsCI95(s); len(iv) == 2 {
		rps = fmt.Sprintf("%.2f [#/sec] (median of %d trials; %s %s)", s.RequestsPerSecond, trialCount(s), ciLabel(s), ci(iv, 2))
	}
	docLen := fmt.Sprintf("%d bytes", s.DocumentLength)
	if s.VariableLength {
		docLen = "Variable"
	}
	failed := strconv.FormatInt(s.Failed, 10)
	if s.Failed > 0 {
		failed += fmt.Sprintf(" (%.1f%% of finished: %s)", s.FailureRatio()*100, classes(s.Failures))
	}
	proto := report.WireOf(s).Protocol
	// In the open model -c is only a ceiling: the level and the time per
	// request are what happened (see report.Text).
	level, tpr := strconv.Itoa(s.Concurrency), fmt.Sprintf("%.3f [ms] (mean)", s.TimePerRequest)
	if s.Open != nil {
		level = fmt.Sprintf("%.2f (mean in flight, by Little's law from the run)", s.Open.MeanInFlight)
		tpr = fmt.Sprintf("%.3f [ms] (mean, measured: each request's own time)", s.TimePerRequest)
	}
	rows := [][]cell{
		kv("Target", s.Target.URL),
		kv("Protocol", proto+" "+s.Method),
		kv("Transport", s.Target.Network+" "+s.Target.Address),
		kv("Server Software", s.ServerSoftware),
		kv("Server Hostname", s.ServerHostname),
		kv("Server Port", s.ServerPort),
		kv("Document Path", s.DocumentPath),
		kv("Document Length", docLen),
		kv("Concurrency Level", level),
		kv("Keep-alive", map[bool]string{true: "on", false: "off"}[s.KeepAlive]),
		kv("Time taken for tests", fmt.Sprintf("%.3f seconds", s.TimeTaken)),
		kv("Complete requests", strconv.FormatInt(s.Complete, 10)),
		{hdr("Failed requests"), {text: esc(failed), class: map[bool]string{true: "failed"}[s.Failed > 0]}},
		kv("Non-2xx responses", strconv.FormatInt(s.Non2xx, 10)),
		kv("Keep-Alive requests", strconv.FormatInt(s.KeepAliveRequests, 10)),
		kv("Reconnects", strconv.FormatInt(s.Reconnects, 10)),
		kv("Total transferred", fmt.Sprintf("%d bytes", s.TotalTransferred)),
		kv("HTML transferred", fmt.Sprintf("%d bytes", s.HTMLTransferred)),
		kv("Requests per second", rps),
		kv("Time per request", tpr),
		kv("Time per request", fmt.Sprintf("%.3f [ms] (mean, across all concurrent requests)", s.TimePerRequestAll)),
		kv("Transfer rate", fmt.Sprintf("%.2f [Kbytes/sec] received", s.TransferRate)),
	}
	if iv := p99CI95(s); len(iv) == 2 {
		rows = append(rows, kv("p99 "+ciLabel(s), ci(iv, 3)+" ms"))
	}
	if op := s.Open; op != nil {
		ceiling := fmt.Sprintf("the ceiling -c %d was not reached", s.Concurrency)
		if op.CeilingLate > 0 {
			ceiling = fmt.Sprintf("%d held back by -c %d (the ceiling was reached)", op.CeilingLate, s.Concurrency)
		}
		rows = append(rows, kv("Open model", fmt.Sprintf("%.2f [#/sec] asked, %.2f achieved; %d sent late (max %.3f ms), %s",
			op.RateAsked, op.RateAchieved, op.LateRequests, op.LateMaxMs, ceiling)))
	}
	c := &s.Client
	rows = append(rows, kv("Client CPU", fmt.Sprintf("%.2f s (user %.2f + sys %.2f), %.0f%% of one core, %d cores %s",
		c.CPUUserSeconds+c.CPUSysSeconds, c.CPUUserSeconds, c.CPUSysSeconds, c.CPUPercent, c.Cores, c.Scheduling)))
	for _, w := range c.Warnings {
		rows = append(rows, kv("Client warning", w))
	}
	if t := s.TLS; t != nil {
		rows = append(rows, kv("TLS", fmt.Sprintf("%s, %s, %s; %d handshakes, %d resumed", t.Protocol, t.Cipher, t.ServerName, t.Handshakes, t.Resumed)))
	}
	if bu := s.Backend; bu != nil && bu.Samples > 0 {
		rows = append(rows, kv("Backend CPU", fmt.Sprintf("%.2f s (user %.2f + sys %.2f) for PIDs %v and their descendants", bu.CPUSeconds, bu.CPUUserSeconds, bu.CPUSysSeconds, bu.PIDs)),
			kv("Backend memory", fmt.Sprintf("%.1f MiB peak, %.1f MiB mean", float64(bu.PeakRSSBytes)/(1<<20), float64(bu.MeanRSSBytes)/(1<<20))),
			kv("Backend processes", fmt.Sprintf("%d max, %.1f mean", bu.ProcessesMax, bu.ProcessesMean)))
	}
	if bu := s.Backend; bu != nil {
		for _, st := range []struct {
			when string
			m    map[string]string
		}{{"start", bu.FPMStatusStart}, {"end", bu.FPMStatusEnd}} {
			if st.m != nil {
				rows = append(rows, kv("php-fpm status, "+st.when, mapText(st.m)))
			}
		}
	}
	p.table("The run, as ab reports it", []string{"figure", "value"}, rows)

	if s.Complete > 0 {
		ct := &s.ConnectionTimes
		var rows [][]cell
		for _, ph := range []struct {
			name string
			v    stats.PhaseStats
		}{{"Connect", ct.Connect}, {"Processing", ct.Processing}, {"Waiting", ct.Waiting}, {"Total", ct.Total}} {
			f := func(v float64) cell { return num(strconv.FormatFloat(v, 'f', 3, 64)) }
			rows = append(rows, []cell{hdr(ph.name), f(ph.v.Min), f(ph.v.Mean), f(ph.v.SD), f(ph.v.Median), f(ph.v.Max)})
		}
		p.table("Connection times (ms)", []string{"phase", "min", "mean", "sd", "median", "max"}, rows)
		rows = nil
		for _, pc := range stats.Percentiles {
			rows = append(rows, []cell{hdr(strconv.Itoa(pc) + "%"), num(strconv.FormatFloat(s.Percentiles[strconv.Itoa(pc)], 'f', 3, 64))})
		}
		for _, pc := range stats.SpectrumRanks {
			k := strconv.FormatFloat(pc, 'f', -1, 64)
			if v, ok := s.Spectrum[k]; ok && pc > 99 && pc < 100 {
				rows = append(rows, []cell{hdr(k + "%"), num(strconv.FormatFloat(v, 'f', 3, 64))})
			}
		}
		sort.SliceStable(rows, func(i, j int) bool { return pctOf(rows[i][0].text) < pctOf(rows[j][0].text) })
		p.table("Percentage of the requests served within a certain time (ms)", []string{"percentile", "total time (ms)"}, rows)
	}

	if s.Failed > 0 {
		var rows [][]cell
		for _, c := range failureClasses(s.Failures) {
			if c.n > 0 {
				rows = append(rows, []cell{hdr(c.name), num(strconv.FormatInt(c.n, 10)), num(strconv.FormatFloat(float64(c.n)/float64(s.Failed)*100, 'f', 1, 64))})
			}
		}
		p.table("Failed requests by class", []string{"class", "requests", "% of failed"}, rows)
	}
	if len(s.ErrorSamples) > 0 {
		var rows [][]cell
		for _, e := range s.ErrorSamples {
			rows = append(rows, []cell{num(strconv.FormatInt(e.Count, 10)), txt(e.Message)})
		}
		p.table("Error messages (sample)", []string{"count", "message"}, rows)
	}
	if len(s.Upstreams) > 0 {
		var rows [][]cell
		for _, u := range s.Upstreams {
			rows = append(rows, []cell{hdr(u.Address), num(strconv.FormatInt(u.Requests, 10)), num(strconv.FormatInt(u.Failed, 10)),
				num(fmt.Sprintf("%.2f", u.RequestsPerSecond)), num(fmt.Sprintf("%.3f", u.MeanMs)), num(fmt.Sprintf("%.3f", u.P99Ms))})
		}
		p.table("Upstreams ("+s.Balance+")", []string{"address", "requests", "failed", "req/s", "mean ms", "p99 ms"}, rows)
	}
	if len(s.Targets) > 0 {
		p.targets(s)
	}
	p.notes("Notes", s.Notes)
}

// maxTargetPoints bounds the targets drawn on the chart of p99 per target:
// the ones with the most requests.
const maxTargetPoints = 30

// targets writes the figures of a mix's targets (--targets, --access-log):
// a table of every target, what a replayed log left out, and a chart of
// p99 per target.
func (p *pager) targets(s *stats.Summary) {
	var rows [][]cell
	f := func(v float64) cell { return num(strconv.FormatFloat(v, 'f', 3, 64)) }
	for _, t := range s.Targets {
		rows = append(rows, []cell{hdr(t.Target), num(strconv.Itoa(t.Weight)), num(strconv.FormatInt(t.Requests, 10)),
			num(strconv.FormatInt(t.Failed, 10)), f(t.P50Ms), f(t.P99Ms), f(t.MaxMs), num(strconv.FormatInt(t.BodyBytes, 10))})
	}
	weight := "weight"
	if s.Replay != nil {
		weight = "lines in the log"
	}
	p.table(fmt.Sprintf("Targets (%d; times are Total, in ms)", len(s.Targets)),
		[]string{"target", weight, "requests", "failed", "p50", "p99", "max", "body bytes"}, rows)
	if r := s.Replay; r != nil {
		notes := []string{fmt.Sprintf("Replayed %d of %d lines of %s in its order (methods %s): %d skipped, %d malformed.",
			r.Replayed, r.Lines, r.File, strings.Join(r.Methods, ","), r.Skipped, r.Malformed)}
		if r.FirstBadLine > 0 {
			notes = append(notes, fmt.Sprintf("First line left out: %s:%d: %s.", r.File, r.FirstBadLine, r.FirstBadWhy))
		}
		if r.Truncated {
			notes = append(notes, "The log was cut at the replay's limit of lines: the rest was not read.")
		}
		p.notes("Access log", notes)
	}
	idx := make([]int, len(s.Targets))
	for i := range idx {
		idx[i] = i
	}
	title := "p99 of the request time per target"
	if len(idx) > maxTargetPoints {
		sort.SliceStable(idx, func(a, b int) bool { return s.Targets[idx[a]].Requests > s.Targets[idx[b]].Requests })
		idx = idx[:maxTargetPoints]
		sort.Ints(idx)
		title += fmt.Sprintf(", the %d with the most requests of %d", maxTargetPoints, len(s.Targets))
	}
	ch := &chart{id: p.id("c"), title: title, xLabel: "target", yLabel: "p99 latency (ms)", levelTicks: true,
		tickNames: map[float64]string{}, marksLow: true}
	l := &line{label: "p99"}
	for k, i := range idx {
		t := s.Targets[i]
		if t.Complete == 0 {
			continue
		}
		x := float64(k + 1)
		ch.tickNames[x] = t.Target
		l.pts = append(l.pts, point{x: x, y: t.P99Ms, failed: t.Failed > 0,
			tip: fmt.Sprintf("%s: p99 %.3f ms, p50 %.3f ms, max %.3f ms; %d requests, %d failed", t.Target, t.P99Ms, t.P50Ms, t.MaxMs, t.Requests, t.Failed)})
	}
	if len(l.pts) > 0 {
		ch.lines = []*line{l}
		ch.svg(&p.b)
	}
}

// pctOf reads the rank of a percentile row header ("99.9%").
func pctOf(s string) float64 {
	v, _ := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	return v
}

// mapText lists a map's pairs sorted by key, "k: v; ...".
func mapText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + m[k]
	}
	return strings.Join(parts, "; ")
}

// probe writes a probe result: one row per check (verdict, evidence and
// its numbers), then the summary lines.
func (p *pager) probe(d *document.Probe) {
	b := &p.b
	fmt.Fprintf(b, "<p>Target %s (%s %s), each exchange within %g s.</p>\n", esc(d.Target.URL), esc(d.Target.Network), esc(d.Target.Address), d.TimeoutSeconds)
	var rows [][]cell
	for _, f := range d.Checks {
		c := f.Check
		if c == nil {
			// A key of the probe that is no check.
			continue
		}
		verdict, evidence := c.Verdict, c.Evidence
		var details strings.Builder
		for _, n := range c.Numbers {
			fmt.Fprintf(&details, "<dt>%s</dt><dd>%s</dd>", esc(strings.ReplaceAll(n.Key, "_", " ")), esc(jsonText(n.Value)))
		}
		nums := ""
		if details.Len() > 0 {
			nums = "<dl class=\"nums\">" + details.String() + "</dl>"
		}
		rows = append(rows, []cell{hdr(f.Key), {text: esc(verdict), class: "verdict"}, txt(evidence), {text: nums, class: "details"}})
	}
	p.table("Protocol checks", []string{"check", "verdict", "evidence", "numbers"}, rows)
	b.WriteString("<h3>For benchmarking</h3>\n<ul class=\"summary\">\n")
	if len(d.Summary) == 0 {
		b.WriteString("<li>nothing special was seen</li>\n")
	}
	for _, l := range d.Summary {
		fmt.Fprintf(b, "<li>%s</li>\n", esc(l))
	}
	b.WriteString("</ul>\n")
}

// jsonText writes a JSON value as decoded (document.ProbeNumber) for a
// reader: a number or string as is, true and false as yes and no, null as
// "none", an object as "key value" pairs and an array as a list.
func jsonText(v any) string {
	var text func(any) string
	text = func(v any) string {
		switch t := v.(type) {
		case nil:
			return "none"
		case bool:
			return map[bool]string{true: "yes", false: "no"}[t]
		case float64:
			return fnum(t)
		case string:
			return t
		case []any:
			parts := make([]string, len(t))
			for i, e := range t {
				parts[i] = text(e)
			}
			return strings.Join(parts, ", ")
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			parts := make([]string, len(keys))
			for i, k := range keys {
				parts[i] = k + " " + text(t[k])
			}
			return strings.Join(parts, ", ")
		}
		return fmt.Sprint(v)
	}
	return text(v)
}
