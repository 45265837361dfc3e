package raster

import (
	"math"

	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// WarpTriangles warps src piecewise-affinely onto dst: for every triangle t, the pixels of
// dst whose centres lie in the destination triangle dstPts[t[0..2]] take the bilinear sample
// of src at the matching point of the source triangle srcPts[t[0..2]] (clamped to src's
// edge), and cov is set to 1 there. Pixel ownership follows the top-left rule, so a pixel on
// an edge shared by two triangles is written exactly once. Only dst.Rect is touched; cov
// must have the same Rect. Degenerate or non-finite destination triangles are skipped;
// where triangles overlap (a folded mesh) the later one wins.
func WarpTriangles(dst *FloatImage, cov *Mask, src *Image, srcPts, dstPts []geom.Pt, tris [][3]int) {
	if cov.Rect != dst.Rect {
		panic("raster.WarpTriangles: coverage mask and destination must share one rectangle")
	}
	if src.W == 0 || src.H == 0 {
		return
	}
	for _, t := range tris {
		var d [3]fixPt
		ok := true
		for k := range 3 {
			var okk bool
			d[k], okk = toFix(dstPts[t[k]])
			ok = ok && okk
		}
		if !ok {
			continue
		}
		s3 := [3]geom.Pt{srcPts[t[0]], srcPts[t[1]], srcPts[t[2]]}
		d3 := [3]geom.Pt{dstPts[t[0]], dstPts[t[1]], dstPts[t[2]]}
		area := orient2(d[0], d[1], d[2])
		if area == 0 {
			continue
		}
		if area < 0 {
			d[1], d[2] = d[2], d[1]
		}
		m, ok := geom.Triangle(d3, s3) // destination pixel → source point
		if !ok {
			continue
		}
		warpTriangle(dst, cov, src, d, m)
	}
}

func warpTriangle(dst *FloatImage, cov *Mask, src *Image, d [3]fixPt, m geom.Affine) {
	es := [3]edge{makeEdge(d[0], d[1]), makeEdge(d[1], d[2]), makeEdge(d[2], d[0])}
	r := dst.Rect
	y0 := max(r.Min.Y, clampInt(-floorDiv(-min(d[0].y, d[1].y, d[2].y), sub)))
	y1 := min(r.Max.Y-1, clampInt(floorDiv(max(d[0].y, d[1].y, d[2].y), sub)))
	for y := y0; y <= y1; y++ {
		lo, hi := r.Min.X, r.Max.X-1
		for i := range es {
			lo, hi = es[i].span(y, lo, hi)
		}
		if lo > hi {
			continue
		}
		p := m.Apply(geom.Pt{X: float64(lo), Y: float64(y)})
		u, v := p.X, p.Y
		row := dst.Pix[(y-r.Min.Y)*dst.Stride+3*(lo-r.Min.X):][:3*(hi-lo+1)]
		crow := cov.Pix[(y-r.Min.Y)*cov.Stride+lo-r.Min.X:][:hi-lo+1]
		for i := range crow {
			sampleBilinear(src, float32(u), float32(v), row[3*i:3*i+3:3*i+3])
			crow[i] = 1
			u += m.A // float64 steps: float32 would drift across a wide span
			v += m.D
		}
	}
}

// sampleBilinear writes the bilinear sample of src at (u, v) into out[0:3], clamping the
// coordinates to the image (edge pixels repeat outward).
func sampleBilinear(src *Image, u, v float32, out []float32) {
	wMax, hMax := float32(src.W-1), float32(src.H-1)
	if !(u >= 0) { // also catches NaN
		u = 0
	} else if u > wMax {
		u = wMax
	}
	if !(v >= 0) {
		v = 0
	} else if v > hMax {
		v = hMax
	}
	x0, y0 := int(u), int(v)
	fx, fy := u-float32(x0), v-float32(y0)
	dx, dy := 3, src.Stride
	if x0 == src.W-1 {
		dx = 0
	}
	if y0 == src.H-1 {
		dy = 0
	}
	i := y0*src.Stride + 3*x0
	p := src.Pix[i : i+dy+dx+3]
	q := p[dy:]
	w00, w01, w10, w11 := (1-fx)*(1-fy), fx*(1-fy), (1-fx)*fy, fx*fy
	out[0] = w00*float32(p[0]) + w01*float32(p[dx]) + w10*float32(q[0]) + w11*float32(q[dx])
	out[1] = w00*float32(p[1]) + w01*float32(p[dx+1]) + w10*float32(q[1]) + w11*float32(q[dx+1])
	out[2] = w00*float32(p[2]) + w01*float32(p[dx+2]) + w10*float32(q[2]) + w11*float32(q[dx+2])
}

// FillConvex sets m to v at every pixel whose centre lies inside the convex polygon poly
// (either orientation), with the same fill rule as WarpTriangles. For a polygon that is not
// convex it fills the intersection of the half-planes of its edges. Polygons with zero area
// or non-finite vertices fill nothing.
func FillConvex(m *Mask, poly []geom.Pt, v float32) {
	n := len(poly)
	if n < 3 {
		return
	}
	// Orientation from the shoelace sum, in floating point: it only picks a sign.
	var area float64
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for i, p := range poly {
		q := poly[(i+1)%n]
		area += p.X*q.Y - q.X*p.Y
		ymin, ymax = math.Min(ymin, p.Y), math.Max(ymax, p.Y)
		if _, ok := toFix(p); !ok {
			return
		}
	}
	if area == 0 {
		return
	}
	// The edges are built once; a hull of 68 landmarks fits the stack buffer.
	var buf [128]edge
	es := buf[:0]
	for i := range n {
		a, b := poly[i], poly[(i+1)%n]
		if area < 0 {
			a, b = b, a
		}
		fa, _ := toFix(a)
		fb, _ := toFix(b)
		if fa != fb {
			es = append(es, makeEdge(fa, fb))
		}
	}
	r := m.Rect
	y0 := max(r.Min.Y, int(math.Ceil(math.Max(ymin, -maxCoord)-0.5/sub)))
	y1 := min(r.Max.Y-1, int(math.Floor(math.Min(ymax, maxCoord)+0.5/sub)))
	for y := y0; y <= y1; y++ {
		lo, hi := r.Min.X, r.Max.X-1
		for i := 0; i < len(es) && lo <= hi; i++ {
			lo, hi = es[i].span(y, lo, hi)
		}
		if lo > hi {
			continue
		}
		row := m.Pix[(y-r.Min.Y)*m.Stride+lo-r.Min.X:][:hi-lo+1]
		for i := range row {
			row[i] = v
		}
	}
}
