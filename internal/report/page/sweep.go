package page

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/backbench/backbench/internal/document"
	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"
)

// sweep writes a sweep's summary line, charts, comparisons, table of every
// level and series, and the latency spectra of chosen levels.
func (p *pager) sweep(sw *document.Sweep) {
	b := &p.b
	tr := sweepTrials(sw)
	per := fmt.Sprintf("%d requests per level", sw.RequestsPerLevel)
	if sw.RequestsPerLevel == 0 {
		per = fmt.Sprintf("%g s per level", sw.SecondsPerLevel)
	}
	fmt.Fprintf(b, "<p>%d series, %d levels (%s), %s, %.1f s in all.", len(sw.Series), len(sw.Levels), levelsText(sw.Levels), per, sw.TimeTaken)
	if sw.StopErrorRate != nil {
		fmt.Fprintf(b, " Stop rule: a series ends after a level with more than %g%% failed.", *sw.StopErrorRate*100)
	}
	if sw.Interrupted {
		b.WriteString(" <strong>Interrupted</strong>: the sweep was stopped by a signal; the last level is partial.")
	}
	if tr.Repeat > 0 || tr.Precision > 0 {
		fmt.Fprintf(b, " Trials: %d per series and level", tr.Repeat)
		if tr.Precision > 0 {
			fmt.Fprintf(b, ", more until the interval of the median (95%%, from %d trials on) is within ±%g%% (at most %d)", trials.MinPreciseTrials+1, tr.Precision*100, tr.MaxRepeat)
		}
		fmt.Fprintf(b, ", series order seeded with %d", tr.Seed)
		fmt.Fprintf(b, "; noise threshold %g%%; baseline %s.", tr.Noise*100, esc(tr.Baseline))
	}
	b.WriteString("</p>\n")
	p.notes("Notes", tr.Notes)
	var stops []string
	for _, se := range sw.Series {
		if se.Stop != nil {
			stops = append(stops, fmt.Sprintf("<li>%s: stopped after concurrency %d: %s</li>", esc(se.Label), se.Stop.Concurrency, esc(se.Stop.Reason)))
		}
	}
	if len(stops) > 0 {
		fmt.Fprintf(b, "<ul class=\"stops\">%s</ul>\n", strings.Join(stops, ""))
	}

	rps := &chart{id: p.id("c"), title: "requests per second against concurrency", xLabel: "concurrency (connections)", yLabel: "requests / second", levelTicks: true}
	p99 := &chart{id: p.id("c"), title: "99th percentile of the request time against concurrency", xLabel: "concurrency (connections)", yLabel: "p99 latency (ms)", levelTicks: true}
	fail := &chart{id: p.id("c"), title: "failed requests (failed / finished) against concurrency", xLabel: "concurrency (connections)", yLabel: "failed (%)", levelTicks: true, linearY: true}
	cpu := &chart{id: p.id("c"), title: "backend CPU against concurrency", xLabel: "concurrency (connections)", yLabel: "CPU (% of one core)", levelTicks: true}
	rss := &chart{id: p.id("c"), title: "backend memory (peak RSS) against concurrency", xLabel: "concurrency (connections)", yLabel: "peak RSS (MiB)", levelTicks: true}
	anyFailed := false
	for i, se := range sw.Series {
		ls := []*line{{label: se.Label, style: i}, {label: se.Label, style: i}, {label: se.Label, style: i}, {label: se.Label, style: i}, {label: se.Label, style: i}}
		for k := range se.Levels {
			s := &se.Levels[k]
			x := float64(s.Concurrency)
			failed := s.Failed > 0
			anyFailed = anyFailed || failed
			// The causes ride on every point of the level: a ringed point's
			// tooltip says why it is ringed.
			ft := failedText(s) + causesText(s)
			failed = failed || len(levelCauses(s)) > 0
			at := fmt.Sprintf("%s, c=%d: ", se.Label, s.Concurrency)
			rtip := at + fmt.Sprintf("%.2f req/s", s.RequestsPerSecond)
			if iv := rpsCI95(s); len(iv) == 2 {
				rtip += fmt.Sprintf(" (median of %d trials; %s %s)", trialCount(s), ciLabel(s), ci(iv, 2))
				ls[0].band = append(ls[0].band, band{x, iv[0], iv[1]})
				rps.confs = append(rps.confs, trials.MedianConfidence(trialCount(s)))
			}
			ls[0].pts = append(ls[0].pts, point{x, s.RequestsPerSecond, rtip + ft, failed})
			if s.Complete > 0 {
				// The p99 of the table, CSV and comparisons: with trials
				// the median of the trials' p99s, whose interval the band
				// draws (not the pooled trials' p99).
				v := report.LatencyOf(s).P99
				ptip := at + fmt.Sprintf("p99 %.3f ms", v)
				if iv := p99CI95(s); len(iv) == 2 {
					ptip += fmt.Sprintf(" (%s %s)", ciLabel(s), ci(iv, 3))
					ls[1].band = append(ls[1].band, band{x, iv[0], iv[1]})
					p99.confs = append(p99.confs, trials.MedianConfidence(trialCount(s)))
				}
				ls[1].pts = append(ls[1].pts, point{x, v, ptip + ft, failed})
			}
			fr := s.FailureRatio() * 100
			ftip := at + fmt.Sprintf("%.1f%% failed", fr)
			if failed {
				ftip = at + strings.TrimPrefix(ft, "; ")
			}
			ls[2].pts = append(ls[2].pts, point{x, fr, ftip, failed})
			if bu := s.Backend; bu != nil && bu.Samples > 0 && s.TimeTaken > 0 {
				c := bu.CPUSeconds / s.TimeTaken * 100
				ls[3].pts = append(ls[3].pts, point{x, c, at + fmt.Sprintf("backend CPU %.1f%% of one core (%.3f s in %.3f s)", c, bu.CPUSeconds, s.TimeTaken) + ft, failed})
				m := float64(bu.PeakRSSBytes) / (1 << 20)
				ls[4].pts = append(ls[4].pts, point{x, m, at + fmt.Sprintf("backend peak RSS %.1f MiB, %d processes", m, bu.ProcessesMax) + ft, failed})
			}
		}
		for k, c := range []*chart{rps, p99, fail, cpu, rss} {
			c.lines = append(c.lines, ls[k])
		}
	}
	charts := []*chart{rps, p99}
	if anyFailed {
		charts = append(charts, fail)
	}
	if !cpu.empty() {
		charts = append(charts, cpu, rss)
	}
	b.WriteString("<h3>Charts</h3>\n<div class=\"charts\">\n")
	for _, c := range charts {
		c.svg(b)
	}
	b.WriteString("</div>\n")
	p.seriesNotes(sw)
	if len(tr.Comparisons) > 0 {
		b.WriteString("<h3>Comparisons</h3>\n")
		p.comparisons(tr.Comparisons)
	}
	b.WriteString("<h3>Every level</h3>\n")
	p.levelSummary(sw)
	b.WriteString("<details class=\"fold\"><summary>Every figure of every level</summary>\n")
	p.sweepTable(sw)
	b.WriteString("</details>\n")
	b.WriteString("<h3>Latency spectrum</h3>\n<div class=\"charts\">\n")
	for _, lvl := range chosenLevels(sw.Levels) {
		c := &chart{id: p.id("c"), title: fmt.Sprintf("latency percentile spectrum at concurrency %d", lvl),
			xLabel: "percentile (log scale of 1/(1-p))", yLabel: "total request time (ms)", spectrum: true}
		for i, se := range sw.Series {
			l := &line{label: se.Label, style: i}
			if s := levelOf(&se, lvl); s != nil {
				l = spectrumLine(fmt.Sprintf("%s, c=%d", se.Label, lvl), i, s)
				l.label = se.Label
			}
			c.lines = append(c.lines, l)
		}
		c.svg(b)
	}
	b.WriteString("</div>\n")
}

// levelsText shortens a list of levels: "1, 11, ... 500" past six.
func levelsText(levels []int) string {
	var parts []string
	for i, l := range levels {
		if len(levels) > 6 && i == 3 {
			parts = append(parts, "…")
		}
		if len(levels) > 6 && i >= 3 && i < len(levels)-2 {
			continue
		}
		parts = append(parts, strconv.Itoa(l))
	}
	return strings.Join(parts, ", ")
}

// chosenLevels picks the levels whose spectra the page draws: the first,
// the middle and the last.
func chosenLevels(levels []int) []int {
	if len(levels) == 0 {
		return nil
	}
	var out []int
	for _, l := range []int{levels[0], levels[len(levels)/2], levels[len(levels)-1]} {
		if len(out) == 0 || out[len(out)-1] != l {
			out = append(out, l)
		}
	}
	return out
}

// levelOf returns the Summary of se at concurrency level, or nil.
func levelOf(se *document.SweepSeries, level int) *stats.Summary {
	for i := range se.Levels {
		if se.Levels[i].Concurrency == level {
			return &se.Levels[i]
		}
	}
	return nil
}

// labelled marks a latency cell of a level of trials (medians) as the
// median of the trials' figures, in its tooltip.
func labelled(c cell, medians bool) cell {
	if medians {
		c.text = `<span title="median of the trials'">` + c.text + `</span>`
	}
	return c
}

// pooled marks a latency cell of a level of trials (medians) as the
// pooled run's own figure, beside the trials' medians in its row.
func pooled(c cell, medians bool) cell {
	if medians {
		c.text = `<span title="the pooled trials' (no median of it is kept)">` + c.text + `</span>`
	}
	return c
}

// sweepTable writes one row per series and level, a body per series; the
// listen queue, backend and php-fpm columns only when some level has them,
// the interval columns only with trials.
func (p *pager) sweepTable(sw *document.Sweep) {
	var hasCI, hasBackend, hasFPM, hasOverflows bool
	for _, se := range sw.Series {
		for k := range se.Levels {
			lv := &se.Levels[k]
			hasOverflows = hasOverflows || lv.ListenOverflows != nil || len(lv.ListenQueues) > 0
			hasCI = hasCI || len(rpsCI95(lv)) == 2 || len(p99CI95(lv)) == 2
			if bu := lv.Backend; bu != nil {
				hasBackend = hasBackend || bu.Samples > 0
				hasFPM = hasFPM || bu.FPMStatusEnd != nil
			}
		}
	}
	head := []string{"series", "concurrency", "requests", "complete", "failed", "failed %", "failures by class", "req/s"}
	if hasCI {
		head = append(head, "req/s "+sweepCILabel(sw), "trials")
	}
	head = append(head, "mean ms", "p50 ms", "p90 ms", "p99 ms")
	if hasCI {
		head = append(head, "p99 "+sweepCILabel(sw))
	}
	head = append(head, "max ms", "non-2xx")
	if hasOverflows {
		head = append(head, "listen queue overflows")
	}
	if hasBackend {
		head = append(head, "backend CPU %", "backend peak RSS MiB", "backend processes")
	}
	fpmKeys := []string{"listen queue", "active processes", "max children reached"}
	if hasFPM {
		for _, k := range fpmKeys {
			head = append(head, "php-fpm "+k)
		}
	}
	var rows [][]cell
	f2 := func(v float64) cell { return num(strconv.FormatFloat(v, 'f', 2, 64)) }
	f3 := func(v float64) cell { return num(strconv.FormatFloat(v, 'f', 3, 64)) }
	d := func(v int64) cell { return num(strconv.FormatInt(v, 10)) }
	for _, se := range sw.Series {
		for k := range se.Levels {
			s := &se.Levels[k]
			failed := d(s.Failed)
			if s.Failed > 0 {
				failed.class += " failed"
			}
			r := []cell{hdr(se.Label), d(int64(s.Concurrency)), d(s.Requests), d(s.Complete), failed,
				num(strconv.FormatFloat(s.FailureRatio()*100, 'f', 1, 64)), txt(classes(s.Failures)), f2(s.RequestsPerSecond)}
			if hasCI {
				trials := ""
				if n := trialCount(s); n > 0 {
					trials = strconv.Itoa(n)
				}
				r = append(r, num(ci(rpsCI95(s), 2)), num(trials))
			}
			lat := report.LatencyOf(s)
			if s.Complete > 0 {
				r = append(r, labelled(f3(lat.Mean), lat.Medians), labelled(f3(lat.P50), lat.Medians),
					pooled(f3(lat.P90), lat.Medians), labelled(f3(lat.P99), lat.Medians))
			} else {
				r = append(r, num("-"), num("-"), num("-"), num("-"))
			}
			if hasCI {
				r = append(r, num(ci(p99CI95(s), 3)))
			}
			r = append(r, labelled(f3(lat.Max), lat.Medians), d(s.Non2xx))
			if hasOverflows {
				if n, _ := s.ListenOverflow(); s.ListenOverflows != nil || len(s.ListenQueues) > 0 {
					r = append(r, d(n))
				} else {
					r = append(r, num(""))
				}
			}
			if hasBackend {
				if bu := s.Backend; bu != nil && bu.Samples > 0 && s.TimeTaken > 0 {
					r = append(r, num(strconv.FormatFloat(bu.CPUSeconds/s.TimeTaken*100, 'f', 1, 64)),
						num(strconv.FormatFloat(float64(bu.PeakRSSBytes)/(1<<20), 'f', 1, 64)), d(int64(bu.ProcessesMax)))
				} else {
					r = append(r, num(""), num(""), num(""))
				}
			}
			if hasFPM {
				for _, k := range fpmKeys {
					v := ""
					if s.Backend != nil {
						v = s.Backend.FPMStatusEnd[k]
					}
					r = append(r, num(v))
				}
			}
			rows = append(rows, r)
		}
	}
	p.table("Every level of every series (times: total request time)", head, rows)
}

// levelCauses are what explains a level beyond its figures, from the
// record: the kernel's listen queue overflowed during it (SYNs dropped and
// sent again after 1 s or more), connects that took 1 s or more, and the
// notes the run carries. Failed requests are said by failedText.
func levelCauses(s *stats.Summary) []string {
	var out []string
	// The record's own note on the listen queue, when it has one, says it
	// better (which listener, which counter); this line is for records
	// that carry only the counter.
	said := slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, "listen queue") })
	n, wide := s.ListenOverflow()
	if n > 0 && wide && !said {
		out = append(out, fmt.Sprintf("the machine's listen queues overflowed (TcpExt ListenOverflows rose by %d: a machine-wide counter, "+
			"which another program's listener may have raised)", n))
	} else if n > 0 && !said {
		c := fmt.Sprintf("the listen queue overflowed (%s dropped", plural(int(n), "SYN"))
		if s.ListenBacklog != nil {
			c += fmt.Sprintf(", backlog %d", *s.ListenBacklog)
		}
		c += "): the client's kernel sends a dropped SYN again after 1 s, which shows as slow requests, not failures"
		out = append(out, c)
	}
	if s.ConnectsOver1s > 0 && n == 0 && !said {
		out = append(out, fmt.Sprintf("%d connects took 1 s or more (a SYN dropped by a full listen queue and sent again)", s.ConnectsOver1s))
	}
	return append(out, s.Notes...)
}

// causesText is levelCauses for a tooltip: "; cause: ...".
func causesText(s *stats.Summary) string {
	cs := levelCauses(s)
	if len(cs) == 0 {
		return ""
	}
	return "; cause: " + strings.Join(cs, "; ")
}

// shortCause is a level's cause in a few words, for a table cell:
// "listen queue overflowed", "25.0% failed (receive 50)", "1 note".
func shortCause(s *stats.Summary) string {
	var out []string
	if n, wide := s.ListenOverflow(); n > 0 && wide {
		out = append(out, "machine's listen queues overflowed")
	} else if n > 0 {
		out = append(out, "listen queue overflowed")
	} else if s.ConnectsOver1s > 0 {
		out = append(out, "connects over 1 s")
	}
	if s.Failed > 0 {
		out = append(out, fmt.Sprintf("%.1f%% failed (%s)", s.FailureRatio()*100, classes(s.Failures)))
	}
	if n := len(s.Notes); n > 0 {
		out = append(out, plural(n, "note"))
	}
	return strings.Join(out, "; ")
}

// seriesNotes lists, per series, every cause its levels carry, each once
// with the levels where it was met.
func (p *pager) seriesNotes(sw *document.Sweep) {
	var body strings.Builder
	for _, se := range sw.Series {
		var order []string
		at := map[string][]string{}
		for k := range se.Levels {
			s := &se.Levels[k]
			cs := levelCauses(s)
			if s.Failed > 0 {
				cs = append([]string{strings.TrimPrefix(failedText(s), "; ")}, cs...)
			}
			// The same text at several levels is listed once, with them.
			for _, c := range cs {
				if _, ok := at[c]; !ok {
					order = append(order, c)
				}
				at[c] = append(at[c], strconv.Itoa(s.Concurrency))
			}
		}
		if len(order) == 0 {
			continue
		}
		fmt.Fprintf(&body, "<li><strong>%s</strong><ul>\n", esc(se.Label))
		for _, c := range order {
			fmt.Fprintf(&body, "<li>c = %s: %s</li>\n", esc(strings.Join(at[c], ", ")), esc(c))
		}
		body.WriteString("</ul></li>\n")
	}
	if body.Len() > 0 {
		fmt.Fprintf(&p.b, "<h3>Notes per series</h3>\n<ul class=\"notes series-notes\">\n%s</ul>\n", body.String())
	}
}

// levelSummary writes the short table of every level: the figures that
// answer (req/s, p99, their intervals, the failed share) and the cause of
// a ringed point; the rest is in the folded table under it.
func (p *pager) levelSummary(sw *document.Sweep) {
	hasCI := false
	for _, se := range sw.Series {
		for k := range se.Levels {
			hasCI = hasCI || len(rpsCI95(&se.Levels[k])) == 2 || len(p99CI95(&se.Levels[k])) == 2
		}
	}
	head := []string{"series", "c", "req/s"}
	if hasCI {
		head = append(head, "req/s "+sweepCILabel(sw))
	}
	head = append(head, "p99 ms")
	if hasCI {
		head = append(head, "p99 "+sweepCILabel(sw))
	}
	head = append(head, "failed %", "cause")
	var rows [][]cell
	for _, se := range sw.Series {
		for k := range se.Levels {
			s := &se.Levels[k]
			r := []cell{hdr(se.Label), num(strconv.Itoa(s.Concurrency)), num(strconv.FormatFloat(s.RequestsPerSecond, 'f', 2, 64))}
			if hasCI {
				r = append(r, num(ci(rpsCI95(s), 2)))
			}
			if s.Complete > 0 {
				r = append(r, num(strconv.FormatFloat(s.Percentiles["99"], 'f', 3, 64)))
			} else {
				r = append(r, num("-"))
			}
			if hasCI {
				r = append(r, num(ci(p99CI95(s), 3)))
			}
			fr := num(strconv.FormatFloat(s.FailureRatio()*100, 'f', 1, 64))
			if s.Failed > 0 {
				fr.class += " failed"
			}
			cause := cell{text: esc(shortCause(s)), class: "cause"}
			if full := strings.TrimPrefix(failedText(s)+causesText(s), "; "); full != "" {
				cause.text = "<span title=\"" + esc(full) + "\">" + cause.text + "</span>"
			}
			rows = append(rows, append(r, fr, cause))
		}
	}
	p.table("Every level: the figures that answer, and what explains a ringed point (hover the cause for its whole text)", head, rows)
}
