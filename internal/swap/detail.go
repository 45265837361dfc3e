package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Occluders are also told by their fine detail measured against what a face has at that
// place, at full resolution (the structure test's coarse grid averages a cover's grain and
// stripes away):
//   - on the skin (outside the eyes, brows, nose and mouth), detail far below the skin's own
//     (its median over the skin samples; a flat cover on grainy skin), or far above both the
//     skin's and the warped source's there (noise, stripes, a cover's outline, a thin
//     frame; the source's own folds and features say where a face is busy by nature);
//   - over an eye or a brow, detail far below the skin's where the warped source has a
//     feature: a face has an eye where the landmarks put one, so a flat patch there is a
//     cover (a mouth is left out: its detail follows the expression, teeth or none, which
//     the swap takes from the target);
//   - over the nose, detail far below the skin's wherever it lies, when its shading is gone
//     too: a nose has its nostrils, the shine on its tip and the shading down its sides,
//     which a tissue, a hand or a mask over it flatten, whatever its colour (a soft focus
//     or powder flattens its fine detail alone).
//
// Each is measured relative to its own face's skin, so a grainy photo and a smooth one
// compare. A find counts only if part of it is far past the bounds (a seed of some size) and
// grows through what is only past them, as in the texture test: a lossy codec moves a bare
// face's smooth or busy parts across the bounds and back from keyframe to keyframe. A
// feature ringed or crossed by what this finds counts as covered too.

const (
	// occDetailFine is the σ (share of the face size) the luma is smoothed by; the detail is
	// the absolute difference to it, averaged over occDetailSpread.
	occDetailFine   = 0.008
	occDetailSpread = 0.02
	// occDetailBusy and occDetailFlat bound the skin's detail as multiples of its median
	// (busy: of the source's there too, where that is more): busier or flatter is not skin.
	occDetailBusy = 2.5
	occDetailFlat = 0.5
	// occDetailFeature is the least detail (a multiple of the source's skin median) that
	// makes a place of the warped source a feature; the target's there must be under
	// occDetailFlat of its skin's for the feature to be covered.
	occDetailFeature = 2.5
	// occDetailBusySeed and occDetailFlatSeed are how much busier and flatter a find must
	// be somewhere (a seed of texSeedArea) before it grows through what is only past
	// occDetailBusy and occDetailFlat: a lossy keyframe smooths or sharpens the skin's
	// grain by a factor of two and back from one keyframe to the next, so a bare face's
	// forehead or hairline crossed the plain bounds on some keyframes and not others.
	occDetailBusySeed = 3.5
	occDetailFlatSeed = 0.25
	// occNoseShaded is the least spread of the smoothed luma across the lower nose (a share
	// of its brighter end; see noseShading) of a nose that shows its shape: its dark
	// nostrils under a lit tip stay through a shallow focus's blur or powder, and a cover
	// over them hides them.
	occNoseShaded = 0.2
	// occDetailLeast is the least share of the face a find must cover to count: at 1–1.5 %
	// a find came and went on a lossy still clip, covering an eye in one frame only.
	occDetailLeast = occMinArea
)

// detail adds to s.occ (over fr, 1 on occluders; after s.features, s.warped holding the
// warped source) what the fine detail says is not the face (see above).
func (s *Swapper) detail(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle) {
	w, h := fr.Dx(), fr.Dy()
	s.lumaDetail(frame, target, fr, size)
	s.atLight(s.detT.Pix)
	mt, ms := s.skinMedian(&s.detT, target, size, fr), s.skinMedian(&s.detS, target, size, fr)
	s.detMed = [2]float32{mt, ms}
	if !(mt > 0.1) || !(ms > 0.1) { // no skin to compare with
		return
	}
	s.zone.Reset(fr)
	// The nose, flat only under a cover (and only looked at when its shading is gone: a
	// soft or powdered nose is flat in the fine detail too); then the eyes and brows.
	if s.noseShade < occNoseShaded {
		s.fillZone(target, featureZones[5], featureZones[5].k, 2)
	}
	for _, z := range featureZones[:4] {
		s.fillZone(target, z, z.k, 1)
	}
	s.clip.Reset(fr)
	for y := range h {
		frow := fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		for x, v := range frow {
			if !(v > 0.5) {
				continue
			}
			i := y*w + x
			rt, rs := s.detT.Pix[i]/mt, s.detS.Pix[i]/ms
			switch {
			case s.excl.Pix[i] == 0:
				if rt > occDetailBusySeed*max(1, rs) || rt < occDetailFlatSeed {
					s.clip.Pix[i] = 3
				} else if rt > occDetailBusy*max(1, rs) || rt < occDetailFlat {
					s.clip.Pix[i] = 1
				}
			case s.zone.Pix[i] == 2 && rt < occDetailFlat:
				s.clip.Pix[i] = 1
				if rt < occDetailFlatSeed {
					s.clip.Pix[i] = 3
				}
			case s.zone.Pix[i] == 1 && rs > occDetailFeature && rt < occDetailFlat:
				s.clip.Pix[i] = 3
				if rt > occDetailFlatSeed {
					s.clip.Pix[i] = 1
				}
			}
		}
	}
	s.addSeededFinds(frame, target, fm, size, fr, occDetailLeast)
}

// luma is BT.601's luma of a pixel's R, G and B (the Y of raster's colour statistics).
func luma(r, g, b float32) float32 { return 0.299*r + 0.587*g + 0.114*b }

// frameLuma puts in m (over fr) the frame's luma.
func frameLuma(m *raster.Mask, frame *raster.Image, fr image.Rectangle) {
	w, h := fr.Dx(), fr.Dy()
	m.Reuse(fr) // each value written below
	for y := range h {
		row := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:][:3*w]
		l := m.Pix[y*w:][:w]
		for x := range l {
			l[x] = luma(float32(row[3*x]), float32(row[3*x+1]), float32(row[3*x+2]))
		}
	}
}

// lumaDetail puts in s.detT and s.detS (over fr) the fine detail of the frame's and the
// warped source's luma: |luma − luma smoothed|, averaged; and in s.noseShade the frame's
// shading across the lower nose (see noseShading).
func (s *Swapper) lumaDetail(frame *raster.Image, target *face.Landmarks68, fr image.Rectangle, size float64) {
	w, h := fr.Dx(), fr.Dy()
	s.detT.Reuse(fr) // each value written below
	s.detS.Reuse(fr)
	for y := range h {
		row := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:][:3*w]
		wrow := s.warped.Pix[y*s.warped.Stride:][:3*w]
		t, src := s.detT.Pix[y*w:][:w], s.detS.Pix[y*w:][:w]
		for x := range t {
			t[x] = luma(float32(row[3*x]), float32(row[3*x+1]), float32(row[3*x+2]))
			src[x] = luma(wrow[3*x], wrow[3*x+1], wrow[3*x+2])
		}
	}
	fine, spread := math.Max(0.7, occDetailFine*size), math.Max(1, occDetailSpread*size)
	for _, m := range [2]*raster.Mask{&s.detT, &s.detS} {
		s.zone.Reuse(fr)
		copy(s.zone.Pix, m.Pix)
		s.chanBlur.Apply(&s.zone, fine)
		if m == &s.detT {
			s.noseShade = s.noseShading(target, fr)
		}
		for i, v := range s.zone.Pix {
			m.Pix[i] = float32(math.Abs(float64(m.Pix[i] - v)))
		}
		// A box of the Gaussian's variance: the average's exact shape does not matter, and
		// a box costs the same at any size (a Gaussian of this σ was half the swap's time).
		s.boxMean(m, int(math.Round(math.Sqrt(3*spread*spread+0.25)-0.5)))
	}
}

// boxMean replaces each value of m by the mean over the (2r+1)² square about it, clipped to
// m's Rect, from a summed-area table.
func (s *Swapper) boxMean(m *raster.Mask, r int) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	n := (w + 1) * (h + 1)
	if cap(s.sat) < n {
		s.sat = make([]float64, n)
	}
	sat := s.sat[:n]
	clear(sat[:w+1])
	for y := range h {
		row := m.Pix[y*m.Stride:][:w]
		sat[(y+1)*(w+1)] = 0
		var run float64
		for x, v := range row {
			run += float64(v)
			sat[(y+1)*(w+1)+x+1] = sat[y*(w+1)+x+1] + run
		}
	}
	for y := range h {
		y0, y1 := max(0, y-r), min(h, y+r+1)
		out := m.Pix[y*m.Stride:][:w]
		for x := range out {
			x0, x1 := max(0, x-r), min(w, x+r+1)
			sum := sat[y1*(w+1)+x1] - sat[y0*(w+1)+x1] - sat[y1*(w+1)+x0] + sat[y0*(w+1)+x0]
			out[x] = float32(sum / float64((y1-y0)*(x1-x0)))
		}
	}
}

// skinMedian is the median of m (over fr) on the skin sample discs.
func (s *Swapper) skinMedian(m *raster.Mask, target *face.Landmarks68, size float64, fr image.Rectangle) float32 {
	var centres [8]geom.Pt
	skinCentres(target, &centres)
	rad := occSampleRadius * size
	s.dev = s.dev[:0]
	for d, c := range centres {
		if !s.upperSkin || s.skinDisc[d] { // not a cover's (see dropCoveredSamples)
			s.dev = appendDisc(s.dev, m, c, rad, fr)
		}
	}
	if len(s.dev) == 0 {
		return 0
	}
	// By selection (see median): the detail maps are means of magnitudes, never −0.
	return median(s.dev)
}

// appendDisc appends to dst the values of m (over fr) at the pixels of fr within rad of c.
func appendDisc(dst []float32, m *raster.Mask, c geom.Pt, rad float64, fr image.Rectangle) []float32 {
	for y := int(c.Y - rad); y <= int(c.Y+rad); y++ {
		for x := int(c.X - rad); x <= int(c.X+rad); x++ {
			if (image.Point{x, y}).In(fr) && math.Hypot(float64(x)-c.X, float64(y)-c.Y) <= rad {
				dst = append(dst, m.Pix[(y-fr.Min.Y)*m.Stride+x-fr.Min.X])
			}
		}
	}
	return dst
}

// noseShading is the spread of the smoothed luma (in s.zone, over fr) across the lower nose
// (the hull of its tip and base), as a share of its brighter end: the tenth to the
// ninetieth percentile, so a speck or a few pixels of grain do not make it. It uses s.clip.
func (s *Swapper) noseShading(target *face.Landmarks68, fr image.Rectangle) float32 {
	s.sorted, s.partHull = convexHull(target[30:36], s.sorted, s.partHull)
	s.clip.Reset(fr)
	raster.FillConvex(&s.clip, s.partHull, 1)
	s.noseLuma = s.noseLuma[:0]
	for i, v := range s.clip.Pix {
		if v > 0.5 {
			s.noseLuma = append(s.noseLuma, s.zone.Pix[i])
		}
	}
	if len(s.noseLuma) < 10 {
		return 1
	}
	slices.Sort(s.noseLuma)
	lo, hi := s.noseLuma[len(s.noseLuma)/10], s.noseLuma[len(s.noseLuma)*9/10]
	return (hi - lo) / max(1, hi)
}
