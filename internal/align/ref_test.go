package align

// Slow, obviously correct twins of the kernels: one pixel at a time, every neighbour read
// through an explicit border rule, no spans, no tables. The fast kernels must agree.

import (
	"math"
	"sync"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

func clampRef(i, n int) int { return max(0, min(n-1, i)) }

// warpCropRef: crop(x, y) = bilinear(src, m⁻¹(x, y)), neighbours clamped, rounded.
func warpCropRef(dst, src *raster.Image, m geom.Affine) {
	inv, _ := m.Invert()
	for y := range dst.H {
		for x := range dst.W {
			p := inv.Apply(geom.Pt{X: float64(x), Y: float64(y)})
			x0, y0 := math.Floor(p.X), math.Floor(p.Y)
			ax, ay := p.X-x0, p.Y-y0
			for c := range 3 {
				at := func(i, j float64) float64 {
					return float64(src.Pix[clampRef(int(j), src.H)*src.Stride+3*clampRef(int(i), src.W)+c])
				}
				t := at(x0, y0) + ax*(at(x0+1, y0)-at(x0, y0))
				b := at(x0, y0+1) + ax*(at(x0+1, y0+1)-at(x0, y0+1))
				v := t + ay*(b-t)
				dst.Pix[y*dst.Stride+3*x+c] = uint8(math.RoundToEven(math.Max(0, math.Min(255, v))))
			}
		}
	}
}

// pasteBackRef follows FaceFusion's paste_back literally over the whole paste area.
func pasteBackRef(frame, crop8 *raster.Image, cropF *raster.FloatImage, mask []float32, m geom.Affine, blend int) {
	var cw, ch int
	if crop8 != nil {
		cw, ch = crop8.W, crop8.H
	} else {
		cw, ch = cropF.Rect.Dx(), cropF.Rect.Dy()
	}
	area := PasteArea(frame.W, frame.H, cw, ch, m)
	fw, ew := EnhancerWeights(max(blend, 0))
	for Y := area.Min.Y; Y < area.Max.Y; Y++ {
		for X := area.Min.X; X < area.Max.X; X++ {
			x, y := float64(X), float64(Y)
			u, v := m.A*x+m.B*y+m.C, m.D*x+m.E*y+m.F
			x0, y0 := math.Floor(u), math.Floor(v)
			ax, ay := u-x0, v-y0
			mk := func(i, j int) float32 {
				if i < 0 || j < 0 || i >= cw || j >= ch {
					return 0
				}
				return mask[j*cw+i]
			}
			i, j := int(x0), int(y0)
			fx, fy := float32(ax), float32(ay)
			t := mk(i, j) + fx*(mk(i+1, j)-mk(i, j))
			b := mk(i, j+1) + fx*(mk(i+1, j+1)-mk(i, j+1))
			a := min(1, max(0, t+fy*(b-t)))
			for c := range 3 {
				cv := func(i, j int) float64 {
					i, j = clampRef(i, cw), clampRef(j, ch)
					if crop8 != nil {
						return float64(crop8.Pix[j*crop8.Stride+3*i+c])
					}
					return float64(cropF.Pix[j*cropF.Stride+3*i+c])
				}
				t := cv(i, j) + ax*(cv(i+1, j)-cv(i, j))
				b := cv(i, j+1) + ax*(cv(i+1, j+1)-cv(i, j+1))
				cc := t + ay*(b-t)
				f := frame.Pix[Y*frame.Stride+3*X+c]
				var out float64
				if crop8 != nil {
					cc = math.RoundToEven(math.Max(0, math.Min(255, cc)))
					out = float64(float32(f)*(1-a) + float32(cc)*a)
				} else {
					out = float64(float32(f)*(1-a)) + cc*float64(a)
				}
				o := uint8(math.Max(0, math.Min(255, math.Trunc(out))))
				if blend >= 0 {
					o = uint8(math.RoundToEven(float64(float32(f)*fw + float32(o)*ew)))
				}
				frame.Pix[Y*frame.Stride+3*X+c] = o
			}
		}
	}
}

// gaussianBlurRef is the 2-D sum Σ k(i)·k(j)·m(reflect(x+i), reflect(y+j)), float64.
func gaussianBlurRef(m []float32, w, h int, sigma float64) []float32 {
	n := int(math.RoundToEven(sigma*8+1)) | 1
	k := make([]float64, n)
	sum := 0.0
	for i := range k {
		x := float64(i) - float64(n-1)/2
		k[i] = math.Exp(-x * x / (2 * sigma * sigma))
		sum += k[i]
	}
	refl := func(i, n int) int { // … 2 1 | 0 1 … n−1 | n−2 …
		for i < 0 || i >= n {
			if i < 0 {
				i = -i
			}
			if i >= n {
				i = 2*(n-1) - i
			}
		}
		return i
	}
	out := make([]float32, w*h)
	r := n / 2
	for y := range h {
		for x := range w {
			s := 0.0
			for j := -r; j <= r; j++ {
				for i := -r; i <= r; i++ {
					s += k[i+r] / sum * k[j+r] / sum * float64(m[refl(y+j, h)*w+refl(x+i, w)])
				}
			}
			out[y*w+x] = float32(s)
		}
	}
	return out
}

// boxMaskRef builds FaceFusion's box mask as create_box_mask does: a full 2-D array of
// ones, four zeroed border slices, then a 2-D blur.
func boxMaskRef(w, h int, blur float64, pad [4]int) []float32 {
	amount := int(float64(w) * 0.5 * blur)
	area := max(amount/2, 1)
	m := make([]float32, w*h)
	for y := range h {
		for x := range w {
			inside := y >= max(area, int(float64(h)*float64(pad[0])/100)) &&
				y < h-max(area, int(float64(h)*float64(pad[2])/100)) &&
				x >= max(area, int(float64(w)*float64(pad[3])/100)) &&
				x < w-max(area, int(float64(w)*float64(pad[1])/100))
			if inside {
				m[y*w+x] = 1
			}
		}
	}
	if amount > 0 {
		return gaussianBlurRef(m, w, h, float64(amount)*0.25)
	}
	return m
}

// resizeRef: cv2.resize INTER_LINEAR, per output pixel, clamped source positions.
func resizeRef(src []float32, sw, sh, dw, dh int) []float32 {
	pos := func(d, dn, sn int) (int, float64) {
		p := (float64(d)+0.5)*float64(sn)/float64(dn) - 0.5
		if p <= 0 {
			return 0, 0
		}
		if p >= float64(sn-1) {
			return sn - 1, 0
		}
		i := int(math.Floor(p))
		return i, p - float64(i)
	}
	out := make([]float32, dw*dh)
	for y := range dh {
		j, fy := pos(y, dh, sh)
		for x := range dw {
			i, fx := pos(x, dw, sw)
			at := func(i, j int) float64 { return float64(src[min(j, sh-1)*sw+min(i, sw-1)]) }
			top := at(i, j)*(1-fx) + at(i+1, j)*fx
			bot := at(i, j+1)*(1-fx) + at(i+1, j+1)*fx
			out[y*dw+x] = float32(top*(1-fy) + bot*fy)
		}
	}
	return out
}

// float16Ref rounds by search: every finite half's exact value (plus 65536 standing for
// infinity, the next value if the exponent were unbounded) is a candidate; the nearest
// wins, ties to the even bit pattern.
func float16Ref(f float32) uint16 {
	v := float64(f)
	if math.IsNaN(v) {
		return 0x7e00
	}
	sign := uint16(0)
	if math.Signbit(v) {
		sign, v = 0x8000, -v
	}
	best, bestD := uint16(0), math.Inf(1)
	for h, hv := range halfValues() {
		d := math.Abs(hv - v)
		if d < bestD || (d == bestD && h&1 == 0) {
			best, bestD = uint16(h), d
		}
	}
	return sign | best
}

// halfValues are the candidates of float16Ref, indexed by their bits 0…0x7c00, worked out
// once a test binary: the search runs thousands of times, and the 31,745 powers of two each
// time were most of align's test time.
var halfValues = sync.OnceValue(func() []float64 {
	vals := make([]float64, 0x7c00+1)
	for h := range vals {
		e, m := h>>10, float64(h&0x3ff)
		switch {
		case h == 0x7c00:
			vals[h] = 65536
		case e == 0:
			vals[h] = m * math.Pow(2, -24)
		default:
			vals[h] = (1 + m/1024) * math.Pow(2, float64(e-15))
		}
	}
	return vals
})
