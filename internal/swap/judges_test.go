package swap

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The forehead's judges (see dropCoveredSamples) weighed, on covers none of the families'
// surveys has: a lock of five strands from the right temple across both brows, bowed down,
// in a darker shade of the target's skin, a hair's brown and green; a knitted scarf (its own
// ribs and courses) from just under the nose's tip, navy and maroon, on Grace Hopper, who
// wears glasses; and a mask with a rounded top in hues no skin has on the astronaut, which
// misplaces the landmarks (the mask's top taken for the eyes).

// judgeLock is a lock of n strands of half-width hw (face sizes), each a curve from a by c to
// b (a landmark and its offset in face sizes, the height's offset growing by the fourth value
// from strand to strand).
func judgeLock(name string, n int, hw float64, a, c, b [4]float64) occShape {
	return occShape{name, func(l *face.Landmarks68, s, x, y float64) bool {
		for k := range n {
			f := float64(k)
			if hoBezierNear(x, y, hoPt(l[int(a[0])], s, a[1], a[2]+a[3]*f), hoPt(l[int(c[0])], s, c[1], c[2]+c[3]*f), hoPt(l[int(b[0])], s, b[1], b[2]+b[3]*f), hw*s) {
				return true
			}
		}
		return false
	}}
}

// judgeLocks: six strands from above the right brow bowed down across both brows to past the
// left eye, and five flatter ones from the right temple across the forehead to the left.
var judgeLocks = []occShape{
	judgeLock("lock to the left eye", 6, 0.007, [4]float64{26, 0.08, -0.25, 0.025}, [4]float64{27, 0, -0.05, 0.03}, [4]float64{36, -0.12, -0.02, 0.045}),
	judgeLock("lock across the forehead", 5, 0.008, [4]float64{16, 0.05, -0.15, 0.025}, [4]float64{27, 0, -0.08, 0.03}, [4]float64{0, -0.05, -0.12, 0.03}),
}

// judgeKnitScarf covers the face from a little under the nose's tip down, past its sides.
var judgeKnitScarf = occShape{"knitted scarf under the nose", func(l *face.Landmarks68, size, x, y float64) bool {
	return x >= l[0].X-0.2*size && x <= l[16].X+0.2*size && y >= l[33].Y+0.03*size
}}

// judgeMask is a mask from above the nose's middle to under the chin, its top rounded.
var judgeMask = occShape{"rounded mask", func(l *face.Landmarks68, size, x, y float64) bool {
	cx := (l[0].X + l[16].X) / 2
	u := (x - cx) / (l[16].X - l[0].X)
	top := l[29].Y - 0.03*size + 0.25*u*u*size
	return x >= l[2].X && x <= l[14].X && y >= top && y <= l[8].Y+0.05*size
}}

// judgeKnit is a knit of coarser loops than the scarf family's: a rib every 7 px, a course
// every 6 down, offset by half a rib every other course.
var judgeKnit = occTexture{"coarse knit", func(c raster.RGB, x, y int, rng *rand.Rand) raster.RGB {
	off := 3.5 * float64((y/6)%2)
	v := 10*math.Cos(2*math.Pi*(float64(x)+off)/7)*math.Abs(math.Sin(math.Pi*float64(y)/6)) + 2*rng.NormFloat64()
	return shade(c, v)
}}

// Locks of strands over the astronaut's brows crossed the disc between the brows and the
// forehead's discs, making them busy beside the rest: alike, they overruled the lower discs,
// and the whole face was taken for a cover, none of the rest swapped. The witnesses beside
// the eyes, on bare skin and nearer the lower discs than the judges, say the judges are
// covered, and the rest is swapped (the floors below). The others held before and hold: the
// same locks on Grace Hopper, a coarse knit from under her nose's tip (she wears glasses) and
// a rounded mask of hues no skin has on the astronaut.
func TestApplyWeighsTheForeheadJudges(t *testing.T) {
	t.Parallel()
	ways := photoWays(t)
	fixed := func(c raster.RGB) func(raster.RGB) raster.RGB { return func(raster.RGB) raster.RGB { return c } }
	green := fixed(raster.RGB{R: 40, G: 130, B: 60})
	flat := occTextures[0]
	noise := occTexture{"fine noise", func(c raster.RGB, _, _ int, rng *rand.Rand) raster.RGB { return shade(c, 5*rng.NormFloat64()) }}
	for _, c := range []struct {
		toAstronaut   bool
		shape         occShape
		tex           occTexture
		hue           string
		of            func(raster.RGB) raster.RGB
		kept, swapped float64
	}{
		{true, judgeLocks[0], flat, "darker skin", scaledSkin(0.6), 0.9, 0.6},
		{true, judgeLocks[1], noise, "green", green, 0.9, 0.6},
		{false, judgeLocks[0], flat, "green", green, 0.9, 0.8},
		{false, judgeLocks[1], noise, "green", green, 0.9, 0.8},
		{false, judgeKnitScarf, judgeKnit, "navy", fixed(raster.RGB{R: 25, G: 30, B: 80}), 0.9, 0.9},
		{true, judgeMask, flat, "teal", fixed(raster.RGB{R: 30, G: 120, B: 130}), 0.9, 0.6},
	} {
		w := ways[c.toAstronaut]
		oc := occCase{shape: c.shape, tex: c.tex, hue: c.of(skinColour(w.tgt, &w.lm)), name: c.shape.name + "/" + c.tex.name + "/" + c.hue}
		r, _ := occlusionRun(t, w.src, w.tgt, w.lm, w.box, oc, w.bare)
		t.Logf("into astronaut %v, %s: %.1f%% kept, the rest of the face %.1f%% swapped", c.toAstronaut, oc.name, 100*r.kept, 100*r.swapped)
		if r.kept < c.kept || r.swapped < c.swapped {
			t.Errorf("into astronaut %v, %s: %.1f%% of the cover kept (want ≥ %.0f%%), the rest of the face %.1f%% swapped (want ≥ %.0f%% of the bare face's)",
				c.toAstronaut, oc.name, 100*r.kept, 100*c.kept, 100*r.swapped, 100*c.swapped)
		}
	}
}

// judgeDiscs runs dropCoveredSamples on discs of the given median features (log-brightness,
// log-chromaticities) and grains, 20 samples each, and returns which skin discs it keeps,
// whether the forehead chose them, and how many samples it keeps.
func judgeDiscs(discs [occDiscs][4]float32) (skin [8]bool, upper bool, kept int) {
	var s Swapper
	var starts [occDiscs + 1]int
	var grain [occDiscs]float32
	for d, v := range discs {
		starts[d] = len(s.feat[0])
		for range 20 {
			for k := range 3 {
				s.feat[k] = append(s.feat[k], v[k])
			}
		}
		grain[d] = v[3]
	}
	starts[occDiscs] = len(s.feat[0])
	s.dropCoveredSamples(&starts, &grain)
	return s.skinDisc, s.upperSkin, len(s.feat[0])
}

// The discs as the photos gave them (measured through Apply). A navy knit from under Grace
// Hopper's nose tip covers three discs; the one under her left eye, bare but crossed by her
// glasses' rim, is grainier than the judges (28 beside 8–13) but of their colour: it was
// dropped with the knit, and the skin model lost her cheeks. A medical mask in navy on the
// astronaut moved her landmarks down (the mask's top taken for the eyes): every disc but the
// forehead's two lay on it, the gap between the brows too, so no judge was found and the
// mask was taken for the skin. Strands across the astronaut's brows made the three judges
// busy (58, 52 and 36 beside 5–16 below), the discs beside her eyes alike with the lower ones:
// the judges overruled the face's skin.
func TestDropCoveredSamplesWeighsTheJudges(t *testing.T) {
	navy := [4]float32{5.1, -0.27, 0.79, 9}
	knit := [occDiscs][4]float32{
		{5.96, 0.52, -0.38, 28}, {6.11, 0.42, -0.36, 18}, navy, navy, {6.39, 0.29, -0.17, 10}, {6.42, 0.27, -0.13, 6},
		navy, {6.35, 0.31, -0.19, 12}, {6.26, 0.32, -0.23, 8}, {6.19, 0.36, -0.27, 13}, {5.65, 0.64, -0.39, 26}, {5.69, 0.53, -0.34, 25},
	}
	skin, upper, _ := judgeDiscs(knit)
	if want := [8]bool{true, true, false, false, true, true, false, true}; !upper || skin != want {
		t.Errorf("knit under the nose: upper %v, skin discs %v, want the forehead to choose %v", upper, skin, want)
	}
	flatNavy := [4]float32{5.09, -0.28, 0.8, 0}
	mask := [occDiscs][4]float32{flatNavy, flatNavy, flatNavy, flatNavy, flatNavy, flatNavy, flatNavy, flatNavy,
		{6.38, 0.13, -0.11, 11}, {6.34, 0.15, -0.12, 12}, flatNavy, flatNavy}
	skin, upper, kept := judgeDiscs(mask)
	if !upper || skin != [8]bool{} || kept != 40 {
		t.Errorf("mask that moved the landmarks: upper %v, skin discs %v, %d samples kept; want the forehead's two discs (40) alone", upper, skin, kept)
	}
	lock := [occDiscs][4]float32{
		{6.41, 0.13, -0.13, 5}, {6.12, 0.15, -0.21, 16}, {6.29, 0.15, -0.18, 8}, {6.11, 0.20, -0.21, 10}, {6.28, 0.17, -0.19, 11},
		{6.29, 0.21, -0.17, 10}, {6.42, 0.18, -0.09, 8}, {6.32, 0.11, -0.16, 58}, {6.04, 0.15, -0.31, 52}, {6.29, 0.13, -0.16, 36},
		{6.24, 0.16, -0.21, 16}, {5.95, 0.17, -0.28, 17},
	}
	if _, upper, _ := judgeDiscs(lock); upper {
		t.Errorf("strands over the brows: the forehead chose the skin discs")
	}
}
