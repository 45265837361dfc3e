package raster

import (
	"image"
	"math"
	"slices"
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

// canvas is what OpenCV's line and polygon code paints on: a W×H grid and one value.
type canvas interface {
	size() (w, h int)
	// span sets row y from x1 to x2, both included, clipped to the grid.
	span(y, x1, x2 int)
}

// ink is an image and the colour painted on it.
type ink struct {
	m *Image
	c RGB
}

func (k ink) size() (int, int) { return k.m.W, k.m.H }
func (k ink) span(y, x1, x2 int) {
	k.m.FillRect(image.Rect(x1, y, x2+1, y+1), k.c)
}

// plane is a row-major float32 grid (a crop mask) and the value painted on it.
type plane struct {
	pix  []float32
	w, h int
	v    float32
}

func (p plane) size() (int, int) { return p.w, p.h }
func (p plane) span(y, x1, x2 int) {
	if y < 0 || y >= p.h {
		return
	}
	x1, x2 = max(x1, 0), min(x2, p.w-1)
	for x := x1; x <= x2; x++ {
		p.pix[y*p.w+x] = p.v
	}
}

func put[C canvas](m C, x, y int) { m.span(y, x, x) }

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
func line[C canvas](m C, a, b image.Point) {
	w, h := m.size()
	p1, p2 := pt64{int64(a.X), int64(a.Y)}, pt64{int64(b.X), int64(b.Y)}
	if a.X < 0 || a.X >= w || b.X < 0 || b.X >= w || a.Y < 0 || a.Y >= h || b.Y < 0 || b.Y >= h {
		if !clipLine(int64(w), int64(h), &p1, &p2) {
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
		put(m, x, y)
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
func line2[C canvas](m C, p1, p2 pt64) {
	w, h := m.size()
	if !clipLine(int64(w)<<xyShift, int64(h)<<xyShift, &p1, &p2) {
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
	put(m, int((p2.x+xyOne>>1)>>xyShift), int((p2.y+xyOne>>1)>>xyShift))
	if ax > ay {
		x := p1.x >> xyShift
		for ; ecount >= 0; ecount-- {
			put(m, int(x), int(p1.y>>xyShift))
			x++
			p1.y += yStep
		}
	} else {
		y := p1.y >> xyShift
		for ; ecount >= 0; ecount-- {
			put(m, int(p1.x>>xyShift), int(y))
			p1.x += xStep
			y++
		}
	}
}

// fillConvexPoly fills the convex polygon v (coordinates with shift fraction bits) as
// OpenCV's FillConvexPoly for 8-connected lines: its edges drawn, then scanlines between
// two edge walkers in 16.16 fixed point.
func fillConvexPoly[C canvas](m C, v []pt64, shift uint) {
	w, h := m.size()
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
			line(m, image.Pt(int(p0.x>>xyShift), int(p0.y>>xyShift)), image.Pt(int(p.x>>xyShift), int(p.y>>xyShift)))
		} else {
			line2(m, p0, p)
		}
		p0 = p
	}
	xmin, xmax = (xmin+delta)>>shift, (xmax+delta)>>shift
	ymin, ymax = (ymin+delta)>>shift, (ymax+delta)>>shift
	if n < 3 || xmax < 0 || ymax < 0 || xmin >= int64(w) || ymin >= int64(h) {
		return
	}
	ymax = min(ymax, int64(h-1))
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
			if x2 >= 0 && x1 < w {
				m.span(y, max(x1, 0), min(x2, w-1))
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
func (m *Image) FillCircle(cx, cy, r int, c RGB) { fillCircle(ink{m, c}, cx, cy, r) }

func fillCircle[C canvas](m C, cx, cy, r int) {
	if r < 0 {
		return
	}
	w, h := m.size()
	err, dx, dy, plus, minus := 0, r, 0, 1, 2*r-1
	span := func(y, x1, x2 int) {
		if y < 0 || y >= h || x1 >= w || x2 < 0 {
			return
		}
		m.span(y, max(x1, 0), min(x2, w-1))
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
func thickLine[C canvas](m C, a, b image.Point, t, caps int) {
	if t <= 1 {
		line(m, a, b)
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
		fillConvexPoly(m, []pt64{
			{p0.x + dp.x, p0.y + dp.y}, {p0.x - dp.x, p0.y - dp.y},
			{p1.x - dp.x, p1.y - dp.y}, {p1.x + dp.x, p1.y + dp.y},
		}, xyShift)
	}
	rad := int((th + xyOne>>1) >> xyShift)
	if caps&1 != 0 {
		fillCircle(m, a.X, a.Y, rad)
	}
	if caps&2 != 0 {
		fillCircle(m, b.X, b.Y, rad)
	}
}

// Line paints the segment between pixels a and b t pixels thick, as cv2.line (LINE_8).
func (m *Image) Line(a, b image.Point, t int, c RGB) { thickLine(ink{m, c}, a, b, t, 3) }

// StrokeRect paints the outline of the rectangle with corners (x0, y0) and (x1, y1), t
// pixels thick, as cv2.rectangle (LINE_8): a closed polyline of its four corners.
func (m *Image) StrokeRect(x0, y0, x1, y1, t int, c RGB) {
	corners := [4]image.Point{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}
	polyline(ink{m, c}, corners[:], image.Point{}, t)
}

// polyline paints the closed polyline through pts (offset by origin) t pixels thick, as
// OpenCV's PolyLine: each segment from the previous point, capped at its end.
func polyline[C canvas](m C, pts []image.Point, origin image.Point, t int) {
	if len(pts) == 0 {
		return
	}
	prev := pts[len(pts)-1].Add(origin)
	for _, p := range pts {
		p = p.Add(origin)
		thickLine(m, prev, p, t, 2)
		prev = p
	}
}

// DrawContours paints each contour (pixel positions, offset by origin) as a closed polyline
// t pixels thick, as cv2.drawContours(img, contours, -1, colour, t) (LINE_8).
func (m *Image) DrawContours(contours [][]image.Point, origin image.Point, t int, c RGB) {
	for _, ct := range contours {
		polyline(ink{m, c}, ct, origin, t)
	}
}

// FillConvexPolyMask sets the w×h mask's pixels inside the convex polygon pts (pixel
// positions, in order around it) to v, as cv2.fillConvexPoly on a float32 image (LINE_8).
func FillConvexPolyMask(mask []float32, w, h int, pts []image.Point, v float32) {
	var buf [72]pt64
	vs := buf[:0]
	for _, p := range pts {
		vs = append(vs, pt64{int64(p.X), int64(p.Y)})
	}
	fillConvexPoly(plane{mask[:w*h], w, h, v}, vs, 0)
}

// ConvexHull appends to out the corners of the convex hull of pts, in order around it, as
// cv2.convexHull gives them for integer points: no point on an edge between two corners
// (which would change the edges fillConvexPoly draws).
func ConvexHull(out, pts []image.Point) []image.Point {
	var buf [72]image.Point
	p := append(buf[:0], pts...)
	slices.SortFunc(p, func(a, b image.Point) int {
		if a.X != b.X {
			return a.X - b.X
		}
		return a.Y - b.Y
	})
	p = slices.Compact(p)
	if len(p) < 3 {
		return append(out, p...)
	}
	cross := func(o, a, b image.Point) int {
		return (a.X-o.X)*(b.Y-o.Y) - (a.Y-o.Y)*(b.X-o.X)
	}
	start := len(out)
	for _, q := range p { // lower chain
		for len(out)-start >= 2 && cross(out[len(out)-2], out[len(out)-1], q) <= 0 {
			out = out[:len(out)-1]
		}
		out = append(out, q)
	}
	lower := len(out)
	for i := len(p) - 2; i >= 0; i-- { // upper chain
		q := p[i]
		for len(out)-lower >= 1 && cross(out[len(out)-2], out[len(out)-1], q) <= 0 {
			out = out[:len(out)-1]
		}
		out = append(out, q)
	}
	return out[:len(out)-1] // the last is the first again
}
