package swap

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// A third survey of the classic swap's occlusion handling (issue 32's "clips other than your
// tests' agree"), written blind: its author read the surveys' measuring code but none of the
// occluder rules, and chose the covers for what real footage holds, none of them one of the
// other surveys' or the occluder tests' shapes: a palm on the cheek, a mug at the lips, a
// headset's boom, side-swept bangs over an eye, a lollipop, filled sunglasses, a cigarette, a
// plaster on the cheek, a fist under the chin with a finger up the jaw, a finger to the lips,
// an eye patch on its strap and a tissue at the nose, sized as on a real face. Ten hues, six
// of them skin's (the target's own, a warmer own, peach, tan, dark brown, pink) and four
// others (white, black, teal, yellow); four textures (flat, light falling across it, fine
// colour noise, camera.png's shading about the hue).
//
// Every cover has a soft edge, as a real one does: it is painted by its coverage (4×4 samples
// a pixel on its outline) blurred by a 3×3 binomial, so it blends into the face over one to
// two pixels. The measure is TestOccluderSecondSurvey's (occlusionRun's): the share of the
// cover's pixels in the face's hull kept within 12 levels, and the share of the rest of the
// face (clear of the cover by 5 % of the face size) swapped, of the bare face's; but only the
// cover's interior (coverage 1 after the blur) counts as the cover, and its soft rim, part
// face and part cover, counts as neither. Both ways between the sample photos (240 covers
// each: every shape and hue with two textures), and into grace_hopper darkened to 0.75 and
// into the astronaut mirrored (120 each, one texture), the landmarks found again on each
// covered photo. The floors sit a little below today's figures (docs/performance.md);
// every shape must leave most of the rest of the face swapped.
// No occluder rule was tuned on it, but its filled sunglasses' cases on the mirrored astronaut
// became a fast test (TestApplyKeepsFilledSunglassesAndSwapsTheRest), and its colour-noise
// and tissue cases showed which rules missed them (the chroma cue and the nose's flatness were
// then built and tested on covers drawn apart): a fresh blind set is the next judge. FACEFUSION_TEST_CASES=1 logs every case,
// FACEFUSION_TEST_OUT=dir saves one swap of each shape and where it lies.

// tsInRotEllipse reports whether (x, y) lies in the ellipse at c with half-axes a (along the
// direction deg degrees from the x axis) and b.
func tsInRotEllipse(x, y float64, c geom.Pt, deg, a, b float64) bool {
	sn, cs := math.Sincos(deg * math.Pi / 180)
	dx, dy := x-c.X, y-c.Y
	u, v := (dx*cs+dy*sn)/a, (-dx*sn+dy*cs)/b
	return u*u+v*v <= 1
}

// tsInRoundRect reports whether (x, y) lies in the rectangle at c with half-sides hl (along
// deg) and hw, its corners rounded by r.
func tsInRoundRect(x, y float64, c geom.Pt, deg, hl, hw, r float64) bool {
	sn, cs := math.Sincos(deg * math.Pi / 180)
	dx, dy := x-c.X, y-c.Y
	qx, qy := math.Abs(dx*cs+dy*sn)-(hl-r), math.Abs(-dx*sn+dy*cs)-(hw-r)
	return math.Hypot(math.Max(qx, 0), math.Max(qy, 0))+math.Min(math.Max(qx, qy), 0) <= r
}

func tsNearSeg(x, y float64, a, b geom.Pt, r float64) bool {
	return segDist(geom.Pt{X: x, Y: y}, a, b) <= r
}

// tsShapes are the third survey's covers (s: the face's larger side, about 14 cm on a real
// face: a finger is about an eighth of it wide, a palm over half).
var tsShapes = []occShape{
	{"palm on the cheek", func(l *face.Landmarks68, s, x, y float64) bool {
		// A face resting on a hand: the palm on the right cheek (the image's), four fingers up
		// to the temple, the thumb down along the jaw.
		c := hoPt(l[14].Scale(0.6).Add(l[35].Scale(0.4)), s, 0.08, 0.03)
		if tsInRotEllipse(x, y, c, 75, 0.26*s, 0.21*s) {
			return true
		}
		for k := range 4 {
			base := hoPt(c, s, -0.13+0.085*float64(k), -0.16)
			if tsNearSeg(x, y, base, hoPt(base, s, 0.09, -0.3), 0.042*s) {
				return true
			}
		}
		return tsNearSeg(x, y, hoPt(c, s, -0.1, 0.14), hoPt(c, s, -0.2, 0.3), 0.048*s)
	}},
	{"mug at the lips", func(l *face.Landmarks68, s, x, y float64) bool {
		// A mug tipped towards the mouth, its rim over the lower lip, the handle at its side.
		mc := hoPt(geom.Mean(l[48:60]), s, 0.04, 0.3)
		if tsInRoundRect(x, y, mc, 78, 0.3*s, 0.22*s, 0.03*s) {
			return true
		}
		top := hoPt(mc, s, -0.3*math.Cos(78*math.Pi/180), -0.3*math.Sin(78*math.Pi/180))
		if tsInRotEllipse(x, y, top, -12, 0.22*s, 0.05*s) {
			return true
		}
		h := hoPt(mc, s, 0.28, 0.02)
		return math.Abs(math.Hypot(x-h.X, y-h.Y)-0.09*s) <= 0.03*s
	}},
	{"headset boom", func(l *face.Landmarks68, s, x, y float64) bool {
		// The ear cup at the face's left edge, the boom bowing along the cheek to the mouth's
		// corner and a foam ball there.
		ear := hoPt(l[1], s, -0.08, -0.04)
		if math.Hypot(x-ear.X, y-ear.Y) <= 0.16*s {
			return true
		}
		end := hoPt(l[48], s, -0.06, 0.01)
		if math.Hypot(x-end.X, y-end.Y) <= 0.08*s {
			return true
		}
		return hoBezierNear(x, y, ear, hoPt(l[4], s, 0.06, 0.02), end, 0.022*s)
	}},
	{"side-swept bangs", func(l *face.Landmarks68, s, x, y float64) bool {
		// Hair swept from the forehead's left down over the right brow and eye, its edge a
		// little wavy.
		x0, x1 := l[17].X-0.05*s, l[16].X+0.08*s
		y0, y1 := math.Min(l[19].Y, l[24].Y)-0.08*s, l[46].Y+0.09*s
		if x < l[0].X-0.1*s || x > x1 || y < y0-0.5*s {
			return false
		}
		u := min(1, max(0, (x-x0)/(x1-x0)))
		return y <= y0+(y1-y0)*math.Pow(u, 1.2)+0.015*s*math.Sin(x/(0.04*s))
	}},
	{"lollipop", func(l *face.Landmarks68, s, x, y float64) bool {
		candy := hoPt(l[54], s, 0.2, 0.09)
		return math.Hypot(x-candy.X, y-candy.Y) <= 0.11*s || tsNearSeg(x, y, hoPt(l[54], s, -0.04, 0), candy, 0.016*s)
	}},
	{"filled sunglasses", func(l *face.Landmarks68, s, x, y float64) bool {
		le, re := geom.Mean(l[36:42]), geom.Mean(l[42:48])
		for _, e := range []geom.Pt{le, re} {
			if tsInRoundRect(x, y, hoPt(e, s, 0, 0.03), 0, 0.18*s, 0.13*s, 0.07*s) {
				return true
			}
		}
		return tsNearSeg(x, y, hoPt(le, s, 0.15, -0.05), hoPt(re, s, -0.15, -0.05), 0.018*s) ||
			tsNearSeg(x, y, hoPt(le, s, -0.17, -0.04), hoPt(l[0], s, -0.03, -0.04), 0.018*s) ||
			tsNearSeg(x, y, hoPt(re, s, 0.17, -0.04), hoPt(l[16], s, 0.03, -0.04), 0.018*s)
	}},
	{"cigarette", func(l *face.Landmarks68, s, x, y float64) bool {
		return tsNearSeg(x, y, hoPt(l[48], s, 0.04, 0.005), hoPt(l[48], s, -0.25, 0.17), 0.027*s)
	}},
	{"plaster on the cheek", func(l *face.Landmarks68, s, x, y float64) bool {
		c := hoPt(l[2].Scale(0.5).Add(l[40].Scale(0.5)), s, 0.02, 0)
		return tsInRoundRect(x, y, c, -30, 0.2*s, 0.065*s, 0.025*s)
	}},
	{"fist under the chin", func(l *face.Landmarks68, s, x, y float64) bool {
		// A thinker's fist under the chin, the index finger up along the jaw's right side.
		if tsInRotEllipse(x, y, hoPt(l[8], s, 0.07, 0.09), 10, 0.26*s, 0.19*s) {
			return true
		}
		return tsNearSeg(x, y, hoPt(l[10], s, 0, 0.04), hoPt(l[13], s, -0.05, -0.05), 0.05*s)
	}},
	{"finger to the lips", func(l *face.Landmarks68, s, x, y float64) bool {
		// "Hush": a finger up over the lips to the nose's base, the hand below the chin.
		if tsNearSeg(x, y, hoPt(l[8], s, 0.02, 0.15), hoPt(l[33], s, 0, 0.02), 0.055*s) {
			return true
		}
		return tsInRotEllipse(x, y, hoPt(l[8], s, 0.05, 0.3), 0, 0.26*s, 0.2*s)
	}},
	{"eye patch", func(l *face.Landmarks68, s, x, y float64) bool {
		le := geom.Mean(l[36:42])
		if tsInRotEllipse(x, y, hoPt(le, s, 0, 0.01), -8, 0.16*s, 0.125*s) {
			return true
		}
		return tsNearSeg(x, y, hoPt(le, s, 0.08, -0.08), hoPt(l[24], s, 0.2, -0.32), 0.02*s) ||
			tsNearSeg(x, y, hoPt(le, s, -0.14, 0), hoPt(l[0], s, -0.06, -0.02), 0.02*s)
	}},
	{"tissue at the nose", func(l *face.Landmarks68, s, x, y float64) bool {
		// A crumpled tissue: a blob of uneven radius over the nose's tip and the upper lip.
		c := hoPt(l[33], s, 0.01, 0.0)
		dx, dy := x-c.X, (y-c.Y)/0.85
		th := math.Atan2(dy, dx)
		return math.Hypot(dx, dy) <= 0.2*s*(1+0.12*math.Sin(5*th)+0.07*math.Sin(11*th+1))
	}},
}

// tsHues are the covers' colours on a face whose skin is own.
func tsHues(own raster.RGB) []hoHue {
	warm := raster.RGB{R: clampU8(float64(own.R) + 10), G: own.G, B: clampU8(float64(own.B) - 10)}
	return []hoHue{
		{"own skin", own, true}, {"own, warmer", warm, true}, {"peach", raster.RGB{R: 238, G: 190, B: 160}, true},
		{"tan", raster.RGB{R: 198, G: 152, B: 108}, true}, {"dark brown", raster.RGB{R: 96, G: 62, B: 44}, true},
		{"pink", raster.RGB{R: 214, G: 128, B: 132}, true},
		{"white", raster.RGB{R: 242, G: 242, B: 238}, false}, {"black", raster.RGB{R: 18, G: 18, B: 20}, false},
		{"teal", raster.RGB{R: 28, G: 128, B: 128}, false}, {"yellow", raster.RGB{R: 228, G: 196, B: 48}, false},
	}
}

// tsTextures are the covers' textures on a face with landmarks lm: flat; light falling across
// it from the upper left (×0.75 to ×1.25 over a third of the face); fine noise, apart in each
// channel (σ 4 levels); and camera.png's shading about the hue.
func tsTextures(t *testing.T, lm *face.Landmarks68) []occTexture {
	cam, err := raster.Load(testenv.Sample(t, "camera.png"))
	if err != nil {
		t.Fatal(err)
	}
	var mean float64
	for y := range cam.H {
		for x := range cam.W {
			r, g, b := cam.At(x, y)
			mean += (float64(r) + float64(g) + float64(b)) / 3
		}
	}
	mean /= float64(cam.W * cam.H)
	b := geom.Bounds(lm[:])
	s, c := math.Max(b.W(), b.H()), b.Center()
	sn, cs := math.Sincos(40 * math.Pi / 180)
	scale := func(col raster.RGB, k float64) raster.RGB {
		return raster.RGB{R: clampU8(k * float64(col.R)), G: clampU8(k * float64(col.G)), B: clampU8(k * float64(col.B))}
	}
	return []occTexture{
		{"flat", func(c raster.RGB, _, _ int, _ *rand.Rand) raster.RGB { return c }},
		{"light across", func(col raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
			u := ((float64(x)-c.X)*cs + (float64(y)-c.Y)*sn) / (0.33 * s)
			return scale(col, 1-0.25*math.Max(-1, math.Min(1, u)))
		}},
		{"colour noise", func(c raster.RGB, _, _ int, rng *rand.Rand) raster.RGB {
			return raster.RGB{R: clampU8(float64(c.R) + 4*rng.NormFloat64()), G: clampU8(float64(c.G) + 4*rng.NormFloat64()), B: clampU8(float64(c.B) + 4*rng.NormFloat64())}
		}},
		{"camera", func(col raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
			r, g, b := cam.At((x+140)%cam.W, (y+60)%cam.H)
			v := (float64(r) + float64(g) + float64(b)) / 3
			return scale(col, 1+0.5*(v-mean)/mean)
		}},
	}
}

// tsCoverage is how much of each pixel the cover covers: 1 inside, 0 outside, the share of
// 4×4 samples on its outline, then blurred by a 3×3 binomial (a lens's softness). It looks
// only within the box that a 2-pixel grid finds the cover in, widened by 4 pixels (every
// cover here is wider than 2 pixels).
func tsCoverage(w, h int, inside func(x, y float64) bool) []float64 {
	// hard is whether each pixel's centre is inside: on the grid everywhere, in the box at
	// every pixel (the grid's answers are kept, not asked again).
	hard := make([]bool, w*h)
	x0, y0, x1, y1 := w, h, -1, -1
	for y := 0; y < h; y += 2 {
		for x := 0; x < w; x += 2 {
			if hard[y*w+x] = inside(float64(x), float64(y)); hard[y*w+x] {
				x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			}
		}
	}
	cov, out := make([]float64, w*h), make([]float64, w*h)
	if x1 < 0 {
		return out
	}
	x0, y0, x1, y1 = max(0, x0-4), max(0, y0-4), min(w-1, x1+4), min(h-1, y1+4)
	for y := y0; y <= y1; y++ {
		for x := x0; x <= x1; x++ {
			if x%2 != 0 || y%2 != 0 {
				hard[y*w+x] = inside(float64(x), float64(y))
			}
		}
	}
	for y := y0; y <= y1; y++ {
		for x := x0; x <= x1; x++ {
			i, edge := y*w+x, false
			for _, d := range [][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}} {
				u, v := x+d[0], y+d[1]
				if u >= 0 && v >= 0 && u < w && v < h && hard[v*w+u] != hard[i] {
					edge = true
				}
			}
			switch {
			case edge:
				var n float64
				for j := range 16 {
					if inside(float64(x)+(float64(j%4)+0.5)/4-0.5, float64(y)+(float64(j/4)+0.5)/4-0.5) {
						n++
					}
				}
				cov[i] = n / 16
			case hard[i]:
				cov[i] = 1
			}
		}
	}
	wt := [3]float64{0.25, 0.5, 0.25}
	for y := y0; y <= y1; y++ {
		for x := x0; x <= x1; x++ {
			var a float64
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					u, v := min(w-1, max(0, x+dx)), min(h-1, max(0, y+dy))
					a += wt[dx+1] * wt[dy+1] * cov[v*w+u]
				}
			}
			out[y*w+x] = a
		}
	}
	return out
}

// tsRun is occlusionRun with a soft-edged cover: painted over tgt by its coverage, the target's
// landmarks found again on the painted photo, src swapped in and measured. Only the cover's
// interior (coverage 1) counts as the cover; the rest of the face is what lies clear of any of
// it (coverage above 0) by 5 % of the face size.
func tsRun(t testing.TB, src *Source, tgt *raster.Image, lm face.Landmarks68, box geom.Rect, c occCase, bare float64) (occResult, *raster.Image, float64) {
	t.Helper()
	return tsRunWith(t, NewSwapper(src, DefaultOptions()), tgt, lm, box, c, bare)
}

// tsRunWith is tsRun swapping with sw, which a survey keeps from case to case (a Swapper
// carries nothing from one face to the next: TestSwapperCarriesNothingFromFaceToFace) so
// that its buffers are made once.
func tsRunWith(t testing.TB, sw *Swapper, tgt *raster.Image, lm face.Landmarks68, box geom.Rect, c occCase, bare float64) (occResult, *raster.Image, float64) {
	t.Helper()
	painted, cov := tsPainted(tgt, lm, c)
	found := landmarksIn(t, painted, box)
	after := painted.Clone()
	sw.Apply(after, &found)
	kept, n, changed, m := softCounts(tgt, painted, after, cov, &lm)
	return occResult{kept: kept / n, swapped: changed / m / bare}, after, n
}

// tsPainted is tgt with c's cover painted softly over the face with landmarks lm, and the
// cover's coverage of each pixel.
func tsPainted(tgt *raster.Image, lm face.Landmarks68, c occCase) (*raster.Image, []float64) {
	b := geom.Bounds(lm[:])
	size := math.Max(b.W(), b.H())
	rng := rand.New(rand.NewPCG(7, 7))
	cov := tsCoverage(tgt.W, tgt.H, func(x, y float64) bool { return c.shape.inside(&lm, size, x, y) })
	painted := tgt.Clone()
	for y := range tgt.H {
		for x := range tgt.W {
			a := cov[y*tgt.W+x]
			if a <= 0 {
				continue
			}
			col := c.tex.colour(c.hue, x, y, rng)
			r, g, bl := tgt.At(x, y)
			painted.Set(x, y, clampU8(a*float64(col.R)+(1-a)*float64(r)), clampU8(a*float64(col.G)+(1-a)*float64(g)), clampU8(a*float64(col.B)+(1-a)*float64(bl)))
		}
	}
	return painted, cov
}

// softCounts measures a swap of a soft-edged cover painted over tgt (painted; after, swapped):
// of the cover's interior (coverage 1) within the face's hull, how many pixels there are (n)
// and how many the swap left within 12 levels (kept); of the rest of the face clear of the
// cover by 5 % of the face size, every third pixel (m) and how many of those it changed.
func softCounts(tgt, painted, after *raster.Image, cov []float64, lm *face.Landmarks68) (kept, n, changed, m float64) {
	b := geom.Bounds(lm[:])
	size := math.Max(b.W(), b.H())
	onFace := hullMask(faceHull(lm), tgt.W, tgt.H)
	rad := int(0.05 * size)
	near := func(x, y int) bool {
		for v := max(0, y-rad); v <= min(tgt.H-1, y+rad); v += 2 {
			for u := max(0, x-rad); u <= min(tgt.W-1, x+rad); u += 2 {
				if cov[v*tgt.W+u] > 0 {
					return true
				}
			}
		}
		return false
	}
	for y := range tgt.H {
		for x := range tgt.W {
			if !onFace[y*tgt.W+x] {
				continue
			}
			r1, g1, b1 := after.At(x, y)
			r0, g0, b0 := painted.At(x, y)
			d := math.Abs(float64(r1)-float64(r0)) + math.Abs(float64(g1)-float64(g0)) + math.Abs(float64(b1)-float64(b0))
			switch a := cov[y*tgt.W+x]; {
			case a >= 1:
				n++
				if d <= 12 {
					kept++
				}
			case a <= 0 && (x+y)%3 == 0 && !near(x, y):
				m++
				if d > 12 {
					changed++
				}
			}
		}
	}
	return kept, n, changed, m
}

// tsCases pairs each shape and hue with textures of the four, turning with the shape and the
// hue: two each (every shape meets every texture five times), or one (the variant's).
func tsCases(textures []occTexture, hues []hoHue, per int) []hoCase {
	var out []hoCase
	for si, sh := range tsShapes {
		for hi, h := range hues {
			for k := range per {
				tx := textures[(si+hi+2*k)%len(textures)]
				out = append(out, hoCase{
					occCase: occCase{shape: sh, tex: tx, hue: h.c, name: sh.name + "/" + tx.name + "/" + h.name},
					shape:   sh.name, tex: tx.name, hue: h.name, skin: h.skin,
				})
			}
		}
	}
	return out
}

// tsWays are hoWays, grace_hopper darkened to 0.75 and the astronaut mirrored (landmarks found
// again on each), with the number of textures each shape and hue meets on each.
func tsWays(t *testing.T) ([]hoWay, []int) {
	ways := hoWays(t)
	dim := ways[0]
	dim.name, dim.tgt = "astronaut → grace_hopper ×0.75", dim.tgt.Clone()
	for i, v := range dim.tgt.Pix {
		dim.tgt.Pix[i] = clampU8(0.75 * float64(v))
	}
	mir := mirroredWay(ways[1], "grace_hopper → astronaut, mirrored")
	findAgain(t, &dim, &mir)
	return append(ways, dim, mir), []int{2, 2, 1, 1}
}

// mirroredWay is w named name, its target mirrored left to right with its detector box (its
// landmarks are still to be found).
func mirroredWay(w hoWay, name string) hoWay {
	m := w
	m.name, m.tgt = name, w.tgt.Clone()
	for y := range m.tgt.H {
		for x := range m.tgt.W {
			r, g, b := w.tgt.At(m.tgt.W-1-x, y)
			m.tgt.Set(x, y, r, g, b)
		}
	}
	wd := float64(m.tgt.W)
	m.box = geom.Rect{X0: wd - w.box.X1, Y0: w.box.Y0, X1: wd - w.box.X0, Y1: w.box.Y1}
	return m
}

func TestOccluderThirdSurvey(t *testing.T) {
	fullTier(t, "swaps 720 occluded photos, their covers softly edged")
	start := time.Now()
	floors := map[string][3]float64{ // skin's hues kept, others kept, swapped (means over shapes)
		"astronaut → grace_hopper": {0.81, 0.93, 0.97}, "grace_hopper → astronaut": {0.83, 0.91, 0.93},
		"astronaut → grace_hopper ×0.75": {0.85, 0.93, 0.97}, "grace_hopper → astronaut, mirrored": {0.87, 0.91, 0.91},
	}
	ways, per := tsWays(t)
	softSurvey(t, start, ways, floors, tsShapes, nil, func(wi int, w hoWay) ([]float64, string) {
		return tsWay(t, w, per[wi])
	})
}

// tsWay runs one way's cases and logs its table; it returns the means over shapes of the kept
// shares (skin's hues, others) and of the swapped share, then each shape's swapped share.
func tsWay(t *testing.T, w hoWay, per int) ([]float64, string) {
	t.Helper()
	textures, hues := tsTextures(t, &w.lm), tsHues(w.ownSkin)
	return softSurveyWay(t, w, "third", tsShapes, hues, textures, tsCases(textures, hues, per))
}

// softSurveyWay runs the cases of one way of a survey of softly edged covers (tsRun's
// measure), saving one swap of each shape as label-WAY-SHAPE.png, and logs its tables by
// shape, texture and hue; it returns the means over shapes of the kept shares (skin's hues,
// others) and of the swapped share, then each shape's swapped share.
func softSurveyWay(t *testing.T, w hoWay, label string, shapes []occShape, hues []hoHue, textures []occTexture, cases []hoCase) ([]float64, string) {
	t.Helper()
	src, err := NewSource(w.srcImg, &w.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	b := geom.Bounds(w.lm[:])
	size := math.Max(b.W(), b.H())
	bare := bareSwapped(t, src, w.tgt, w.lm)
	byShape, byTex, byHue := newHoTally(), newHoTally(), newHoTally()
	wayName := strings.NewReplacer(" ", "", "→", "-", "×", "x", "°", "", ",", "")
	shapeName := strings.NewReplacer(" ", "-", "'", "")
	sw := NewSwapper(src, DefaultOptions())
	for _, c := range cases {
		r, after, on := tsRunWith(t, sw, w.tgt, w.lm, w.box, c.occCase, bare)
		if on < 0.002*size*size {
			t.Errorf("%s, %s: only %.0f px of the cover's interior on the face: the survey's shape is misplaced", w.name, c.name, on)
			continue
		}
		if byShape.kept[c.shape] == nil {
			name := label + "-" + wayName.Replace(w.name) + "-" + shapeName.Replace(c.shape)
			saveForEyes(t, after, name+".png")
			saveMadeForEyes(t, func() *raster.Image { return hoPaint(w.tgt, &w.lm, size, c.occCase.shape.inside) }, name+"-where.png")
		}
		byShape.add(c.shape, c.skin, r, c.tex+"/"+c.hue)
		byTex.add(c.tex, c.skin, r, c.shape+"/"+c.hue)
		byHue.add(c.hue, c.skin, r, c.shape+"/"+c.tex)
		if os.Getenv("FACEFUSION_TEST_CASES") != "" {
			t.Logf("%s, %s: %.1f%% kept, %.1f%% swapped", w.name, c.name, 100*r.kept, 100*r.swapped)
		}
	}
	col := 22 // the first column's width: the longest shape's name and a space, at least 22
	for _, sh := range shapes {
		col = max(col, len(sh.name)+1)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (target skin %v; the bare face %.1f%% swapped)\n", w.name, w.ownSkin, 100*bare)
	fmt.Fprintf(&sb, "  %-*s %10s %8s %8s   %s\n", col, "shape", "skin kept", "others", "swapped", "worst case (kept)")
	all := make([]float64, 3, 3+len(shapes))
	for _, sh := range shapes {
		k0, k1, sw := byShape.row(sh.name)
		all[0], all[1], all[2] = all[0]+k0, all[1]+k1, all[2]+sw
		all = append(all, sw)
		fmt.Fprintf(&sb, "  %-*s %9.1f%% %7.1f%% %7.1f%%   %s %.1f%%\n", col, sh.name, 100*k0, 100*k1, 100*sw, byShape.worst[sh.name], 100*byShape.worstKept[sh.name])
	}
	fmt.Fprintf(&sb, "  %-*s %10s %8s %8s\n", col, "texture", "skin kept", "others", "swapped")
	for _, tx := range textures {
		k0, k1, sw := byTex.row(tx.name)
		fmt.Fprintf(&sb, "  %-*s %9.1f%% %7.1f%% %7.1f%%\n", col, tx.name, 100*k0, 100*k1, 100*sw)
	}
	fmt.Fprintf(&sb, "  %-*s %10s %8s   %s\n", col, "hue", "kept", "swapped", "worst case (kept)")
	for _, h := range hues {
		k, m := byHue.kept[h.name], byHue.n[h.name]
		_, _, sw := byHue.row(h.name)
		fmt.Fprintf(&sb, "  %-*s %9.1f%% %7.1f%%   %s %.1f%%\n", col, fmt.Sprintf("%s %v", h.name, h.c), 100*(k[0]+k[1])/(m[0]+m[1]), 100*sw, byHue.worst[h.name], 100*byHue.worstKept[h.name])
	}
	n := float64(len(shapes))
	all[0], all[1], all[2] = all[0]/n, all[1]/n, all[2]/n
	line := fmt.Sprintf("overall %s: skin-like mean kept %.1f%%, others mean kept %.1f%%, the rest of the face swapped %.1f%% of the bare face's (means over shapes)",
		w.name, 100*all[0], 100*all[1], 100*all[2])
	fmt.Fprintf(&sb, "  %s\n", line)
	t.Log("\n" + sb.String())
	return all, line
}

// findAgain finds each way's target landmarks again, and its skin's colour, after its target
// was made over (darkened, mirrored, tilted, re-encoded).
func findAgain(t *testing.T, ways ...*hoWay) {
	t.Helper()
	for _, v := range ways {
		v.lm = landmarksIn(t, v.tgt, v.box)
		v.ownSkin = hoSkinOf(v.tgt, &v.lm)
	}
}
