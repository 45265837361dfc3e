package swap

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// skinBandShapes are bands 4–7 % of the face wide across its features: a pencil held level
// between the lips, a curl of hair from the forehead bowing over the image's right eye onto
// the cheek, a finger laid level under the nose from the image's left.
var skinBandShapes = map[string]occShape{
	"pencil": pencilAcrossLips,
	"curl": {"curl over an eye", func(l *face.Landmarks68, s, x, y float64) bool {
		e := geom.Mean(l[42:48])
		return hoBezierNear(x, y, hoPt(e, s, -0.05, -0.3), hoPt(e, s, 0.055, 0.05), hoPt(e, s, 0.02, 0.2), 0.035*s)
	}},
	"finger": {"finger under the nose", func(l *face.Landmarks68, s, x, y float64) bool {
		return tsNearSeg(x, y, hoPt(l[33], s, -0.5, 0.06), hoPt(l[33], s, 0.08, 0.03), 0.03*s)
	}},
}

// Bands of the skin's own hues across Grace Hopper's features are told by their shape (see
// skinBands): two long edges a steady width apart round an even inside. No colour rule found
// them: the swap kept 2–15 % of most of them. Grace Hopper's own skin, tan and a pale skin, flat or
// with real skin's grain (a patch of the astronaut's chin), and a slate finger; each case must
// keep its floor, the rest of the face swapped as on the bare face. A tan or a grained
// pencil, and a tan finger or one with grain, are still lost.
func TestApplyKeepsSkinHuedBandsAcrossFeatures(t *testing.T) {
	t.Parallel()
	p := photos(t)
	w := photoWays(t)[false]
	chin := skinPatchTexture("real skin", p.src, p.srcLm[8].Add(p.srcLm[57]).Scale(0.5), 7)
	hues := map[string]raster.RGB{"own": hoSkinOf(w.tgt, &w.lm), "tan": {R: 196, G: 154, B: 108},
		"pale": {R: 235, G: 205, B: 190}, "slate": {R: 90, G: 100, B: 115}}
	for _, c := range []struct {
		shape, hue string
		grain      bool
		kept       float64
	}{
		{"pencil", "own", false, 0.75}, {"curl", "own", false, 0.6}, {"curl", "tan", false, 0.6},
		{"curl", "pale", false, 0.8}, {"curl", "own", true, 0.6}, {"curl", "tan", true, 0.55},
		{"finger", "own", false, 0.9}, {"finger", "pale", false, 0.9}, {"finger", "slate", false, 0.9},
	} {
		oc := occCase{shape: skinBandShapes[c.shape], tex: occTextures[0], hue: hues[c.hue]}
		if c.grain {
			oc.tex = chin
		}
		oc.name = fmt.Sprintf("%s/%s/%s", c.shape, oc.tex.name, c.hue)
		wantBandKept(t, w, oc, c.kept)
	}
}

// wantBandKept runs the band oc on w's target and fails t unless kept of it is kept and the
// rest of the face is swapped (90 % of the bare face's swapped share).
func wantBandKept(t *testing.T, w *photoWay, oc occCase, kept float64) {
	t.Helper()
	r, _ := occlusionRun(t, w.src, w.tgt, w.lm, w.box, oc, w.bare)
	t.Logf("%s: %.1f%% kept, the rest of the face %.1f%% swapped", oc.name, 100*r.kept, 100*r.swapped)
	if r.kept < kept || r.swapped < 0.9 {
		t.Errorf("%s: %.1f%% of the band kept (want ≥ %.0f%%), the rest of the face %.1f%% swapped (want ≥ 90%% of the bare face's)",
			oc.name, 100*r.kept, 100*kept, 100*r.swapped)
	}
}

// A bare face's own bands (the nose's ridge, a brow, a crease, the lips, the hairline or a
// hat's brim along the face's outline) are no skin-hued covers: on the sample photos, bare
// and darkened, lightened, warmly lit and through JPEG at quality 30, skinBands marks nothing.
func TestSkinBandsFindNothingOnBareFaces(t *testing.T) {
	eachBareFaceSwapped(t, func(f bareFaceCase, sw *Swapper) {
		if found := marked(&sw.pairBand); found > 0 {
			t.Errorf("%s: a skin-hued band of %d grid px found", f.name, found)
		}
	})
}

// Nor on small faces (the astronaut's, 92 px; Grace Hopper's and the astronaut's shrunk to
// 81–90 px and 83 px), whose own upper lip and nose's base a codec's blur or a camera's grain
// leave level and even: as is, darkened, lightened, warmly lit, through JPEG at quality 30,
// grainy, and grainy through JPEG at quality 40.
func TestSkinBandsFindNothingOnSmallBareFaces(t *testing.T) {
	fullTier(t, "swaps three small faces seven ways")
	p := photos(t)
	flat := func(float64) float64 { return 1 }
	grain := func(float64) float64 { return 5 }
	for _, f := range []struct {
		name string
		img  *raster.Image
		box  geom.Rect
		k    float64
	}{
		{"grace_hopper", p.dst, geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}, 0.5},
		{"grace_hopper", p.dst, geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}, 0.45},
		{"astronaut", p.src, geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}, 0.9},
	} {
		small := raster.New(int(f.k*float64(f.img.W)), int(f.k*float64(f.img.H)))
		raster.ResizeArea(small, f.img)
		lm := landmarksIn(t, small, geom.Rect{X0: f.k * f.box.X0, Y0: f.k * f.box.Y0, X1: f.k * f.box.X1, Y1: f.k * f.box.Y1})
		src, err := NewSource(small, &lm)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []struct {
			name string
			img  *raster.Image
		}{{"as is", small}, {"×0.6", scaled(small, 0.6, 0.6, 0.6)}, {"×1.3", scaled(small, 1.3, 1.3, 1.3)},
			{"warm light", scaled(small, 1.15, 1, 0.8)}, {"jpeg q30", jpegOf(small, 30)},
			{"noise", noisyLit(small, 5, flat, grain)}, {"noise, jpeg q40", jpegOf(noisyLit(small, 6, flat, grain), 40)}} {
			sw := NewSwapper(src, DefaultOptions())
			sw.Apply(v.img.Clone(), &lm)
			if found := marked(&sw.pairBand); found > 0 {
				t.Errorf("%s ×%v %s: a skin-hued band of %d grid px found", f.name, f.k, v.name, found)
			}
		}
	}
}

// Nor on Grace Hopper's face at 83 px, as the flicker test's clip frames it (see lossyStill),
// through JPEG at quality 20 to 80: the blocks leave her upper lip, the nose's base and the
// shading beside a nostril's wing level and even for a third of the face, runs that lie in
// the upper lip's zone (see pairFaceFull).
func TestSkinBandsFindNothingOnASmallLossyFace(t *testing.T) {
	p := photos(t)
	frame := raster.New(320, 240)
	for y := range frame.H {
		for x := range frame.W {
			frame.Set(x, y, 0x28, 0x31, 0x3d)
		}
	}
	crop, small := raster.New(250, 250), raster.New(200, 200)
	for y := range crop.H {
		for x := range crop.W {
			r, g, b := p.dst.At(140+x, 120+y)
			crop.Set(x, y, r, g, b)
		}
	}
	raster.ResizeArea(small, crop)
	for y := range min(small.H, frame.H-20) {
		for x := range small.W {
			r, g, b := small.At(x, y)
			frame.Set(60+x, 20+y, r, g, b)
		}
	}
	lm := landmarksIn(t, frame, geom.Rect{X0: 100, Y0: 70, X1: 220, Y1: 180})
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []int{20, 30, 35, 60, 70, 80} {
		sw := NewSwapper(src, DefaultOptions())
		sw.Apply(jpegOf(frame, q), &lm)
		if found := marked(&sw.pairBand); found > 0 {
			t.Errorf("jpeg q%d: a skin-hued band of %d grid px found", q, found)
		}
	}
}

// The same bands across the astronaut's features (a face of 92 px, whose own bands along
// the upper lip are not taken for them: see pairFaceFull) are kept, in her own skin's hue,
// tan, pale or slate; each case must keep its floor, the rest of the face swapped. Bands
// were not looked for on a face under 100 px: the swap kept 16–46 % of them.
func TestApplyKeepsSkinHuedBandsAcrossASmallFacesFeatures(t *testing.T) {
	w := photoWays(t)[true]
	hues := map[string]raster.RGB{"own": hoSkinOf(w.tgt, &w.lm), "tan": {R: 196, G: 154, B: 108},
		"pale": {R: 235, G: 205, B: 190}, "slate": {R: 90, G: 100, B: 115}}
	for _, c := range []struct {
		shape, hue string
		kept       float64
	}{
		{"pencil", "own", 0.65}, {"curl", "tan", 0.7}, {"curl", "pale", 0.85}, {"curl", "slate", 0.7},
		{"finger", "own", 0.65}, {"finger", "tan", 0.9}, {"finger", "pale", 0.85}, {"finger", "slate", 0.7},
	} {
		oc := occCase{shape: skinBandShapes[c.shape], tex: occTextures[0], hue: hues[c.hue]}
		oc.name = fmt.Sprintf("%s/%s/%s", c.shape, oc.tex.name, c.hue)
		wantBandKept(t, w, oc, c.kept)
	}
}

// A Swapper's scratch state is its face's own (the band finder's scores, the repeat test's
// maps, the shadow): a face swapped after another of another size or shape on the same photo
// comes out as a fresh Swapper swaps it, so frames cut among ranks give the same output.
func TestApplyDoesNotDependOnTheFaceBefore(t *testing.T) {
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	lm := p.dstLm
	want := p.dst.Clone()
	NewSwapper(src, DefaultOptions()).Apply(want, &lm)
	c := geom.Mean(lm[:])
	s := NewSwapper(src, DefaultOptions())
	for _, k := range []geom.Pt{{X: 1.25, Y: 1.25}, {X: 0.8, Y: 1.1}, {X: 1.2, Y: 0.85}} {
		// Another face on the same photo: its grid, and the face on it, differ from the next's.
		other := lm
		for i := range other {
			q := other[i].Sub(c)
			other[i] = c.Add(geom.Pt{X: q.X * k.X, Y: q.Y * k.Y})
		}
		s.Apply(p.dst.Clone(), &other)
		out := p.dst.Clone()
		s.Apply(out, &lm)
		if !slices.Equal(out.Pix, want.Pix) {
			t.Errorf("after a face scaled by %v: the swap differs from a fresh Swapper's", k)
		}
	}
}

// The band finder reads only the scratch its own face writes: a Swapper whose band buffers
// hold another face's (every score high, every pixel seen and on the face) finds the same
// bands as a fresh Swapper in a rod of Grace Hopper's own hue held level between her lips,
// which runs off her face on both sides, where no score of hers is found.
func TestSkinBandsIgnoreAnotherFacesScratch(t *testing.T) {
	w := photoWays(t)[false]
	hue := hoSkinOf(w.tgt, &w.lm)
	b := geom.Bounds(w.lm[:])
	size := max(b.W(), b.H())
	painted := w.tgt.Clone()
	for y := range painted.H {
		for x := range painted.W {
			if u, v := lcLocal(&w.lm, size, float64(x), float64(y)); math.Abs(v) <= 0.022 && math.Abs(u) <= 1.5 {
				painted.Set(x, y, hue.R, hue.G, hue.B)
			}
		}
	}
	lm := landmarksIn(t, painted, w.box)
	fresh := NewSwapper(w.src, DefaultOptions())
	fresh.Apply(painted.Clone(), &lm)
	if marked(&fresh.pairBand) == 0 {
		t.Fatal("no band found in the pencil: nothing to compare")
	}
	s := NewSwapper(w.src, DefaultOptions())
	s.pairGrid = slices.Repeat([]pairPix{{col: [3]float32{128, 128, 128}, face: 1, pair: 100, side: 100, seen: 1}}, len(fresh.pairGrid))
	s.Apply(painted.Clone(), &lm)
	if !slices.Equal(s.pairBand.Pix, fresh.pairBand.Pix) {
		t.Errorf("the bands differ from a fresh Swapper's: %d grid px marked, want %d", marked(&s.pairBand), marked(&fresh.pairBand))
	}
}
