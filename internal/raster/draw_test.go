package raster

import (
	"fmt"
	"image"
	"testing"
)

var ink = RGB{R: 200, G: 10, B: 30}

// painted is the set of pixels of m that hold ink.
func painted(m *Image) map[image.Point]bool {
	out := map[image.Point]bool{}
	for y := range m.H {
		for x := range m.W {
			if r, g, b := m.At(x, y); r == ink.R && g == ink.G && b == ink.B {
				out[image.Pt(x, y)] = true
			}
		}
	}
	return out
}

// same compares what a primitive painted with its definition, pixel by pixel.
func same(t *testing.T, what string, m *Image, want func(x, y int) bool) {
	t.Helper()
	got := painted(m)
	bad := 0
	for y := range m.H {
		for x := range m.W {
			if got[image.Pt(x, y)] != want(x, y) && bad < 5 {
				bad++
				t.Errorf("%s: pixel (%d,%d) painted %v, want %v", what, x, y, got[image.Pt(x, y)], want(x, y))
			}
		}
	}
}

func inBand(v, c, t int) bool { lo, hi := band(c, t); return v >= lo && v < hi }

// Each drawing primitive paints exactly the pixels of its definition, written the slow way,
// clipped at the image's edges (shapes cross them here).
func TestDrawMatchesDefinitions(t *testing.T) {
	const w, h = 40, 30
	for _, th := range []int{1, 2, 3, 4} {
		for _, c := range []struct{ x, y, r int }{{10, 12, 0}, {20, 15, 5}, {2, 1, 4}, {38, 28, 7}} {
			m := New(w, h)
			m.FillCircle(c.x, c.y, c.r, ink)
			same(t, fmt.Sprintf("circle %v", c), m, func(x, y int) bool {
				return (x-c.x)*(x-c.x)+(y-c.y)*(y-c.y) <= c.r*c.r
			})
		}
		x0, y0, x1, y1 := 3, 0, 36, 20
		m := New(w, h)
		m.StrokeRect(x1, y1, x0, y0, th, ink) // corners in either order
		same(t, fmt.Sprintf("rectangle, %d thick", th), m, func(x, y int) bool {
			spanX := x >= x0-(th-1)/2 && x <= x1+th/2
			spanY := y >= y0-(th-1)/2 && y <= y1+th/2
			return spanX && (inBand(y, y0, th) || inBand(y, y1, th)) || spanY && (inBand(x, x0, th) || inBand(x, x1, th))
		})

		// The edge of a disc region placed partly outside the image.
		const gw, gh = 20, 16
		region := make([]uint8, gw*gh)
		in := func(x, y int) bool {
			return x >= 0 && y >= 0 && x < gw && y < gh && (x-9)*(x-9)+(y-8)*(y-8) <= 49
		}
		for y := range gh {
			for x := range gw {
				if in(x, y) {
					region[y*gw+x] = 1
				}
			}
		}
		origin := image.Pt(-4, 10)
		m = New(w, h)
		m.Outline(region, gw, gh, origin, th, ink)
		same(t, fmt.Sprintf("outline, %d thick", th), m, func(x, y int) bool {
			for gy := range gh {
				for gx := range gw {
					edge := in(gx, gy) && !(in(gx-1, gy) && in(gx+1, gy) && in(gx, gy-1) && in(gx, gy+1))
					if edge && inBand(x, origin.X+gx, th) && inBand(y, origin.Y+gy, th) {
						return true
					}
				}
			}
			return false
		})
	}

	// Text: "7" at scale 2 is its glyph's bits, each a 2×2 square, bottom-left at (5, 20); a
	// rune the font lacks is a blank cell that still advances.
	m := New(w, h)
	m.Text(5, 20, "x7", 2, ink)
	g := glyphs['7']
	same(t, "text", m, func(x, y int) bool {
		cx, cy := (x-5-(GlyphW+1)*2)/2, (y-(20-GlyphH*2+1))/2
		if x < 5+(GlyphW+1)*2 || cx >= GlyphW || y < 20-GlyphH*2+1 || cy >= GlyphH {
			return false
		}
		return g[cy]&(0x10>>cx) != 0
	})
}

func TestDrawDoesNotAllocate(t *testing.T) {
	m := New(64, 64)
	region := make([]uint8, 16*16)
	region[5*16+5] = 1
	if n := testing.AllocsPerRun(5, func() {
		m.FillCircle(30, 30, 6, ink)
		m.StrokeRect(2, 2, 60, 60, 3, ink)
		m.Outline(region, 16, 16, image.Pt(10, 10), 2, ink)
		m.Text(4, 40, "0.87", 1, ink)
	}); n != 0 {
		t.Errorf("drawing allocates %v times", n)
	}
}
