package align

import (
	"math"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Layout is a model tensor's axis order for one image.
type Layout uint8

const (
	NCHW Layout = iota // planar: channel c, pixel (x, y) at c·H·W + y·W + x
	NHWC               // interleaved: (y·W + x)·3 + c
)

// Norm is how a model wants pixels: tensor channel c holds (p/255 − Mean[c]) / Std[c],
// where p is the R, G or B sample (B, G, R when BGR is set). Mean and Std are indexed by
// tensor channel, as FaceFusion applies them after its own channel flip.
type Norm struct {
	Mean, Std [3]float64
	BGR       bool
}

// FaceFusion's normalisations, by what uses them.
var (
	// Unit is p/255 in RGB: inswapper_128 input, and the identity for outputs already in 0–1.
	Unit = Norm{Std: [3]float64{1, 1, 1}}
	// Half is (p/255 − 0.5)/0.5 in RGB: hyperswap, ghost, the enhancers, arcface (p/127.5 − 1).
	Half = Norm{Mean: [3]float64{.5, .5, .5}, Std: [3]float64{.5, .5, .5}}
	// ImageNet is the ImageNet mean/std in RGB: simswap_256 input, bisenet face parser.
	ImageNet = Norm{Mean: [3]float64{.485, .456, .406}, Std: [3]float64{.229, .224, .225}}
	// UnitBGR is p/255 in BGR: the xseg occluders (NHWC).
	UnitBGR = Norm{Std: [3]float64{1, 1, 1}, BGR: true}
)

// src is the RGB channel feeding tensor channel c.
func (n Norm) src(c int) int {
	if n.BGR {
		return 2 - c
	}
	return c
}

// table is the value of every 8-bit sample in each tensor channel. FaceFusion computes in
// float64 and casts to float32 at the end; the table does the same, so packing is exact.
func (n Norm) table(t *[3][256]float32) {
	for c := range 3 {
		for p := range 256 {
			t[c][p] = float32((float64(p)/255 - n.Mean[c]) / n.Std[c])
		}
	}
}

// Pack writes crop as one normalised image into dst (3·W·H values, e.g. one batch slot
// of a model's input buffer).
func (n Norm) Pack(dst []float32, crop *raster.Image, l Layout) {
	var t [3][256]float32
	n.table(&t)
	packWith(dst, crop, l, n, &t)
}

// PackHalf is Pack for a float16 input: IEEE binary16 bits, rounded to nearest even.
func (n Norm) PackHalf(dst []uint16, crop *raster.Image, l Layout) {
	var t32 [3][256]float32
	n.table(&t32)
	var t [3][256]uint16
	for c := range t {
		for p := range t[c] {
			t[c][p] = Float16(t32[c][p])
		}
	}
	packWith(dst, crop, l, n, &t)
}

func packWith[T float32 | uint16](dst []T, crop *raster.Image, l Layout, n Norm, t *[3][256]T) {
	w, h := crop.W, crop.H
	plane := w * h
	dst = dst[:3*plane]
	s0, s1, s2 := n.src(0), n.src(1), n.src(2)
	t0, t1, t2 := &t[0], &t[1], &t[2]
	for y := range h {
		row := crop.Pix[y*crop.Stride:][:3*w]
		switch l {
		case NCHW:
			d0 := dst[y*w:][:w]
			d1 := dst[plane+y*w:][:w]
			d2 := dst[2*plane+y*w:][:w]
			for x := range w {
				p := row[3*x : 3*x+3 : 3*x+3]
				d0[x], d1[x], d2[x] = t0[p[s0]], t1[p[s1]], t2[p[s2]]
			}
		default:
			d := dst[3*y*w:][:3*w]
			for x := range w {
				p := row[3*x : 3*x+3 : 3*x+3]
				o := d[3*x : 3*x+3 : 3*x+3]
				o[0], o[1], o[2] = t0[p[s0]], t1[p[s1]], t2[p[s2]]
			}
		}
	}
}

// Unpack turns one model output image (3·W·H values in layout l, channel order n.BGR)
// into dst, which the caller has Reset to the crop's W×H: p = clip(v·Std + Mean, 0, 1)·255,
// back in RGB order. This is FaceFusion's swapper normalize_crop_frame, which keeps the
// result in floating point for paste-back; pass Unit for models whose output is already
// 0–1 (inswapper, simswap) and the input Norm for those that de-normalise (hyperswap,
// ghost: Half). Clipping to [−1, 1] and mapping (v+1)/2, as the enhancers do, is Half.
func (n Norm) Unpack(dst *raster.FloatImage, src []float32, l Layout) {
	w, h := dst.Rect.Dx(), dst.Rect.Dy()
	unpackEach(src, w, h, l, n, func(x, y, c int, v float64) {
		dst.Pix[y*dst.Stride+3*x+c] = float32(v * 255)
	})
}

// UnpackImage is Unpack rounded to 8 bits (half to even, numpy's round), as FaceFusion's
// enhancers do before paste-back. dst's W×H is the crop size.
func (n Norm) UnpackImage(dst *raster.Image, src []float32, l Layout) {
	unpackEach(src, dst.W, dst.H, l, n, func(x, y, c int, v float64) {
		dst.Pix[y*dst.Stride+3*x+c] = raster.SaturateU8(v * 255)
	})
}

// unpackEach calls put with every clipped, de-normalised value in 0–1 and its RGB channel.
// The callback is inlined into a direct call per value; the cost is the multiply-adds.
func unpackEach(src []float32, w, h int, l Layout, n Norm, put func(x, y, c int, v float64)) {
	plane := w * h
	src = src[:3*plane]
	for c := range 3 {
		rgb, mean, std := n.src(c), n.Mean[c], n.Std[c]
		for y := range h {
			for x := range w {
				var v float32
				if l == NCHW {
					v = src[c*plane+y*w+x]
				} else {
					v = src[3*(y*w+x)+c]
				}
				put(x, y, rgb, min(1, max(0, float64(v)*std+mean)))
			}
		}
	}
}

// Float16 is f rounded to IEEE 754 binary16 (round to nearest, ties to even), as bits.
// Values from 65520 up become infinity; NaN stays NaN (quiet).
func Float16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	b &^= 1 << 31
	switch {
	case b > 0x7f800000: // NaN: keep the top payload bits, force quiet
		return sign | 0x7e00 | uint16(b>>13)&0x3ff
	case b >= 0x477ff000: // ≥ 65520 = 65504 + half an ulp: the tie goes to the even "65536", ∞
		return sign | 0x7c00
	case b >= 0x38800000: // ≥ 2⁻¹⁴: a normal half
		r := b - 0x38000000 // rebias the exponent from 127 to 15
		r += 0xfff + (r>>13)&1
		return sign | uint16(r>>13)
	default: // subnormal half (or zero): units of 2⁻²⁴, exact scaling, then round to even
		return sign | uint16(math.RoundToEven(float64(math.Float32frombits(b))*(1<<24)))
	}
}

// Float32 is the value of the binary16 bits h.
func Float32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	e, m := uint32(h>>10)&0x1f, uint32(h&0x3ff)
	switch {
	case e == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | m<<13)
	case e != 0:
		return math.Float32frombits(sign | (e+112)<<23 | m<<13)
	default: // subnormal or zero: exact in float32
		v := float32(m) * (1.0 / (1 << 24))
		return math.Float32frombits(sign | math.Float32bits(v))
	}
}

// HalfToFloat32 converts a float16 model output into dst (len(src) values), so Unpack and
// the mask helpers can read it.
func HalfToFloat32(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = Float32(h)
	}
}

// PackFloat writes the float RGB crop (0–255 values, FaceFusion's swapped crop before any
// rounding) resized to side×side into dst as one normalised image, as FaceFusion prepares
// it for its face parser: cv2.resize (INTER_LINEAR, float32) channel by channel, then
// v/255, − mean, / std, each in float32.
func (n Norm) PackFloat(dst []float32, crop *raster.FloatImage, side int, l Layout, ws *MaskWorkspace) {
	w, h := crop.Rect.Dx(), crop.Rect.Dy()
	plane := side * side
	dst = dst[:3*plane]
	ws.in, ws.out = grow(ws.in, w*h), grow(ws.out, plane)
	for c := range 3 {
		s := n.src(c)
		for y := range h {
			row := crop.Pix[y*crop.Stride:]
			for x := range w {
				ws.in[y*w+x] = row[3*x+s]
			}
		}
		ResizeMask(ws.out, side, side, ws.in, w, h, false, ws)
		mean, std := float32(n.Mean[c]), float32(n.Std[c])
		for i, v := range ws.out {
			v = (v/255 - mean) / std
			if l == NCHW {
				dst[c*plane+i] = v
			} else {
				dst[3*i+c] = v
			}
		}
	}
}
