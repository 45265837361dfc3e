package swap

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// A fourth survey of the classic swap's occlusion handling (issue 32's "clips other than your
// tests' agree"), written blind: its author read the surveys' measuring code and swap.go's
// exported API but none of the occluder rules, and no rule was tuned on it (what it found
// weakest was described in words, not shown, to the rules' next authors: a band across the
// nose's bridge, cords across a cheek, covers over one side; a fifth blind set is the next
// judge). Its twelve covers
// are none of the earlier surveys' or the occluder tests' shapes, chosen for what real footage
// holds and sized as on a real face (about 14 cm: a finger an eighth of it wide): a chin
// resting on the back of a hand, two fingers in a V over an eye, a thumb on the cheekbone, a
// spoon before the mouth, a hoodie's drawstring across the cheek, a plaster across the nose's
// bridge, knuckles at the temple, an apple before the mouth, a braid across the jaw, a mask
// pulled down to the chin, a hand's edge along the nose and fingertips on the forehead. Ten
// hues, six of them skin's (the target's own, measured as hoSkinOf does, a lighter and a
// redder own, olive, deep brown, a palm's pink) and four others (navy, grey, red-orange,
// fabric green); four textures (flat, soft specular highlights, and brick.png's and
// coffee.png's shading about the hue).
//
// Covers are softly edged and measured as TestOccluderThirdSurvey's (tsRun: only a cover's
// interior counts as the cover). Both ways between the sample photos and two targets none of
// the other surveys has, grace_hopper under a warm white balance and the astronaut tilted by
// 8°, the landmarks found again on each covered photo: 240 covers into the astronaut (every
// shape and hue with two textures), 120 into each of the others (one texture; a variant's is
// one its plain photo's cases do not pair with that shape and hue). The
// floors sit a little below today's figures (docs/performance.md); every shape
// must leave most of the rest of the face swapped. FACEFUSION_TEST_CASES=1 logs every case,
// FACEFUSION_TEST_OUT=dir saves one swap of each shape and where it lies.

// fsBraid reports whether (x, y) lies on a braid along the quadratic Bézier a–c–b: lobes
// tilted either way of the curve, half-width w.
func fsBraid(x, y float64, a, c, b geom.Pt, w float64) bool {
	if x < min(a.X, b.X, c.X)-2*w || x > max(a.X, b.X, c.X)+2*w || y < min(a.Y, b.Y, c.Y)-2*w || y > max(a.Y, b.Y, c.Y)+2*w {
		return false
	}
	const lobes = 16
	for k := range lobes + 1 {
		u := float64(k) / lobes
		q := a.Scale((1 - u) * (1 - u)).Add(c.Scale(2 * u * (1 - u))).Add(b.Scale(u * u))
		d := c.Sub(a).Scale(2 * (1 - u)).Add(b.Sub(c).Scale(2 * u))
		deg := math.Atan2(d.Y, d.X) * 180 / math.Pi
		side := float64(1 - 2*(k%2))
		n := math.Hypot(d.X, d.Y)
		off := geom.Pt{X: -d.Y / n * side * 0.35 * w, Y: d.X / n * side * 0.35 * w}
		if tsInRotEllipse(x, y, q.Add(off), deg+side*35, 0.9*w, 0.6*w) {
			return true
		}
	}
	return false
}

// fsFar reports whether (x, y) lies outside the square of half-side r about c: a cheap test
// before a shape's own (coverage asks every pixel of the photo).
func fsFar(x, y float64, c geom.Pt, r float64) bool {
	return math.Abs(x-c.X) > r || math.Abs(y-c.Y) > r
}

// fsShapes are the fourth survey's covers (s: the face's larger side).
var fsShapes = []occShape{
	{"chin on a hand's back", func(l *face.Landmarks68, s, x, y float64) bool {
		// The back of a hand level under the chin, its knuckles towards the image's right,
		// the chin's lower part behind it.
		c := hoPt(l[8], s, -0.04, 0.05)
		if fsFar(x, y, c, 0.45*s) {
			return false
		}
		if tsInRoundRect(x, y, c, -6, 0.38*s, 0.11*s, 0.08*s) {
			return true
		}
		for k := range 4 {
			if p := hoPt(c, s, 0.12+0.07*float64(k), -0.1+0.01*float64(k)); math.Hypot(x-p.X, y-p.Y) <= 0.045*s {
				return true
			}
		}
		return false
	}},
	{"V over an eye", func(l *face.Landmarks68, s, x, y float64) bool {
		// Index and middle finger spread in a V round the right eye, the knuckles on the
		// cheek below it.
		re := geom.Mean(l[42:48])
		base := hoPt(re, s, -0.01, 0.2)
		if fsFar(x, y, hoPt(re, s, 0, 0.1), 0.5*s) {
			return false
		}
		if tsNearSeg(x, y, base, hoPt(re, s, -0.14, -0.21), 0.062*s) || tsNearSeg(x, y, base, hoPt(re, s, 0.16, -0.19), 0.062*s) {
			return true
		}
		return tsInRotEllipse(x, y, hoPt(base, s, 0.03, 0.16), 10, 0.2*s, 0.14*s)
	}},
	{"thumb on the cheekbone", func(l *face.Landmarks68, s, x, y float64) bool {
		// A hand at the face's right side: the thumb pressed on the cheekbone, the index
		// finger along the temple, the rest of the hand beside the face.
		cb := l[15].Scale(0.5).Add(l[46].Scale(0.5))
		if fsFar(x, y, hoPt(l[15], s, 0.15, -0.05), 0.5*s) {
			return false
		}
		if tsNearSeg(x, y, hoPt(l[14], s, 0.18, 0.1), hoPt(cb, s, 0, 0.03), 0.07*s) ||
			tsNearSeg(x, y, hoPt(l[16], s, 0.14, 0.06), hoPt(l[26], s, 0.05, -0.13), 0.062*s) {
			return true
		}
		return tsInRotEllipse(x, y, hoPt(l[15], s, 0.28, 0.06), 80, 0.18*s, 0.13*s)
	}},
	{"spoon before the mouth", func(l *face.Landmarks68, s, x, y float64) bool {
		m := geom.Mean(l[48:60])
		bowl := hoPt(m, s, 0.03, 0.02)
		if fsFar(x, y, hoPt(m, s, 0.18, 0.22), 0.4*s) {
			return false
		}
		return tsInRotEllipse(x, y, bowl, -20, 0.11*s, 0.075*s) || tsNearSeg(x, y, bowl, hoPt(m, s, 0.36, 0.45), 0.02*s)
	}},
	{"drawstring across the cheek", func(l *face.Landmarks68, s, x, y float64) bool {
		// A hood's cord from its edge at the left temple bowing across the cheek to below
		// the chin, its tip thicker.
		a, b := hoPt(l[0], s, 0.02, -0.12), hoPt(l[8], s, 0.1, 0.22)
		if hoBezierNear(x, y, a, hoPt(l[3], s, 0.22, -0.02), b, 0.024*s) {
			return true
		}
		return tsNearSeg(x, y, b, hoPt(b, s, 0.02, 0.08), 0.034*s)
	}},
	{"plaster across the nose", func(l *face.Landmarks68, s, x, y float64) bool {
		return !fsFar(x, y, l[28], 0.2*s) && tsInRoundRect(x, y, hoPt(l[28], s, 0, 0.01), -8, 0.17*s, 0.06*s, 0.025*s)
	}},
	{"knuckles at the temple", func(l *face.Landmarks68, s, x, y float64) bool {
		// A head propped on a fist at its left temple, the forearm down beside the face.
		c := hoPt(l[0], s, -0.05, -0.16)
		if fsFar(x, y, c, 0.65*s) {
			return false
		}
		if tsInRotEllipse(x, y, c, 20, 0.14*s, 0.12*s) || tsNearSeg(x, y, c, hoPt(c, s, -0.15, 0.5), 0.1*s) {
			return true
		}
		for k := range 4 {
			if p := hoPt(c, s, 0.11, -0.1+0.065*float64(k)); math.Hypot(x-p.X, y-p.Y) <= 0.042*s {
				return true
			}
		}
		return false
	}},
	{"apple before the mouth", func(l *face.Landmarks68, s, x, y float64) bool {
		c := hoPt(geom.Mean(l[48:60]), s, -0.02, 0.08)
		for _, dx := range []float64{-0.05, 0.05} {
			if p := hoPt(c, s, dx, 0); math.Hypot(x-p.X, y-p.Y) <= 0.17*s {
				return true
			}
		}
		return tsNearSeg(x, y, hoPt(c, s, 0, -0.15), hoPt(c, s, 0.03, -0.23), 0.014*s)
	}},
	{"braid across the jaw", func(l *face.Landmarks68, s, x, y float64) bool {
		return fsBraid(x, y, hoPt(l[15], s, 0.12, -0.15), hoPt(l[12], s, -0.02, 0), hoPt(l[9], s, 0.05, 0.4), 0.09*s)
	}},
	{"mask pulled down", func(l *face.Landmarks68, s, x, y float64) bool {
		// A surgical mask under the chin, its top bowed, its loops up to the ears.
		u := (x - l[8].X) / (0.3 * s)
		if math.Abs(u) <= 1 && y >= l[57].Y+0.06*s+0.04*s*u*u && y <= l[8].Y+0.14*s {
			return true
		}
		return tsNearSeg(x, y, hoPt(l[8], s, -0.29, 0), hoPt(l[1], s, -0.03, 0), 0.01*s) ||
			tsNearSeg(x, y, hoPt(l[8], s, 0.29, 0), hoPt(l[15], s, 0.03, 0), 0.01*s)
	}},
	{"hand's edge along the nose", func(l *face.Landmarks68, s, x, y float64) bool {
		// A hand held edge-on to the camera, along the nose from the forehead to the chin.
		c := hoPt(l[30], s, 0, -0.05)
		return !fsFar(x, y, c, 0.55*s) && tsInRoundRect(x, y, c, 93, 0.5*s, 0.07*s, 0.05*s)
	}},
	{"fingertips on the forehead", func(l *face.Landmarks68, s, x, y float64) bool {
		// Four fingers down from above over the forehead, stopping short of the brows.
		brow := math.Min(l[19].Y, l[24].Y)
		if y > brow+0.1*s || fsFar(x, y, l[27], 0.8*s) {
			return false
		}
		for k := range 4 {
			f := float64(k) - 1.5
			tip := geom.Pt{X: l[27].X + 0.13*s*f + 0.03*s, Y: brow - 0.03*s - 0.03*s*math.Abs(f)}
			if tsNearSeg(x, y, tip, hoPt(tip, s, 0.05, -0.6), 0.062*s) {
				return true
			}
		}
		return false
	}},
}

// fsHues are the covers' colours on a face whose skin is own.
func fsHues(own raster.RGB) []hoHue {
	redder := raster.RGB{R: clampU8(float64(own.R) + 18), G: clampU8(float64(own.G) - 8), B: clampU8(float64(own.B) - 6)}
	return []hoHue{
		{"own skin", own, true}, {"own, lighter", shade(own, 25), true}, {"own, redder", redder, true},
		{"olive", raster.RGB{R: 168, G: 142, B: 98}, true}, {"deep brown", raster.RGB{R: 82, G: 52, B: 36}, true},
		{"palm pink", raster.RGB{R: 226, G: 160, B: 150}, true},
		{"navy", raster.RGB{R: 28, G: 36, B: 78}, false}, {"grey", raster.RGB{R: 128, G: 128, B: 132}, false},
		{"red-orange", raster.RGB{R: 214, G: 80, B: 40}, false}, {"fabric green", raster.RGB{R: 60, G: 110, B: 70}, false},
	}
}

// fsPhotoShading is a texture from a sample photo's luminance: the hue scaled by 1 + 0.45 of
// the photo's departure from its mean brightness, relative to it.
func fsPhotoShading(t *testing.T, name string, dx, dy int) occTexture {
	img, err := raster.Load(testenv.Sample(t, name+".png"))
	if err != nil {
		t.Fatal(err)
	}
	lum := func(x, y int) float64 {
		r, g, b := img.At(x, y)
		return 0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)
	}
	var mean float64
	for y := range img.H {
		for x := range img.W {
			mean += lum(x, y)
		}
	}
	mean /= float64(img.W * img.H)
	return occTexture{name, func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
		k := 1 + 0.45*(lum((x+dx)%img.W, (y+dy)%img.H)-mean)/mean
		return raster.RGB{R: clampU8(k * float64(c.R)), G: clampU8(k * float64(c.G)), B: clampU8(k * float64(c.B))}
	}}
}

// fsTextures are the covers' textures on a face with landmarks lm: flat; soft specular
// highlights (a glossy surface: ×0.88 of the hue, up to ×1.3 at spots a quarter of the face
// apart, σ 7 % of it); brick.png's and coffee.png's shading.
func fsTextures(t *testing.T, lm *face.Landmarks68) []occTexture {
	b := geom.Bounds(lm[:])
	s := math.Max(b.W(), b.H())
	step, sigma := 0.25*s, 0.07*s
	return []occTexture{
		{"flat", func(c raster.RGB, _, _ int, _ *rand.Rand) raster.RGB { return c }},
		{"specular", func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
			u := math.Mod(float64(x)-b.X0, step) - step/2
			v := math.Mod(float64(y)-b.Y0+step/3, step) - step/2
			k := 0.88 + 0.42*math.Exp(-(u*u+v*v)/(2*sigma*sigma))
			return raster.RGB{R: clampU8(k * float64(c.R)), G: clampU8(k * float64(c.G)), B: clampU8(k * float64(c.B))}
		}},
		fsPhotoShading(t, "brick", 53, 29), fsPhotoShading(t, "coffee", 91, 137),
	}
}

// fsCases pairs each shape and hue with per of the four textures, turning with the shape and
// the hue and starting turn textures on: with two, every shape meets every texture five times.
func fsCases(textures []occTexture, hues []hoHue, per, turn int) []hoCase {
	return softSurveyCases(fsShapes, textures, hues, per, turn)
}

// softSurveyCases pairs each shape and hue with per of the textures, turning with the shape
// and the hue and starting turn textures on, each next one two further.
func softSurveyCases(shapes []occShape, textures []occTexture, hues []hoHue, per, turn int) []hoCase {
	var out []hoCase
	for si, sh := range shapes {
		for hi, h := range hues {
			for k := range per {
				tx := textures[(si+hi+turn+2*k)%len(textures)]
				out = append(out, hoCase{
					occCase: occCase{shape: sh, tex: tx, hue: h.c, name: sh.name + "/" + tx.name + "/" + h.name},
					shape:   sh.name, tex: tx.name, hue: h.name, skin: h.skin,
				})
			}
		}
	}
	return out
}

// fsTilt is img turned by deg degrees about c (bilinear, the edge's pixels beyond it).
func fsTilt(img *raster.Image, c geom.Pt, deg float64) *raster.Image {
	out := raster.New(img.W, img.H)
	sn, cs := math.Sincos(deg * math.Pi / 180)
	for y := range img.H {
		for x := range img.W {
			dx, dy := float64(x)-c.X, float64(y)-c.Y
			u, v := c.X+dx*cs+dy*sn, c.Y-dx*sn+dy*cs
			x0, y0 := math.Floor(u), math.Floor(v)
			fx, fy := u-x0, v-y0
			var px [3]float64
			for j, w := range [4]float64{(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy} {
				sx := min(img.W-1, max(0, int(x0)+j%2))
				sy := min(img.H-1, max(0, int(y0)+j/2))
				r, g, b := img.At(sx, sy)
				px[0], px[1], px[2] = px[0]+w*float64(r), px[1]+w*float64(g), px[2]+w*float64(b)
			}
			out.Set(x, y, clampU8(px[0]), clampU8(px[1]), clampU8(px[2]))
		}
	}
	return out
}

// fsWays are hoWays, grace_hopper under a warm white balance and the astronaut tilted by 8°
// (landmarks found again on each), with fsCases' per and turn for each: on each face, each
// shape and hue meets a texture on the variant that it does not meet on the plain photo.
func fsWays(t *testing.T) ([]hoWay, [][2]int) {
	ways := hoWays(t)
	warm := ways[0]
	warm.name, warm.tgt = "astronaut → grace_hopper, warm", warm.tgt.Clone()
	for i, v := range warm.tgt.Pix {
		warm.tgt.Pix[i] = clampU8([3]float64{1.1, 1.02, 0.84}[i%3] * float64(v))
	}
	tilt := ways[1]
	tilt.name, tilt.tgt = "grace_hopper → astronaut, tilted 8°", fsTilt(ways[1].tgt, ways[1].box.Center(), 8)
	findAgain(t, &warm, &tilt)
	return append(ways, warm, tilt), [][2]int{{1, 0}, {2, 0}, {1, 2}, {1, 1}}
}

func TestOccluderFourthSurvey(t *testing.T) {
	fullTier(t, "swaps 600 occluded photos, their covers softly edged")
	start := time.Now()
	floors := map[string][3]float64{ // skin's hues kept, others kept, swapped (means over shapes)
		"astronaut → grace_hopper": {0.69, 0.93, 0.97}, "grace_hopper → astronaut": {0.81, 0.91, 0.96},
		"astronaut → grace_hopper, warm": {0.75, 0.94, 0.95}, "grace_hopper → astronaut, tilted 8°": {0.78, 0.87, 0.96},
	}
	ways, per := fsWays(t)
	softSurvey(t, start, ways, floors, fsShapes, nil, func(wi int, w hoWay) ([]float64, string) {
		return fsWay(t, w, per[wi][0], per[wi][1])
	})
}

// softSurvey runs each of a survey's ways (run: softSurveyWay's means and overall line) and
// holds them to its floors: skin's hues kept, others kept and the rest of the face swapped
// (means over shapes), and most of the rest of the face swapped under every shape.
func softSurvey(t *testing.T, start time.Time, ways []hoWay, floors map[string][3]float64, shapes []occShape, least map[string]float64, run func(wi int, w hoWay) ([]float64, string)) {
	t.Helper()
	const shapeSwapped = 0.55 // the least of the rest of the face a shape leaves swapped, unless least names it
	var overall []string
	for wi, w := range ways {
		all, line := run(wi, w)
		overall = append(overall, line)
		f := floors[w.name]
		for i, what := range []string{"skin's hues kept", "others kept", "the rest of the face swapped"} {
			if all[i] < f[i] {
				t.Errorf("%s: %s %.1f%% (mean over shapes), want ≥ %.0f%%", w.name, what, 100*all[i], 100*f[i])
			}
		}
		for sh, sw := range all[3:] {
			want, ok := least[shapes[sh].name]
			if !ok {
				want = shapeSwapped
			}
			if sw < want {
				t.Errorf("%s, %s: the rest of the face swapped %.1f%% of the bare face's, want ≥ %.0f%%", w.name, shapes[sh].name, 100*sw, 100*want)
			}
		}
	}
	for _, l := range overall {
		t.Log(l)
	}
	t.Logf("%.1f s", time.Since(start).Seconds())
}

// fsWay runs one way's cases through softSurveyWay (fsCases: per textures for each shape and
// hue, starting turn textures on).
func fsWay(t *testing.T, w hoWay, per, turn int) ([]float64, string) {
	t.Helper()
	textures, hues := fsTextures(t, &w.lm), fsHues(w.ownSkin)
	return softSurveyWay(t, w, "fourth", fsShapes, hues, textures, fsCases(textures, hues, per, turn))
}
