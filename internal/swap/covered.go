package swap

import (
	"image"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// Under a large cover before the middle of the face (a hand spread over it, a hand or a book
// over the nose and mouth) the landmark model guesses the hidden points, and guesses them
// pulled in: the mouth's corners and the brows slide towards the middle, the nose's tip up.
// The identity-keeping fit then shrinks the source into the middle of the face, whose rim,
// seen about the cover, keeps the target; the skin's sample discs, placed by the same points,
// land on the cover. What the swap can trust there is the points it sees, clear of the covers
// found (the outline, an eye between the fingers). Where most of the fitted points are
// covered, the covered ones are put where the source's own shape, fitted to the seen ones,
// puts them, and the swap is made again with them.

const (
	// occCoveredFit is the least share of the fitted points (alignPoints) under the covers
	// found that makes the landmark model's guesses there worth replacing: a cup or a finger
	// at the mouth hides a few, whose guesses hold.
	occCoveredFit = 0.4
	// occSeenFit is the least number of seen points the source's shape is fitted to.
	occSeenFit = 8
)

// seenLandmarks writes into out the target's landmarks with those under the covers found
// (s.occ below ½) put where the source's shape, fitted to the seen ones (the fitted points
// and the outline), puts them. It reports false, leaving out alone, where fewer than
// occCoveredFit of the fitted points are covered or fewer than occSeenFit points are seen.
func (s *Swapper) seenLandmarks(target *face.Landmarks68, out *face.Landmarks68) bool {
	var covered [68]bool
	for i, p := range target {
		pt := image.Point{X: int(math.Round(p.X)), Y: int(math.Round(p.Y))}
		if pt.In(s.occ.Rect) {
			covered[i] = s.occ.Pix[(pt.Y-s.occ.Rect.Min.Y)*s.occ.Stride+pt.X-s.occ.Rect.Min.X] < 0.5
		}
	}
	n := 0
	for _, i := range alignPoints {
		if covered[i] {
			n++
		}
	}
	if float64(n) < occCoveredFit*float64(len(alignPoints)) || !centreCovered(&covered) {
		return false
	}
	s.seenA, s.seenB = s.seenA[:0], s.seenB[:0]
	for i := range 17 + len(alignPoints) {
		j := i // the outline's points, then the fitted ones
		if i >= 17 {
			j = alignPoints[i-17]
		}
		if !covered[j] {
			s.seenA, s.seenB = append(s.seenA, s.src.lm[j]), append(s.seenB, target[j])
		}
	}
	if len(s.seenA) < occSeenFit {
		return false
	}
	m := geom.Similarity(s.seenA, s.seenB)
	*out = *target
	for i := range out {
		if covered[i] {
			out[i] = m.Apply(s.src.lm[i])
		}
	}
	return true
}

// centreCovered reports whether the covers hide most of the nose's points and at least a
// quarter of each side's fitted points (the brow, the eye's corners and the mouth's corner):
// a cover over one side or over the brows alone leaves points about the nose that hold the
// hidden ones in place.
func centreCovered(covered *[68]bool) bool {
	for k, side := range [3][]int{{27, 28, 29, 30, 31, 32, 33, 34, 35}, {17, 18, 19, 20, 21, 36, 39, 48}, {22, 23, 24, 25, 26, 42, 45, 54}} {
		n := 0
		for _, i := range side {
			if covered[i] {
				n++
			}
		}
		if k == 0 && 2*n <= len(side) || 4*n < len(side) {
			return false
		}
	}
	return true
}
