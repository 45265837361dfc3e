package raster

import (
	"image"
	"math"
)

// Drawing for FaceFusion's face_debugger, pixel for pixel as OpenCV's imgproc draws it with
// the arguments FaceFusion passes (8-connected lines, no antialiasing, no sub-pixel shift):
// cv2.line, cv2.rectangle, filled cv2.circle, and cv2.findContours (RETR_LIST,
// CHAIN_APPROX_NONE) with cv2.drawContours. A stroke t pixels thick is a filled polygon
// around the segment with round caps, so it is wider than t where OpenCV's is. Everything
// is clipped to the image.

// RGB is one colour.
type RGB struct{ R, G, B uint8 }

// OpenCV's fixed point for polygon vertices: 16 fraction bits.
const (
	xyShift = 16
	xyOne   = 1 << xyShift
)

type pt64 struct{ x, y int64 }

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

func (m *Image) put(x, y int, c RGB) {
	if x >= 0 && y >= 0 && x < m.W && y < m.H {
		i := y*m.Stride + 3*x
		m.Pix[i], m.Pix[i+1], m.Pix[i+2] = c.R, c.G, c.B
	}
}

// hline paints row y from x1 to x2 (both included; the caller clips x, this clips y).
func (m *Image) hline(y, x1, x2 int, c RGB) {
	if y < 0 || y >= m.H {
		return
	}
	m.FillRect(image.Rect(x1, y, x2+1, y+1), c)
}

// clipLine clips the segment to the w×h box [0, w−1]×[0, h−1] as OpenCV's clipLine (its
// integer arithmetic, truncating divisions); false when nothing of it is inside.
func clipLine(w, h int64, p1, p2 *pt64) bool {
	if w <= 0 || h <= 0 {
		return false
	}
	right, bottom := w-1, h-1
	code := func(p *pt64) int {
		c := 0
		if p.x < 0 {
			c |= 1
		}
		if p.x > right {
			c |= 2
		}
		if p.y < 0 {
			c |= 4
		}
		if p.y > bottom {
			c |= 8
		}
		return c
	}
	xcode := func(p *pt64) int {
		c := 0
		if p.x < 0 {
			c |= 1
		}
		if p.x > right {
			c |= 2
		}
		return c
	}
	c1, c2 := code(p1), code(p2)
	if c1&c2 == 0 && c1|c2 != 0 {
		if c1&12 != 0 {
			a := int64(0)
			if c1 >= 8 {
				a = bottom
			}
			p1.x += (a - p1.y) * (p2.x - p1.x) / (p2.y - p1.y)
			p1.y = a
			c1 = xcode(p1)
		}
		if c2&12 != 0 {
			a := int64(0)
			if c2 >= 8 {
				a = bottom
			}
			p2.x += (a - p2.y) * (p2.x - p1.x) / (p2.y - p1.y)
			p2.y = a
			c2 = xcode(p2)
		}
		if c1&c2 == 0 && c1|c2 != 0 {
			if c1 != 0 {
				a := int64(0)
				if c1 != 1 {
					a = right
				}
				p1.y += (a - p1.x) * (p2.y - p1.y) / (p2.x - p1.x)
				p1.x = a
				c1 = 0
			}
			if c2 != 0 {
				a := int64(0)
				if c2 != 1 {
					a = right
				}
				p2.y += (a - p2.x) * (p2.y - p1.y) / (p2.x - p1.x)
				p2.x = a
				c2 = 0
			}
		}
	}
	return c1|c2 == 0
}

// line paints the 8-connected segment between two pixels as OpenCV's LineIterator walks it
// (left to right, Bresenham's error term), clipped first.
func (m *Image) line(a, b image.Point, c RGB) {
	p1, p2 := pt64{int64(a.X), int64(a.Y)}, pt64{int64(b.X), int64(b.Y)}
	if a.X < 0 || a.X >= m.W || b.X < 0 || b.X >= m.W || a.Y < 0 || a.Y >= m.H || b.Y < 0 || b.Y >= m.H {
		if !clipLine(int64(m.W), int64(m.H), &p1, &p2) {
			return
		}
	}
	if p2.x < p1.x {
		p1, p2 = p2, p1
	}
	x, y := int(p1.x), int(p1.y)
	dx, dy := int(p2.x-p1.x), int(p2.y-p1.y)
	mx, my, nx, ny := 1, 0, 0, 1 // main-axis and minor-axis steps
	if dy < 0 {
		dy, ny = -dy, -1
	}
	if dy > dx {
		dx, dy = dy, dx
		mx, my, nx, ny = nx, ny, mx, my
	}
	err := dx - 2*dy
	for range dx + 1 {
		m.put(x, y, c)
		if err < 0 {
			err += 2*dx - 2*dy
			x, y = x+mx+nx, y+my+ny
		} else {
			err -= 2 * dy
			x, y = x+mx, y+my
		}
	}
}

// line2 paints the segment between two points in 16.16 fixed point as OpenCV's Line2 (the
// edges of a polygon drawn with a sub-pixel shift).
func (m *Image) line2(p1, p2 pt64, c RGB) {
	if !clipLine(int64(m.W)<<xyShift, int64(m.H)<<xyShift, &p1, &p2) {
		return
	}
	dx, dy := p2.x-p1.x, p2.y-p1.y
	ax, ay := dx, dy
	if ax < 0 {
		ax = -ax
	}
	if ay < 0 {
		ay = -ay
	}
	var xStep, yStep int64
	var ecount int
	if ax > ay {
		if dx < 0 {
			p1, p2 = p2, p1
			dy = -dy
		}
		xStep, yStep = xyOne, (dy<<xyShift)/(ax|1)
		ecount = int((p2.x - p1.x) >> xyShift)
	} else {
		if dy < 0 {
			p1, p2 = p2, p1
			dx = -dx
		}
		xStep, yStep = (dx<<xyShift)/(ay|1), xyOne
		ecount = int((p2.y - p1.y) >> xyShift)
	}
	p1.x += xyOne >> 1
	p1.y += xyOne >> 1
	m.put(int((p2.x+xyOne>>1)>>xyShift), int((p2.y+xyOne>>1)>>xyShift), c)
	if ax > ay {
		x := p1.x >> xyShift
		for ; ecount >= 0; ecount-- {
			m.put(int(x), int(p1.y>>xyShift), c)
			x++
			p1.y += yStep
		}
	} else {
		y := p1.y >> xyShift
		for ; ecount >= 0; ecount-- {
			m.put(int(p1.x>>xyShift), int(y), c)
			p1.x += xStep
			y++
		}
	}
}

// fillConvexPoly fills the convex polygon v (coordinates with shift fraction bits) as
// OpenCV's FillConvexPoly for 8-connected lines: its edges drawn, then scanlines between
// two edge walkers in 16.16 fixed point.
func (m *Image) fillConvexPoly(v []pt64, shift uint, c RGB) {
	n := len(v)
	if n == 0 {
		return
	}
	delta := int64(1) << shift >> 1
	p0 := v[n-1]
	p0.x <<= xyShift - shift
	p0.y <<= xyShift - shift
	xmin, xmax, ymin, ymax := v[0].x, v[0].x, v[0].y, v[0].y
	imin := 0
	for i, p := range v {
		if p.y < ymin {
			ymin, imin = p.y, i
		}
		ymax, xmax, xmin = max(ymax, p.y), max(xmax, p.x), min(xmin, p.x)
		p.x <<= xyShift - shift
		p.y <<= xyShift - shift
		if shift == 0 {
			m.line(image.Pt(int(p0.x>>xyShift), int(p0.y>>xyShift)), image.Pt(int(p.x>>xyShift), int(p.y>>xyShift)), c)
		} else {
			m.line2(p0, p, c)
		}
		p0 = p
	}
	xmin, xmax = (xmin+delta)>>shift, (xmax+delta)>>shift
	ymin, ymax = (ymin+delta)>>shift, (ymax+delta)>>shift
	if n < 3 || xmax < 0 || ymax < 0 || xmin >= int64(m.W) || ymin >= int64(m.H) {
		return
	}
	ymax = min(ymax, int64(m.H-1))
	type edge struct {
		idx, di int
		x, dx   int64
		ye      int
	}
	var e [2]edge
	e[0].idx, e[1].idx = imin, imin
	y := int(ymin)
	e[0].ye, e[1].ye = y, y
	e[0].di, e[1].di = 1, n-1
	e[0].x, e[1].x = -xyOne, -xyOne
	edges := n
	const delta1, delta2 = xyOne >> 1, xyOne >> 1
	for {
		for i := range e {
			if y < e[i].ye {
				continue
			}
			idx0, di := e[i].idx, e[i].di
			idx := idx0 + di
			if idx >= n {
				idx -= n
			}
			for {
				more := edges > 0
				edges-- // OpenCV's `edges-- > 0`: the failing test spends one too
				if !more {
					break
				}
				ty := int((v[idx].y + delta) >> shift)
				if ty > y {
					xs, xe := v[idx0].x<<(xyShift-shift), v[idx].x<<(xyShift-shift)
					e[i].ye = ty
					e[i].dx = ((xe-xs)*2 + int64(ty-y)) / (2 * int64(ty-y))
					e[i].x = xs
					e[i].idx = idx
					break
				}
				idx0 = idx
				idx += di
				if idx >= n {
					idx -= n
				}
			}
		}
		if edges < 0 {
			break
		}
		if y >= 0 {
			l, r := 0, 1
			if e[0].x > e[1].x {
				l, r = 1, 0
			}
			x1 := int((e[l].x + delta1) >> xyShift)
			x2 := int((e[r].x + delta2) >> xyShift)
			if x2 >= 0 && x1 < m.W {
				m.hline(y, max(x1, 0), min(x2, m.W-1), c)
			}
		}
		e[0].x += e[0].dx
		e[1].x += e[1].dx
		y++
		if y > int(ymax) {
			break
		}
	}
}

// FillCircle paints the disc of radius r around pixel (cx, cy) as cv2.circle with thickness
// −1 (OpenCV's midpoint circle, a row span per step).
func (m *Image) FillCircle(cx, cy, r int, c RGB) {
	if r < 0 {
		return
	}
	err, dx, dy, plus, minus := 0, r, 0, 1, 2*r-1
	span := func(y, x1, x2 int) {
		if y < 0 || y >= m.H || x1 >= m.W || x2 < 0 {
			return
		}
		m.hline(y, max(x1, 0), min(x2, m.W-1), c)
	}
	for dx >= dy {
		span(cy-dy, cx-dx, cx+dx)
		span(cy+dy, cx-dx, cx+dx)
		span(cy-dx, cx-dy, cx+dy)
		span(cy+dx, cx-dy, cx+dy)
		dy++
		err += plus
		plus += 2
		mask := 0
		if err > 0 {
			mask = -1
		}
		err -= minus & mask
		dx += mask
		minus -= mask & 2
	}
}

// thickLine is OpenCV's ThickLine for integer end points: one pixel wide, an 8-connected
// line; wider, the rectangle ±t/2 across the segment filled, with a disc of radius
// (t+1)/2 at the start (caps&1) and the end (caps&2).
func (m *Image) thickLine(a, b image.Point, t, caps int, c RGB) {
	if t <= 1 {
		m.line(a, b, c)
		return
	}
	p0 := pt64{int64(a.X) << xyShift, int64(a.Y) << xyShift}
	p1 := pt64{int64(b.X) << xyShift, int64(b.Y) << xyShift}
	dx, dy := float64(a.X-b.X), float64(b.Y-a.Y)
	r := dx*dx + dy*dy
	odd := t & 1
	th := int64(t) << (xyShift - 1)
	if math.Abs(r) > 2.220446049250313e-16 {
		r = (float64(th) + float64(odd)*xyOne*0.5) / math.Sqrt(r)
		dp := pt64{int64(math.RoundToEven(dy * r)), int64(math.RoundToEven(dx * r))}
		m.fillConvexPoly([]pt64{
			{p0.x + dp.x, p0.y + dp.y}, {p0.x - dp.x, p0.y - dp.y},
			{p1.x - dp.x, p1.y - dp.y}, {p1.x + dp.x, p1.y + dp.y},
		}, xyShift, c)
	}
	rad := int((th + xyOne>>1) >> xyShift)
	if caps&1 != 0 {
		m.FillCircle(a.X, a.Y, rad, c)
	}
	if caps&2 != 0 {
		m.FillCircle(b.X, b.Y, rad, c)
	}
}

// Line paints the segment between pixels a and b t pixels thick, as cv2.line (LINE_8).
func (m *Image) Line(a, b image.Point, t int, c RGB) { m.thickLine(a, b, t, 3, c) }

// StrokeRect paints the outline of the rectangle with corners (x0, y0) and (x1, y1), t
// pixels thick, as cv2.rectangle (LINE_8): a closed polyline of its four corners.
func (m *Image) StrokeRect(x0, y0, x1, y1, t int, c RGB) {
	corners := [4]image.Point{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}
	m.polyline(corners[:], image.Point{}, t, c)
}

// polyline paints the closed polyline through pts (offset by origin) t pixels thick, as
// OpenCV's PolyLine: each segment from the previous point, capped at its end.
func (m *Image) polyline(pts []image.Point, origin image.Point, t int, c RGB) {
	if len(pts) == 0 {
		return
	}
	prev := pts[len(pts)-1].Add(origin)
	for _, p := range pts {
		p = p.Add(origin)
		m.thickLine(prev, p, t, 2, c)
		prev = p
	}
}

// DrawContours paints each contour (pixel positions, offset by origin) as a closed polyline
// t pixels thick, as cv2.drawContours(img, contours, -1, colour, t) (LINE_8).
func (m *Image) DrawContours(contours [][]image.Point, origin image.Point, t int, c RGB) {
	for _, ct := range contours {
		m.polyline(ct, origin, t, c)
	}
}
