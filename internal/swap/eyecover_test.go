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

// ecShapes are covers over a whole eye, none of them the eighth survey's taped shield
// (s: the face's larger side; the image's left is the face's right).
var ecShapes = []occShape{
	{"sleep mask over both eyes", func(l *face.Landmarks68, s, x, y float64) bool {
		a, b := geom.Mean(l[36:42]), geom.Mean(l[42:48])
		deg := math.Atan2(b.Y-a.Y, b.X-a.X) * 180 / math.Pi
		return tsInRoundRect(x, y, hoPt(a.Add(b).Scale(0.5), s, 0, 0.01), deg, 0.36*s, 0.085*s, 0.05*s)
	}},
	{"heel of a hand rubbing an eye", func(l *face.Landmarks68, s, x, y float64) bool {
		// The palm's heel over the image's right eye, the wrist down and out past the jaw.
		c := hoPt(geom.Mean(l[42:48]), s, 0.02, 0.02)
		return tsInRotEllipse(x, y, c, 60, 0.12*s, 0.09*s) || taperedStroke(x, y, c, hoPt(c, s, 0.25, 0.6), 0.08*s, 0.09*s)
	}},
	{"cotton pad on an eye", func(l *face.Landmarks68, s, x, y float64) bool {
		// A round pad over the image's left eye, a fingertip holding it from the temple.
		c := hoPt(geom.Mean(l[36:42]), s, -0.01, 0)
		return math.Hypot(x-c.X, y-c.Y) <= 0.09*s || taperedStroke(x, y, hoPt(c, s, -0.06, 0), hoPt(c, s, -0.3, -0.05), 0.035*s, 0.04*s)
	}},
}

// ecTowel is a towelling's loops: each pixel's tone ×0.9 to ×1.06 at random.
var ecTowel = occTexture{"towel", func(c raster.RGB, _, _ int, rng *rand.Rand) raster.RGB {
	return svScaled(c, 0.9+0.16*rng.Float64())
}}

func TestApplyKeepsCoversOverAnEye(t *testing.T) {
	fullTier(t, "swaps 36 photos with an eye covered")
	textures := []occTexture{{"flat", func(c raster.RGB, _, _ int, _ *rand.Rand) raster.RGB { return c }}, ecTowel}
	for _, w := range hoWays(t) {
		src, err := NewSource(w.srcImg, &w.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		bare := bareSwapped(t, src, w.tgt, w.lm)
		hues := []raster.RGB{w.ownSkin, {R: 196, G: 142, B: 104}, {R: 96, G: 66, B: 50}, {R: 44, G: 52, B: 92}}
		var kept, swapped float64
		n := 0
		for si, sh := range ecShapes {
			for hi, hue := range hues {
				tex := textures[(si+hi)%2]
				c := occCase{shape: sh, tex: tex, hue: hue, name: fmt.Sprintf("%s/%s/%v", sh.name, tex.name, hue)}
				r, _, _ := tsRun(t, src, w.tgt, w.lm, w.box, c, bare)
				t.Logf("%s, %s: %.1f%% kept, %.1f%% swapped", w.name, c.name, 100*r.kept, 100*r.swapped)
				kept, swapped = kept+r.kept, swapped+r.swapped
				n++
			}
		}
		// A cover of the skin's own look is not told (see coveredEyes), and a sleep mask leaves
		// little of the astronaut's face clear of it to swap.
		if kept, swapped = kept/float64(n), swapped/float64(n); kept < 0.88 || swapped < 0.8 {
			t.Errorf("%s: covers over an eye %.1f%% kept (want 88%% or more), the rest of the face %.1f%% swapped (want 80%% or more)", w.name, 100*kept, 100*swapped)
		}
	}
}

// ecClosed is img with lm's eyes eyes (0: the image's left) closed (squint false) or
// squinting: each one's hull, widened a little, painted softly in the colour of the lid's skin
// between the eye and its brow, down to the lower lid where closed (a lash line the darkness
// of the eye's darkest along it), and but for a slit about the corners' line where squinting.
func ecClosed(img *raster.Image, lm *face.Landmarks68, squint bool, eyes ...int) *raster.Image {
	out := img.Clone()
	b := geom.Bounds(lm[:])
	s := math.Max(b.W(), b.H())
	for _, k := range eyes {
		eye, brow := lm[36+6*k:42+6*k], lm[17+5*k:22+5*k]
		c := geom.Mean(eye)
		lid := c.Add(geom.Mean(brow)).Scale(0.5)
		var hull []geom.Pt
		_, hull = convexHull(append([]geom.Pt(nil), eye...), nil, nil)
		var rs, gs, bs, dark []int
		eb := geom.Bounds(eye)
		for y := int(eb.Y0) - 2; y <= int(eb.Y1)+2; y++ {
			for x := int(eb.X0) - 2; x <= int(eb.X1)+2; x++ {
				if insideConvex(hull, geom.Pt{X: float64(x), Y: float64(y)}) {
					r, g, bl := img.At(x, y)
					dark = append(dark, int(r)+int(g)+int(bl))
				}
			}
		}
		for y := int(lid.Y - 0.015*s); y <= int(lid.Y+0.015*s); y++ {
			for x := int(lid.X - 0.03*s); x <= int(lid.X+0.03*s); x++ {
				r, g, bl := img.At(x, y)
				rs, gs, bs = append(rs, int(r)), append(gs, int(g)), append(bs, int(bl))
			}
		}
		slices.Sort(rs)
		slices.Sort(gs)
		slices.Sort(bs)
		slices.Sort(dark)
		skin := [3]float64{float64(rs[len(rs)/2]), float64(gs[len(gs)/2]), float64(bs[len(bs)/2])}
		lash := float64(dark[len(dark)/20]) / (skin[0] + skin[1] + skin[2])
		lower := []geom.Pt{eye[0], eye[5], eye[4], eye[3]}
		cover := func(x, y float64) bool {
			p := geom.Pt{X: x, Y: y}
			grown := c.Add(p.Sub(c).Scale(1 / 1.2))
			if !insideConvex(hull, grown) {
				return false
			}
			if squint {
				// How far below the corners' line, in eye widths: the lids leave a slit
				// about it, the iris's middle in it.
				w := eye[0].Dist(eye[3])
				below := dot(p.Sub(eye[0]), geom.Pt{X: eye[0].Y - eye[3].Y, Y: eye[3].X - eye[0].X}) / (w * w)
				return below < -0.03 || below > 0.1
			}
			return true
		}
		cov := tsCoverage(img.W, img.H, cover)
		line := tsCoverage(img.W, img.H, func(x, y float64) bool {
			for i := range 3 {
				if !squint && segDist(geom.Pt{X: x, Y: y}, lower[i], lower[i+1]) <= max(1, 0.008*s) {
					return true
				}
			}
			return false
		})
		for i, a := range cov {
			if a <= 0 && line[i] <= 0 {
				continue
			}
			x, y := i%img.W, i/img.W
			r, g, bl := out.At(x, y)
			px := [3]float64{float64(r), float64(g), float64(bl)}
			for j := range 3 {
				px[j] = a*skin[j] + (1-a)*px[j]
				px[j] = line[i]*lash*skin[j] + (1-line[i])*px[j]
			}
			out.Set(x, y, clampU8(px[0]), clampU8(px[1]), clampU8(px[2]))
		}
	}
	return out
}

func TestCoveredEyesLeaveBareClosedAndSquintingEyes(t *testing.T) {
	fullTier(t, "finds landmarks on ten photos")
	for wi, w := range hoWays(t) {
		src, err := NewSource(w.srcImg, &w.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []struct {
			name string
			img  *raster.Image
		}{
			{"bare", w.tgt}, {"eyes closed", ecClosed(w.tgt, &w.lm, false, 0, 1)}, {"squinting", ecClosed(w.tgt, &w.lm, true, 0, 1)},
			{"winking", ecClosed(w.tgt, &w.lm, false, 1)}, {"one eye squinting", ecClosed(w.tgt, &w.lm, true, 0)},
		} {
			lm := landmarksIn(t, v.img, w.box)
			s := NewSwapper(src, DefaultOptions())
			_, _, fr, ok := s.place(v.img, &lm)
			if !ok {
				t.Fatalf("%s, %s: no face", w.name, v.name)
			}
			// Each eye is there, or too few pixels to tell (the astronaut's closed eyes).
			for k := range 2 {
				if s.eyeHull(&lm, k, fr) {
					if st, _, _ := s.eyeLook(v.img, fr); st != eyeThere {
						t.Errorf("%s, %s: eye %d taken for covered", w.name, v.name, k)
					}
				}
			}
			s.occ.Reset(fr)
			s.coveredEyes(v.img, &lm, &s.mask, fr)
			if slices.Contains(s.occ.Pix, 1) {
				t.Errorf("%s, %s: an eye's cover kept", w.name, v.name)
			}
			saveForEyes(t, v.img, fmt.Sprintf("eyecover-%d-%s.png", wi, v.name))
		}
	}
}

// ecVeil is img with a veil over lm's eye k (0: the image's left): an ellipse about it, grown
// by grow, blended towards tone by a: a glare (towards white, the eye still seen through it:
// a lamp on a lens, a haze) or a deep shadow (towards black).
func ecVeil(img *raster.Image, lm *face.Landmarks68, k int, a, grow float64, tone raster.RGB) *raster.Image {
	out := img.Clone()
	eye := lm[36+6*k : 42+6*k]
	c, w := geom.Mean(eye), eye[0].Dist(eye[3])
	for y := range img.H {
		for x := range img.W {
			q := math.Hypot((float64(x)-c.X)/(0.75*grow*w), (float64(y)-c.Y)/(0.55*grow*w))
			if q >= 1 {
				continue
			}
			wt := a * math.Min(1, (1-q)*0.55*grow*w/1.5)
			r, g, b := img.At(x, y)
			out.Set(x, y, clampU8(float64(r)+wt*(float64(tone.R)-float64(r))), clampU8(float64(g)+wt*(float64(tone.G)-float64(g))),
				clampU8(float64(b)+wt*(float64(tone.B)-float64(b))))
		}
	}
	return out
}

// Where an eye is seen through a veil (a glare on one lens, a haze) or the whole face is
// blurred (a moving head, a lens out of focus: one eye's darks may blur away before the
// other's), its landmarks' hull still holds the eye, only fainter: coveredEyes keeps nothing.
func TestCoveredEyesLeaveVeiledAndBlurredEyesBare(t *testing.T) {
	fullTier(t, "finds landmarks on 22 photos")
	for wi, w := range hoWays(t) {
		src, err := NewSource(w.srcImg, &w.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		type variant struct {
			name string
			img  *raster.Image
		}
		var vs []variant
		for k := range 2 {
			for _, a := range []float64{0.35, 0.45, 0.55} {
				vs = append(vs, variant{fmt.Sprintf("eye %d under a glare of %.2f", k, a), ecVeil(w.tgt, &w.lm, k, a, 1, raster.RGB{R: 255, G: 255, B: 250})})
			}
			vs = append(vs, variant{fmt.Sprintf("eye %d in a deep shadow", k), ecVeil(w.tgt, &w.lm, k, 1, 2.5, raster.RGB{})})
		}
		for _, sigma := range []float64{3, 4, 5, 6, 7} {
			blurred := raster.New(w.tgt.W, w.tgt.H)
			raster.GaussianBlur8(blurred, w.tgt, sigma)
			vs = append(vs, variant{fmt.Sprintf("blurred, σ %v", sigma), blurred})
		}
		for _, v := range vs {
			lm := landmarksIn(t, v.img, w.box)
			s := NewSwapper(src, DefaultOptions())
			_, _, fr, ok := s.place(v.img, &lm)
			if !ok {
				t.Fatalf("%s, %s: no face", w.name, v.name)
			}
			s.occ.Reset(fr)
			s.coveredEyes(v.img, &lm, &s.mask, fr)
			if slices.Contains(s.occ.Pix, 1) {
				t.Errorf("%s, %s: an eye's cover kept", w.name, v.name)
			}
			saveForEyes(t, v.img, fmt.Sprintf("eyeveil-%d-%s.png", wi, v.name))
		}
	}
}

// A cotton pad of the astronaut's own skin's look (flat, or towelling a shade darker) over an
// eye looks as the skin about her other eye does (see eyeCoverAlike): the skin about the pad
// is no cover, and the rest of her face is swapped as on the bare face. Followed, the pad
// led into the cheek and the temple: 87–88 % of the rest was swapped.
func TestCoveredEyesLeaveTheSkinAboutASkinLookingCover(t *testing.T) {
	w := hoWays(t)[1]
	src, err := NewSource(w.srcImg, &w.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	bare := bareSwapped(t, src, w.tgt, w.lm)
	for _, c := range []occCase{
		{shape: ecShapes[2], tex: occTextures[0], hue: w.ownSkin, name: "flat, own skin"},
		{shape: ecShapes[2], tex: ecTowel, hue: svScaled(w.ownSkin, 0.9), name: "towel, own skin ×0.9"},
	} {
		if r, _, _ := tsRun(t, src, w.tgt, w.lm, w.box, c, bare); r.swapped < 0.92 {
			t.Errorf("%s: the rest of the face %.1f%% swapped (want 92%% or more)", c.name, 100*r.swapped)
		}
	}
}

// A towelling pad over Grace Hopper's eye, reaching past an eye's width from its centre, is
// followed out to its rim (see eyeCoverReach): tan, brown or rosy, each is kept whole. Followed
// within 0.9 eye widths, 93–95 % of each was kept.
func TestApplyKeepsAWidePadOverAnEye(t *testing.T) {
	w := hoWays(t)[0]
	src, err := NewSource(w.srcImg, &w.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	bare := bareSwapped(t, src, w.tgt, w.lm)
	pad := occShape{"wide pad", func(l *face.Landmarks68, s, x, y float64) bool {
		c := hoPt(geom.Mean(l[36:42]), s, -0.01, 0)
		return math.Hypot(x-c.X, y-c.Y) <= 0.18*s
	}}
	for _, hue := range []raster.RGB{{R: 196, G: 142, B: 104}, {R: 96, G: 66, B: 50}, {R: 160, G: 120, B: 100}} {
		c := occCase{shape: pad, tex: ecTowel, hue: hue, name: fmt.Sprintf("wide pad/towel/%v", hue)}
		if r, _, _ := tsRun(t, src, w.tgt, w.lm, w.box, c, bare); r.kept < 0.975 {
			t.Errorf("%s: %.1f%% kept (want 97.5%% or more)", c.name, 100*r.kept)
		}
	}
}
