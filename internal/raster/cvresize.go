package raster

import "math"

// OpenCV 4.6's cv2.resize with INTER_AREA on 8-bit RGB (shrinking) and INTER_CUBIC on float32
// RGB, in its own arithmetic (imgproc/src/resize.cpp), for FaceFusion's match_frame_color and
// normalize_extend_frame. Products are converted to float32 before they are added, so no
// compiler fuses them into an FMA that OpenCV's baseline build does not use.

// CVScratch holds the buffers of ResizeArea, ResizeCubic and GaussianBlur8 from one call to the
// next, so that a worker calling them every frame does not allocate; the zero value is ready.
// One CVScratch serves one goroutine.
type CVScratch struct {
	buf, sum   []float32
	xtab, ytab []areaWeight
	xs         []int
	xa         [][4]float32
	xi         [][4]int32
	i32        []int32
	rows       [][]float32
	made       []bool
	u32        []uint32
	kernel     []uint32 // GaussianBlur8's, for sigma
	sigma      float64
}

func growF32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// ResizeArea is CVScratch.ResizeArea with buffers of its own.
func ResizeArea(dst, src *Image) { new(CVScratch).ResizeArea(dst, src) }

// ResizeCubic is CVScratch.ResizeCubic with buffers of its own.
func ResizeCubic(dst []float32, dw, dh int, src []float32, sw, sh int) {
	new(CVScratch).ResizeCubic(dst, dw, dh, src, sw, sh)
}

// ResizeArea shrinks src into dst (dst no larger than src on either axis) as cv2.resize with
// INTER_AREA: a whole-number ratio on both axes averages each block (the int sum times the
// float 1/area, rounded half to even: resizeAreaFast_); any other ratio weighs each source
// pixel by the part of it a destination cell covers, summed in float32 row by row
// (resizeArea_ with computeResizeAreaTab), then rounded.
func (z *CVScratch) ResizeArea(dst, src *Image) {
	sx, sy := float64(src.W)/float64(dst.W), float64(src.H)/float64(dst.H)
	ix, iy := int(math.Round(sx)), int(math.Round(sy))
	if math.Abs(sx-float64(ix)) < 2.220446049250313e-16 && math.Abs(sy-float64(iy)) < 2.220446049250313e-16 {
		resizeAreaFast(dst, src, ix, iy)
		return
	}
	z.xtab = areaTab(z.xtab[:0], src.W, dst.W, 1/(float64(dst.W)/float64(src.W)))
	z.ytab = areaTab(z.ytab[:0], src.H, dst.H, 1/(float64(dst.H)/float64(src.H)))
	xtab, ytab := z.xtab, z.ytab
	n := dst.W * 3
	z.buf, z.sum = growF32(z.buf, n), growF32(z.sum, n)
	buf, sum := z.buf, z.sum
	clear(sum)
	prev := ytab[0].d
	for _, yt := range ytab {
		clear(buf)
		row := src.Pix[yt.s*src.Stride:]
		for _, xt := range xtab {
			for c := range 3 {
				buf[3*xt.d+c] += float32(float32(row[3*xt.s+c]) * xt.alpha)
			}
		}
		if yt.d != prev {
			out := dst.Pix[prev*dst.Stride:]
			for i := range n {
				out[i] = SaturateU8(float64(sum[i]))
				sum[i] = float32(yt.alpha * buf[i])
			}
			prev = yt.d
		} else {
			for i := range n {
				sum[i] += float32(yt.alpha * buf[i])
			}
		}
	}
	out := dst.Pix[prev*dst.Stride:]
	for i := range n {
		out[i] = SaturateU8(float64(sum[i]))
	}
}

// resizeAreaFast is INTER_AREA at a whole-number ratio ix×iy. At 2×2 OpenCV's
// ResizeAreaFastVec takes over, SIMD lanes and scalar tail alike: (sum + 2) >> 2, ties up
// where the float path's ties go to even.
func resizeAreaFast(dst, src *Image, ix, iy int) {
	if ix == 2 && iy == 2 {
		for y := range dst.H {
			r0, r1 := src.Pix[2*y*src.Stride:], src.Pix[(2*y+1)*src.Stride:]
			out := dst.Pix[y*dst.Stride:]
			for x := range dst.W {
				for c := range 3 {
					i := 6*x + c
					out[3*x+c] = uint8((int(r0[i]) + int(r0[i+3]) + int(r1[i]) + int(r1[i+3]) + 2) >> 2)
				}
			}
		}
		return
	}
	scale := 1 / float32(ix*iy)
	for y := range dst.H {
		for x := range dst.W {
			for c := range 3 {
				sum := 0
				for dy := range iy {
					row := src.Pix[(y*iy+dy)*src.Stride:]
					for dx := range ix {
						sum += int(row[3*(x*ix+dx)+c])
					}
				}
				dst.Pix[y*dst.Stride+3*x+c] = SaturateU8(float64(float32(sum) * scale))
			}
		}
	}
}

// areaWeight is one source pixel's share of a destination cell (OpenCV's DecimateAlpha).
type areaWeight struct {
	d, s  int
	alpha float32
}

// areaTab is OpenCV's computeResizeAreaTab for one axis, ssize source pixels to dsize, appended
// to tab.
func areaTab(tab []areaWeight, ssize, dsize int, scale float64) []areaWeight {
	for dx := range dsize {
		fsx1 := float64(dx) * scale
		fsx2 := fsx1 + scale
		cell := math.Min(scale, float64(ssize)-fsx1)
		sx1, sx2 := int(math.Ceil(fsx1)), int(math.Floor(fsx2))
		sx2 = min(sx2, ssize-1)
		sx1 = min(sx1, sx2)
		if float64(sx1)-fsx1 > 1e-3 {
			tab = append(tab, areaWeight{dx, sx1 - 1, float32((float64(sx1) - fsx1) / cell)})
		}
		for sx := sx1; sx < sx2; sx++ {
			tab = append(tab, areaWeight{dx, sx, float32(1 / cell)})
		}
		if fsx2-float64(sx2) > 1e-3 {
			tab = append(tab, areaWeight{dx, sx2, float32(math.Min(math.Min(fsx2-float64(sx2), 1), cell) / cell)})
		}
	}
	return tab
}

// cubicCoeffs is OpenCV's interpolateCubic (A = −0.75) in float32.
func cubicCoeffs(x float32) [4]float32 {
	const a = float32(-0.75)
	var c [4]float32
	c[0] = float32(float32(float32(float32(a*(x+1))-5*a)*(x+1))+8*a)*(x+1) - 4*a
	c[1] = float32(float32(float32((a+2)*x)-(a+3))*x)*x + 1
	c[2] = float32(float32(float32((a+2)*(1-x))-(a+3))*(1-x))*(1-x) + 1
	c[3] = 1 - c[0] - c[1] - c[2]
	return c
}

// cubicTaps are a destination index's source position (floor) and weights on one axis.
func cubicTaps(d, ssize, dsize int) (int, [4]float32) {
	scale := 1 / (float64(dsize) / float64(ssize))
	f := float32((float64(d)+0.5)*scale - 0.5)
	s := int(math.Floor(float64(f)))
	return s, cubicCoeffs(f - float32(s))
}

// ResizeCubic resizes the sw×sh float32 RGB image src (interleaved) into the dw×dh dst as
// cv2.resize with INTER_CUBIC: each row resized horizontally, its taps clamped to the edge, as
// Σ S·α in tap order, then the four rows weighed alike, their indices clamped to the edge, summed
// from the last row to the first as VResizeCubicVec_32f's nested multiply-adds do.
func (z *CVScratch) ResizeCubic(dst []float32, dw, dh int, src []float32, sw, sh int) {
	if cap(z.xs) < dw {
		z.xs, z.xa = make([]int, dw), make([][4]float32, dw)
	}
	xs, xa := z.xs[:dw], z.xa[:dw]
	for x := range dw {
		xs[x], xa[x] = cubicTaps(x, sw, dw)
	}
	for len(z.rows) < sh { // each source row resized horizontally, made when first used
		z.rows = append(z.rows, nil)
	}
	if cap(z.made) < sh {
		z.made = make([]bool, sh)
	}
	z.made = z.made[:sh]
	clear(z.made)
	rows, made := z.rows, z.made
	hrow := func(y int) []float32 {
		if made[y] {
			return rows[y]
		}
		rows[y] = growF32(rows[y], 3*dw)
		out, in := rows[y], src[3*sw*y:][:3*sw]
		for x := range dw {
			for c := range 3 {
				var v float32
				for j := range 4 {
					sx := min(max(xs[x]-1+j, 0), sw-1)
					v += float32(in[3*sx+c] * xa[x][j])
				}
				out[3*x+c] = v
			}
		}
		made[y] = true
		return out
	}
	for y := range dh {
		sy, b := cubicTaps(y, sh, dh)
		var r [4][]float32
		for k := range 4 {
			r[k] = hrow(min(max(sy-1+k, 0), sh-1))
		}
		out := dst[3*dw*y:][:3*dw]
		for i := range out {
			out[i] = float32(float32(float32(r[3][i]*b[3])+float32(r[2][i]*b[2]))+float32(r[1][i]*b[1])) + float32(r[0][i]*b[0])
		}
	}
}

// ResizeCubic8 is CVScratch.ResizeCubic8 with buffers of its own.
func ResizeCubic8(dst, src *Image) { new(CVScratch).ResizeCubic8(dst, src) }

// cubicShorts are OpenCV's fixed-point cubic weights: × 2048, rounded half to even.
func cubicShorts(c [4]float32) [4]int32 {
	var s [4]int32
	for k := range c {
		s[k] = int32(math.RoundToEven(float64(c[k] * 2048)))
	}
	return s
}

// ResizeCubic8 resizes the 8-bit RGB src into dst as cv2.resize with INTER_CUBIC on 8 bits
// (FaceFusion's edtalk output grown back to its crop): OpenCV's weights as shorts, each row
// resized horizontally in exact integers, its taps clamped to the edge; then the four rows,
// clamped to the edge, weighed as VResizeCubicVec_32s8u does eight values at a time: in
// float32 (weight / 2048², exact), S0·b0 + (S1·b1 + (S2·b2 + S3·b3)), rounded half to even;
// a row's last values past a multiple of eight in integers, (Σ + 2²¹) >> 22.
func (z *CVScratch) ResizeCubic8(dst, src *Image) {
	sw, sh, dw, dh := src.W, src.H, dst.W, dst.H
	if cap(z.xs) < dw {
		z.xs, z.xi = make([]int, dw), make([][4]int32, dw)
	}
	xs, xi := z.xs[:dw], z.xi[:dw]
	for x := range dw {
		var c [4]float32
		xs[x], c = cubicTaps(x, sw, dw)
		xi[x] = cubicShorts(c)
	}
	n := 3 * dw
	if cap(z.i32) < 4*n {
		z.i32 = make([]int32, 4*n)
	}
	// Source row y is resized into slot y mod 4: the four rows a destination row needs are
	// consecutive (or clamped repeats), so they never share a slot.
	held := [4]int{-1, -1, -1, -1}
	hrow := func(y int) []int32 {
		k := y % 4
		out, in := z.i32[k*n:][:n], src.Pix[y*src.Stride:]
		if held[k] == y {
			return out
		}
		held[k] = y
		for x := range dw {
			for c := range 3 {
				var v int32
				for j := range 4 {
					v += int32(in[3*min(max(xs[x]-1+j, 0), sw-1)+c]) * xi[x][j]
				}
				out[3*x+c] = v
			}
		}
		return out
	}
	vec := n - n%8
	for y := range dh {
		sy, c := cubicTaps(y, sh, dh)
		b := cubicShorts(c)
		var r [4][]int32
		var fb [4]float32
		for k := range 4 {
			r[k] = hrow(min(max(sy-1+k, 0), sh-1))
			fb[k] = float32(b[k]) * (1.0 / (2048 * 2048))
		}
		out := dst.Pix[y*dst.Stride:][:n]
		for i := range vec {
			v := float32(float32(r[3][i]) * fb[3])
			v = float32(float32(float32(r[2][i])*fb[2]) + v)
			v = float32(float32(float32(r[1][i])*fb[1]) + v)
			v = float32(float32(float32(r[0][i])*fb[0]) + v)
			out[i] = SaturateU8(math.RoundToEven(float64(v)))
		}
		for i := vec; i < n; i++ {
			v := int64(r[0][i])*int64(b[0]) + int64(r[1][i])*int64(b[1]) + int64(r[2][i])*int64(b[2]) + int64(r[3][i])*int64(b[3])
			out[i] = uint8(min(max((v+1<<21)>>22, 0), 255))
		}
	}
}
