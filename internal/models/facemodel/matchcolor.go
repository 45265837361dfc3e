package facemodel

import (
	"math"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// ColorMatcher is FaceFusion's vision.match_frame_color with its buffers kept from one call to
// the next (a worker's, every face); the zero value is ready.
type ColorMatcher struct {
	cv         raster.CVScratch
	a, b       *raster.Image
	out, next  *raster.Image
	diff, grow []float32
}

// MatchFrameColor is ColorMatcher.Match with buffers of its own.
func MatchFrameColor(source, target *raster.Image) { new(ColorMatcher).Match(source, target) }

// Match is FaceFusion's vision.match_frame_color(source, target), in place on target (square, as
// FaceFusion's crops are): three rounds of equalize_frame_color at sides from
// numpy.linspace(16, side, 3, endpoint=False), each made even as normalize_resolution rounds
// them, each adding to target the cubic-grown difference of source and target shrunk (INTER_AREA)
// to that side, truncated to 8 bits; each round's result is the next round's source. The
// fourth, full-size round FaceFusion runs gives its source back unchanged, so it is skipped.
func (m *ColorMatcher) Match(source, target *raster.Image) {
	side := target.W
	m.out, m.next = sized(m.out, target.W, target.H), sized(m.next, target.W, target.H)
	src := source
	for k := range 3 {
		s := 16 + float64(k)*float64(side-16)/3
		s = math.RoundToEven(s/2) * 2 // Python's round, then × 2
		m.equalize(m.next, src, target, int(s))
		m.out, m.next = m.next, m.out
		src = m.out
	}
	copy(target.Pix, src.Pix)
}

// sized is img when it is w×h, else a new w×h image.
func sized(img *raster.Image, w, h int) *raster.Image {
	if img == nil || img.W != w || img.H != h {
		return raster.New(w, h)
	}
	return img
}

// equalize is FaceFusion's equalize_frame_color: dst = uint8(clip(target +
// cubic(area(source, s) − area(target, s)), 0, 255)).
func (m *ColorMatcher) equalize(dst, source, target *raster.Image, s int) {
	m.a, m.b = sized(m.a, s, s), sized(m.b, s, s)
	m.cv.ResizeArea(m.a, source)
	m.cv.ResizeArea(m.b, target)
	m.diff = grown(m.diff, 3*s*s)
	for i := range m.diff {
		m.diff[i] = float32(m.a.Pix[i]) - float32(m.b.Pix[i])
	}
	m.grow = grown(m.grow, 3*target.W*target.H)
	m.cv.ResizeCubic(m.grow, target.W, target.H, m.diff, s, s)
	for i, d := range m.grow {
		v := float32(target.Pix[i]) + d
		dst.Pix[i] = uint8(min(255, max(0, v))) // astype(uint8) truncates
	}
}

func grown(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
