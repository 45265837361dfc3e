package align

import (
	"image"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// PasteArea is the part of a frameW×frameH frame that a cw×ch crop cut with m (frame→crop)
// covers, as FaceFusion's calculate_paste_area: the corners (0,0), (cw,0), (cw,ch), (0,ch)
// mapped back by m⁻¹, each rounded to the nearest integer (half to even), then their
// extent clipped to the frame. The rounding is cv2.transform's: FaceFusion's corners are an
// integer array, so the mapped corners come back as integers, and its floor and ceil after
// that change nothing. Paste-back writes only here. Empty when m is singular.
func PasteArea(frameW, frameH, cw, ch int, m geom.Affine) image.Rectangle {
	inv, ok := m.Invert()
	if !ok {
		return image.Rectangle{}
	}
	corner := func(x, y int) geom.Pt {
		p := inv.Apply(geom.Pt{X: float64(x), Y: float64(y)})
		return geom.Pt{X: math.RoundToEven(p.X), Y: math.RoundToEven(p.Y)}
	}
	b := geom.Bounds([]geom.Pt{corner(0, 0), corner(cw, 0), corner(cw, ch), corner(0, ch)})
	clampTo := func(v float64, n int) int { return int(math.Max(0, math.Min(float64(n), v))) }
	return image.Rect(clampTo(b.X0, frameW), clampTo(b.Y0, frameH), clampTo(b.X1, frameW), clampTo(b.Y1, frameH))
}

// PasteBack blends an 8-bit crop (an enhancer's output) into frame with its crop-sized
// mask, like FaceFusion's paste_back: inside PasteArea, frame pixel (X, Y) takes the crop
// and mask sampled bilinearly at m(X, Y) — the crop with replicated borders and rounded
// to 8 bits, the mask with zero outside the crop and clipped to 0–1 — and becomes
// trunc(f·(1−a) + c·a) in float32 (numpy's astype(uint8) truncates). Pixels whose mask
// sample is 0 keep their value exactly; pixels outside PasteArea are never written.
// It returns PasteArea.
func PasteBack(frame, crop *raster.Image, mask []float32, m geom.Affine) image.Rectangle {
	return pasteBack(frame, crop, nil, mask, m, -1)
}

// PasteBackFloat is PasteBack for a floating-point crop (Norm.Unpack: a swapper's output,
// which FaceFusion pastes without rounding): trunc(f·(1−a) + c·a) with the crop term in
// float64, as numpy promotes it. crop.Rect must start at (0, 0).
func PasteBackFloat(frame *raster.Image, crop *raster.FloatImage, mask []float32, m geom.Affine) image.Rectangle {
	return pasteBack(frame, nil, crop, mask, m, -1)
}

// PasteBackEnhanced is PasteBack followed by FaceFusion's enhancer blend (see
// EnhancerBlend) in one pass, so no copy of the frame is needed: each pixel becomes
// EnhancerBlend of the original value and the pasted one.
func PasteBackEnhanced(frame, crop *raster.Image, mask []float32, m geom.Affine, blend int) image.Rectangle {
	return pasteBack(frame, crop, nil, mask, m, blend)
}

// EnhancerWeights are the float32 weights cv2.addWeighted applies to the frame and to the
// enhanced frame for --face-enhancer-blend (0–100): FaceFusion computes
// w = 1 − (1 − blend/100) in float64 and calls addWeighted(frame, 1−w, enhanced, w, 0).
func EnhancerWeights(blend int) (frameW, enhancedW float32) {
	w := 1 - (1 - float64(blend)/100)
	return float32(1 - w), float32(w)
}

// EnhancerBlend replaces frame's pixels inside r with FaceFusion's face_enhancer_blend of
// frame and enhanced (the enhanced and pasted frame): round(f·(1−w) + e·w), float32
// arithmetic, half to even, as cv2.addWeighted on 8-bit images. Outside r the two frames
// are equal, where the blend gives back f, so r is PasteArea.
func EnhancerBlend(frame, enhanced *raster.Image, r image.Rectangle, blend int) {
	fw, ew := EnhancerWeights(blend)
	r = r.Intersect(frame.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		f := frame.Pix[y*frame.Stride+3*r.Min.X:][:3*r.Dx()]
		e := enhanced.Pix[y*enhanced.Stride+3*r.Min.X:][:len(f)]
		for i, v := range f {
			f[i] = raster.SaturateU8(float64(float32(v)*fw + float32(e[i])*ew))
		}
	}
}

// pasteBack is the one loop behind the three paste functions: exactly one of crop8 and
// cropF is set; blend < 0 means no enhancer blend.
func pasteBack(frame, crop8 *raster.Image, cropF *raster.FloatImage, mask []float32, m geom.Affine, blend int) image.Rectangle {
	var cw, ch int
	if crop8 != nil {
		cw, ch = crop8.W, crop8.H
	} else {
		cw, ch = cropF.Rect.Dx(), cropF.Rect.Dy()
	}
	area := PasteArea(frame.W, frame.H, cw, ch, m)
	if area.Empty() {
		return area
	}
	mask = mask[:cw*ch]
	fw, ew := EnhancerWeights(max(blend, 0))
	for Y := area.Min.Y; Y < area.Max.Y; Y++ {
		y := float64(Y)
		lo, hi := maskSpan(m, y, area.Min.X, area.Max.X, cw, ch)
		row := frame.Pix[Y*frame.Stride:]
		for X := lo; X < hi; X++ {
			x := float64(X)
			u := m.A*x + m.B*y + m.C
			v := m.D*x + m.E*y + m.F
			x0, y0 := math.Floor(u), math.Floor(v)
			ax, ay := u-x0, v-y0
			a := min(1, max(0, maskSample(mask, cw, ch, int(x0), int(y0), float32(ax), float32(ay))))
			if a == 0 {
				continue // f·1 + c·0 = f: nothing changes
			}
			p := row[3*X : 3*X+3 : 3*X+3]
			var c [3]float64
			if crop8 != nil {
				sample8(&c, crop8, x0, y0, ax, ay)
			} else {
				sampleF(&c, cropF, x0, y0, ax, ay)
			}
			for k := range 3 {
				var out uint8
				if crop8 != nil {
					out = truncU8(float64(float32(p[k])*(1-a) + float32(c[k])*a))
				} else {
					out = truncU8(float64(float32(p[k])*(1-a)) + c[k]*float64(a))
				}
				if blend >= 0 {
					out = raster.SaturateU8(float64(float32(p[k])*fw + float32(out)*ew))
				}
				p[k] = out
			}
		}
	}
	return area
}

// maskSpan narrows [lo, hi) to the pixels of row y whose crop position m(X, y) lies in
// (−1, cw)×(−1, ch), the only ones with a nonzero mask sample. It solves the two linear
// bounds and widens the result by a pixel each side; the loop's own test of the sample
// decides the borderline pixels, so rounding here only costs time, never correctness.
func maskSpan(m geom.Affine, y float64, lo, hi, cw, ch int) (int, int) {
	a, b := float64(lo), float64(hi-1)
	bound := func(k, c float64, n int) { // −1 < k·x + c < n
		switch {
		case k > 0:
			a, b = math.Max(a, (-1-c)/k), math.Min(b, (float64(n)-c)/k)
		case k < 0:
			a, b = math.Max(a, (float64(n)-c)/k), math.Min(b, (-1-c)/k)
		default:
			if c <= -1 || c >= float64(n) {
				a, b = 1, 0
			}
		}
	}
	bound(m.A, m.B*y+m.C, cw)
	bound(m.D, m.E*y+m.F, ch)
	if !(a <= b) {
		return lo, lo
	}
	return max(lo, int(math.Floor(a))-1), min(hi, int(math.Ceil(b))+2)
}

// maskSample is the bilinear mask value at cell (x0, y0) with fractions (ax, ay), reading
// 0 outside the crop (cv2.warpAffine's default constant border).
func maskSample(mask []float32, cw, ch, x0, y0 int, ax, ay float32) float32 {
	if x0 < -1 || x0 >= cw || y0 < -1 || y0 >= ch {
		return 0
	}
	var p00, p01, p10, p11 float32
	if x0 >= 0 && x0+1 < cw && y0 >= 0 && y0+1 < ch {
		i := y0*cw + x0
		p00, p01, p10, p11 = mask[i], mask[i+1], mask[i+cw], mask[i+cw+1]
	} else {
		at := func(x, y int) float32 {
			if x < 0 || x >= cw || y < 0 || y >= ch {
				return 0
			}
			return mask[y*cw+x]
		}
		p00, p01, p10, p11 = at(x0, y0), at(x0+1, y0), at(x0, y0+1), at(x0+1, y0+1)
	}
	t := p00 + ax*(p01-p00)
	b := p10 + ax*(p11-p10)
	return t + ay*(b-t)
}

// sample8 is the bilinear crop colour at cell (x0, y0), replicated borders, rounded to 8
// bits as cv2.warpAffine writes an 8-bit image.
func sample8(c *[3]float64, crop *raster.Image, x0, y0, ax, ay float64) {
	i0, i1 := clampIdx(x0, crop.W), clampIdx(x0+1, crop.W)
	r0, r1 := crop.Pix[clampIdx(y0, crop.H)*crop.Stride:], crop.Pix[clampIdx(y0+1, crop.H)*crop.Stride:]
	for k := range 3 {
		p00, p01 := float64(r0[3*i0+k]), float64(r0[3*i1+k])
		p10, p11 := float64(r1[3*i0+k]), float64(r1[3*i1+k])
		t := p00 + ax*(p01-p00)
		b := p10 + ax*(p11-p10)
		c[k] = float64(raster.SaturateU8(t + ay*(b-t)))
	}
}

// sampleF is the bilinear colour of a float crop at cell (x0, y0), replicated borders.
func sampleF(c *[3]float64, crop *raster.FloatImage, x0, y0, ax, ay float64) {
	w, h := crop.Rect.Dx(), crop.Rect.Dy()
	i0, i1 := clampIdx(x0, w), clampIdx(x0+1, w)
	r0, r1 := crop.Pix[clampIdx(y0, h)*crop.Stride:], crop.Pix[clampIdx(y0+1, h)*crop.Stride:]
	for k := range 3 {
		p00, p01 := float64(r0[3*i0+k]), float64(r0[3*i1+k])
		p10, p11 := float64(r1[3*i0+k]), float64(r1[3*i1+k])
		t := p00 + ax*(p01-p00)
		b := p10 + ax*(p11-p10)
		c[k] = t + ay*(b-t)
	}
}

// truncU8 is numpy's astype(uint8) for values in range (truncation), saturating outside.
func truncU8(v float64) uint8 {
	if !(v > 0) {
		return 0
	}
	return uint8(min(v, 255))
}
