package facemodel

import (
	"math"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Norm says how an 8-bit crop becomes a model's NCHW float input (see catalog.Norm): each
// model's is in its catalog entry.
type Norm = catalog.Norm

// table precomputes the normalised value of every 8-bit sample in float64 then rounds once
// to float32, which is what numpy's float64 arithmetic followed by astype(float32) gives.
func table(n Norm) (t [3][256]float32) {
	for p := range 3 {
		for v := range 256 {
			t[p][v] = float32((float64(v)/n.Scale - n.Mean[p]) / n.Std[p])
		}
	}
	return t
}

// channel is the RGB channel that feeds plane p.
func channel(n Norm, p int) int {
	if n.BGR {
		return 2 - p
	}
	return p
}

// TensorFromImage writes img as one NCHW image (3·H·W floats) into dst.
func TensorFromImage(dst []float32, img *raster.Image, n Norm) {
	t := table(n)
	tensorFromImage(dst, img, n, &t)
}

func tensorFromImage(dst []float32, img *raster.Image, n Norm, t *[3][256]float32) {
	hw := img.W * img.H
	dst = dst[:3*hw]
	for p := range 3 {
		c, lut, plane := channel(n, p), &t[p], dst[p*hw:][:hw]
		for y := range img.H {
			row := img.Pix[y*img.Stride+c:]
			out := plane[y*img.W:][:img.W]
			for x := range out {
				out[x] = lut[row[3*x]]
			}
		}
	}
}

// InvertAffine is cv2.invertAffineTransform's arithmetic, which is also the inversion
// cv2.warpAffine applies to its matrix, in the same order, so the sample positions match
// OpenCV's to the last bit before they go to float32. A singular m gives false.
func InvertAffine(m geom.Affine) (geom.Affine, bool) {
	d := m.A*m.E - m.B*m.D
	if d == 0 {
		return geom.Affine{}, false
	}
	d = 1 / d
	a11, a22, a12, a21 := m.E*d, m.A*d, -m.B*d, -m.D*d
	return geom.Affine{A: a11, B: a12, C: -a11*m.C - a12*m.F, D: a21, E: a22, F: -a21*m.C - a22*m.F}, true
}

// warper samples the way cv2.warpAffine(INTER_LINEAR, BORDER_CONSTANT) does on 8-bit RGB in
// OpenCV 5: the landmarkers' crops and the detector's turned frame, whose outside is black.
// The 5-point crops, with replicated borders, are align.WarpCrop's.
//
// The arithmetic: OpenCV 5
// (FaceFusion 3.8.1 pins opencv-python 5.0): the inverse matrix rounded to float32, source
// positions x·M0 + (y·M1 + M2) by fused multiply-add in float32, the blend of the four
// neighbours by three fused lerps in float32, rounded half to even. (OpenCV ≤ 4.10 used
// 1/32-pixel fixed point instead; crops from the two differ by a level here and there.)
type warper struct {
	m   [6]float32
	src *raster.Image
}

func newWarper(src *raster.Image, frameToCrop geom.Affine) (warper, bool) {
	inv, ok := InvertAffine(frameToCrop)
	return warper{
		m:   [6]float32{float32(inv.A), float32(inv.B), float32(inv.C), float32(inv.D), float32(inv.E), float32(inv.F)},
		src: src,
	}, ok
}

// fma32 is a·b + c rounded once to float64 then to float32: a float32 product is exact in
// float64, so this differs from a true float32 FMA only on rare double-rounding ties.
func fma32(a, b, c float32) float32 { return float32(math.FMA(float64(a), float64(b), float64(c))) }

// floor32 is ⌊v⌋ for the positions a crop can reach (|v| < 2³¹).
func floor32(v float32) int {
	i := int(v)
	if float32(i) > v {
		i--
	}
	return i
}

// row returns OpenCV's per-row position terms y·M1 + M2 and y·M4 + M5.
func (w *warper) row(y int) (mx, my float32) {
	return fma32(float32(y), w.m[1], w.m[2]), fma32(float32(y), w.m[4], w.m[5])
}

// sample writes the RGB sample of crop pixel x on the row whose terms are mx, my.
func (w *warper) sample(x int, mx, my float32, out *[3]uint8) {
	sx, sy := fma32(w.m[0], float32(x), mx), fma32(w.m[3], float32(x), my)
	ix, iy := floor32(sx), floor32(sy)
	ax, ay := sx-float32(ix), sy-float32(iy) // exact: the fractional bits of sx, sy
	src := w.src
	var p [4][3]float32 // p00, p01, p10, p11
	if uint(ix) < uint(src.W-1) && uint(iy) < uint(src.H-1) {
		i := iy*src.Stride + 3*ix
		r0, r1 := src.Pix[i:i+6], src.Pix[i+src.Stride:i+src.Stride+6]
		for c := range 3 {
			p[0][c], p[1][c] = float32(r0[c]), float32(r0[c+3])
			p[2][c], p[3][c] = float32(r1[c]), float32(r1[c+3])
		}
	} else {
		if uint(ix+1) >= uint(src.W+1) || uint(iy+1) >= uint(src.H+1) {
			*out = [3]uint8{}
			return
		}
		for c := range 3 {
			p[0][c], p[1][c] = pixel(src, ix, iy, c), pixel(src, ix+1, iy, c)
			p[2][c], p[3][c] = pixel(src, ix, iy+1, c), pixel(src, ix+1, iy+1, c)
		}
	}
	for c := range 3 {
		v0 := fma32(ax, p[1][c]-p[0][c], p[0][c])
		v1 := fma32(ax, p[3][c]-p[2][c], p[2][c])
		out[c] = raster.SaturateU8(float64(fma32(ay, v1-v0, v0)))
	}
}

// WarpBlack fills dst from src through m, the src→dst map, sampling like OpenCV 5's
// cv2.warpAffine(INTER_LINEAR) with a black border (see warper): dst pixel (x, y) takes src at
// m⁻¹(x, y), pixel centres at integers. A singular m leaves dst black.
func WarpBlack(dst *raster.Image, src *raster.Image, m geom.Affine) {
	w, ok := newWarper(src, m)
	if !ok {
		clear(dst.Pix)
		return
	}
	var px [3]uint8
	for y := range dst.H {
		row := dst.Pix[y*dst.Stride:]
		mx, my := w.row(y)
		for x := range dst.W {
			w.sample(x, mx, my, &px)
			row[3*x], row[3*x+1], row[3*x+2] = px[0], px[1], px[2]
		}
	}
}

// warpTensorBlack is WarpBlack followed by TensorFromImage without the intermediate crop.
func warpTensorBlack(dst []float32, cw, ch int, src *raster.Image, m geom.Affine, n Norm, t *[3][256]float32) {
	hw := cw * ch
	dst = dst[:3*hw]
	w, ok := newWarper(src, m)
	if !ok {
		clear(dst)
		return
	}
	p0, p1, p2 := dst[:hw], dst[hw:2*hw], dst[2*hw:]
	c0, c1, c2 := channel(n, 0), channel(n, 1), channel(n, 2)
	var px [3]uint8
	for y := range ch {
		mx, my := w.row(y)
		for x := range cw {
			w.sample(x, mx, my, &px)
			i := y*cw + x
			p0[i], p1[i], p2[i] = t[0][px[c0]], t[1][px[c1]], t[2][px[c2]]
		}
	}
}

// pixel is channel c of src at (x, y), black outside.
func pixel(src *raster.Image, x, y, c int) float32 {
	if x < 0 || y < 0 || x >= src.W || y >= src.H {
		return 0
	}
	return float32(src.Pix[y*src.Stride+3*x+c])
}
