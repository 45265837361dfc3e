package swap

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// glowMost is the share of the bare mouth's area (see mouthArea) the occluders may take back
// under a blue glow: before the mouth's zone was looked at for colours no mouth takes, they
// took back none of grace_hopper's under the still glow and at most 6 % on the lossy clip's
// frames (JPEG's blocks were found there).
const glowMost = 0.1

// mouthArea is the bare upper lip and lips: the nose's base down round the lips' outline.
func mouthArea(l *face.Landmarks68) []geom.Pt {
	return []geom.Pt{l[31], l[32], l[33], l[34], l[35], l[54], l[55], l[56], l[57], l[58], l[59], l[48]}
}

// takenBackInArea is takenBack's px, counting only those in poly, and the area of poly the
// swap covers.
func takenBackInArea(s *Swapper, frame *raster.Image, lm *face.Landmarks68, poly []geom.Pt) (taken, area float64) {
	takenBack(s, frame, lm)
	fr := s.last
	for i, v := range s.occ.Pix {
		x, y := fr.Min.X+i%fr.Dx(), fr.Min.Y+i/fr.Dx()
		if inPoly(poly, float64(x), float64(y)) {
			taken += float64(s.mask.At(x, y) * (1 - v))
			area += float64(s.mask.At(x, y))
		}
	}
	return taken, area
}

// blueGlow is img lit from below by a blue glow (a monitor's or a phone's, a cold fill under a
// warm key): each channel times k, fully from e of the face's size below the nose's tip
// (landmarks l), fading to none at the tip.
func blueGlow(img *raster.Image, l *face.Landmarks68, k [3]float64, e float64) *raster.Image {
	b := geom.Bounds(l[:])
	size := math.Max(b.W(), b.H())
	out := img.Clone()
	for y := range out.H {
		a := min(1, max(0, (float64(y)-l[30].Y)/size/e))
		for x := range out.W {
			for c := range 3 {
				i := y*out.Stride + 3*x + c
				out.Pix[i] = clampU8(float64(img.Pix[i]) * (1 + (k[c]-1)*a))
			}
		}
	}
	return out
}

// A blue glow from below over grace_hopper's bare mouth is no cover: lips and upper lip so lit
// lie across the skin's axis on the side away from red's, but they are the face's own, and
// the occluders take back no more than glowMost of the mouth, the photo still and through
// JPEG, its landmarks found on the lit photo (on the astronaut's smaller face other rules
// take the lit mouth back already: logged).
func TestBareMouthUnderABlueGlowStaysSwapped(t *testing.T) {
	fullTier(t, "swaps 8 lit photos")
	probeWays(t, func(toAstro bool, s *Swapper, tgt *raster.Image, lm face.Landmarks68) {
		for _, g := range []struct {
			k [3]float64
			e float64
			q int // JPEG's quality, 0 for none
		}{
			{[3]float64{0.861, 0.861, 1.35}, 0.25, 0}, {[3]float64{0.852, 0.918, 1.279}, 0.1, 25},
			{[3]float64{0.852, 0.918, 1.279}, 0.1, 0}, {[3]float64{0.905, 0.905, 1.221}, 0.1, 25},
		} {
			name := fmt.Sprintf("into astronaut %v, a blue glow ×%v from %v below the nose, JPEG %d", toAstro, g.k, g.e, g.q)
			lit := blueGlow(tgt, &lm, g.k, g.e)
			if g.q > 0 {
				lit = jpegOf(lit, g.q)
			}
			box := geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}
			if toAstro {
				box = geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}
			}
			found := landmarksIn(t, lit, box)
			taken, area := takenBackInArea(s, lit, &found, mouthArea(&found))
			t.Logf("%s: %.0f of the mouth's %.0f px taken back, %d kept as foreign", name, taken, area, s.foreignKept)
			if !toAstro && taken > glowMost*area {
				t.Errorf("%s: %.0f of the bare mouth's %.0f px taken back, want at most %.0f", name, taken, area, glowMost*area)
			}
		}
	})
}

// Nor on a lossy still clip of it: grace_hopper under the glow, each frame with fresh sensor
// noise through JPEG at quality 35 and its landmarks found again. The mouth must not be kept
// on some frames and swapped on others: on none do the occluders take back more than glowMost
// of it.
func TestMouthStaysSwappedOnALossyBlueLitClip(t *testing.T) {
	fullTier(t, "swaps 8 lossy lit frames")
	p := photos(t)
	s := probeSwapper(t, p.src, &p.srcLm)
	lit := blueGlow(p.dst, &p.dstLm, [3]float64{0.882, 0.882, 1.284}, 0.15)
	for f := range 8 {
		img := lit.Clone()
		rng := rand.New(rand.NewPCG(uint64(f), 52))
		for y := range img.H {
			for x := range img.W {
				cb, cr, i := 3*rng.NormFloat64(), 3*rng.NormFloat64(), y*img.Stride+3*x
				img.Pix[i] = clampU8(float64(img.Pix[i]) + 1.402*cr)
				img.Pix[i+1] = clampU8(float64(img.Pix[i+1]) - 0.344*cb - 0.714*cr)
				img.Pix[i+2] = clampU8(float64(img.Pix[i+2]) + 1.772*cb)
			}
		}
		img = jpegOf(img, 35)
		lm := landmarksIn(t, img, geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342})
		taken, area := takenBackInArea(s, img, &lm, mouthArea(&lm))
		t.Logf("frame %d: %.0f of the mouth's %.0f px taken back, %d kept as foreign", f, taken, area, s.foreignKept)
		if taken > glowMost*area {
			t.Errorf("frame %d: %.0f of the bare mouth's %.0f px taken back, want at most %.0f", f, taken, area, glowMost*area)
		}
	}
}
