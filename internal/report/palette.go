package report

import (
	"image/color"
	"strconv"
)

// seriesHex is Okabe and Ito's colour-blind safe palette (yellow last: it
// is the faintest on white), the colours of series in every chart
// backbench draws: the PNG and SVG of a sweep and the HTML page.
var seriesHex = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#B8A800"}

// PaletteSize is the number of colours before they repeat (with a dash).
const PaletteSize = 8

// SeriesColorHex is the colour of series i as "#RRGGBB"; series past
// PaletteSize reuse the colours (the charts dash their lines).
func SeriesColorHex(i int) string { return seriesHex[((i%PaletteSize)+PaletteSize)%PaletteSize] }

// SeriesColor is SeriesColorHex as a colour.
func SeriesColor(i int) color.RGBA {
	h := SeriesColorHex(i)
	v, _ := strconv.ParseUint(h[1:], 16, 32)
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}
