package raster

import "math"

// CVResizer shrinks RGB images as cv2.resize(src, (w, h)) does with its default INTER_LINEAR
// on 8-bit images (OpenCV 4.6's SIMD path, which FaceFusion's restrict_frame takes before every
// detection): 11-bit fixed-point weights from float32 sample positions, a horizontal pass in
// integers, and a vertical pass that keeps the high 16 bits of each product, so the result is
// OpenCV's to the bit, not merely to the nearest level. It keeps its tables between calls; the
// zero value is ready.
type CVResizer struct {
	xi, xa []int32 // per destination column: source byte offset, weights (left, right)
	yi, yb []int32 // per destination row: source row, weights (upper, lower)
	rows   [2][]int32
	key    [4]int
}

// Resize writes src shrunk to w×h (w ≤ src.W, h ≤ src.H) into the top-left w×h of dst.
func (z *CVResizer) Resize(dst *Image, w, h int, src *Image) {
	if w <= 0 || h <= 0 || src.W == 0 || src.H == 0 {
		return
	}
	if key := [4]int{src.W, src.H, w, h}; key != z.key {
		z.xi, z.xa = cvTable(z.xi, z.xa, w, src.W, 3)
		z.yi, z.yb = cvTable(z.yi, z.yb, h, src.H, 1)
		z.rows[0], z.rows[1] = make([]int32, 3*w), make([]int32, 3*w)
		z.key = key
	}
	have := [2]int{-1, -1} // the source row each of z.rows holds
	for y := range h {
		y0, y1 := int(z.yi[y]), min(int(z.yi[y])+1, src.H-1)
		// Shrinking by less than two, consecutive rows share source rows: keep them.
		if have[0] != y0 && have[1] == y0 {
			z.rows[0], z.rows[1], have[0], have[1] = z.rows[1], z.rows[0], have[1], have[0]
		}
		if have[0] != y0 {
			z.hpass(z.rows[0], src, y0, w)
			have[0] = y0
		}
		if have[1] != y1 {
			z.hpass(z.rows[1], src, y1, w)
			have[1] = y1
		}
		r0, r1 := z.rows[0][:3*w], z.rows[1][:3*w]
		b0, b1 := z.yb[2*y], z.yb[2*y+1]
		out := dst.Pix[y*dst.Stride:][:3*w]
		for i := range out {
			v := ((r0[i]>>4)*b0>>16 + (r1[i]>>4)*b1>>16 + 2) >> 2
			out[i] = uint8(min(max(v, 0), 255))
		}
	}
}

// hpass is the horizontal pass of source row sy: each value is the weighted sum of two
// neighbouring samples, in units of 1/2048.
func (z *CVResizer) hpass(dst []int32, src *Image, sy, w int) {
	row := src.Pix[sy*src.Stride:][:3*src.W]
	last := len(row) - 3
	dst = dst[:3*w]
	for x := 0; x < w; x++ {
		i := int(z.xi[x])
		j := min(i+3, last) // the right neighbour, the last column itself at the edge
		a0, a1 := z.xa[2*x], z.xa[2*x+1]
		p, q := row[i:i+3:i+3], row[j:j+3:j+3]
		o := dst[3*x : 3*x+3 : 3*x+3]
		o[0] = int32(p[0])*a0 + int32(q[0])*a1
		o[1] = int32(p[1])*a0 + int32(q[1])*a1
		o[2] = int32(p[2])*a0 + int32(q[2])*a1
	}
}

// cvTable is OpenCV's INTER_LINEAR table for n destination samples from m source samples:
// the source position (d + 0.5)·scale − 0.5 in float32, its floor (times step) and the two
// weights 1 − f and f, each rounded to 1/2048; positions before the first sample or at or after
// the last take that sample alone.
func cvTable(idx, wt []int32, n, m, step int) ([]int32, []int32) {
	idx, wt = append(idx[:0], make([]int32, n)...), append(wt[:0], make([]int32, 2*n)...)
	scale := 1 / (float64(n) / float64(m))
	for d := range n {
		f := float32((float64(d)+0.5)*scale - 0.5)
		s := int(math.Floor(float64(f)))
		f -= float32(s)
		if s < 0 {
			s, f = 0, 0
		}
		if s >= m-1 {
			s, f = m-1, 0
		}
		idx[d] = int32(s * step)
		wt[2*d] = int32(math.RoundToEven(float64((1 - f) * 2048)))
		wt[2*d+1] = int32(math.RoundToEven(float64(f * 2048)))
	}
	return idx, wt
}
