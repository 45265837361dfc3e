package swap

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Large covers before the middle of the face (s: the face's larger side, about 14 cm: a finger
// an eighth of it wide): most of the face's centre hidden, its cheeks, forehead or the skin
// between the fingers still seen.
var spreadShapes = []occShape{
	{"spread hand", func(l *face.Landmarks68, s, x, y float64) bool {
		// The palm over the nose and mouth, four fingers up and apart over the eyes, the face
		// seen between them, the thumb out to the image's right.
		c := hoPt(l[33].Add(l[62]).Scale(0.5), s, 0, 0.02)
		if fsFar(x, y, c, 0.9*s) {
			return false
		}
		if tsInRotEllipse(x, y, c, 0, 0.22*s, 0.2*s) {
			return true
		}
		for k := range 4 {
			u := float64(k) - 1.5
			base := hoPt(c, s, 0.1*u, -0.14)
			if tsNearSeg(x, y, base, hoPt(base, s, 0.12*u, -0.38+0.03*math.Abs(u)), 0.06*s) {
				return true
			}
		}
		return tsNearSeg(x, y, hoPt(c, s, 0.15, 0.05), hoPt(c, s, 0.4, -0.08), 0.065*s)
	}},
	{"flat hand over nose and mouth", func(l *face.Landmarks68, s, x, y float64) bool {
		// Fingers together, the hand across the face below the eyes.
		c := hoPt(l[33], s, 0.03, 0.02)
		return tsInRoundRect(x, y, c, -8, 0.36*s, 0.16*s, 0.08*s)
	}},
	{"book before the lower face", func(l *face.Landmarks68, s, x, y float64) bool {
		// Its top edge across the nose's bridge, a little tilted.
		c := hoPt(l[30], s, 0, 0.42)
		return tsInRoundRect(x, y, c, 4, 0.55*s, 0.4*s, 0.01*s)
	}},
	{"phone before the mouth", func(l *face.Landmarks68, s, x, y float64) bool {
		c := hoPt(l[62], s, -0.02, 0.05)
		return tsInRoundRect(x, y, c, 90, 0.28*s, 0.15*s, 0.035*s)
	}},
	{"hand over the forehead and an eye", func(l *face.Landmarks68, s, x, y float64) bool {
		// The palm over the image's left eye and brow, fingers across the forehead.
		e := geom.Mean(l[36:42])
		if tsInRotEllipse(x, y, hoPt(e, s, 0.02, -0.06), -15, 0.22*s, 0.17*s) {
			return true
		}
		for k := range 4 {
			base := hoPt(e, s, 0.12, -0.1+0.07*float64(k)-0.2)
			if tsNearSeg(x, y, base, hoPt(base, s, 0.4, -0.05-0.02*float64(k)), 0.045*s) {
				return true
			}
		}
		return false
	}},
}

// spreadHues are the covers' hues: three far from skin, two browns, and the target's own.
func spreadHues(own raster.RGB) []hoHue {
	return []hoHue{
		{"maroon", raster.RGB{R: 118, G: 30, B: 42}, false}, {"slate", raster.RGB{R: 88, G: 98, B: 112}, false},
		{"forest", raster.RGB{R: 40, G: 92, B: 50}, false}, {"espresso", raster.RGB{R: 72, G: 46, B: 34}, false},
		{"caramel", raster.RGB{R: 176, G: 112, B: 62}, false}, {"own skin", own, true},
	}
}

// spreadRun paints c over w's target, finds the landmarks again and swaps; it returns the
// share of the cover's interior kept and the share of the rest of the face (clear of the
// cover by 5 % of the face size) swapped, of the share of those same pixels the swap changes
// on the bare face (bareAfter): a central cover leaves the face's rim, which even a bare
// swap feathers, so the bare face's share over its whole hull is no measure there.
func spreadRun(t testing.TB, src *Source, w hoWay, bareAfter *raster.Image, c occCase) (kept, swapped float64) {
	t.Helper()
	b := geom.Bounds(w.lm[:])
	size := math.Max(b.W(), b.H())
	cov := tsCoverage(w.tgt.W, w.tgt.H, func(x, y float64) bool { return c.shape.inside(&w.lm, size, x, y) })
	painted := w.tgt.Clone()
	rng := rand.New(rand.NewPCG(7, 7))
	for i, a := range cov {
		if a > 0 {
			x, y := i%w.tgt.W, i/w.tgt.W
			col := c.tex.colour(c.hue, x, y, rng)
			r, g, bl := w.tgt.At(x, y)
			painted.Set(x, y, clampU8(a*float64(col.R)+(1-a)*float64(r)), clampU8(a*float64(col.G)+(1-a)*float64(g)), clampU8(a*float64(col.B)+(1-a)*float64(bl)))
		}
	}
	found := landmarksIn(t, painted, w.box)
	after := painted.Clone()
	NewSwapper(src, DefaultOptions()).Apply(after, &found)
	saveForEyes(t, after, strings.NewReplacer(" ", "-", "/", "_", "→", "to").Replace(w.name+"-"+c.name)+".png")
	hull := faceHull(&w.lm)
	hb := geom.Bounds(hull)
	rad := int(0.05 * size)
	changed := func(a, b *raster.Image, x, y int) bool {
		r1, g1, b1 := a.At(x, y)
		r0, g0, b0 := b.At(x, y)
		return math.Abs(float64(r1)-float64(r0))+math.Abs(float64(g1)-float64(g0))+math.Abs(float64(b1)-float64(b0)) > 12
	}
	var n, k, m, sw float64
	for y := range w.tgt.H {
		for x := range w.tgt.W {
			if !inHull(hull, hb, x, y) {
				continue
			}
			if a := cov[y*w.tgt.W+x]; a >= 1 {
				n++
				if !changed(after, painted, x, y) {
					k++
				}
				continue
			} else if a > 0 || (x+y)%3 != 0 || !changed(bareAfter, w.tgt, x, y) {
				continue
			}
			near := false
			for v := max(0, y-rad); v <= min(w.tgt.H-1, y+rad) && !near; v += 2 {
				for u := max(0, x-rad); u <= min(w.tgt.W-1, x+rad); u += 2 {
					if cov[v*w.tgt.W+u] > 0 {
						near = true
						break
					}
				}
			}
			if near {
				continue
			}
			m++
			if changed(after, painted, x, y) {
				sw++
			}
		}
	}
	return k / n, sw / m
}

// TestApplySwapsTheFaceAboutLargeCentralCovers: a hand spread before the face (the palm over
// the nose and mouth, the fingers apart over the eyes) hides most of the points the landmark
// model places, which it then guesses pulled in; the swap shrank into the middle of the face,
// or took the face about the hand for a cover, and left the cheeks, the forehead and the skin
// between the fingers the target's. A flat hand over the nose and mouth hides fewer.
func TestApplySwapsTheFaceAboutLargeCentralCovers(t *testing.T) {
	floors := map[string][3]float64{ // the cover's hues not of skin: the least kept, the least and mean swapped
		"spread hand": {0.8, 0.35, 0.5}, "flat hand over nose and mouth": {0.8, 0.6, 0.75},
	}
	for _, w := range hoWays(t) {
		src, err := NewSource(w.srcImg, &w.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		bareAfter := w.tgt.Clone()
		NewSwapper(src, DefaultOptions()).Apply(bareAfter, &w.lm)
		for _, sh := range spreadShapes[:2] {
			f := floors[sh.name]
			var sum, n float64
			for _, tx := range occTextures[:2] {
				for _, h := range spreadHues(w.ownSkin) {
					c := occCase{shape: sh, tex: tx, hue: h.c, name: sh.name + "/" + tx.name + "/" + h.name}
					kept, swapped := spreadRun(t, src, w, bareAfter, c)
					t.Logf("%s, %s: %.1f%% kept, the rest %.1f%% swapped", w.name, c.name, 100*kept, 100*swapped)
					if h.skin {
						continue // a hand of the face's own hue may be swapped over (docs/running.md)
					}
					sum, n = sum+swapped, n+1
					if kept < f[0] || swapped < f[1] {
						t.Errorf("%s, %s: %.1f%% of the cover kept, the rest of the face %.1f%% swapped, want ≥ %.0f%% and ≥ %.0f%%", w.name, c.name, 100*kept, 100*swapped, 100*f[0], 100*f[1])
					}
				}
			}
			if sum/n < f[2] {
				t.Errorf("%s, %s: the rest of the face %.1f%% swapped (mean), want ≥ %.0f%%", w.name, sh.name, 100*sum/n, 100*f[2])
			}
		}
	}
}
