package backgroundremover

import (
	"image"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceFusion's arithmetic around the model (background_remover/core.py), on our RGB frames
// where FaceFusion holds BGR, each step on the type FaceFusion hands it:
//
//	prepare   cv2.resize of the 8-bit frame to the model's size (INTER_LINEAR), R, G, B,
//	          (v/255.0 − mean)/std in double, to float32; corridor_key adds the coarse
//	          green-screen mask 1 − clip(2·(G − max(R, B)), 0, 1) of the frame (float32),
//	          resized on float32
//	mask      u2net_cloth: the argmax over the classes; others the output; clip(0, 1)·255
//	          truncated to 8 bits; resized to the frame on 8 bits (INTER_LINEAR)
//	frame     corridor_key alone: its output frame, clip(v·255, 0, 255) truncated, resized to
//	          the frame on 8 bits, replaces the frame
//	despill   per channel c: v + (min(v, (v[c−1] + v[c+1])·0.5) − v)·α·w[c] in float32, α =
//	          A/255, w = the colour over its largest channel (at least 1), truncated
//	fill      v·(1 − m) + fill·m, m = (1 − mask/255)·A/255, in float32, truncated
//	alpha     the mask, the minimum with the frame's alpha (numpy.minimum.reduce)

// scratch is one worker's buffers, kept between frames.
type scratch struct {
	small, big *raster.Image
	rs         raster.Resizer
	coarse     []float32
	ws         align.MaskWorkspace
}

// prepare writes frame as m's input into dst: 3 (corridor_key 4) planes of m.Size².
func (s *scratch) prepare(dst []float32, frame *raster.Image, m *catalog.Model) {
	size := m.Size
	n := size * size
	s.small = sized(s.small, size, size)
	s.rs.Resize(s.small, image.Rect(0, 0, size, size), frame)
	for y := range size {
		row := s.small.Pix[y*s.small.Stride:][:3*size]
		for x := range size {
			for c := range 3 {
				v := (float64(row[3*x+c])/255 - m.Norm.Mean[c]) / m.Norm.Std[c]
				dst[c*n+y*size+x] = float32(v)
			}
		}
	}
	if m.Type != catalog.RemoverCorridorKey {
		return
	}
	w, h := frame.W, frame.H
	s.coarse = grow(s.coarse, w*h)
	for y := range h {
		row := frame.Pix[y*frame.Stride:][:3*w]
		for x := range w {
			r, g, b := unit(row[3*x]), unit(row[3*x+1]), unit(row[3*x+2])
			bias := g - max(r, b)
			s.coarse[y*w+x] = 1 - min(max(bias*2, 0), 1)
		}
	}
	align.ResizeMask(dst[3*n:][:n], size, size, s.coarse, w, h, false, &s.ws)
}

// unit is an 8-bit level as FaceFusion's astype(float32) / 255.0 gives it.
func unit(v uint8) float32 { return float32(v) / 255 }

// maskOf writes the model's mask (out: its first output, size²; classes planes of scores for
// u2net_cloth) resized to the frame's w×h into dst.
func (s *scratch) maskOf(dst []uint8, out []float32, m *catalog.Model, w, h int) {
	size := m.Size
	n := size * size
	s.small = sized(s.small, size, size)
	for i := range n {
		var v uint8
		if m.Type == catalog.RemoverU2NetCloth {
			if argmax(out, i, n, len(out)/n) > 0 { // classes above 0 clip to 1
				v = 255
			}
		} else {
			v = uint8(min(max(out[i], 0), 1) * 255) // clip, ×255, truncated
		}
		p := s.small.Pix[(i/size)*s.small.Stride+3*(i%size):]
		p[0], p[1], p[2] = v, v, v
	}
	s.big = sized(s.big, w, h)
	s.rs.Resize(s.big, image.Rect(0, 0, w, h), s.small)
	for y := range h {
		row := s.big.Pix[y*s.big.Stride:][:3*w]
		for x := range w {
			dst[y*w+x] = row[3*x]
		}
	}
}

// argmax is numpy's over the classes at pixel i: the first of the largest.
func argmax(out []float32, i, n, classes int) int {
	best := 0
	for k := 1; k < classes; k++ {
		if out[k*n+i] > out[best*n+i] {
			best = k
		}
	}
	return best
}

// replaceFrame is corridor_key's: its output frame (RGB planes of size², 0..1) resized onto
// frame.
func (s *scratch) replaceFrame(frame *raster.Image, out []float32, size int) {
	n := size * size
	s.small = sized(s.small, size, size)
	for i := range n {
		p := s.small.Pix[(i/size)*s.small.Stride+3*(i%size):]
		for c := range 3 {
			p[c] = uint8(min(max(out[c*n+i]*255, 0), 255))
		}
	}
	s.rs.Resize(frame, image.Rect(0, 0, frame.W, frame.H), s.small)
}

// despill is apply_despill_color with the colour RGBA (0..255 each); A = 0 leaves the frame.
func despill(frame *raster.Image, rgba []int) {
	if rgba[3] == 0 {
		return
	}
	alpha := float32(float64(rgba[3]) / 255)
	most := float32(max(rgba[0], rgba[1], rgba[2], 1))
	var w [3]float32
	for c := range 3 {
		w[c] = float32(rgba[c]) / most
	}
	for y := range frame.H {
		row := frame.Pix[y*frame.Stride:][:3*frame.W]
		for x := 0; x < len(row); x += 3 {
			v := [3]float32{float32(row[x]), float32(row[x+1]), float32(row[x+2])}
			for c := range 3 {
				limit := min(v[c], (v[(c+2)%3]+v[(c+1)%3])*0.5)
				row[x+c] = trunc8(v[c] + (limit-v[c])*alpha*w[c])
			}
		}
	}
}

// fill is apply_fill_color with the colour RGBA and the frame's 8-bit mask; A = 0 leaves the
// frame.
func fill(frame *raster.Image, mask []uint8, rgba []int) {
	if rgba[3] == 0 {
		return
	}
	for y := range frame.H {
		row := frame.Pix[y*frame.Stride:][:3*frame.W]
		for x := range frame.W {
			m := f32((1 - float32(mask[y*frame.W+x])/255) * float32(rgba[3]))
			m = f32(m / 255)
			for c := range 3 {
				v := float32(row[3*x+c])
				row[3*x+c] = trunc8(f32(v*(1-m)) + f32(float32(rgba[c])*m))
			}
		}
	}
}

func f32(v float32) float32 { return v }

// trunc8 is numpy's astype(uint8) of a float32 in 0..255: truncated.
func trunc8(v float32) uint8 { return uint8(math.Trunc(float64(min(max(v, 0), 255)))) }

func sized(img *raster.Image, w, h int) *raster.Image {
	if img == nil || img.W != w || img.H != h {
		return raster.New(w, h)
	}
	return img
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
