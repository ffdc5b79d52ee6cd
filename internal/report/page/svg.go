package page

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/backbench/backbench/internal/report"
	"github.com/backbench/backbench/internal/trials"
)

// Series colours are report.SeriesColorHex, the palette of the PNG charts
// too. Series past the eighth reuse the colours with a dashed line; every
// series also has its own marker shape.

// shapeNames name the marker shapes, in the order series get them.
var shapeNames = []string{"circle", "square", "triangle", "diamond", "inverted triangle", "plus", "cross", "star"}

// Geometry of a chart, in SVG user units (the image scales to its box).
const (
	svgW, svgH         = 960.0, 400.0
	plotL, plotR       = 78.0, 700.0
	plotT, plotB       = 36.0, 340.0
	legendX            = 720.0
	legendRow          = 20.0
	legendLabelMaxChar = 24
	markerR            = 4.5
	// barW is half a range box's width, capW half an interval whisker's
	// cap.
	barW, capW = 7.0, 5.0
)

// chart is one line chart: a title, axis labels, lines with markers, and
// optional interval bands. The x axis is linear, or a percentile axis on a
// log scale of 1/(1-p) (spectrum).
type chart struct {
	id, title, xLabel, yLabel string
	spectrum                  bool
	lines                     []*line
	// refs are horizontal reference lines (a capacity objective).
	refs []ref
	// marks are vertical lines at notable moments (a timeline's first
	// failure, its slowest request).
	marks []mark
	// levelTicks puts an x tick at each level measured (a log x axis when
	// the levels grow by a factor); logY forces a log y axis, linearY a
	// linear one (a share in percent, where 0 is the news).
	levelTicks, logY, linearY bool
	// confs are the confidences of the intervals drawn (bands and
	// whiskers), for their label (trials.IntervalLabel).
	confs []float64
	// xs are the levels of the whole set, for small multiples.
	xs []float64
	// tickNames label the level ticks of levels that are not numbers
	// (drawn at 1, 2, 3 ...): the name of each x; a level without one is
	// labelled with its number.
	tickNames map[float64]string
	// marksLow puts the marks' labels at the foot of the plot, clear of
	// the high points and the reference lines at its top.
	marksLow bool
	// whiskers says what the whiskers are, in the caption; "" for the
	// 95% interval.
	whiskers string
}

// ref is a horizontal line at y, with its label.
type ref struct {
	y     float64
	label string
}

// mark is a vertical line at x, with its label.
type mark struct {
	x     float64
	label string
}

// line is one series of a chart; style indexes palette and shapes and is
// also the series' key for legend toggling across a section's charts.
type line struct {
	label string
	style int
	pts   []point
	band  []band
	// bars are error bars at a point: an interval (a whisker with
	// caps) or a range, lowest to highest (a shaded box).
	bars []bar
}

// point is one data point; tip is its <title> (exact values).
type point struct {
	x, y   float64
	tip    string
	failed bool
}

// band is an interval at x (of the confidence its chart's confs give).
type band struct{ x, lo, hi float64 }

// clamped returns b with each coordinate clamped to the plot, and whether
// all three could be.
func (b band) clamped() (band, bool) {
	var ok1, ok2, ok3 bool
	b.x, ok1 = clampPlot(b.x)
	b.lo, ok2 = clampPlot(b.lo)
	b.hi, ok3 = clampPlot(b.hi)
	return b, ok1 && ok2 && ok3
}

// bar is an error bar at x from lo to hi: an interval, or with rng a
// range (lowest to highest); tip is its <title>.
type bar struct {
	band
	rng bool
	tip string
}

// empty reports whether the chart has no point at all.
func (c *chart) empty() bool {
	for _, l := range c.lines {
		if len(l.pts) > 0 {
			return false
		}
	}
	return true
}

// spectrumX maps a percentile (50 to 99.999) to the x axis: log10(1/(1-p)).
func spectrumX(p float64) float64 { return math.Log10(1 / (1 - p/100)) }

// spectrumTicks are the percentiles labelled on a spectrum's x axis.
var spectrumTicks = []float64{50, 90, 99, 99.9, 99.99, 99.999}

// plotLimit bounds the magnitude of a value drawn: a saved file may hold
// any float64 (±1e308, whose span or 5% headroom is +Inf and whose scaled
// coordinate is NaN), and nothing measured comes near it.
const plotLimit = 1e100

// clampPlot brings v into ±plotLimit (NaN is reported, for the caller to
// leave the point out).
func clampPlot(v float64) (float64, bool) {
	if math.IsNaN(v) {
		return 0, false
	}
	return math.Min(math.Max(v, -plotLimit), plotLimit), true
}

// sanitize clamps every value of the chart into ±plotLimit and leaves out
// points, bands and reference lines with a NaN, so that every coordinate
// the chart writes is finite.
func (c *chart) sanitize() {
	for _, l := range c.lines {
		pts := l.pts[:0]
		for _, p := range l.pts {
			var okx, oky bool
			if p.x, okx = clampPlot(p.x); !okx {
				continue
			}
			if p.y, oky = clampPlot(p.y); oky {
				pts = append(pts, p)
			}
		}
		l.pts = pts
		bands := l.band[:0]
		for _, bd := range l.band {
			if bd, ok := bd.clamped(); ok {
				bands = append(bands, bd)
			}
		}
		l.band = bands
		bars := l.bars[:0]
		for _, br := range l.bars {
			var ok bool
			if br.band, ok = br.band.clamped(); ok {
				bars = append(bars, br)
			}
		}
		l.bars = bars
	}
	refs := c.refs[:0]
	for _, r := range c.refs {
		var ok bool
		if r.y, ok = clampPlot(r.y); ok {
			refs = append(refs, r)
		}
	}
	c.refs = refs
}

// inBox clamps a coordinate into [lo, hi] (the SVG's box); NaN, which
// sanitize leaves no way to reach, would be drawn at lo.
func inBox(v, lo, hi float64) float64 {
	if math.IsNaN(v) {
		return lo
	}
	return math.Min(math.Max(v, lo), hi)
}

// logSpan is the ratio of highest to lowest positive value past which a
// chart's y axis is logarithmic: two series at 370 req/s must not lie flat
// on zero under one at 60,000.
const logSpan = 20

// yrange is a chart's y extent: the lowest positive and the highest
// value of its points, bands and reference lines.
type yrange struct{ minPos, max float64 }

// yExtent measures the chart's y values.
func (c *chart) yExtent() yrange {
	r := yrange{minPos: math.Inf(1)}
	see := func(v float64) {
		r.max = math.Max(r.max, v)
		if v > 0 {
			r.minPos = math.Min(r.minPos, v)
		}
	}
	for _, l := range c.lines {
		for _, p := range l.pts {
			see(p.y)
		}
		for _, bd := range l.band {
			see(bd.lo)
			see(bd.hi)
		}
		for _, br := range l.bars {
			see(br.lo)
			see(br.hi)
		}
	}
	for _, r := range c.refs {
		see(r.y)
	}
	return r
}

// levelXs are the distinct x values of the chart's points, sorted.
func (c *chart) levelXs() []float64 {
	seen := map[float64]bool{}
	var xs []float64
	for _, l := range c.lines {
		for _, p := range l.pts {
			if !seen[p.x] {
				seen[p.x] = true
				xs = append(xs, p.x)
			}
		}
	}
	sort.Float64s(xs)
	return xs
}

// doubling reports whether levels grow by a factor (1, 2, 4, 8 or 1, 10,
// 100): all positive, spanning 8 times or more, each at least 1.5 times
// the one before. Such levels are drawn on a log x axis, where they are
// evenly spaced.
func doubling(xs []float64) bool {
	if len(xs) < 3 || xs[0] <= 0 || xs[len(xs)-1] < 8*xs[0] {
		return false
	}
	for i := 1; i < len(xs); i++ {
		if xs[i] < 1.5*xs[i-1] {
			return false
		}
	}
	return true
}

// svg writes the chart as a <figure> with an inline <svg>; with more than
// six series (and not a spectrum), as small multiples: one small chart per
// series on the same axes.
func (c *chart) svg(b *strings.Builder) {
	c.sanitize()
	if !c.spectrum && len(c.lines) > maxLines {
		c.multiples(b)
		return
	}
	c.draw(b, c.yExtent(), "chart")
}

// maxLines is the most series one chart draws; more are small multiples.
const maxLines = 6

// multiples writes one small chart per series, all with the y range of
// the whole set so that they compare at a glance.
func (c *chart) multiples(b *strings.Builder) {
	yr := c.yExtent()
	fmt.Fprintf(b, "<div class=\"multiples\" id=\"%s\" aria-label=\"%s\">\n", c.id, esc(c.title+", one chart per series"))
	for i, l := range c.lines {
		sub := *c
		sub.id = fmt.Sprintf("%s-%d", c.id, i)
		sub.title = l.label + ": " + c.title
		sub.lines = []*line{l}
		sub.xs = c.levelXs()
		sub.draw(b, yr, "chart small")
	}
	b.WriteString("</div>\n")
}

// sharedMultiples writes charts as small multiples under one heading
// (title): one y scale and one set of x levels for all, so that they
// compare at a glance, and one legend (legend's lines, named after the
// levels of factor) above them, each chart titled by its own title.
func sharedMultiples(b *strings.Builder, id, title, factor string, charts []*chart, legend []*line) {
	yr := yrange{minPos: math.Inf(1)}
	all := &chart{}
	for _, c := range charts {
		c.sanitize()
		r := c.yExtent()
		yr.minPos, yr.max = math.Min(yr.minPos, r.minPos), math.Max(yr.max, r.max)
		all.lines = append(all.lines, c.lines...)
	}
	xs := all.levelXs()
	fmt.Fprintf(b, "<p class=\"multiples-title\">%s</p>\n", esc(title))
	fmt.Fprintf(b, "<ul class=\"legend-strip\" aria-label=\"%s\">", esc("legend: the lines by "+factor))
	for _, l := range legend {
		fmt.Fprintf(b, "<li class=\"legend-item\" data-series=\"%d\" style=\"color:%s\"><svg viewBox=\"0 0 36 16\" aria-hidden=\"true\"><line class=\"line\" x1=\"2\" y1=\"8\" x2=\"34\" y2=\"8\"%s/><path class=\"pt%s\" d=\"%s\"/></svg>%s</li>",
			l.style, report.SeriesColorHex(l.style), dash(l.style), openShape(l.style), marker(l.style, 18, 8, markerR), esc(l.label))
	}
	b.WriteString("</ul>\n")
	fmt.Fprintf(b, "<div class=\"multiples\" id=\"%s\" aria-label=\"%s\">\n", id, esc(title))
	for _, c := range charts {
		c.xs = xs
		c.draw(b, yr, "chart small")
	}
	b.WriteString("</div>\n")
}

// draw writes the chart with the y extent yr and the figure's class.
func (c *chart) draw(b *strings.Builder, yr yrange, class string) {
	xmin, xmax := math.Inf(1), math.Inf(-1)
	anyFailed := false
	for _, l := range c.lines {
		for _, p := range l.pts {
			xmin, xmax = math.Min(xmin, p.x), math.Max(xmax, p.x)
			anyFailed = anyFailed || p.failed
		}
	}
	xs := c.xs
	if xs == nil {
		xs = c.levelXs()
	}
	if len(xs) > 0 {
		xmin, xmax = math.Min(xmin, xs[0]), math.Max(xmax, xs[len(xs)-1])
	}
	logX := c.levelTicks && doubling(xs)
	var xticks []tick
	var tx func(float64) float64 = func(x float64) float64 { return x }
	if c.spectrum {
		xmin, xmax = spectrumX(50), spectrumX(99.999)
		for _, p := range spectrumTicks {
			xticks = append(xticks, tick{spectrumX(p), fnum(p) + "%"})
		}
	} else {
		if xmin > xmax {
			xmin, xmax = 0, 1
		}
		if logX {
			tx = math.Log10
			xmin, xmax = math.Log10(xmin), math.Log10(xmax)
		}
		if xmin == xmax {
			xmin, xmax = xmin-1, xmax+1
		}
		if c.levelTicks && len(xs) > 0 {
			// A tick at each level measured, thinned to every k-th when
			// they would crowd (the last always shown).
			k := (len(xs) + 11) / 12
			for i, x := range xs {
				if i%k == 0 || i == len(xs)-1 {
					label := fnum(x)
					if n, ok := c.tickNames[x]; ok {
						label = esc(n)
					}
					xticks = append(xticks, tick{tx(x), label})
				}
			}
		} else {
			xticks = niceTicks(xmin, xmax, 8)
		}
		pad := (xmax - xmin) * 0.03
		xmin, xmax = xmin-pad, xmax+pad
	}
	ymax := yr.max
	if ymax <= 0 {
		ymax = 1
	}
	logY := !c.linearY && !math.IsInf(yr.minPos, 1) && (c.logY || ymax > logSpan*yr.minPos)
	var yticks []tick
	var sy func(float64) float64
	if logY {
		lo := math.Pow(10, math.Floor(math.Log10(yr.minPos)))
		hi := math.Pow(10, math.Ceil(math.Log10(ymax)))
		if hi <= lo {
			hi = lo * 10
		}
		for d := lo; d <= hi*1.0001; d *= 10 {
			yticks = append(yticks, tick{d, fnum(d)})
			if hi/lo <= 1000 {
				for _, m := range []float64{2, 5} {
					if d*m < hi {
						yticks = append(yticks, tick{d * m, fnum(d * m)})
					}
				}
			}
		}
		llo, lhi := math.Log10(lo), math.Log10(hi)
		// Zero (nothing completed) has no place on a log axis: it is drawn
		// at the bottom, and its tooltip says the value.
		sy = func(y float64) float64 {
			if y <= 0 {
				return plotB
			}
			return plotB - (math.Log10(y)-llo)/(lhi-llo)*(plotB-plotT)
		}
	} else {
		yticks = niceTicks(0, ymax*1.05, 6)
		ytop := math.Max(yticks[len(yticks)-1].v, ymax)
		sy = func(y float64) float64 { return plotB - y/ytop*(plotB-plotT) }
	}
	rawSx := func(x float64) float64 { return plotL + (x-xmin)/(xmax-xmin)*(plotR-plotL) }
	sx := func(x float64) float64 { return rawSx(tx(x)) }
	if c.spectrum {
		sx = rawSx
	}
	// Clamped to the SVG's box, so that no value, however far out, gives
	// a coordinate outside it (or a non-finite one).
	sx0, sy0 := sx, sy
	sx = func(x float64) float64 { return inBox(sx0(x), 0, svgW) }
	sy = func(y float64) float64 { return inBox(sy0(y), 0, svgH) }
	yLabel := c.yLabel
	if logY {
		yLabel += ", log scale"
	}
	xLabel := c.xLabel
	if logX {
		xLabel += ", log scale"
	}

	fmt.Fprintf(b, "<figure class=\"%s\" id=\"%s\">\n", class, c.id)
	small := strings.Contains(class, "small")
	width := svgW
	if small {
		width = plotR + 24
	}
	fmt.Fprintf(b, "<svg viewBox=\"0 0 %g %g\" role=\"img\" aria-labelledby=\"%s-t\">\n", width, svgH, c.id)
	fmt.Fprintf(b, "<title id=\"%s-t\">%s</title>\n", c.id, esc(c.title))
	b.WriteString("<g class=\"axes\">\n")
	for _, t := range yticks {
		y := sy(t.v)
		fmt.Fprintf(b, "<line class=\"grid\" x1=\"%g\" y1=\"%s\" x2=\"%g\" y2=\"%s\"/><text class=\"tick\" x=\"%g\" y=\"%s\" text-anchor=\"end\">%s</text>\n",
			plotL, f1(y), plotR, f1(y), plotL-6, f1(y+4), t.label)
	}
	for _, t := range xticks {
		x := rawSx(t.v)
		if x < plotL-0.5 || x > plotR+0.5 {
			continue
		}
		fmt.Fprintf(b, "<line class=\"grid\" x1=\"%s\" y1=\"%g\" x2=\"%s\" y2=\"%g\"/><text class=\"tick\" x=\"%s\" y=\"%g\" text-anchor=\"middle\">%s</text>\n",
			f1(x), plotT, f1(x), plotB, f1(x), plotB+16, t.label)
	}
	fmt.Fprintf(b, "<rect class=\"frame\" x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\"/>\n", plotL, plotT, plotR-plotL, plotB-plotT)
	fmt.Fprintf(b, "<text class=\"ctitle\" x=\"%g\" y=\"22\" text-anchor=\"middle\">%s</text>\n", (plotL+plotR)/2, esc(c.title))
	fmt.Fprintf(b, "<text class=\"alabel\" x=\"%g\" y=\"%g\" text-anchor=\"middle\">%s</text>\n", (plotL+plotR)/2, plotB+40, esc(xLabel))
	fmt.Fprintf(b, "<text class=\"alabel\" transform=\"translate(18 %g) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", (plotT+plotB)/2, esc(yLabel))
	b.WriteString("</g>\n")
	for _, r := range c.refs {
		y := f1(sy(r.y))
		fmt.Fprintf(b, "<g class=\"ref\"><title>%s</title><line x1=\"%g\" y1=\"%s\" x2=\"%g\" y2=\"%s\" stroke-dasharray=\"8 5\"/><text x=\"%g\" y=\"%s\" text-anchor=\"end\">%s</text></g>\n",
			esc(r.label), plotL, y, plotR, y, plotR-4, f1(sy(r.y)-5), esc(r.label))
	}
	for i, m := range c.marks {
		x := f1(sx(m.x))
		// A mark's label runs right of its line, or left of it in the
		// plot's right half (where it would run into the legend).
		tx, anchor := sx(m.x)+3, ""
		if sx(m.x) > (plotL+plotR)/2 {
			tx, anchor = sx(m.x)-3, " text-anchor=\"end\""
		}
		ty := plotT + 14 + float64(i)*14
		if c.marksLow {
			ty = plotB - 6 - float64(len(c.marks)-1-i)*14
		}
		fmt.Fprintf(b, "<g class=\"mark\"><title>%s</title><line x1=\"%s\" y1=\"%g\" x2=\"%s\" y2=\"%g\" stroke-dasharray=\"3 3\"/><text x=\"%s\" y=\"%g\"%s>%s</text></g>\n",
			esc(m.label), x, plotT, x, plotB, f1(tx), ty, anchor, esc(m.label))
	}

	for _, l := range c.lines {
		if len(l.pts) == 0 {
			continue
		}
		col := report.SeriesColorHex(l.style)
		fmt.Fprintf(b, "<g class=\"series\" data-series=\"%d\" style=\"color:%s\">\n", l.style, col)
		if len(l.band) > 0 {
			var pts []string
			for _, bd := range l.band {
				pts = append(pts, f1(sx(bd.x))+","+f1(sy(bd.hi)))
			}
			for i := len(l.band) - 1; i >= 0; i-- {
				pts = append(pts, f1(sx(l.band[i].x))+","+f1(sy(l.band[i].lo)))
			}
			fmt.Fprintf(b, "<polygon class=\"band\" points=\"%s\"><title>%s: %s</title></polygon>\n", strings.Join(pts, " "), esc(l.label), esc(trials.IntervalLabel(c.confs...)))
		}
		// Ranges first, under the intervals' whiskers.
		for _, br := range l.bars {
			if !br.rng {
				continue
			}
			x, top, bottom := sx(br.x), sy(br.hi), sy(br.lo)
			if bottom-top < 2 {
				// No spread: a box 2 units high, still seen.
				top, bottom = (top+bottom)/2-1, (top+bottom)/2+1
			}
			fmt.Fprintf(b, "<rect class=\"range\" x=\"%s\" y=\"%s\" width=\"%g\" height=\"%s\"><title>%s</title></rect>\n",
				f1(x-barW), f1(top), 2*barW, f1(bottom-top), esc(br.tip))
		}
		for _, br := range l.bars {
			if br.rng {
				continue
			}
			x, top, bottom := sx(br.x), sy(br.hi), sy(br.lo)
			fmt.Fprintf(b, "<path class=\"ci\" d=\"M%s %sh%gM%s %sV%sM%s %sh%g\"><title>%s</title></path>\n",
				f1(x-capW), f1(top), 2*capW, f1(x), f1(top), f1(bottom), f1(x-capW), f1(bottom), 2*capW, esc(br.tip))
		}
		var pts []string
		for _, p := range l.pts {
			pts = append(pts, f1(sx(p.x))+","+f1(sy(p.y)))
		}
		fmt.Fprintf(b, "<polyline class=\"line\" points=\"%s\"%s/>\n", strings.Join(pts, " "), dash(l.style))
		for _, p := range l.pts {
			x, y := sx(p.x), sy(p.y)
			if p.failed {
				fmt.Fprintf(b, "<circle class=\"fail\" cx=\"%s\" cy=\"%s\" r=\"9\"/>", f1(x), f1(y))
			}
			cls := "pt"
			if p.failed {
				cls = "pt failed"
			}
			fmt.Fprintf(b, "<path class=\"%s%s\" d=\"%s\"><title>%s</title></path>\n", cls, openShape(l.style), marker(l.style, x, y, markerR), esc(p.tip))
		}
		b.WriteString("</g>\n")
	}

	// A small multiple has no legend: its title names its one series.
	lb := b
	if small {
		lb = &strings.Builder{}
	}
	lb.WriteString("<g class=\"legend\">\n")
	y := plotT + 6
	for _, l := range c.lines {
		col := report.SeriesColorHex(l.style)
		label := legendLabel(l.label)
		note := ""
		if len(l.pts) == 0 {
			note = " (no data)"
		}
		fmt.Fprintf(lb, "<g class=\"legend-item\" data-series=\"%d\" style=\"color:%s\"><title>%s%s</title>", l.style, col, esc(l.label), note)
		fmt.Fprintf(lb, "<line class=\"line\" x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\"%s/>", legendX, y, legendX+28, y, dash(l.style))
		fmt.Fprintf(lb, "<path class=\"pt%s\" d=\"%s\"/>", openShape(l.style), marker(l.style, legendX+14, y, markerR))
		fmt.Fprintf(lb, "<text x=\"%g\" y=\"%g\">%s%s</text></g>\n", legendX+36, y+4, esc(label), note)
		y += legendRow
	}
	for _, r := range c.refs {
		fmt.Fprintf(lb, "<g class=\"legend-ref\"><title>%s</title><line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke-dasharray=\"8 5\"/><text x=\"%g\" y=\"%g\">%s</text></g>\n",
			esc(r.label), legendX, y, legendX+28, y, legendX+36, y+4, esc(legendLabel(r.label)))
		y += legendRow
	}
	if anyFailed {
		fmt.Fprintf(lb, "<g class=\"legend-fail\"><circle class=\"fail\" cx=\"%g\" cy=\"%g\" r=\"9\"/><text x=\"%g\" y=\"%g\">ringed: failures or a</text><text x=\"%g\" y=\"%g\">cause (see its tooltip)</text></g>\n",
			legendX+14, y+4, legendX+36, y+2, legendX+36, y+18)
	}
	lb.WriteString("</g>\n")
	b.WriteString("</svg>\n")
	caption := c.title + "."
	for _, l := range c.lines {
		if len(l.band) > 0 {
			caption += " Shaded: the " + trials.IntervalLabel(c.confs...) + " of the trials' median."
			break
		}
	}
	var whiskers, ranges bool
	for _, l := range c.lines {
		for _, br := range l.bars {
			whiskers, ranges = whiskers || !br.rng, ranges || br.rng
		}
	}
	if whiskers && c.whiskers != "" {
		caption += " Whiskers: " + c.whiskers + "."
	} else if whiskers {
		caption += " Whiskers: the " + trials.IntervalLabel(c.confs...) + "."
	}
	if ranges {
		caption += " Shaded boxes: the range, lowest to highest."
	}
	for _, r := range c.refs {
		caption += " Dashed horizontal line: " + r.label + "."
	}
	for _, m := range c.marks {
		caption += " Dotted vertical line: " + m.label + "."
	}
	if anyFailed {
		caption += " Ringed: a level with failed requests or a cause the record names (a full listen queue, a note); its tooltip says which."
	}
	fmt.Fprintf(b, "<figcaption>%s</figcaption>\n</figure>\n", esc(caption))
}

// legendLabel is a legend entry's text: at most legendLabelMaxChar
// characters, 24 characters at 13 px fitting between the legend's x and
// the edge of the image. A longer path keeps its end (the file's name),
// anything else its start; the entry's <title> has it whole.
func legendLabel(label string) string {
	r := []rune(label)
	if len(r) <= legendLabelMaxChar {
		return label
	}
	if head := string(r[:legendLabelMaxChar-1]) + "…"; !strings.Contains(head, "/") {
		return head
	}
	return "…" + string(r[len(r)-legendLabelMaxChar+1:])
}

// tick is an axis tick: its value and label.
type tick struct {
	v     float64
	label string
}

// niceTicks returns about n ticks from lo to at least hi at a step of 1, 2
// or 5 times a power of ten.
func niceTicks(lo, hi float64, n int) []tick {
	span := hi - lo
	if span <= 0 {
		span = 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []tick
	for v := math.Floor(lo/step) * step; v <= hi+step*0.999; v += step {
		v = math.Round(v/step) * step
		ts = append(ts, tick{v, fnum(v)})
		if v >= hi {
			break
		}
	}
	return ts
}

// marker returns the path of series style's marker shape centred on x, y.
func marker(style int, x, y, r float64) string {
	p := func(pts ...float64) string {
		var s strings.Builder
		for i := 0; i < len(pts); i += 2 {
			if i == 0 {
				s.WriteString("M")
			} else {
				s.WriteString("L")
			}
			s.WriteString(f1(x+pts[i]*r) + " " + f1(y+pts[i+1]*r))
		}
		return s.String() + "Z"
	}
	switch style % len(shapeNames) {
	case 0:
		return fmt.Sprintf("M%s %sa%g %g 0 1 0 %g 0a%g %g 0 1 0 %g 0Z", f1(x-r), f1(y), r, r, 2*r, r, r, -2*r)
	case 1:
		return p(-0.9, -0.9, 0.9, -0.9, 0.9, 0.9, -0.9, 0.9)
	case 2:
		return p(0, -1.25, 1.15, 0.8, -1.15, 0.8)
	case 3:
		return p(0, -1.3, 1.3, 0, 0, 1.3, -1.3, 0)
	case 4:
		return p(0, 1.25, 1.15, -0.8, -1.15, -0.8)
	case 5:
		return fmt.Sprintf("M%s %sh%gM%s %sv%g", f1(x-1.3*r), f1(y), 2.6*r, f1(x), f1(y-1.3*r), 2.6*r)
	case 6:
		return fmt.Sprintf("M%s %sl%g %gM%s %sl%g %g", f1(x-r), f1(y-r), 2*r, 2*r, f1(x-r), f1(y+r), 2*r, -2*r)
	default:
		var pts []float64
		for i := range 10 {
			rr := 1.35
			if i%2 == 1 {
				rr = 0.6
			}
			a := float64(i)*math.Pi/5 - math.Pi/2
			pts = append(pts, rr*math.Cos(a), rr*math.Sin(a))
		}
		return p(pts...)
	}
}

// openShape marks the shapes drawn by stroke only (plus, cross).
func openShape(style int) string {
	if s := style % len(shapeNames); s == 5 || s == 6 {
		return " open"
	}
	return ""
}

// dash gives series past the palette's length a dashed line.
func dash(style int) string {
	switch (style / report.PaletteSize) % 3 {
	case 1:
		return " stroke-dasharray=\"8 4\""
	case 2:
		return " stroke-dasharray=\"2 3\""
	}
	return ""
}

// f1 formats a coordinate with one decimal.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// fnum formats a value in its shortest exact form, without exponent for
// ordinary magnitudes.
func fnum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
