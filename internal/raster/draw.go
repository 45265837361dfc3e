package raster

import "image"

// Drawing for FaceFusion's face_debugger: filled rectangles and discs, rectangle outlines, the
// edge of a region, and numbers in a small built-in bitmap font (no font file is needed).
// Everything is clipped to the image; nothing allocates.

// RGB is one colour.
type RGB struct{ R, G, B uint8 }

// FillRect paints the pixels of r (half-open), clipped to the image.
func (m *Image) FillRect(r image.Rectangle, c RGB) {
	r = r.Intersect(image.Rect(0, 0, m.W, m.H))
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := m.Pix[y*m.Stride:]
		for x := r.Min.X; x < r.Max.X; x++ {
			row[3*x], row[3*x+1], row[3*x+2] = c.R, c.G, c.B
		}
	}
}

// band is the half-open span of a stroke t pixels thick centred on pixel v: v itself for
// t = 1, then growing one pixel after, one before, and so on.
func band(v, t int) (lo, hi int) {
	t = max(t, 1)
	return v - (t-1)/2, v + t/2 + 1
}

// Dot paints a t×t square centred on pixel (x, y) (band's centring): the brush of a stroke.
func (m *Image) Dot(x, y, t int, c RGB) {
	x0, x1 := band(x, t)
	y0, y1 := band(y, t)
	m.FillRect(image.Rect(x0, y0, x1, y1), c)
}

// FillCircle paints the disc of radius r around pixel (cx, cy): every pixel whose centre is
// within r of it, as OpenCV's filled circle.
func (m *Image) FillCircle(cx, cy, r int, c RGB) {
	for dy := -r; dy <= r; dy++ {
		y := cy + dy
		if y < 0 || y >= m.H {
			continue
		}
		w := 0
		for (w+1)*(w+1)+dy*dy <= r*r {
			w++
		}
		m.FillRect(image.Rect(cx-w, y, cx+w+1, y+1), c)
	}
}

// HLine paints the horizontal stroke from pixel x0 to pixel x1 (both included) on row y, t
// pixels thick.
func (m *Image) HLine(x0, x1, y, t int, c RGB) {
	x0, x1 = min(x0, x1), max(x0, x1)
	lo, hi := band(y, t)
	a, _ := band(x0, t)
	_, b := band(x1, t)
	m.FillRect(image.Rect(a, lo, b, hi), c)
}

// VLine paints the vertical stroke from pixel y0 to pixel y1 (both included) in column x, t
// pixels thick.
func (m *Image) VLine(x, y0, y1, t int, c RGB) {
	y0, y1 = min(y0, y1), max(y0, y1)
	lo, hi := band(x, t)
	a, _ := band(y0, t)
	_, b := band(y1, t)
	m.FillRect(image.Rect(lo, a, hi, b), c)
}

// StrokeRect paints the outline of the rectangle whose corner pixels are (x0, y0) and (x1, y1),
// t pixels thick and centred on its edges, as OpenCV's rectangle with thickness t.
func (m *Image) StrokeRect(x0, y0, x1, y1, t int, c RGB) {
	m.HLine(x0, x1, y0, t, c)
	m.HLine(x0, x1, y1, t, c)
	m.VLine(x0, y0, y1, t, c)
	m.VLine(x1, y0, y1, t, c)
}

// Outline paints the edge of a region t pixels thick: inside is a w×h grid, row-major, whose
// top-left cell is pixel origin of the image (non-zero: inside the region). Every inside cell
// with a 4-neighbour outside the region (or outside the grid) is an edge pixel, and a t×t dot
// is painted on each, as OpenCV draws the contours it finds with thickness t.
func (m *Image) Outline(inside []uint8, w, h int, origin image.Point, t int, c RGB) {
	in := func(x, y int) bool { return x >= 0 && y >= 0 && x < w && y < h && inside[y*w+x] != 0 }
	for y := range h {
		for x := range w {
			if in(x, y) && !(in(x-1, y) && in(x+1, y) && in(x, y-1) && in(x, y+1)) {
				m.Dot(origin.X+x, origin.Y+y, t, c)
			}
		}
	}
}

// glyphs are 5×7 bitmaps, one byte per row with the leftmost pixel in bit 4, for what a
// score needs: digits, the point and the minus sign.
var glyphs = map[rune][7]uint8{
	'0': {0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e},
	'1': {0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e},
	'2': {0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f},
	'3': {0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e},
	'4': {0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02},
	'5': {0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e},
	'6': {0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e},
	'7': {0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08},
	'8': {0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e},
	'9': {0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c},
	'.': {0, 0, 0, 0, 0, 0x0c, 0x0c},
	'-': {0, 0, 0, 0x1f, 0, 0, 0},
}

// The font's cell: a glyph is GlyphW×GlyphH font pixels and text advances GlyphW+1 per rune.
const (
	GlyphW = 5
	GlyphH = 7
)

// Text paints s with its bottom-left corner at pixel (x, y), as OpenCV's putText places text,
// each font pixel a scale×scale square. Runes the font lacks (anything but digits, '.' and
// '-') leave a blank cell.
func (m *Image) Text(x, y int, s string, scale int, c RGB) {
	scale = max(scale, 1)
	top := y - GlyphH*scale + 1
	for _, r := range s {
		g := glyphs[r]
		for row, bits := range g {
			for col := range GlyphW {
				if bits&(0x10>>col) != 0 {
					px, py := x+col*scale, top+row*scale
					m.FillRect(image.Rect(px, py, px+scale, py+scale), c)
				}
			}
		}
		x += (GlyphW + 1) * scale
	}
}
