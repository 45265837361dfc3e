package swap

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// nfFlushed is img with the nose of the face lm flushed, as a cold, the wind or a sunburn
// leaves it: redder by red at its centre (between landmarks 30 and 33), fading within a nose
// width, the cheeks as they were.
func nfFlushed(img *raster.Image, lm *face.Landmarks68, red float64) *raster.Image {
	c := lm[30].Add(lm[33]).Scale(0.5)
	reach := 0.8 * lm[31].Dist(lm[35])
	out := img.Clone()
	for y := range img.H {
		for x := range img.W {
			d := math.Hypot(float64(x)-c.X, float64(y)-c.Y) / reach
			a := red * math.Exp(-d*d)
			r, g, b := img.At(x, y)
			out.Set(x, y, clampU8(float64(r)*(1+0.75*a)), clampU8(float64(g)*(1-a)), clampU8(float64(b)*(1-a)))
		}
	}
	return out
}

// nfMotionBlur is img smeared over 2n+1 pixels along (dx, dy): a head nodding or turning
// while the shutter is open.
func nfMotionBlur(img *raster.Image, dx, dy, n int) *raster.Image {
	out := img.Clone()
	for y := range img.H {
		for x := range img.W {
			var sum [3]float64
			k := 0.0
			for i := -n; i <= n; i++ {
				xx, yy := x+i*dx, y+i*dy
				if xx < 0 || yy < 0 || xx >= img.W || yy >= img.H {
					continue
				}
				r, g, b := img.At(xx, yy)
				sum[0], sum[1], sum[2], k = sum[0]+float64(r), sum[1]+float64(g), sum[2]+float64(b), k+1
			}
			out.Set(x, y, clampU8(sum[0]/k), clampU8(sum[1]/k), clampU8(sum[2]/k))
		}
	}
	return out
}

// nfBlushed is img with blush on the cheeks of the face lm beside the nose (between each
// nostril and the jaw's landmark 2 or 14), rosier by amt at their centres, fading within
// about a nose width: makeup, or a flush from exercise or the cold that spares the nose.
func nfBlushed(img *raster.Image, lm *face.Landmarks68, amt float64) *raster.Image {
	reach := 0.9 * lm[31].Dist(lm[35])
	cheeks := [2]geom.Pt{lm[31].Add(lm[2]).Scale(0.5), lm[35].Add(lm[14]).Scale(0.5)}
	out := img.Clone()
	for y := range img.H {
		for x := range img.W {
			a := 0.0
			for _, c := range cheeks {
				d := math.Hypot(float64(x)-c.X, float64(y)-c.Y) / reach
				a = max(a, amt*math.Exp(-d*d))
			}
			r, g, b := img.At(x, y)
			out.Set(x, y, clampU8(float64(r)*(1+0.3*a)), clampU8(float64(g)*(1-a)), clampU8(float64(b)*(1-0.7*a)))
		}
	}
	return out
}

// nfSheen is img with the nose of the face lm lit gain times brighter at its centre (a little
// above the middle of landmarks 30 and 33), fading within radius nose widths: an oily nose's
// broad sheen under a key light, or a close flash's hot spot on the face's most forward part.
func nfSheen(img *raster.Image, lm *face.Landmarks68, gain, radius float64) *raster.Image {
	width := lm[31].Dist(lm[35])
	c := lm[30].Add(lm[33]).Scale(0.5).Add(geom.Pt{Y: -0.1 * width})
	out := img.Clone()
	for y := range img.H {
		for x := range img.W {
			d := math.Hypot(float64(x)-c.X, float64(y)-c.Y) / (radius * width)
			k := 1 + gain*math.Exp(-d*d)
			r, g, b := img.At(x, y)
			out.Set(x, y, clampU8(k*float64(r)), clampU8(k*float64(g)), clampU8(k*float64(b)))
		}
	}
	return out
}

// nfKept is what coveredNose keeps on the face of v given its eyes' states as coveredEyes
// tells them, as findOccluders calls it: the pixels it marks, and whether both eyes are there.
func nfKept(t *testing.T, src *Source, v hoWay) (kept int, eyes [2]eyeState) {
	t.Helper()
	s := NewSwapper(src, DefaultOptions())
	_, _, fr, ok := s.place(v.tgt, &v.lm)
	if !ok {
		t.Fatalf("%s: no face", v.name)
	}
	s.occ.Reset(fr)
	eyes = s.coveredEyes(v.tgt, &v.lm, &s.mask, fr)
	s.occ.Reset(fr)
	s.coveredNose(v.tgt, &v.lm, &s.mask, fr, eyes)
	for _, p := range s.occ.Pix {
		if p > 0 {
			kept++
		}
	}
	return kept, eyes
}

// nfWays are the astronaut's bare face made over so that her small, soft nose's midline reads
// as flat as a cover's (a moving head's smear, or a sheen) while the nose looks unlike the
// cheeks beside it (a flushed nose, blushed cheeks, the sheen), so the cheeks no longer stop
// the rule.
var nfWays = []struct {
	name string
	made func(img *raster.Image, lm *face.Landmarks68) *raster.Image
}{
	{"a faint flush, smeared 9 px down", func(img *raster.Image, lm *face.Landmarks68) *raster.Image {
		return nfMotionBlur(nfFlushed(img, lm, 0.08), 0, 1, 4)
	}},
	{"a flush, smeared 9 px down", func(img *raster.Image, lm *face.Landmarks68) *raster.Image {
		return nfMotionBlur(nfFlushed(img, lm, 0.15), 0, 1, 4)
	}},
	{"a cold's red nose, smeared 7 px down", func(img *raster.Image, lm *face.Landmarks68) *raster.Image {
		return nfMotionBlur(nfFlushed(img, lm, 0.25), 0, 1, 3)
	}},
	{"a sunburnt nose, smeared 7 px down", func(img *raster.Image, lm *face.Landmarks68) *raster.Image {
		return nfMotionBlur(nfFlushed(img, lm, 0.35), 0, 1, 3)
	}},
	{"a faint flush, smeared 7 px aslant", func(img *raster.Image, lm *face.Landmarks68) *raster.Image {
		return nfMotionBlur(nfFlushed(img, lm, 0.10), 1, 1, 3)
	}},
	{"a sunburnt nose, smeared 5 px aslant", func(img *raster.Image, lm *face.Landmarks68) *raster.Image {
		return nfMotionBlur(nfFlushed(img, lm, 0.35), 1, 1, 2)
	}},
	{"blushed cheeks, smeared 9 px down", func(img *raster.Image, lm *face.Landmarks68) *raster.Image {
		return nfMotionBlur(nfBlushed(img, lm, 0.2), 0, 1, 4)
	}},
	{"blushed cheeks, smeared 7 px aslant", func(img *raster.Image, lm *face.Landmarks68) *raster.Image {
		return nfMotionBlur(nfBlushed(img, lm, 0.2), 1, 1, 3)
	}},
	{"a sheen on the nose, twice as bright at its centre", func(img *raster.Image, lm *face.Landmarks68) *raster.Image {
		return nfSheen(img, lm, 1, 0.6)
	}},
}

// A bare nose flushed, beside blushed cheeks or with a sheen, and smeared by a moving head, is
// still a bare nose: coveredNose keeps nothing of it.
func TestCoveredNoseLeavesFlushedSmearedNosesBare(t *testing.T) {
	fullTier(t, "finds landmarks on 9 photos")
	w := hoWays(t)[1] // grace_hopper → astronaut: the small, soft nose
	src, err := NewSource(w.srcImg, &w.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range nfWays {
		v := w
		v.name = fmt.Sprintf("%s, %s", w.name, c.name)
		v.tgt = c.made(w.tgt, &w.lm)
		findAgain(t, &v)
		if kept, eyes := nfKept(t, src, v); kept > 0 {
			t.Errorf("%s: %d px of the bare face about the nose kept as a cover (eyes %v)", v.name, kept, eyes)
		}
	}
}

// A still shot of a bare face, each frame with its own sensor noise and a camera's codec,
// is treated alike in every frame: coveredNose keeps nothing in any of them, rather than a
// nose-sized patch that comes and goes.
func TestCoveredNoseSteadyOnAStillClip(t *testing.T) {
	fullTier(t, "finds landmarks on 12 frames")
	w := hoWays(t)[1]
	src, err := NewSource(w.srcImg, &w.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	still := nfMotionBlur(nfFlushed(w.tgt, &w.lm, 0.15), 0, 1, 3)
	rng := rand.New(rand.NewPCG(3, 9))
	var kept []int
	for range 12 {
		noisy := still.Clone()
		for i := range noisy.Pix {
			noisy.Pix[i] = clampU8(float64(noisy.Pix[i]) + 3*rng.NormFloat64())
		}
		v := w
		v.tgt = jpegOf(noisy, 75)
		findAgain(t, &v)
		k, _ := nfKept(t, src, v)
		kept = append(kept, k)
	}
	if slices.Max(kept) > 0 {
		t.Errorf("%s, a flush, smeared 7 px down, 12 noisy frames of one still: px of the bare face about the nose kept per frame %v", w.name, kept)
	}
}
