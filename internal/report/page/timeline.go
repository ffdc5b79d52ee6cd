package page

import (
	"fmt"
	"math"

	"github.com/backbench/backbench/internal/stats"
)

// timeline writes the charts of a run's timeline (record.timeline): req/s
// and failures per window, latency p50/p99/max per window, and, when the
// backend was sampled, its memory, CPU and listen queue; every chart
// marks the first failure, the slowest request, the first window whose
// listen queue was seen full and the loss of the backend. Nothing when
// the record has no timeline.
func (p *pager) timeline(rec *stats.Record) {
	if rec == nil || rec.Timeline == nil || rec.Timeline.Width <= 0 || len(rec.Timeline.Windows) == 0 {
		return
	}
	tl := rec.Timeline
	backlog := 0
	for _, q := range rec.ListenQueues {
		backlog = max(backlog, q.Backlog)
	}
	full := -1
	width := tl.Width.Seconds()
	const xl = "time from the run's start (s)"
	rps := &chart{id: p.id("tl"), title: "requests per second, window by window", xLabel: xl, yLabel: "requests / second", linearY: true}
	lat := &chart{id: p.id("tl"), title: "latency, window by window", xLabel: xl, yLabel: "latency (ms)"}
	mem := &chart{id: p.id("tl"), title: "backend memory (PSS), window by window", xLabel: xl, yLabel: "PSS (MiB)", linearY: true}
	cpu := &chart{id: p.id("tl"), title: "backend CPU, window by window", xLabel: xl, yLabel: "CPU (% of one core)", linearY: true}
	queue := &chart{id: p.id("tl"), title: "listen queue, window by window", xLabel: xl, yLabel: "connections waiting (longest sampled)", linearY: true}
	ok, failed := &line{label: "complete", style: 0}, &line{label: "failed", style: 1}
	p50, p99, top := &line{label: "p50", style: 0}, &line{label: "p99", style: 1}, &line{label: "max", style: 2}
	pss, busy, lq := &line{label: "PSS", style: 0}, &line{label: "CPU", style: 0}, &line{label: "listen queue", style: 0}
	firstFail, slowest := -1, -1
	var slowestMax float64
	anyQueued := false
	for i := range tl.Windows {
		w := &tl.Windows[i]
		x := (float64(i) + 0.5) * width
		at := fmt.Sprintf("%.3f-%.3f s", float64(i)*width, float64(i+1)*width)
		nf := w.Failed()
		if nf > 0 && firstFail < 0 {
			firstFail = i
		}
		if m := float64(w.LatencyMax) / 1e6; w.Complete > 0 && m > slowestMax {
			slowest, slowestMax = i, m
		}
		fails := ""
		if nf > 0 {
			fails = fmt.Sprintf("; %d failed of %d finished", nf, nf+w.Complete)
		}
		ok.pts = append(ok.pts, point{x: x, y: float64(w.Complete) / width, failed: nf > 0,
			tip: fmt.Sprintf("%s: %.0f req/s (%d complete)%s", at, float64(w.Complete)/width, w.Complete, fails)})
		failed.pts = append(failed.pts, point{x: x, y: float64(nf) / width, tip: fmt.Sprintf("%s: %d failed", at, nf)})
		if w.Complete > 0 {
			ms := func(q float64) float64 { return float64(w.Latency(q)) / 1e6 }
			tip := fmt.Sprintf("%s: p50 %.3f ms, p99 %.3f ms, max %.3f ms (%d complete)%s", at, ms(50), ms(99), ms(100), w.Complete, fails)
			p50.pts = append(p50.pts, point{x: x, y: ms(50), tip: tip})
			p99.pts = append(p99.pts, point{x: x, y: ms(99), tip: tip, failed: nf > 0})
			top.pts = append(top.pts, point{x: x, y: ms(100), tip: tip})
		}
		if b := w.Backend; b != nil {
			if b.Processes > 0 {
				mib := float64(b.PSSBytes) / (1 << 20)
				pss.pts = append(pss.pts, point{x: x, y: mib, tip: fmt.Sprintf("%s: %.1f MiB PSS, %d processes", at, mib, b.Processes)})
				share := b.CPUSeconds / width * 100
				busy.pts = append(busy.pts, point{x: x, y: share, tip: fmt.Sprintf("%s: %.0f%% of one core (%.3f s)", at, share, b.CPUSeconds)})
			}
			if b.ListenQueued >= 0 {
				anyQueued = anyQueued || b.ListenQueued > 0
				if full < 0 && backlog > 0 && b.ListenQueued >= backlog {
					full = i
				}
				lq.pts = append(lq.pts, point{x: x, y: float64(b.ListenQueued), tip: fmt.Sprintf("%s: %d waiting", at, b.ListenQueued)})
			}
		}
	}
	var marks []mark
	if firstFail >= 0 {
		marks = append(marks, mark{x: float64(firstFail) * width, label: fmt.Sprintf("first failure (%.3f s)", float64(firstFail)*width)})
	}
	if slowest >= 0 {
		marks = append(marks, mark{x: (float64(slowest) + 0.5) * width, label: fmt.Sprintf("slowest request (%.1f ms)", slowestMax)})
	}
	if full >= 0 {
		marks = append(marks, mark{x: float64(full) * width, label: fmt.Sprintf("listen queue full (%.3f s, backlog %d)", float64(full)*width, backlog)})
	}
	if bl := rec.BackendLost; bl != nil {
		marks = append(marks, mark{x: bl.AtSeconds, label: fmt.Sprintf("backend lost (%.3f s)", bl.AtSeconds)})
	}
	rps.lines, lat.lines = []*line{ok}, []*line{p50, p99, top}
	if firstFail >= 0 {
		rps.lines = append(rps.lines, failed)
	}
	mem.lines, cpu.lines, queue.lines = []*line{pss}, []*line{busy}, []*line{lq}
	charts := []*chart{rps, lat}
	if !mem.empty() {
		charts = append(charts, mem, cpu)
	}
	if anyQueued {
		charts = append(charts, queue)
	}
	b := &p.b
	fmt.Fprintf(b, "<h3>Timeline</h3>\n<p>%d windows of %s from the run's start; each request counts in the window it was due (open model) or sent.</p>\n<div class=\"charts\">\n",
		len(tl.Windows), windowText(tl.Width.Seconds()))
	for _, c := range charts {
		c.marks = marks
		c.svg(b)
	}
	b.WriteString("</div>\n")
}

// windowText writes a window's width: "1 s", "125 ms".
func windowText(s float64) string {
	if s >= 1 {
		return fmt.Sprintf("%g s", s)
	}
	return fmt.Sprintf("%g ms", math.Round(s*1e6)/1e3)
}
