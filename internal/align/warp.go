package align

import (
	"math"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// WarpCrop fills dst (its W×H is the crop size) with src warped by m, the frame→crop map
// from Estimate: cv2.warpAffine(frame, m, size, INTER_LINEAR, BORDER_REPLICATE). FaceFusion
// asks for INTER_AREA there, which warpAffine treats as INTER_LINEAR.
//
// Crop pixel (x, y) takes the bilinear sample of src at m⁻¹(x, y), pixel centres at
// integers, each of the four neighbours clamped into the frame (replicated border), rounded
// to the nearest integer. OpenCV ≥ 4.11 (FaceFusion pins 5.0) computes these warps in
// floating point too; older OpenCV quantised source positions to 1/32 pixel, which moves a
// value by at most a level or two. A singular m leaves dst black.
func WarpCrop(dst, src *raster.Image, m geom.Affine) {
	inv, ok := m.Invert()
	if !ok || src.W == 0 || src.H == 0 {
		for y := range dst.H {
			clear(dst.Pix[y*dst.Stride:][:3*dst.W])
		}
		return
	}
	xMax, yMax := float64(src.W-1), float64(src.H-1)
	for y := range dst.H {
		row := dst.Pix[y*dst.Stride:][:3*dst.W]
		fy := float64(y)
		// The source positions of a row are a line; the span where the whole 2×2
		// neighbourhood is inside src needs no clamping.
		lo, hi := insideSpan(inv, fy, dst.W, xMax, yMax)
		for x := 0; x < lo; x++ {
			warpEdgePixel(row[3*x:3*x+3:3*x+3], src, inv, float64(x), fy)
		}
		for x := lo; x < hi; x++ {
			u := inv.A*float64(x) + inv.B*fy + inv.C
			v := inv.D*float64(x) + inv.E*fy + inv.F
			x0, y0 := math.Floor(u), math.Floor(v)
			ax, ay := u-x0, v-y0
			i := int(y0)*src.Stride + 3*int(x0)
			p0 := src.Pix[i : i+6 : i+6]
			p1 := src.Pix[i+src.Stride : i+src.Stride+6 : i+src.Stride+6]
			o := row[3*x : 3*x+3 : 3*x+3]
			for c := range 3 {
				t := float64(p0[c]) + ax*(float64(p0[c+3])-float64(p0[c]))
				b := float64(p1[c]) + ax*(float64(p1[c+3])-float64(p1[c]))
				o[c] = raster.SaturateU8(t + ay*(b-t))
			}
		}
		for x := hi; x < dst.W; x++ {
			warpEdgePixel(row[3*x:3*x+3:3*x+3], src, inv, float64(x), fy)
		}
	}
}

// insideSpan is the range [lo, hi) of x in [0, w) whose source position under inv (for
// row y) has floor(u) in [0, xMax) and floor(v) in [0, yMax), so that the 2×2 bilinear
// neighbourhood is inside the image. The bounds from solving the linear inequalities are
// shrunk by one pixel each side and then checked exactly, so rounding cannot let a pixel
// in that would read outside.
func insideSpan(inv geom.Affine, y float64, w int, xMax, yMax float64) (lo, hi int) {
	a, b := 0.0, float64(w-1)
	clip := func(k, c, limit float64) { // need 0 ≤ k·x + c < limit
		switch {
		case k > 0:
			a = math.Max(a, -c/k)
			b = math.Min(b, (limit-c)/k)
		case k < 0:
			a = math.Max(a, (limit-c)/k)
			b = math.Min(b, -c/k)
		default:
			if c < 0 || c >= limit {
				a, b = 1, 0
			}
		}
	}
	clip(inv.A, inv.B*y+inv.C, xMax)
	clip(inv.D, inv.E*y+inv.F, yMax)
	if !(a <= b) {
		return 0, 0
	}
	ok := func(x int) bool {
		u := inv.A*float64(x) + inv.B*y + inv.C
		v := inv.D*float64(x) + inv.E*y + inv.F
		return u >= 0 && u < xMax && v >= 0 && v < yMax
	}
	// Computed positions are monotone in x, so the pixels that pass form an interval:
	// check its shrunk ends, then grow it to the exact ends.
	lo, last := int(math.Ceil(a))+1, int(math.Floor(b))-1
	if lo > last || !ok(lo) || !ok(last) {
		return 0, 0
	}
	for lo > 0 && ok(lo-1) {
		lo--
	}
	for last+1 < w && ok(last+1) {
		last++
	}
	return lo, last + 1
}

// warpEdgePixel is the clamped bilinear sample for crop pixels whose neighbourhood
// crosses the frame's edge.
func warpEdgePixel(o []uint8, src *raster.Image, inv geom.Affine, x, y float64) {
	u := inv.A*x + inv.B*y + inv.C
	v := inv.D*x + inv.E*y + inv.F
	x0, y0 := math.Floor(u), math.Floor(v)
	ax, ay := u-x0, v-y0
	i0, i1 := clampIdx(x0, src.W), clampIdx(x0+1, src.W)
	j0, j1 := clampIdx(y0, src.H), clampIdx(y0+1, src.H)
	r0, r1 := src.Pix[j0*src.Stride:], src.Pix[j1*src.Stride:]
	for c := range 3 {
		p00, p01 := float64(r0[3*i0+c]), float64(r0[3*i1+c])
		p10, p11 := float64(r1[3*i0+c]), float64(r1[3*i1+c])
		t := p00 + ax*(p01-p00)
		b := p10 + ax*(p11-p10)
		o[c] = raster.SaturateU8(t + ay*(b-t))
	}
}

// clampIdx clamps a (floored) coordinate into [0, n); NaN and huge values land on an edge.
func clampIdx(v float64, n int) int {
	if !(v > 0) {
		return 0
	}
	if v >= float64(n-1) {
		return n - 1
	}
	return int(v)
}
