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

// bareVariant is a sample photo's bare face as an ordinary clip may show it.
type bareVariant struct {
	name string
	img  *raster.Image
	lm   face.Landmarks68
}

// scaleLevels multiplies every channel by k, rounded and clamped.
func scaleLevels(img *raster.Image, k float64) *raster.Image {
	out := img.Clone()
	for i, v := range out.Pix {
		out.Pix[i] = uint8(min(255, math.Round(float64(v)*k)))
	}
	return out
}

// bareVariants are img's bare face (detector box box) a stop darker, brighter, mirrored,
// grainy and at two thirds the size, each with its landmarks found again.
func bareVariants(t *testing.T, img *raster.Image, box geom.Rect) []bareVariant {
	t.Helper()
	vs := []bareVariant{{name: "plain", img: img}}
	vs = append(vs, bareVariant{name: "darker", img: scaleLevels(img, 0.5)}, bareVariant{name: "brighter", img: scaleLevels(img, 1.4)})
	mir := img.Clone()
	for y := range img.H {
		for x := range img.W {
			r, g, b := img.At(x, y)
			mir.Set(img.W-1-x, y, r, g, b)
		}
	}
	vs = append(vs, bareVariant{name: "mirrored", img: mir})
	grain := img.Clone()
	rng := rand.New(rand.NewPCG(5, 5))
	for i, v := range grain.Pix {
		grain.Pix[i] = uint8(min(255, max(0, math.Round(float64(v)+5*rng.NormFloat64()))))
	}
	vs = append(vs, bareVariant{name: "grainy", img: grain})
	small := raster.New(img.W*2/3, img.H*2/3)
	raster.ResizeArea(small, img)
	vs = append(vs, bareVariant{name: "two thirds", img: small})
	for i := range vs {
		b := box
		switch vs[i].name {
		case "mirrored":
			b = geom.Rect{X0: float64(img.W) - box.X1, Y0: box.Y0, X1: float64(img.W) - box.X0, Y1: box.Y1}
		case "two thirds":
			k := float64(small.W) / float64(img.W)
			b = geom.Rect{X0: box.X0 * k, Y0: box.Y0 * k, X1: box.X1 * k, Y1: box.Y1 * k}
		}
		vs[i].lm = landmarksIn(t, vs[i].img, b)
	}
	return vs
}

// takenBack runs s's occluders on frame's face lm (after an Apply that leaves the face mask)
// and returns how much of the swap they take back (px) and whether the glasses test found a
// frame.
func takenBack(s *Swapper, frame *raster.Image, lm *face.Landmarks68) (float64, bool) {
	b := geom.Bounds(lm[:])
	size := math.Max(b.W(), b.H())
	s.Apply(frame.Clone(), lm)
	s.occluders(frame, lm, &s.mask, size, s.last)
	fr := s.last
	var sum float64
	for i, v := range s.occ.Pix {
		sum += float64(s.mask.At(fr.Min.X+i%fr.Dx(), fr.Min.Y+i/fr.Dx()) * (1 - v))
	}
	return sum, s.rings.found
}

// The glasses test finds no frame on a bare face, however an ordinary clip shows it: both
// sample photos a stop darker (an indoor or evening clip), brighter, mirrored, grainy and at
// two thirds the size. Its tolerances were once in fixed grey levels: a stop darker, Grace
// Hopper's own brows, lids and eye sockets' shadows crowded into one rim colour's tolerance
// and ringed both eyes, and the swap kept her target face's eyes, brows and nose as glasses.
// Scaled to the skin's level they stay under the threshold on both faces (×0.25 to ×1.8,
// grainy).
// Nor does the occluder step as a whole take back more than on the plain photo (0.2 % of the
// face size squared, as TestThinCoversLeaveBandsOffTheFace allows), but for two finds of
// other tests (bounded in elsewhere, a little above what they take today, so that no other
// rule adds to them unseen): on the astronaut ×1.4, her blown highlights (two channels at
// 255, flat) are taken as flat covers where the swap cannot tell; grainy, her fringe of hair
// over the forehead's corner, a real cover left out of the plain photo's finds as under
// occMinArea, grows past it.
func TestGlassesFindNoFrameOnBareFaces(t *testing.T) {
	t.Parallel()
	p := photos(t)
	elsewhere := map[string]float64{"into astronaut true, brighter": 1600, "into astronaut true, grainy": 100}
	for _, toAstro := range []bool{false, true} {
		srcImg, srcLm, tgt, box := p.src, p.srcLm, p.dst, geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}
		if toAstro {
			srcImg, srcLm, tgt, box = p.dst, p.dstLm, p.src, geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}
		}
		s := probeSwapper(t, srcImg, &srcLm)
		var plain float64
		for _, v := range bareVariants(t, tgt, box) {
			name := fmt.Sprintf("into astronaut %v, %s", toAstro, v.name)
			px, found := takenBack(s, v.img, &v.lm)
			b := geom.Bounds(v.lm[:])
			least := 0.002 * math.Pow(max(b.W(), b.H()), 2)
			t.Logf("%s: the occluders take back %.0f px (plain %.0f, allowed %.0f more)", name, px, plain, least)
			if v.name == "plain" {
				plain = px
			}
			if found {
				t.Errorf("%s bare face: the glasses test finds a frame (the occluders take back %.0f px)", name, px)
			}
			if most, ok := elsewhere[name]; ok {
				if px > most {
					t.Errorf("%s bare face: the occluders take back %.0f px, want at most %.0f", name, px, most)
				}
			} else if px > plain+least {
				t.Errorf("%s bare face: the occluders take back %.0f px, %.0f on the plain photo (want within %.0f)", name, px, plain, least)
			}
		}
	}
}

// probeSwapper swaps the source face in srcImg (its landmarks srcLm) with the occluder step
// off, so that Apply leaves the face mask and features as the occluder step gets them and a
// test may run that step alone (takenBack).
func probeSwapper(t testing.TB, srcImg *raster.Image, srcLm *face.Landmarks68) *Swapper {
	t.Helper()
	src, err := NewSource(srcImg, srcLm)
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Occluders = false
	return NewSwapper(src, opts)
}
