package swap

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// fgShapes are small covers over the nostrils' and the brows' zones, where the colour tests
// and the spots do not look and dropSmall takes out what is found beside them (s: the face's
// larger side; the image's left is the face's right).
var fgShapes = []occShape{
	{"stud on a nostril's wing", func(l *face.Landmarks68, s, x, y float64) bool {
		return tsInRotEllipse(x, y, hoPt(l[35], s, 0.005, -0.035), 0, 0.03*s, 0.03*s)
	}},
	{"septum clicker", func(l *face.Landmarks68, s, x, y float64) bool {
		// A thick half-hoop hanging from the septum over the upper lip.
		c := hoPt(l[33], s, 0, 0.005)
		d := math.Hypot(x-c.X, y-c.Y)
		return y >= c.Y && d >= 0.02*s && d <= 0.045*s
	}},
	{"nasal cannula's prongs", func(l *face.Landmarks68, s, x, y float64) bool {
		// Two prongs up into the nostrils from the tube's bend between them.
		a, b := hoPt(l[32], s, 0, 0.03), hoPt(l[34], s, 0, 0.03)
		return tsNearSeg(x, y, a, b, 0.018*s) || tsNearSeg(x, y, a, hoPt(l[32], s, 0, -0.01), 0.016*s) ||
			tsNearSeg(x, y, b, hoPt(l[34], s, 0, -0.01), 0.016*s)
	}},
	{"stud through a brow", func(l *face.Landmarks68, s, x, y float64) bool {
		// A curved barbell's two beads on and under the image's left brow's middle.
		return tsInRotEllipse(x, y, hoPt(l[19], s, 0, 0.005), 0, 0.022*s, 0.022*s) ||
			tsInRotEllipse(x, y, hoPt(l[19], s, -0.01, 0.045), 0, 0.022*s, 0.022*s)
	}},
	{"plaster at a brow's end", func(l *face.Landmarks68, s, x, y float64) bool {
		return tsInRoundRect(x, y, hoPt(l[26], s, -0.03, 0.02), 110, 0.05*s, 0.025*s, 0.01*s)
	}},
}

// fgHues are the small covers' colours: foreign ones first, then the skin's (own: the face's).
func fgHues(own raster.RGB) []hoHue {
	return []hoHue{
		{"navy", raster.RGB{R: 34, G: 44, B: 96}, false}, {"lime", raster.RGB{R: 150, G: 200, B: 60}, false},
		{"black", raster.RGB{R: 20, G: 20, B: 24}, false}, {"ribbed violet", raster.RGB{R: 120, G: 60, B: 150}, false},
		{"own skin", own, true}, {"sand", raster.RGB{R: 210, G: 178, B: 140}, true},
	}
}

// fgRibs is a ribbed finish: bands 4 pixels apart, ×0.85 and ×1.05.
func fgRibs(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
	if (x+y)%8 < 4 {
		return svScaled(c, 0.85)
	}
	return svScaled(c, 1.05)
}

// Small covers of a colour the face has not, over the nostrils and the brows, stay in front:
// a stud on a nostril's wing, a septum clicker, a nasal cannula's prongs, a stud through a
// brow and a plaster at a brow's end, navy, lime, black and violet (ribbed), into both
// sample photos, the landmarks found again on each. The colour tests leave the nostrils'
// zone out and test the brows' only where very far, the spots test neither, and dropSmall
// took out what was found beside them: all of them were swapped over. Black ones (as dark as
// the nostrils and the brows) and those of the skin's hues are not judged; FACEFUSION_TEST_CASES=1
// logs every case.
func TestSmallForeignCoversStayOverTheNoseAndBrows(t *testing.T) {
	fullTier(t, "swaps 60 photos with small covers")
	ways := hoWays(t)[:1]
	// The astronaut's photo is too small a face for such covers: her close-up clip's.
	p := photos(t)
	imgs, lms := clipFaces(t, testenv.CloseUpClipFrames(t, "astronaut.png", 1), 1)
	ways = append(ways, hoWay{name: "grace_hopper → astronaut's close-up", srcImg: p.dst, tgt: imgs[0], srcLm: p.dstLm, lm: lms[0],
		box: geom.Rect{X0: 269, Y0: 77, X1: 573, Y1: 378}, ownSkin: hoSkinOf(imgs[0], &lms[0])})
	for _, w := range ways {
		src, err := NewSource(w.srcImg, &w.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		bare := bareSwapped(t, src, w.tgt, w.lm)
		var kept, swapped, n float64
		for si, sh := range fgShapes {
			for hi, h := range fgHues(w.ownSkin) {
				tex := occTexture{"flat", func(c raster.RGB, _, _ int, _ *rand.Rand) raster.RGB { return c }}
				if h.name == "ribbed violet" {
					tex = occTexture{"ribbed", fgRibs}
				}
				c := occCase{shape: sh, tex: tex, hue: h.c, name: sh.name + "/" + h.name}
				r, after, on := tsRun(t, src, w.tgt, w.lm, w.box, c, bare)
				if si == 0 && hi == 0 {
					saveForEyes(t, after, fmt.Sprintf("foreign-%dx%d.png", w.tgt.W, w.tgt.H))
				}
				if on < 8 {
					t.Errorf("%s, %s: only %.0f px of the cover's interior on the face: the test's shape is misplaced", w.name, c.name, on)
					continue
				}
				if os.Getenv("FACEFUSION_TEST_CASES") != "" || !h.skin && h.name != "black" && r.kept < 0.6 {
					t.Logf("%s, %s: %.1f%% kept, the rest %.1f%% swapped", w.name, c.name, 100*r.kept, 100*r.swapped)
				}
				if h.skin || h.name == "black" {
					continue
				}
				kept, swapped, n = kept+r.kept, swapped+r.swapped, n+1
			}
		}
		t.Logf("%s: the foreign hues %.1f%% kept, the rest of the face %.1f%% swapped (of the bare face's)", w.name, 100*kept/n, 100*swapped/n)
		if kept/n < 0.85 {
			t.Errorf("%s: the small covers of foreign hues %.1f%% kept, want ≥ 85%%", w.name, 100*kept/n)
		}
		if swapped/n < 0.95 {
			t.Errorf("%s: the rest of the face %.1f%% swapped, want ≥ 95%%", w.name, 100*swapped/n)
		}
	}
}

// TestSmallForeignCoversStayOverTheNoseAndBrows's quick case: a lime stud on Grace Hopper's
// nostril's wing and a navy septum clicker.
func TestForeignStudAndClickerStay(t *testing.T) {
	w := hoWays(t)[0]
	src, err := NewSource(w.srcImg, &w.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	flat := occTexture{"flat", func(c raster.RGB, _, _ int, _ *rand.Rand) raster.RGB { return c }}
	for _, c := range []occCase{
		{shape: fgShapes[0], tex: flat, hue: raster.RGB{R: 150, G: 200, B: 60}, name: "lime stud"},
		{shape: fgShapes[1], tex: flat, hue: raster.RGB{R: 34, G: 44, B: 96}, name: "navy clicker"},
	} {
		r, _, _ := tsRun(t, src, w.tgt, w.lm, w.box, c, 1)
		if r.kept < 0.9 {
			t.Errorf("%s: %.1f%% of it kept, want ≥ 90%%", c.name, 100*r.kept)
		}
	}
}

// No bare face's nostrils, nose, brows or their shade are taken for a cover of a foreign
// colour: both sample photos plain, darker, brighter, mirrored, grainy and at two thirds the
// size, warmer and cooler lit, and a chroma-noisy third of the size.
func TestForeignFindsNothingOnBareFaces(t *testing.T) {
	fullTier(t, "finds the landmarks of 18 photos")
	p := photos(t)
	for _, toAstro := range []bool{false, true} {
		srcImg, srcLm, tgt, box := p.src, p.srcLm, p.dst, geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}
		if toAstro {
			srcImg, srcLm, tgt, box = p.dst, p.dstLm, p.src, geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}
		}
		s := probeSwapper(t, srcImg, &srcLm)
		vs := bareVariants(t, tgt, box)
		for _, k := range [][3]float64{{1.12, 1, 0.85}, {0.88, 1, 1.15}} {
			v := bareVariant{name: fmt.Sprintf("lit ×%v", k), img: tgt.Clone()}
			for i := range v.img.Pix {
				v.img.Pix[i] = clampU8(k[i%3] * float64(tgt.Pix[i]))
			}
			v.lm = landmarksIn(t, v.img, box)
			vs = append(vs, v)
		}
		third := raster.New(tgt.W/3, tgt.H/3)
		raster.ResizeArea(third, tgt)
		rng := rand.New(rand.NewPCG(3, 3))
		for i := range third.Pix {
			third.Pix[i] = clampU8(float64(third.Pix[i]) + 4*rng.NormFloat64())
		}
		vs = append(vs, bareVariant{name: "a third, chroma noise", img: third,
			lm: landmarksIn(t, third, geom.Rect{X0: box.X0 / 3, Y0: box.Y0 / 3, X1: box.X1 / 3, Y1: box.Y1 / 3})})
		for _, v := range vs {
			takenBack(s, v.img, &v.lm)
			if s.foreignKept > 0 {
				t.Errorf("into astronaut %v, %s: %d px of the bare face kept as covers of a foreign colour", toAstro, v.name, s.foreignKept)
			}
		}
	}
}

// Nor is a close-up clip's: lossy, grainy frames of both sample photos moving.
func TestForeignFindsNothingOnBareClips(t *testing.T) {
	fullTier(t, "decodes two close-up clips and finds their landmarks")
	p := photos(t)
	const frames = 6
	for _, face := range []string{"astronaut.png", "grace_hopper.png"} {
		src, err := NewSource(p.dst, &p.dstLm)
		if face == "astronaut.png" {
			src, err = NewSource(p.src, &p.srcLm)
		}
		if err != nil {
			t.Fatal(err)
		}
		s := NewSwapper(src, DefaultOptions())
		imgs, lms := clipFaces(t, testenv.CloseUpClipFrames(t, face, frames), frames)
		for i := range frames {
			s.FindCover(imgs[i], &lms[i])
			if s.foreignKept > 0 {
				t.Errorf("%s frame %d: %d px of the bare face kept as covers of a foreign colour", face, i, s.foreignKept)
			}
		}
	}
}

// Where the skin's model does not describe the face (a cover of the skin's hue over its
// samples under a tinted lamp made one whose every colour was foreign to the face's), the
// zones' colours are foreign only as most of the face's are, and nothing is kept: each sample
// photo judged with the model of itself under a light far off (blue, orange, green, magenta).
func TestForeignKeepsNothingWhereTheSkinModelFails(t *testing.T) {
	t.Parallel()
	probeWays(t, func(toAstro bool, s *Swapper, tgt *raster.Image, lm face.Landmarks68) {
		for _, k := range [][3]float64{{0.4, 0.9, 1.6}, {1.6, 0.8, 0.4}, {0.6, 1.3, 0.6}, {1.4, 0.6, 1.4}} {
			lit := tgt.Clone()
			for i := range lit.Pix {
				lit.Pix[i] = clampU8(k[i%3] * float64(tgt.Pix[i]))
			}
			size, _, fr, ok := s.place(lit, &lm)
			if !ok {
				t.Fatal("the face was not placed")
			}
			s.features(&lm, fr)
			s.occ.Reset(fr)
			s.sampleSkin(lit, &lm, size, fr)
			m := s.fitSkin()
			s.place(tgt, &lm)
			s.features(&lm, fr)
			s.occ.Reset(fr)
			s.held.Reset(fr)
			if n := s.keepForeign(tgt, &lm, &s.mask, fr, m); n > 0 {
				t.Errorf("into astronaut %v, the skin's model from a light ×%v: %d px kept as covers of a foreign colour", toAstro, k, n)
			}
		}
	})
}

// Nor does a coloured light tint the nose or a brow into a cover: a rim light from either
// side (blue, green, magenta, red), a gel's spot on the nose (magenta, green) and a nose red
// from a cold fade into the skin, where a cover's edge is a step.
func TestForeignKeepsNothingALightTints(t *testing.T) {
	fullTier(t, "swaps 14 lit photos")
	type light struct {
		name string
		k    [3]float64
		// at is how much of k a pixel takes, from its offset to the nose's tip in shares of
		// the face's size.
		at func(dx, dy float64) float64
	}
	fromLeft := func(dx, _ float64) float64 { return 0.3 - dx/0.4 }
	fromRight := func(dx, _ float64) float64 { return 0.3 + dx/0.4 }
	spot := func(r float64) func(dx, dy float64) float64 {
		return func(dx, dy float64) float64 { return 1.5 - math.Hypot(dx, dy)/r }
	}
	lights := []light{
		{"a blue rim light from the right", [3]float64{0.45, 0.7, 1.7}, fromRight},
		{"a green rim light from the left", [3]float64{0.55, 1.4, 0.6}, fromLeft},
		{"a magenta rim light from the left", [3]float64{1.4, 0.5, 1.4}, fromLeft},
		{"a red rim light from the right", [3]float64{1.5, 0.6, 0.6}, fromRight},
		{"a magenta gel on the nose", [3]float64{1.3, 0.55, 1.35}, spot(0.12)},
		{"a green gel on the nose", [3]float64{0.65, 1.3, 0.6}, spot(0.12)},
		{"a nose red from a cold", [3]float64{1.2, 0.62, 0.65}, spot(0.08)},
	}
	probeWays(t, func(toAstro bool, s *Swapper, tgt *raster.Image, lm face.Landmarks68) {
		b := geom.Bounds(lm[:])
		size := math.Max(b.W(), b.H())
		for _, l := range lights {
			lit := tgt.Clone()
			for y := range lit.H {
				for x := range lit.W {
					a := min(1, max(0, l.at((float64(x)-lm[30].X)/size, (float64(y)-lm[30].Y)/size)))
					for c := range 3 {
						i := y*lit.Stride + 3*x + c
						lit.Pix[i] = clampU8(float64(tgt.Pix[i]) * (1 + (l.k[c]-1)*a))
					}
				}
			}
			takenBack(s, lit, &lm)
			if s.foreignKept > 0 {
				t.Errorf("into astronaut %v, %s: %d px of the bare face kept as covers of a foreign colour", toAstro, l.name, s.foreignKept)
			}
		}
	})
}

// Nor is a pale face's through a cheap webcam: grace_hopper's photo with strong colour noise
// (σ 16 in Cb and Cr, per pixel and per 2×2 block) through JPEG at quality 30, whose
// subsampled chroma turns her dark nostrils crimson and magenta, far across the skin's axis.
func TestForeignFindsNothingOnANoisyLossyBareFace(t *testing.T) {
	p := photos(t)
	s := probeSwapper(t, p.src, &p.srcLm)
	for _, block := range []int{1, 2} {
		img := p.dst.Clone()
		rng := rand.New(rand.NewPCG(1, 1))
		bw, bh := (img.W+block-1)/block, (img.H+block-1)/block
		cb, cr := make([]float64, bw*bh), make([]float64, bw*bh)
		for i := range cb {
			cb[i], cr[i] = 16*rng.NormFloat64(), 16*rng.NormFloat64()
		}
		for y := range img.H {
			for x := range img.W {
				k, i := (y/block)*bw+x/block, y*img.Stride+3*x
				img.Pix[i] = clampU8(float64(img.Pix[i]) + 1.402*cr[k])
				img.Pix[i+1] = clampU8(float64(img.Pix[i+1]) - 0.344*cb[k] - 0.714*cr[k])
				img.Pix[i+2] = clampU8(float64(img.Pix[i+2]) + 1.772*cb[k])
			}
		}
		img = jpegOf(img, 30)
		lm := landmarksIn(t, img, geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342})
		takenBack(s, img, &lm)
		if s.foreignKept > 0 {
			t.Errorf("noise in %d×%d blocks: %d px of the bare face kept as covers of a foreign colour", block, block, s.foreignKept)
		}
	}
}
