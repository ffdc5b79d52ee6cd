package report

import (
	"bytes"
	"image/png"
	"testing"
)

// TestSweepChartPalette: the PNG of a sweep draws each series in its
// SeriesColor (the colour the HTML page gives it too): pixels of exactly
// that colour are in the image, for every series.
func TestSweepChartPalette(t *testing.T) {
	sw := fixedSweep()
	var b bytes.Buffer
	if err := SweepChart(&b, &sw, "png"); err != nil {
		t.Fatal(err)
	}
	im, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	count := map[[3]uint8]int{}
	r := im.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := im.At(x, y).RGBA()
			count[[3]uint8{uint8(cr >> 8), uint8(cg >> 8), uint8(cb >> 8)}]++
		}
	}
	for i := range sw.Series {
		c := SeriesColor(i)
		if n := count[[3]uint8{c.R, c.G, c.B}]; n < 20 {
			t.Errorf("series %d (%s): %d pixels of its colour %s in the PNG", i, sw.Series[i].Label, n, SeriesColorHex(i))
		}
	}
	if SeriesColorHex(PaletteSize) != SeriesColorHex(0) || SeriesColorHex(1) == SeriesColorHex(0) {
		t.Errorf("the palette does not repeat after %d colours, or repeats early", PaletteSize)
	}
}
