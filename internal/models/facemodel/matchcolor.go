package facemodel

import (
	"math"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// MatchFrameColor is FaceFusion's vision.match_frame_color(source, target), in place on target
// (square, as FaceFusion's crops are): three rounds of equalize_frame_color at sides from
// numpy.linspace(16, side, 3, endpoint=False), each made even as normalize_resolution rounds
// them, each adding to target the cubic-grown difference of source and target shrunk (INTER_AREA)
// to that side, truncated to 8 bits; each round's result is the next round's source. The
// fourth, full-size round FaceFusion runs gives its source back unchanged, so it is skipped.
func MatchFrameColor(source, target *raster.Image) {
	side := target.W
	src := source
	out := raster.New(target.W, target.H)
	next := raster.New(target.W, target.H)
	for k := range 3 {
		s := 16 + float64(k)*float64(side-16)/3
		s = math.RoundToEven(s/2) * 2 // Python's round, then × 2
		equalizeFrameColor(next, src, target, int(s))
		out, next = next, out
		src = out
	}
	copy(target.Pix, src.Pix)
}

// equalizeFrameColor is FaceFusion's equalize_frame_color: dst = uint8(clip(target +
// cubic(area(source, s) − area(target, s)), 0, 255)).
func equalizeFrameColor(dst, source, target *raster.Image, s int) {
	a, b := raster.New(s, s), raster.New(s, s)
	raster.ResizeArea(a, source)
	raster.ResizeArea(b, target)
	diff := make([]float32, 3*s*s)
	for i := range diff {
		diff[i] = float32(a.Pix[i]) - float32(b.Pix[i])
	}
	grown := make([]float32, 3*target.W*target.H)
	raster.ResizeCubic(grown, target.W, target.H, diff, s, s)
	for i, d := range grown {
		v := float32(target.Pix[i]) + d
		dst.Pix[i] = uint8(min(255, max(0, v))) // astype(uint8) truncates
	}
}
