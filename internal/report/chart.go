package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/backbench/backbench/internal/stats"
	"github.com/backbench/backbench/internal/trials"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart size: two panels stacked in one image, a third when any level
// failed (the failure ratio), two more when the backend's resource use was
// sampled. PNG is drawn at vgimg.DefaultDPI (96), so ChartWidthPx ×
// ChartHeightPx pixels with two panels, PanelHeightPx more per extra panel.
const (
	chartWidth  = 9 * vg.Inch
	panelHeight = 5 * vg.Inch
	// ChartWidthPx and ChartHeightPx are the size of the PNG chart with
	// two panels, in pixels; ChartHeightBackendPx its height with the
	// backend panels, PanelHeightPx the height of one panel.
	ChartWidthPx         = 864
	ChartHeightPx        = 960
	ChartHeightBackendPx = 1920
	PanelHeightPx        = 480
)

// SweepChart draws the sweep chart in format "svg" or "png" (by
// gonum.org/v1/plot): the top panel plots requests per second against
// concurrency, the bottom one the 99th percentile of the total request
// time (ms) against concurrency; one line per series, the same colour and
// marker in both panels, a legend in the top panel (a stopped series is
// marked there). Levels where nothing completed are left out; levels where
// the kernel's listen queue overflowed (Summary.ListenOverflows) are
// ringed in red in the p99 panel. A level with failed requests is ringed
// in black in every panel, and when any level failed a panel plots the
// failure ratio (failed / finished requests) against concurrency, so that
// fast failures never pass for throughput. When the backend's resource use
// was sampled (Summary.Backend), two last panels plot its CPU use and its
// memory (PSS summed over its processes) against concurrency.
func SweepChart(w io.Writer, sw *Sweep, format string) error {
	top, bottom, err := sweepPlots(sw)
	if err != nil {
		return err
	}
	panels := [][]*plot.Plot{{top}, {bottom}}
	if fp, err := failurePlot(sw); err != nil {
		return err
	} else if fp != nil {
		panels = append(panels, []*plot.Plot{fp})
	}
	cpu, mem, err := backendPlots(sw)
	if err != nil {
		return err
	}
	if cpu != nil {
		panels = append(panels, []*plot.Plot{cpu}, []*plot.Plot{mem})
	}
	return writeChart(w, panels, format)
}

// writeChart draws panels stacked in one image of format "svg" or "png".
func writeChart(w io.Writer, panels [][]*plot.Plot, format string) error {
	height := panelHeight * vg.Length(len(panels))
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = vgsvg.New(chartWidth, height)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.New(chartWidth, height)}
	default:
		return fmt.Errorf("report: unknown chart format %q (want svg or png)", format)
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 8,
		PadTop: vg.Millimeter * 4, PadBottom: vg.Millimeter * 4, PadLeft: vg.Millimeter * 4, PadRight: vg.Millimeter * 6}
	canvases := plot.Align(panels, tiles, draw.New(c))
	for i := range panels {
		panels[i][0].Draw(canvases[i][0])
	}
	_, err := c.WriteTo(w)
	return err
}

// backendPlots builds the third and fourth panels, the backend's CPU use
// (percent of one core) and its memory (PSS summed over the processes, MiB)
// against concurrency, or returns nils when no level sampled it.
func backendPlots(sw *Sweep) (cpu, mem *plot.Plot, err error) {
	cpu, mem = plot.New(), plot.New()
	cpu.Title.Text = "backend CPU (--backend-pid: the processes and their descendants)"
	cpu.Y.Label.Text = "CPU (% of one core)"
	mem.Title.Text = "backend memory (PSS summed over the processes: shared pages divided among their sharers)"
	mem.Y.Label.Text = "PSS (MiB)"
	for _, p := range []*plot.Plot{cpu, mem} {
		p.X.Label.Text = "concurrency (connections)"
		p.Add(plotter.NewGrid())
		p.Y.Min = 0
		p.Y.Tick.Marker = plainTicks{}
	}
	any := false
	for i, se := range sw.Series {
		var cpts, mpts plotter.XYs
		for _, s := range se.Levels {
			if b := s.Backend; b != nil && b.Samples > 0 && s.TimeTaken > 0 {
				x := float64(s.Concurrency)
				cpts = append(cpts, plotter.XY{X: x, Y: b.CPUSeconds / s.TimeTaken * 100})
				mpts = append(mpts, plotter.XY{X: x, Y: float64(b.MeanPSSBytes) / (1 << 20)})
			}
		}
		if len(cpts) == 0 {
			continue
		}
		any = true
		for k, pts := range []plotter.XYs{cpts, mpts} {
			line, marks, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, nil, fmt.Errorf("report: backend chart of %q: %w", se.Label, err)
			}
			styleSeries(i, line, marks)
			[]*plot.Plot{cpu, mem}[k].Add(line, marks)
		}
	}
	if !any {
		return nil, nil, nil
	}
	return cpu, mem, nil
}

// failurePlot builds the failure-ratio panel (failed / finished requests,
// in percent, against concurrency), or returns nil when no level of any
// series failed.
func failurePlot(sw *Sweep) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "failed requests (failed / finished)"
	p.X.Label.Text = "concurrency (connections)"
	p.Y.Label.Text = "failed (%)"
	p.Add(plotter.NewGrid())
	p.Y.Min, p.Y.Max = 0, 100
	p.Y.Tick.Marker = plainTicks{}
	any := false
	for i, se := range sw.Series {
		var pts plotter.XYs
		for k := range se.Levels {
			s := &se.Levels[k]
			any = any || s.Failed > 0
			pts = append(pts, plotter.XY{X: float64(s.Concurrency), Y: s.FailureRatio() * 100})
		}
		if len(pts) == 0 {
			continue
		}
		line, marks, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, fmt.Errorf("report: failure chart of %q: %w", se.Label, err)
		}
		styleSeries(i, line, marks)
		p.Add(line, marks)
		if err := addFailRings(p, se.Levels, func(s *stats.Summary) float64 { return s.FailureRatio() * 100 }); err != nil {
			return nil, err
		}
	}
	if !any {
		return nil, nil
	}
	return p, nil
}

// addFailRings rings the levels with failed requests at y(level); levels
// where nothing completed are left out, as on the lines. It returns the
// rings (nil when none) for the legend.
func addFailRings(p *plot.Plot, levels []stats.Summary, y func(*stats.Summary) float64) error {
	var pts plotter.XYs
	for k := range levels {
		if s := &levels[k]; s.Failed > 0 && s.Complete > 0 {
			pts = append(pts, plotter.XY{X: float64(s.Concurrency), Y: y(s)})
		}
	}
	if len(pts) == 0 {
		return nil
	}
	rings, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("report: failure markers: %w", err)
	}
	styleRings(rings)
	p.Add(rings)
	return nil
}

// styleRings draws the failure marker: a black ring around the point.
func styleRings(s *plotter.Scatter) {
	s.Shape = failRing{}
	s.Radius = vg.Points(6)
	s.Color = color.Black
}

// failRing is a ring glyph thick enough to see around a series' marker.
type failRing struct{}

// DrawGlyph draws the ring.
func (failRing) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.5)})
	var p vg.Path
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
}

// sweepPlots builds the two panels.
func sweepPlots(sw *Sweep) (top, bottom *plot.Plot, err error) {
	top, bottom = plot.New(), plot.New()
	what := fmt.Sprintf("%d requests per level", sw.RequestsPerLevel)
	if sw.RequestsPerLevel == 0 {
		what = strconv.FormatFloat(sw.SecondsPerLevel, 'f', -1, 64) + " s per level"
	}
	if sw.SweepTrials != nil {
		what += ", medians of trials with " + sweepIntervalLabel(sw) + "s"
	}
	top.Title.Text = "backbench sweep: requests per second (" + what + ")"
	top.X.Label.Text = "concurrency (connections)"
	top.Y.Label.Text = "requests / second"
	bottom.Title.Text = "99th percentile of the request time"
	bottom.X.Label.Text = "concurrency (connections)"
	bottom.Y.Label.Text = "p99 latency (ms)"
	for _, p := range []*plot.Plot{top, bottom} {
		p.Add(plotter.NewGrid())
		p.Y.Min = 0
		p.Y.Tick.Marker = plainTicks{}
	}
	maxRPS, anyFailed := 0.0, false
	var overflowed plotter.XYs
	for i, se := range sw.Series {
		var rps, p99 plotter.XYs
		var rpsErr, p99Err errorBars
		for k := range se.Levels {
			s := &se.Levels[k]
			if s.Complete == 0 {
				continue
			}
			x := float64(s.Concurrency)
			rps = append(rps, plotter.XY{X: x, Y: s.RequestsPerSecond})
			p99 = append(p99, plotter.XY{X: x, Y: LatencyOf(s).P99})
			if n, _ := s.ListenOverflow(); n > 0 {
				overflowed = append(overflowed, plotter.XY{X: x, Y: LatencyOf(s).P99})
			}
			maxRPS = max(maxRPS, s.RequestsPerSecond)
			if t := s.Repeated; t != nil {
				rpsErr.add(x, s.RequestsPerSecond, t.RequestsPerSecondCI95)
				p99Err.add(x, t.P99Ms, t.P99MsCI95)
				if t.RequestsPerSecondCI95 != nil {
					maxRPS = max(maxRPS, t.RequestsPerSecondCI95[1])
				}
			}
		}
		label := se.Label
		if se.Stop != nil {
			label += fmt.Sprintf(" (stopped at c=%d)", se.Stop.Concurrency)
		}
		var thumbs []plot.Thumbnailer
		for k, pts := range []plotter.XYs{rps, p99} {
			line, marks, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, nil, fmt.Errorf("report: chart of %q: %w", se.Label, err)
			}
			styleSeries(i, line, marks)
			p := top
			if k == 1 {
				p = bottom
			}
			if len(pts) > 0 {
				p.Add(line, marks)
			}
			// The 95% intervals of trials, as error bars.
			if bars := []errorBars{rpsErr, p99Err}[k]; len(bars.XYs) > 0 {
				eb, err := plotter.NewYErrorBars(bars)
				if err != nil {
					return nil, nil, fmt.Errorf("report: chart of %q: %w", se.Label, err)
				}
				eb.Color, eb.CapWidth = line.Color, vg.Points(5)
				p.Add(eb)
			}
			if k == 0 {
				thumbs = []plot.Thumbnailer{line, marks}
			}
		}
		top.Legend.Add(label, thumbs...)
		if err := addFailRings(top, se.Levels, func(s *stats.Summary) float64 { return s.RequestsPerSecond }); err != nil {
			return nil, nil, err
		}
		if err := addFailRings(bottom, se.Levels, func(s *stats.Summary) float64 { return LatencyOf(s).P99 }); err != nil {
			return nil, nil, err
		}
		anyFailed = anyFailed || slices.ContainsFunc(se.Levels, func(s stats.Summary) bool { return s.Failed > 0 })
	}
	if anyFailed {
		rings, _ := plotter.NewScatter(plotter.XYs{})
		styleRings(rings)
		rings.Radius = vg.Points(3.5) // to fit a legend row
		top.Legend.Add("ringed: a level with failed requests", rings)
	}
	if len(overflowed) > 0 {
		ring, err := plotter.NewScatter(overflowed)
		if err != nil {
			return nil, nil, fmt.Errorf("report: chart: %w", err)
		}
		ring.Shape = draw.RingGlyph{}
		ring.Radius = vg.Points(7)
		ring.Color = color.RGBA{R: 200, A: 255}
		bottom.Add(ring)
		bottom.Legend.Add("listen queue overflowed", ring)
		bottom.Legend.Top, bottom.Legend.Left = true, true
	}
	// Room above the highest line for the legend in the top-left corner.
	if maxRPS > 0 {
		top.Y.Max = maxRPS * (1.15 + 0.06*float64(len(sw.Series)+1))
	}
	top.Legend.Top, top.Legend.Left = true, true
	top.Legend.XOffs, top.Legend.YOffs = vg.Millimeter*3, -vg.Millimeter*2
	return top, bottom, nil
}

// errorBars are the 95% intervals of a series' levels, for
// plotter.NewYErrorBars.
type errorBars struct {
	plotter.XYs
	plotter.YErrors
}

// add adds the interval ci (nil: none) of value v at x.
func (e *errorBars) add(x, v float64, ci []float64) {
	if ci == nil {
		return
	}
	e.XYs = append(e.XYs, plotter.XY{X: x, Y: v})
	e.YErrors = append(e.YErrors, struct{ Low, High float64 }{v - ci[0], ci[1] - v})
}

// styleSeries gives series i its colour (SeriesColor), marker and dash
// pattern: colours first, then dashes once the colours run out.
func styleSeries(i int, line *plotter.Line, marks *plotter.Scatter) {
	// The page's palette (SeriesColor), so that a series has one colour
	// in the PNG, the SVG and the HTML page.
	c := SeriesColor(i)
	line.Color = c
	line.Width = vg.Points(1.5)
	line.Dashes = plotutil.Dashes(i / PaletteSize)
	marks.Color = c
	marks.Shape = plotutil.Shape(i)
	marks.Radius = vg.Points(2.5)
}

// plainTicks are gonum's default ticks with labels in the shortest form
// ("2500", not "2500.00").
type plainTicks struct{}

// Ticks returns the default ticks for min..max with plain labels.
func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}

// CapacityPoint is one step of a capacity search on its chart.
type CapacityPoint struct {
	// Load is the offered load: a rate or a concurrency.
	Load float64
	// P99Ms is the step's 99th percentile in ms.
	P99Ms float64
	// Pass reports that the step met every objective.
	Pass bool
}

// CapacityChart draws a capacity search in format "svg" or "png": the 99th
// percentile (ms) against the offered load, passing steps as filled dots
// and failing ones as crosses, with the p99 objective as a horizontal line
// when boundMs > 0; the latency axis is logarithmic when the highest value
// is more than 20 times the lowest. xLabel names the load's axis.
func CapacityChart(w io.Writer, pts []CapacityPoint, xLabel string, boundMs float64, format string) error {
	p := plot.New()
	p.Title.Text = "backbench capacity: p99 latency against offered load"
	p.X.Label.Text = xLabel
	p.Y.Label.Text = "p99 latency (ms)"
	p.Add(plotter.NewGrid())
	p.Y.Min = 0
	p.X.Min = 0
	p.Y.Tick.Marker = plainTicks{}
	p.X.Tick.Marker = plainTicks{}
	// A log scale when overloaded steps would squash the objective's
	// region into the bottom of the panel.
	lo, hi := boundMs, boundMs
	for _, pt := range pts {
		if lo <= 0 || pt.P99Ms < lo {
			lo = pt.P99Ms
		}
		hi = max(hi, pt.P99Ms)
	}
	logY := lo > 0 && hi > 20*lo
	if logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		p.Y.Min, p.Y.Label.Text = lo/2, "p99 latency (ms, log scale)"
	}
	var pass, fail plotter.XYs
	for _, pt := range pts {
		xy := plotter.XY{X: pt.Load, Y: max(pt.P99Ms, lo/2)}
		if pt.Pass {
			pass = append(pass, xy)
		} else {
			fail = append(fail, xy)
		}
	}
	for i, set := range []plotter.XYs{pass, fail} {
		if len(set) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(set)
		if err != nil {
			return fmt.Errorf("report: capacity chart: %w", err)
		}
		sc.Color = plotutil.DarkColors[1-i] // green passes, red fails
		sc.Radius = vg.Points(3.5)
		sc.Shape = draw.CircleGlyph{}
		if i == 1 {
			sc.Shape = draw.CrossGlyph{}
		}
		p.Add(sc)
		p.Legend.Add([]string{"step passed", "step failed"}[i], sc)
	}
	if boundMs > 0 {
		maxX := 1.0
		for _, pt := range pts {
			maxX = max(maxX, pt.Load)
		}
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: boundMs}, {X: maxX * 1.05, Y: boundMs}})
		if err != nil {
			return fmt.Errorf("report: capacity chart: %w", err)
		}
		l.Color = plotutil.DarkColors[2]
		l.Dashes = plotutil.Dashes(1)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add("objective p99 <= "+strconv.FormatFloat(boundMs, 'f', -1, 64)+" ms", l)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Millimeter*3, -vg.Millimeter*2
	return writeChart(w, [][]*plot.Plot{{p}}, format)
}

// sweepIntervalLabel names the intervals of sw's levels with their real
// confidence: "95% interval", "93.75% interval" (trials.IntervalLabel).
func sweepIntervalLabel(sw *Sweep) string {
	var confs []float64
	for _, se := range sw.Series {
		for k := range se.Levels {
			if s := &se.Levels[k]; s.Repeated != nil && s.RequestsPerSecondCI95 != nil {
				confs = append(confs, trials.MedianConfidence(len(s.Trials)))
			}
		}
	}
	return trials.IntervalLabel(confs...)
}
