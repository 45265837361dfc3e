package swap

import (
	"image"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A bare nose shows light and dark down its middle: its tip, its most forward point, is lit
// whatever the light, and under it the columella's underside and the groove it meets the lip
// in lie in its shadow; beside them, the nostrils are the darkest thing under the tip. Where
// the nose's midline from the tip down (landmarks 30 towards 33) is as flat as a cover, flat or
// grained, while the nostrils beside it are dark (the nose is there, in light enough to show
// its darks) and both eyes are there (the landmarks lie on a face), the midline holds what
// covers the nose's tip: a ball, a peg, a bandage, a fingertip, whatever its colour. The
// colour tests do not tell such a cover of the skin's hue from the nose's own skin. What looks
// as the midline does and is joined to it is the cover, followed out as an eye's cover is
// (see coveredEyes). Where the cheeks beside the nose look so too, it cannot be followed apart
// from the skin; and the midline of a small, soft nose in a flat light, or on landmarks a
// cover elsewhere pulled up the nose's bridge, looks as the skin about it does: neither is
// told.
//
// A flat midline is a cover's only where the nose's own shade could not have been lost. A
// smear or a blur spreads the tip's light into the shade under it, on a small nose until its
// midline is as flat as a cover's while its nostrils still show dark; the same blur softens
// the eyes, which a cover over the nose leaves as they were, so the rule asks for both eyes
// sharp. A flush, a blush or a sheen then only decides whether the cheeks stop it, and the
// blur's grain (a still clip's noise, its codec) whether it fires frame by frame: neither
// matters once the blur is told. And a tip lit past the sensor's ceiling (a sheen under a key
// light, a close flash's hot spot) has lost its shade to the clip, however sharp the frame.

const (
	// noseZoneGrow scales the hull of landmarks 30-35 (the tip and the nostrils) about its
	// centre: dlib places the nostrils' landmarks on their rims, the holes a little inside.
	noseZoneGrow = 1.2
	// noseDarkContrast is the least contrast (see hullLook) of that hull with the nostrils
	// seen: a small face's soft nostrils are just over it, a larger face's well over.
	noseDarkContrast = 1.5
	// noseMidlineEnd is how far the midline runs from the tip towards landmark 33, as a
	// share of the way: the columella's shade lies above 33, and where a cover hides the
	// nose's base dlib slides 33 down to the cover's lower rim, onto the lip.
	noseMidlineEnd = 0.85
	// noseMidlineHalf is the midline strip's half-width, in nose widths (landmarks 31 to 35):
	// about the columella's.
	noseMidlineHalf = 0.12
	// noseCoverContrast is the contrast under which the midline holds a cover, flat or of a
	// fine grain: a small, soft nose lit from below shows a little more. noseGrainContrast is
	// the contrast under which it holds a coarser grain (a print, a weave, dapples) if its
	// upper third is as bright as its lower third, within noseFlatProfile: a bare nose's tip
	// is brighter than the shade under it, however soft.
	noseCoverContrast = 1.3
	noseGrainContrast = 1.5
	noseFlatProfile   = 1.15
	// noseSharpEye is the least contrast (see hullLook) each eye's hull must show for the
	// nose's midline to be judged: a sharp frame's bare eye shows 5 or more; a smear or blur
	// that flattens a small nose's midline to a cover's leaves its eyes under 3.6.
	noseSharpEye = 4.5
	// noseClipLevel is the level (of 255) from which a channel is at the sensor's or the
	// codec's ceiling, and noseClippedShare the share of the midline's pixels clipped so in
	// a channel past which the midline's brightness no longer shows its shade: a sheen's or
	// a flash's tip is clipped all over, a bright cover's grain or a bare nose a third at most.
	noseClipLevel    = 250
	noseClippedShare = 0.5
	// noseLeastPixels is the fewest pixels the midline must hold to be told: on a smaller
	// face the tip and its shadow blur together.
	noseLeastPixels = 20
	// noseCoverReach is how far from the midline's centre its cover is followed, in nose
	// widths: a fingertip's or a ball's size.
	noseCoverReach = 1
	// noseCoverAlike is the largest share of the cheeks beside the nose that may look as the
	// cover does for it to be told (see eyeCoverAlike).
	noseCoverAlike = 0.1
)

// coveredNose marks in s.occ (over fr) the cover over target's nose (see above), given the
// eyes' states.
func (s *Swapper) coveredNose(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, fr image.Rectangle, eyes [2]eyeState) {
	if eyes[0] != eyeThere || eyes[1] != eyeThere {
		return
	}
	st, lo, hi := s.noseLook(frame, target, fr)
	if st != eyeCovered {
		return
	}
	width := target[31].Dist(target[35])
	for _, cheek := range [2]geom.Pt{target[31].Add(target[2]).Scale(0.5), target[35].Add(target[14]).Scale(0.5)} {
		if s.alikeAbout(frame, fm, fr, cheek, width/2, lo, hi) > noseCoverAlike {
			return
		}
	}
	s.followCover(frame, fm, fr, target[30].Add(target[33]).Scale(0.5), noseCoverReach*width, lo, hi)
}

// noseLook tells whether target's nose's tip is covered (see above), and where it is, the
// range of colour features a pixel of its cover may have; the midline's pixels are left in
// s.stack.
func (s *Swapper) noseLook(frame *raster.Image, target *face.Landmarks68, fr image.Rectangle) (st eyeState, lo, hi [3]float32) {
	s.hullPixels(target[30:36], noseZoneGrow, fr)
	if len(s.stack) == 0 {
		return eyeUntold, lo, hi
	}
	if st, _, _, _ := s.hullLook(frame, fr, eyeShadowBright, noseDarkContrast, noseDarkContrast); st != eyeThere {
		return eyeUntold, lo, hi
	}
	if s.midlinePixels(target, fr) < noseLeastPixels || s.midlineClipped(frame, fr) {
		return eyeUntold, lo, hi
	}
	st, contrast, lo, hi := s.hullLook(frame, fr, eyeShadowBright, math.Inf(1), noseGrainContrast)
	if st == eyeCovered && contrast >= math.Log(noseCoverContrast) &&
		!(math.Abs(s.midlineProfile(frame, target, fr)) < math.Log(noseFlatProfile)) {
		st = eyeUntold
	}
	if st != eyeCovered || !s.eyesSharp(frame, target, fr) {
		return eyeUntold, lo, hi
	}
	s.midlinePixels(target, fr)
	return st, lo, hi
}

// eyesSharp reports whether both of target's eyes show noseSharpEye's contrast; it leaves
// s.stack spent.
func (s *Swapper) eyesSharp(frame *raster.Image, target *face.Landmarks68, fr image.Rectangle) bool {
	for k := range 2 {
		if !s.eyeHull(target, k, fr) {
			return false
		}
		if st, _, _, _ := s.hullLook(frame, fr, eyeShadowBright, noseSharpEye, 0); st != eyeThere {
			return false
		}
	}
	return true
}

// midlineClipped reports whether more than noseClippedShare of the midline's pixels in
// s.stack have a channel at noseClipLevel or more.
func (s *Swapper) midlineClipped(frame *raster.Image, fr image.Rectangle) bool {
	clipped := 0
	for _, i := range s.stack {
		p := frame.Pix[(fr.Min.Y+int(i)/fr.Dx())*frame.Stride+3*(fr.Min.X+int(i)%fr.Dx()):]
		if max(p[0], p[1], p[2]) >= noseClipLevel {
			clipped++
		}
	}
	return float64(clipped) > noseClippedShare*float64(len(s.stack))
}

// midlineProfile is how much brighter (ln) the median of the upper third of the midline's
// pixels in s.stack is than that of its lower third; NaN where a third is empty.
func (s *Swapper) midlineProfile(frame *raster.Image, target *face.Landmarks68, fr image.Rectangle) float64 {
	a, d := noseMidline(target)
	var med [2]float32
	for k := range 2 {
		s.dev = s.dev[:0]
		for _, i := range s.stack {
			p := geom.Pt{X: float64(fr.Min.X + int(i)%fr.Dx()), Y: float64(fr.Min.Y + int(i)/fr.Dx())}
			if t := dot(p.Sub(a), d) / dot(d, d); (k == 0 && t < 1.0/3) || (k == 1 && t > 2.0/3) {
				s.dev = append(s.dev, pixelFeatures(frame, fr, fr.Dx(), int(i))[0])
			}
		}
		if len(s.dev) == 0 {
			return math.NaN()
		}
		med[k] = median(s.dev)
	}
	return float64(med[0] - med[1])
}

// noseMidline is where the nose's midline starts, at its tip (landmark 30), and how far it
// runs down towards 33.
func noseMidline(target *face.Landmarks68) (a, d geom.Pt) {
	return target[30], target[33].Sub(target[30]).Scale(noseMidlineEnd)
}

// midlinePixels puts in s.stack the pixels of fr's grid within noseMidlineHalf of the nose's
// midline (see noseMidline), and returns how many they are.
func (s *Swapper) midlinePixels(target *face.Landmarks68, fr image.Rectangle) int {
	a, d := noseMidline(target)
	b := a.Add(d)
	half := noseMidlineHalf * target[31].Dist(target[35])
	s.stack = s.stack[:0]
	if !(dot(d, d) > 0) {
		return 0
	}
	for y := max(fr.Min.Y, int(min(a.Y, b.Y)-half)); y <= min(fr.Max.Y-1, int(max(a.Y, b.Y)+half)+1); y++ {
		for x := max(fr.Min.X, int(min(a.X, b.X)-half)); x <= min(fr.Max.X-1, int(max(a.X, b.X)+half)+1); x++ {
			p := geom.Pt{X: float64(x), Y: float64(y)}
			if t := dot(p.Sub(a), d) / dot(d, d); t < 0 || t > 1 || segmentDist(p, a, b) > half {
				continue
			}
			s.stack = append(s.stack, int32((y-fr.Min.Y)*fr.Dx()+x-fr.Min.X))
		}
	}
	return len(s.stack)
}
