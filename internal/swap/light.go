package swap

import (
	"image"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Light that falls off over the face (a vignette, a dim grade, a broad shade) scales the
// skin's fine detail and ridges with its brightness: skin in the dim part keeps its texture at
// the light's contrast. The detail, structure and thin-cover tests measure detail against the
// skin's own; where the light is well below the face's best lit skin, they measure it against
// the skin's scaled by that light, so dim skin is neither a flat cover nor, beside it, lit
// skin a busy one. The light is the face's skin luma averaged over a span wider than its
// features and their shading, so a cover's own darkness is not light unless it covers much of
// that span.

const (
	// occLightScale is the σ (share of the face size) the light is averaged over.
	occLightScale = 0.12
	// occLightFull is the share of the best lit skin's light (the occLightTop quantile over
	// the face) down to which the light counts as full: the shading of a face's own relief, a
	// cheek turned from the light, stays within it and is the skin's as the tests knew it.
	occLightFull = 0.45
	occLightTop  = 0.9
	// occLightFloor is the least share of full light that detail is scaled by: darker still,
	// grain and the codec's steps are all the detail left.
	occLightFloor = 0.15
	// occLightGrid is the size (px) of the face on the grid the light is averaged on.
	occLightGrid = 32
)

// lightField puts in s.light (over fr, after s.features) the light at each pixel of the face
// as a share of full light (see occLightFull), at most 1 and at least occLightFloor: the luma
// of the face's pixels (fm > 0.5, outside the features), averaged over occLightScale·size on a
// grid of size/occLightGrid px blocks.
func (s *Swapper) lightField(frame *raster.Image, fm *raster.Mask, size float64, fr image.Rectangle) {
	w, h := fr.Dx(), fr.Dy()
	f := max(1, int(size/occLightGrid))
	gw, gh := (w+f-1)/f, (h+f-1)/f
	gr := image.Rect(0, 0, gw, gh)
	s.lightSum.Reset(gr)
	s.lightN.Reset(gr)
	for y := range h {
		frow := fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		row := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:][:3*w]
		erow := s.excl.Pix[y*w:][:w]
		g := y / f * gw
		for x, v := range frow {
			if v > 0.5 && erow[x] == 0 {
				s.lightSum.Pix[g+x/f] += luma(float32(row[3*x]), float32(row[3*x+1]), float32(row[3*x+2]))
				s.lightN.Pix[g+x/f]++
			}
		}
	}
	// The blocks mostly on the face's skin, whose light ranks it.
	s.stack = s.stack[:0]
	for i, n := range s.lightN.Pix {
		if 2*n > float32(f*f) {
			s.stack = append(s.stack, int32(i))
		}
	}
	sigma := occLightScale * size / float64(f)
	s.chanBlur.Apply(&s.lightSum, sigma)
	s.chanBlur.Apply(&s.lightN, sigma)
	for i, n := range s.lightN.Pix {
		if n > 0.01 {
			s.lightSum.Pix[i] /= n
		} else {
			s.lightSum.Pix[i] = -1 // no face near: no light known
		}
	}
	s.light.Reset(fr)
	s.dim = false
	s.dev = s.dev[:0]
	for _, i := range s.stack {
		s.dev = append(s.dev, s.lightSum.Pix[i])
	}
	if len(s.dev) == 0 {
		for i := range s.light.Pix {
			s.light.Pix[i] = 1
		}
		return
	}
	slices.Sort(s.dev)
	full := occLightFull * max(1, s.dev[int(occLightTop*float64(len(s.dev)-1))])
	for i, l := range s.lightSum.Pix {
		s.lightSum.Pix[i] = 1 // no face near: full light
		if l >= 0 {
			s.lightSum.Pix[i] = max(occLightFloor, min(1, l/full))
			s.dim = s.dim || s.lightSum.Pix[i] < 1
		}
	}
	if !s.dim { // the common case: no fall-off
		for i := range s.light.Pix {
			s.light.Pix[i] = 1
		}
		return
	}
	s.lightRows(f)
}

// lightRows fills s.light (over fr) from the light on lightField's grid of f px blocks (in
// s.lightSum), interpolated between the blocks' centres.
func (s *Swapper) lightRows(f int) {
	w, h := s.light.Rect.Dx(), s.light.Rect.Dy()
	gw, gh := s.lightSum.Rect.Dx(), s.lightSum.Rect.Dy()
	at := func(p, n int) (int, int, float32) {
		u := max(0, min(float64(n-1), (float64(p)-float64(f-1)/2)/float64(f)))
		a := int(u)
		return a, min(n-1, a+1), float32(u - float64(a))
	}
	s.lightCols = s.lightCols[:0]
	for x := range w {
		x0, x1, fx := at(x, gw)
		s.lightCols = append(s.lightCols, lightCol{x0, x1, fx})
	}
	g := s.lightSum.Pix
	for y := range h {
		y0, y1, fy := at(y, gh)
		r0, r1 := g[y0*gw:][:gw], g[y1*gw:][:gw]
		out := s.light.Pix[y*w:][:w]
		for x, c := range s.lightCols {
			top := r0[c.x0] + c.fx*(r0[c.x1]-r0[c.x0])
			bottom := r1[c.x0] + c.fx*(r1[c.x1]-r1[c.x0])
			out[x] = top + fy*(bottom-top)
		}
	}
}

// lightCol is a column's two nearest block centres on lightField's grid and its weight
// between them.
type lightCol struct {
	x0, x1 int
	fx     float32
}

// atLight divides v (a measure over the face's rectangle, as s.light) by the light where it
// falls off, so the skin's detail there counts as it would in full light (see lightField).
func (s *Swapper) atLight(v []float32) {
	if !s.dim {
		return
	}
	for i, l := range s.light.Pix {
		v[i] /= l
	}
}
