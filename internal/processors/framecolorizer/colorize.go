package framecolorizer

import (
	"image"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceFusion's arithmetic around the model (frame_colorizer/core.py prepare_temp_frame,
// merge_color_frame, blend_color_frame), on our RGB frames where FaceFusion holds BGR, each
// OpenCV step as OpenCV 4.6 computes it on the type FaceFusion hands it:
//
//	prepare  cv2.cvtColor BGR2GRAY (8-bit, 15-bit fixed point) then GRAY2RGB; ddcolor: /255,
//	         float RGB2Lab's L with a = b = 0 back through float Lab2RGB (raster.RGBToLabF,
//	         LabToRGBF); cv2.resize to the size, INTER_LINEAR (deoldify on 8 bits, ddcolor on
//	         float32); planes R, G, B
//	merge    the output's planes resized to the frame (float32 INTER_LINEAR); ddcolor: a, b
//	         under the frame's own float L, float Lab2BGR, ×255 rounded half to even;
//	         deoldify: R, G, B truncated to 8 bits (numpy's astype, wrapping), 8-bit RGB2Lab's
//	         a, b under the frame's blue channel as L (FaceFusion's), 8-bit Lab2BGR
//	blend    cv2.addWeighted(frame, 1 − w, colour, w) with w = frame_colorizer_blend/100, as
//	         OpenCV 4.6 computes it on x86-64: fused (blend8)

// scratch is one worker's buffers, kept between frames.
type scratch struct {
	grey  *raster.Image // the grey frame as RGB (deoldify)
	small *raster.Image // it resized to the model's size
	rs    raster.Resizer
	plane []float32 // one frame-sized plane before resizing
	big   [3][]float32
	ws    align.MaskWorkspace
}

// resizeFloat is cv2.resize of a float32 plane, INTER_LINEAR, as OpenCV 4.6 does it: an exact
// 2× shrink both ways becomes INTER_AREA, the four samples summed left to right, then ×¼ (the
// bilinear weights of ½ round differently, which a model can carry into a level of the output).
func resizeFloat(dst []float32, dw, dh int, src []float32, sw, sh int, ws *align.MaskWorkspace) {
	if sw != 2*dw || sh != 2*dh {
		align.ResizeMask(dst, dw, dh, src, sw, sh, false, ws)
		return
	}
	for y := range dh {
		r0, r1 := src[2*y*sw:][:sw], src[(2*y+1)*sw:][:sw]
		out := dst[y*dw:][:dw]
		for x := range out {
			out[x] = f32(f32(f32(r0[2*x]+r0[2*x+1])+r1[2*x])+r1[2*x+1]) * 0.25
		}
	}
}

func f32(v float32) float32 { return v }

// greyLevel is cv2.cvtColor(COLOR_BGR2GRAY) of one 8-bit pixel: OpenCV 4.6's bit-exact
// weights over 2¹⁵.
func greyLevel(r, g, b uint8) uint8 {
	return uint8((uint32(b)*3735 + uint32(g)*19235 + uint32(r)*9798 + 1<<14) >> 15)
}

// ddcolorGrey is, for each grey level, the R, G, B that ddcolor is fed before resizing: the
// level /255 through float RGB2Lab, its L alone back through Lab2RGB.
var ddcolorGrey = func() (t [256][3]float32) {
	for v := range 256 {
		x := float32(float64(v) / 255)
		l, _, _ := raster.RGBToLabF(x, x, x)
		t[v][0], t[v][1], t[v][2] = raster.LabToRGBF(l, 0, 0)
	}
	return t
}()

// prepare writes frame, made grey as FaceFusion makes it for a model of family typ, into dst:
// three size×size planes, R, G, B.
func (s *scratch) prepare(dst []float32, frame *raster.Image, typ string, size int) {
	w, h := frame.W, frame.H
	n := size * size
	if typ == catalog.DDColor {
		s.plane = grow(s.plane, w*h)
		for c := range 3 {
			for y := range h {
				row := frame.Pix[y*frame.Stride:][:3*w]
				out := s.plane[y*w:][:w]
				for x := range out {
					out[x] = ddcolorGrey[greyLevel(row[3*x], row[3*x+1], row[3*x+2])][c]
				}
			}
			resizeFloat(dst[c*n:][:n], size, size, s.plane, w, h, &s.ws)
		}
		return
	}
	if s.grey == nil || s.grey.W != w || s.grey.H != h {
		s.grey = raster.New(w, h)
	}
	for y := range h {
		row, out := frame.Pix[y*frame.Stride:][:3*w], s.grey.Pix[y*s.grey.Stride:][:3*w]
		for x := 0; x < 3*w; x += 3 {
			v := greyLevel(row[x], row[x+1], row[x+2])
			out[x], out[x+1], out[x+2] = v, v, v
		}
	}
	if s.small == nil || s.small.W != size {
		s.small = raster.New(size, size)
	}
	s.rs.Resize(s.small, image.Rect(0, 0, size, size), s.grey)
	for y := range size {
		row := s.small.Pix[y*s.small.Stride:][:3*size]
		for x := range size {
			for c := range 3 {
				dst[c*n+y*size+x] = float32(row[3*x+c])
			}
		}
	}
}

// merge colours frame in place from out, the model's planes at size×size, and blends the
// colour into it by blend (0..100).
func (s *scratch) merge(frame *raster.Image, out []float32, typ string, size, blend int) {
	w, h := frame.W, frame.H
	planes := 2
	if typ == catalog.DeOldify {
		planes = 3
	}
	n := size * size
	for c := range planes {
		s.big[c] = grow(s.big[c], w*h)
		align.ResizeMask(s.big[c], w, h, out[c*n:][:n], size, size, false, &s.ws)
	}
	fw, ew := align.EnhancerWeights(blend)
	for y := range h {
		row := frame.Pix[y*frame.Stride:][:3*w]
		for x := range w {
			p := row[3*x : 3*x+3 : 3*x+3]
			i := y*w + x
			var c [3]uint8
			if typ == catalog.DDColor {
				l, _, _ := raster.RGBToLabF(unit(p[0]), unit(p[1]), unit(p[2]))
				r, g, b := raster.LabToRGBF(l, s.big[0][i], s.big[1][i])
				c = [3]uint8{to8(r), to8(g), to8(b)}
			} else {
				_, a, b := raster.RGBToLab8(wrap8(s.big[0][i]), wrap8(s.big[1][i]), wrap8(s.big[2][i]))
				c[0], c[1], c[2] = raster.LabToRGB8(p[2], a, b)
			}
			if blend == 100 {
				p[0], p[1], p[2] = c[0], c[1], c[2]
				continue
			}
			for k := range 3 {
				p[k] = blend8(p[k], c[k], fw, ew)
			}
		}
	}
}

// blend8 is cv2.addWeighted(f, fw, c, ew, 0) of one 8-bit sample as OpenCV 4.6 computes it on
// x86-64: f·fw + float32(c·ew) fused, rounded once to single precision, then half to even. The
// unfused float32 sum, a step short of it, misses one sample pair in 500 at a blend of 30 by one
// level (3 and 28 give 11, not 10).
func blend8(f, c uint8, fw, ew float32) uint8 {
	return raster.SaturateU8(float64(float32(math.FMA(float64(f), float64(fw), float64(float32(c)*ew)))))
}

// unit is an 8-bit level as FaceFusion's (frame / 255.0).astype(float32) gives it.
func unit(v uint8) float32 { return float32(float64(v) / 255) }

// to8 is (v * 255.0).round().astype(uint8) of a float32 in 0..1: rounded half to even.
func to8(v float32) uint8 { return uint8(math.RoundToEven(float64(v * 255))) }

// wrap8 is numpy's astype(uint8) of a float32: truncated toward zero, then wrapped modulo 256
// as the conversion through a wider integer does.
func wrap8(v float32) uint8 {
	if v != v {
		return 0
	}
	return uint8(int64(v))
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
