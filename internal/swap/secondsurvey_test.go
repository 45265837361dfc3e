package swap

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// A second survey of the classic swap's occlusion handling (issue 32's "clips other than your
// tests' agree"): covers whose shapes, sizes, places, hues and textures are none of
// TestOccluderSurvey's, written blind by someone who did not tune the occluder tests, and kept
// out of the tuning until its figures were recorded. Measured exactly as the survey measures
// (occlusionRun, bareSwapped): the share of the cover kept, the share of the rest of the face
// swapped (of the bare face's), both ways between the sample photos, and what the occluder
// tests take back of a bare face (mirrored, darker, grainy, smaller). The floors sit a little
// below today's figures (docs/performance.md); every shape must leave most of the rest of the
// face swapped. FACEFUSION_TEST_CASES=1 logs every case, and FACEFUSION_TEST_OUT=dir saves one
// swap of each shape, where each shape lies, and any bare face's finds.
// It builds on the survey's helpers (occCase, occlusionRun, bareSwapped, faceHull, inPoly,
// segDist, shade, clampU8, photos, landmarksIn, saveForEyes).

// hoPt is p moved by (dx, dy) face sizes s.
func hoPt(p geom.Pt, s, dx, dy float64) geom.Pt { return geom.Pt{X: p.X + dx*s, Y: p.Y + dy*s} }

// hoBezierNear reports whether (x, y) lies within r of the quadratic Bézier a–c–b (by 20
// chords), after a cheap test against the curve's box.
func hoBezierNear(x, y float64, a, c, b geom.Pt, r float64) bool {
	if x < min(a.X, b.X, c.X)-r || x > max(a.X, b.X, c.X)+r || y < min(a.Y, b.Y, c.Y)-r || y > max(a.Y, b.Y, c.Y)+r {
		return false
	}
	p, prev := geom.Pt{X: x, Y: y}, a
	for k := 1; k <= 20; k++ {
		u := float64(k) / 20
		q := a.Scale((1 - u) * (1 - u)).Add(c.Scale(2 * u * (1 - u))).Add(b.Scale(u * u))
		if segDist(p, prev, q) <= r {
			return true
		}
		prev = q
	}
	return false
}

// hoEllipseDist is about the distance from (x, y) to the ellipse at c with half-axes a and b.
func hoEllipseDist(x, y float64, c geom.Pt, a, b float64) float64 {
	dx, dy := x-c.X, y-c.Y
	q := math.Hypot(dx/a, dy/b)
	if q == 0 {
		return math.Min(a, b)
	}
	return math.Hypot(dx, dy) * math.Abs(1-1/q)
}

// hoRoundRectDist is the distance from (x, y) to the outline of a rectangle at c with half-sides
// hw and hh and corners rounded by r.
func hoRoundRectDist(x, y float64, c geom.Pt, hw, hh, r float64) float64 {
	qx, qy := math.Abs(x-c.X)-(hw-r), math.Abs(y-c.Y)-(hh-r)
	sd := math.Hypot(math.Max(qx, 0), math.Max(qy, 0)) + math.Min(math.Max(qx, qy), 0) - r
	return math.Abs(sd)
}

// hoInRotRect reports whether (x, y) lies in the rectangle at c with half-sides hl (along the
// direction deg degrees from the x axis) and hw.
func hoInRotRect(x, y float64, c geom.Pt, deg, hl, hw float64) bool {
	sn, cs := math.Sincos(deg * math.Pi / 180)
	dx, dy := x-c.X, y-c.Y
	return math.Abs(dx*cs+dy*sn) <= hl && math.Abs(-dx*sn+dy*cs) <= hw
}

// hoFrames is a pair of frames around the eyes (rim: the distance to one lens's outline from
// its eye's centre e; t: the half-width of the rim, the bridge's and the temples'), the bridge
// at bridgeY face sizes above the eyes and the temples out to the jaw's top points.
func hoFrames(l *face.Landmarks68, s, x, y float64, rim func(e geom.Pt, x, y float64) float64, half, bridgeY, t float64) bool {
	le, re := geom.Mean(l[36:42]), geom.Mean(l[42:48])
	if x < l[0].X-0.1*s || x > l[16].X+0.1*s || y < le.Y-0.3*s || y > le.Y+0.3*s {
		return false
	}
	if rim(le, x, y) <= t || rim(re, x, y) <= t {
		return true
	}
	p := geom.Pt{X: x, Y: y}
	return segDist(p, hoPt(le, s, half, -bridgeY), hoPt(re, s, -half, -bridgeY)) <= t ||
		segDist(p, hoPt(le, s, -half, -0.03), hoPt(l[0], s, 0, -0.03)) <= t ||
		segDist(p, hoPt(re, s, half, -0.03), hoPt(l[16], s, 0, -0.03)) <= t
}

// hoShapes are the held-out covers: none is one of occShapes, in shape, size or place.
var hoShapes = []occShape{
	{"aviator frames", func(l *face.Landmarks68, s, x, y float64) bool {
		// Wide lenses dropping below the eyes, a thin rim.
		return hoFrames(l, s, x, y, func(e geom.Pt, x, y float64) float64 {
			b := 0.10 * s
			if y > e.Y+0.03*s {
				b = 0.14 * s
			}
			return hoEllipseDist(x, y, hoPt(e, s, 0, 0.03), 0.15*s, b)
		}, 0.15, 0.08, 0.011*s)
	}},
	{"thick rectangular frames", func(l *face.Landmarks68, s, x, y float64) bool {
		return hoFrames(l, s, x, y, func(e geom.Pt, x, y float64) float64 {
			return hoRoundRectDist(x, y, hoPt(e, s, 0, 0.01), 0.12*s, 0.075*s, 0.025*s)
		}, 0.12, 0.04, 0.016*s)
	}},
	{"thin round frames", func(l *face.Landmarks68, s, x, y float64) bool {
		return hoFrames(l, s, x, y, func(e geom.Pt, x, y float64) float64 {
			return math.Abs(math.Hypot(x-e.X, y-e.Y) - 0.095*s)
		}, 0.095, 0.0, 0.0065*s)
	}},
	{"single strand", func(l *face.Landmarks68, s, x, y float64) bool {
		// From the forehead curving down to the left, over the left eye to the cheek.
		return hoBezierNear(x, y, hoPt(l[21], s, -0.02, -0.3), hoPt(l[37], s, 0.1, -0.08), hoPt(l[2], s, 0.06, 0.02), 0.008*s)
	}},
	{"lock of strands", func(l *face.Landmarks68, s, x, y float64) bool {
		// Six strands sweeping from the left of the forehead across both brows, bowed down.
		for k := range 6 {
			f := float64(k)
			if hoBezierNear(x, y, hoPt(l[17], s, -0.08, -0.25+0.025*f), hoPt(l[27], s, 0, -0.05+0.03*f), hoPt(l[45], s, 0.12, -0.02+0.045*f), 0.007*s) {
				return true
			}
		}
		return false
	}},
	{"fingers over the mouth", func(l *face.Landmarks68, s, x, y float64) bool {
		// A palm under the chin and four fingers spread up over the mouth.
		palm := hoPt(l[8], s, 0, 0.2)
		if dx, dy := (x-palm.X)/(0.22*s), (y-palm.Y)/(0.14*s); dx*dx+dy*dy <= 1 {
			return true
		}
		mouth := geom.Mean(l[48:60])
		for k := range 4 {
			f := float64(k) - 1.5
			if segDist(geom.Pt{X: x, Y: y}, hoPt(l[8], s, 0.07*f, 0.12), hoPt(mouth, s, 0.13*f, -0.1+0.02*math.Abs(f))) <= 0.033*s {
				return true
			}
		}
		return false
	}},
	{"cup at the chin", func(l *face.Landmarks68, s, x, y float64) bool {
		top, c := l[57].Y+0.02*s, l[57].X
		if math.Abs(x-c) <= 0.17*s && y >= top {
			return true
		}
		h := geom.Pt{X: c + 0.22*s, Y: top + 0.16*s} // the handle's ring
		return math.Abs(math.Hypot(x-h.X, y-h.Y)-0.07*s) <= 0.018*s
	}},
	{"phone at the cheek", func(l *face.Landmarks68, s, x, y float64) bool {
		c := l[13].Scale(0.65).Add(l[54].Scale(0.35))
		return hoInRotRect(x, y, hoPt(c, s, 0.03, 0), 70, 0.3*s, 0.1*s)
	}},
	{"scarf over mouth and nose", func(l *face.Landmarks68, s, x, y float64) bool {
		top := l[29].Y + 0.02*s + 0.025*s*math.Sin((x-l[27].X)/(0.07*s))
		return x >= l[0].X-0.12*s && x <= l[16].X+0.12*s && y >= top
	}},
	{"fringe", func(l *face.Landmarks68, s, x, y float64) bool {
		// Hair over the forehead down to a jagged edge just above the brows.
		brow := math.Min(l[19].Y, l[24].Y)
		bottom := brow - 0.015*s - 0.04*s*math.Abs(math.Sin((x-l[27].X)/(0.035*s)))
		return x >= l[0].X-0.1*s && x <= l[16].X+0.1*s && y <= bottom && y >= brow-0.6*s
	}},
	{"pen across the cheek", func(l *face.Landmarks68, s, x, y float64) bool {
		return segDist(geom.Pt{X: x, Y: y}, hoPt(l[14], s, 0.1, 0.08), hoPt(l[30], s, 0.05, -0.06)) <= 0.016*s
	}},
	{"microphone at the left", func(l *face.Landmarks68, s, x, y float64) bool {
		head := hoPt(l[48], s, -0.09, 0.09)
		if math.Hypot(x-head.X, y-head.Y) <= 0.085*s {
			return true
		}
		return segDist(geom.Pt{X: x, Y: y}, head, hoPt(head, s, -0.3, 0.45)) <= 0.028*s
	}},
}

// hoHue is a cover's base colour and whether it is one of a skin's.
type hoHue struct {
	name string
	c    raster.RGB
	skin bool
}

// hoSkinOf is the median colour of a face's skin: discs on both cheeks and between the brows.
func hoSkinOf(img *raster.Image, l *face.Landmarks68) raster.RGB {
	b := geom.Bounds(l[:])
	s := math.Max(b.W(), b.H())
	var ch [3][]int
	for _, c := range []geom.Pt{l[1].Add(l[30]).Scale(0.5), l[15].Add(l[30]).Scale(0.5), hoPt(l[27], s, 0, -0.06)} {
		r := 0.04 * s
		for y := int(c.Y - r); y <= int(c.Y+r); y++ {
			for x := int(c.X - r); x <= int(c.X+r); x++ {
				if math.Hypot(float64(x)-c.X, float64(y)-c.Y) <= r {
					cr, cg, cb := img.At(x, y)
					ch[0], ch[1], ch[2] = append(ch[0], int(cr)), append(ch[1], int(cg)), append(ch[2], int(cb))
				}
			}
		}
	}
	var m [3]uint8
	for i := range ch {
		sort.Ints(ch[i])
		m[i] = uint8(ch[i][len(ch[i])/2])
	}
	return raster.RGB{R: m[0], G: m[1], B: m[2]}
}

// hoHues are the covers' colours on a face whose skin is own (the other photo's: other): six of
// the skin's own (its colour, a little lighter and darker, the other face's, a darker and a
// lighter skin) and four others. None is one of occHues.
func hoHues(own, other raster.RGB) []hoHue {
	scale := func(c raster.RGB, k float64) raster.RGB {
		return raster.RGB{R: clampU8(k * float64(c.R)), G: clampU8(k * float64(c.G)), B: clampU8(k * float64(c.B))}
	}
	return []hoHue{
		{"own skin", own, true}, {"own+15", shade(own, 15), true}, {"own-20", shade(own, -20), true},
		{"other's skin", other, true}, {"darker skin", scale(own, 0.6), true}, {"lighter skin", shade(own, 35), true},
		{"green", raster.RGB{R: 50, G: 140, B: 60}, false}, {"purple", raster.RGB{R: 110, G: 50, B: 140}, false},
		{"light grey", raster.RGB{R: 215, G: 215, B: 220}, false}, {"navy", raster.RGB{R: 20, G: 25, B: 45}, false},
	}
}

// hoPhotoTexture is a texture cut from a sample photo: its colour's departures from its mean,
// scaled by 0.7, about the cover's base colour.
func hoPhotoTexture(t *testing.T, name string) occTexture {
	img, err := raster.Load(testenv.Sample(t, name+".png"))
	if err != nil {
		t.Fatal(err)
	}
	var mean [3]float64
	for y := range img.H {
		for x := range img.W {
			r, g, b := img.At(x, y)
			mean[0], mean[1], mean[2] = mean[0]+float64(r), mean[1]+float64(g), mean[2]+float64(b)
		}
	}
	n := float64(img.W * img.H)
	return occTexture{name, func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
		r, g, b := img.At((x+37)%img.W, (y+11)%img.H)
		return raster.RGB{
			R: clampU8(float64(c.R) + 0.7*(float64(r)-mean[0]/n)),
			G: clampU8(float64(c.G) + 0.7*(float64(g)-mean[1]/n)),
			B: clampU8(float64(c.B) + 0.7*(float64(b)-mean[2]/n)),
		}
	}}
}

// hoTextures are the covers' textures on a face with landmarks lm: flat, fine noise, a soft
// gradient across the face and two cut from photos. Only flat is one of occTextures.
func hoTextures(t *testing.T, lm *face.Landmarks68) []occTexture {
	b := geom.Bounds(lm[:])
	s, c := math.Max(b.W(), b.H()), b.Center()
	sn, cs := math.Sincos(30 * math.Pi / 180)
	return []occTexture{
		{"flat", func(c raster.RGB, _, _ int, _ *rand.Rand) raster.RGB { return c }},
		{"fine noise", func(c raster.RGB, _, _ int, rng *rand.Rand) raster.RGB { return shade(c, 6*rng.NormFloat64()) }},
		{"gradient", func(col raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
			u := ((float64(x)-c.X)*cs + (float64(y)-c.Y)*sn) / (0.5 * s)
			return shade(col, 22*math.Max(-1.4, math.Min(1.4, u)))
		}},
		hoPhotoTexture(t, "brick"), hoPhotoTexture(t, "coffee"),
	}
}

// hoCase is one held-out cover on one face.
type hoCase struct {
	occCase
	shape, tex, hue string
	skin            bool
}

// hoCases pairs each shape and hue with three of the five textures, turning with the shape and
// the hue, so that each shape meets every texture six times and every hue three times.
func hoCases(textures []occTexture, hues []hoHue) []hoCase {
	var out []hoCase
	for si, sh := range hoShapes {
		for hi, h := range hues {
			for _, k := range []int{0, 2, 4} {
				tx := textures[(si+hi+k)%len(textures)]
				out = append(out, hoCase{
					occCase: occCase{shape: sh, tex: tx, hue: h.c, name: sh.name + "/" + tx.name + "/" + h.name},
					shape:   sh.name, tex: tx.name, hue: h.name, skin: h.skin,
				})
			}
		}
	}
	return out
}

// hoWay is one way between the sample photos.
type hoWay struct {
	name           string
	srcImg, tgt    *raster.Image
	srcLm, lm      face.Landmarks68
	box            geom.Rect
	ownSkin, other raster.RGB
}

func hoWays(t *testing.T) []hoWay {
	p := photos(t)
	astroBox, graceBox := geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}, geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}
	astroSkin, graceSkin := hoSkinOf(p.src, &p.srcLm), hoSkinOf(p.dst, &p.dstLm)
	return []hoWay{
		{"astronaut → grace_hopper", p.src, p.dst, p.srcLm, p.dstLm, graceBox, graceSkin, astroSkin},
		{"grace_hopper → astronaut", p.dst, p.src, p.dstLm, p.srcLm, astroBox, astroSkin, graceSkin},
	}
}

// hoTally sums kept shares by a key, apart for skin's hues and the others, and swapped shares.
type hoTally struct {
	kept, n   map[string]*[2]float64
	swapped   map[string]float64
	worst     map[string]string
	worstKept map[string]float64
}

func newHoTally() *hoTally {
	return &hoTally{kept: map[string]*[2]float64{}, n: map[string]*[2]float64{}, swapped: map[string]float64{},
		worst: map[string]string{}, worstKept: map[string]float64{}}
}

func (h *hoTally) add(key string, skin bool, r occResult, name string) {
	if h.kept[key] == nil {
		h.kept[key], h.n[key], h.worstKept[key] = &[2]float64{}, &[2]float64{}, 2
	}
	i := 1
	if skin {
		i = 0
	}
	h.kept[key][i] += r.kept
	h.n[key][i]++
	h.swapped[key] += r.swapped
	if r.kept < h.worstKept[key] {
		h.worstKept[key], h.worst[key] = r.kept, name
	}
}

// row is the key's mean kept share over skin's hues and over the others, and its mean swapped.
func (h *hoTally) row(key string) (skin, others, swapped float64) {
	k, n := h.kept[key], h.n[key]
	if k == nil { // every case of key was rejected (and failed the test): NaN, not a panic
		return math.NaN(), math.NaN(), math.NaN()
	}
	return k[0] / n[0], k[1] / n[1], h.swapped[key] / (n[0] + n[1])
}

func TestOccluderSecondSurvey(t *testing.T) {
	fullTier(t, "swaps 360 occluded photos each way")
	floors := map[string][3]float64{ // skin's hues kept, others kept, swapped (means over shapes)
		"astronaut → grace_hopper": {0.61, 0.93, 0.93}, "grace_hopper → astronaut": {0.78, 0.95, 0.92},
	}
	const shapeSwapped = 0.5 // the least of the rest of the face any one shape leaves swapped
	var overall []string
	for _, w := range hoWays(t) {
		src, err := NewSource(w.srcImg, &w.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		b := geom.Bounds(w.lm[:])
		size := math.Max(b.W(), b.H())
		hull := faceHull(&w.lm)
		bare := bareSwapped(t, src, w.tgt, w.lm)
		hues := hoHues(w.ownSkin, w.other)
		byShape, byTex, byHue := newHoTally(), newHoTally(), newHoTally()
		for _, c := range hoCases(hoTextures(t, &w.lm), hues) {
			if on := hoCoverOnFace(w.tgt, &w.lm, size, hull, c.occCase.shape.inside); on < 0.002*size*size {
				t.Errorf("%s, %s: only %.0f px of the cover on the face: the evaluation's shape is misplaced", w.name, c.name, on)
				continue
			}
			r, after := occlusionRun(t, src, w.tgt, w.lm, w.box, c.occCase, bare)
			if byShape.kept[c.shape] == nil { // the first of each shape, for looking at
				name := fmt.Sprintf("heldout-into-%s-%s", w.name[len(w.name)-5:], strings.ReplaceAll(c.shape, " ", "-"))
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
		var sb strings.Builder
		fmt.Fprintf(&sb, "%s (target skin %v, the other's %v; the bare face %.1f%% swapped)\n", w.name, w.ownSkin, w.other, 100*bare)
		fmt.Fprintf(&sb, "  %-26s %10s %8s %8s   %s\n", "shape", "skin kept", "others", "swapped", "worst case (kept)")
		var all [3]float64
		for _, sh := range hoShapes {
			k0, k1, sw := byShape.row(sh.name)
			all[0], all[1], all[2] = all[0]+k0, all[1]+k1, all[2]+sw
			if sw < shapeSwapped {
				t.Errorf("%s, %s: the rest of the face swapped %.1f%% of the bare face's, want ≥ %.0f%%", w.name, sh.name, 100*sw, 100*shapeSwapped)
			}
			fmt.Fprintf(&sb, "  %-26s %9.1f%% %7.1f%% %7.1f%%   %s %.1f%%\n", sh.name, 100*k0, 100*k1, 100*sw, byShape.worst[sh.name], 100*byShape.worstKept[sh.name])
		}
		fmt.Fprintf(&sb, "  %-26s %10s %8s %8s\n", "texture", "skin kept", "others", "swapped")
		for _, tx := range []string{"flat", "fine noise", "gradient", "brick", "coffee"} {
			k0, k1, sw := byTex.row(tx)
			fmt.Fprintf(&sb, "  %-26s %9.1f%% %7.1f%% %7.1f%%\n", tx, 100*k0, 100*k1, 100*sw)
		}
		fmt.Fprintf(&sb, "  %-26s %10s %8s   %s\n", "hue", "kept", "swapped", "worst case (kept)")
		for _, h := range hues {
			k, m := byHue.kept[h.name], byHue.n[h.name]
			_, _, sw := byHue.row(h.name)
			fmt.Fprintf(&sb, "  %-26s %9.1f%% %7.1f%%   %s %.1f%%\n", fmt.Sprintf("%s %v", h.name, h.c), 100*(k[0]+k[1])/(m[0]+m[1]), 100*sw, byHue.worst[h.name], 100*byHue.worstKept[h.name])
		}
		n := float64(len(hoShapes))
		line := fmt.Sprintf("overall %s: skin-like mean kept %.1f%%, others mean kept %.1f%%, the rest of the face swapped %.1f%% of the bare face's (means over shapes)",
			w.name, 100*all[0]/n, 100*all[1]/n, 100*all[2]/n)
		fmt.Fprintf(&sb, "  %s\n", line)
		t.Log("\n" + sb.String())
		overall = append(overall, line)
		f := floors[w.name]
		for i, what := range []string{"skin's hues kept", "others kept", "the rest of the face swapped"} {
			if got := all[i] / n; got < f[i] {
				t.Errorf("%s: %s %.1f%% (mean over shapes), want ≥ %.0f%%", w.name, what, 100*got, 100*f[i])
			}
		}
		hoBareFinds(t, w, src)
	}
	for _, l := range overall {
		t.Log(l)
	}
}

// hoPaint is img with the cover painted blue, to see where it lies.
func hoPaint(img *raster.Image, lm *face.Landmarks68, size float64, inside func(*face.Landmarks68, float64, float64, float64) bool) *raster.Image {
	out := img.Clone()
	for y := range img.H {
		for x := range img.W {
			if inside(lm, size, float64(x), float64(y)) {
				out.Set(x, y, 40, 70, 200)
			}
		}
	}
	return out
}

// hoCoverOnFace is how many of the cover's pixels lie in the face's hull.
func hoCoverOnFace(img *raster.Image, lm *face.Landmarks68, size float64, hull []geom.Pt, inside func(*face.Landmarks68, float64, float64, float64) bool) float64 {
	var n float64
	hb := geom.Bounds(hull)
	for y := range img.H {
		for x := range img.W {
			if inHull(hull, hb, x, y) && inside(lm, size, float64(x), float64(y)) {
				n++
			}
		}
	}
	return n
}

// hoBareFinds logs what the occluder tests take back of the bare target and of the variants of
// it in hoBareVariants (landmarks found again on each). A bare face has no cover: whatever they
// take back of it is a false find. That the probe sees a find at all is checked on a navy cover.
func hoBareFinds(t *testing.T, w hoWay, src *Source) {
	t.Helper()
	for _, v := range hoBareVariants(w) {
		lm := landmarksIn(t, v.img, v.box)
		f := hoTakeBack(src, v.img, &lm)
		if f.found > 0 {
			saveForEyes(t, f.marked, fmt.Sprintf("heldout-finds-into-%s-%s.png", w.name[len(w.name)-5:], strings.ReplaceAll(v.name, " ", "")))
		}
		var parts []string
		for _, r := range []string{"forehead", "brows", "eyes", "nose", "cheeks/jaw", "mouth"} {
			if f.where[r] > 0 {
				parts = append(parts, fmt.Sprintf("%s %.0f", r, f.where[r]))
			}
		}
		t.Logf("%s, %s: the occluder tests take back %.0f px (%.2f%% of the face's %.0f) %s; swapped %.1f%% with them, %.1f%% without",
			w.name, v.name, f.found, 100*f.found/f.n, f.n, strings.Join(parts, ", "), 100*f.with/f.n, 100*f.without/f.n)
	}
	probe := w.tgt.Clone()
	size := math.Max(geom.Bounds(w.lm[:]).W(), geom.Bounds(w.lm[:]).H())
	for y := range probe.H {
		for x := range probe.W {
			if hoShapes[0].inside(&w.lm, size, float64(x), float64(y)) {
				probe.Set(x, y, 20, 25, 45)
			}
		}
	}
	lm := landmarksIn(t, probe, w.box)
	f := hoTakeBack(src, probe, &lm)
	t.Logf("%s, the probe (navy flat %s): the occluder tests take back %.0f px", w.name, hoShapes[0].name, f.found)
	if f.found < 0.005*size*size {
		t.Errorf("%s: the probe sees the occluder tests take back only %.0f px of a navy %s: it cannot tell a find", w.name, f.found, hoShapes[0].name)
	}
}

// hoFinds is what the occluder tests take back of a face: the pixels of its hull (n) where the
// swap with them differs from the swap without them by more than 12 levels (summed over the
// channels) and is nearer the target (found, by the part of the face: where), and how many of
// the hull's pixels each swap changes by more than 12.
type hoFinds struct {
	n, found, with, without float64
	where                   map[string]float64
	marked                  *raster.Image // the face, its finds painted magenta
}

func hoTakeBack(src *Source, img *raster.Image, lm *face.Landmarks68) hoFinds {
	with, without := img.Clone(), img.Clone()
	NewSwapper(src, DefaultOptions()).Apply(with, lm)
	o := DefaultOptions()
	o.Occluders = false
	NewSwapper(src, o).Apply(without, lm)
	hull := faceHull(lm)
	diff := func(a, b *raster.Image, x, y int) float64 {
		r1, g1, b1 := a.At(x, y)
		r0, g0, b0 := b.At(x, y)
		return math.Abs(float64(r1)-float64(r0)) + math.Abs(float64(g1)-float64(g0)) + math.Abs(float64(b1)-float64(b0))
	}
	f := hoFinds{where: map[string]float64{}, marked: with.Clone()}
	for y := range img.H {
		for x := range img.W {
			if !inPoly(hull, float64(x), float64(y)) {
				continue
			}
			f.n++
			dw, dwo := diff(with, img, x, y), diff(without, img, x, y)
			if dw > 12 {
				f.with++
			}
			if dwo > 12 {
				f.without++
			}
			if diff(with, without, x, y) > 12 && dw < dwo {
				f.found++
				f.where[hoRegion(lm, float64(x), float64(y))]++
				f.marked.Set(x, y, 255, 0, 255)
			}
		}
	}
	return f
}

// hoBare is a bare target and the detector's box on it.
type hoBare struct {
	name string
	img  *raster.Image
	box  geom.Rect
}

// hoBareVariants are the bare target and it mirrored, a stop darker, grainy (σ 5 levels a
// pixel) and at two thirds of its size.
func hoBareVariants(w hoWay) []hoBare {
	mirror := w.tgt.Clone()
	for y := range mirror.H {
		for x := range mirror.W {
			r, g, b := w.tgt.At(mirror.W-1-x, y)
			mirror.Set(x, y, r, g, b)
		}
	}
	dim, grain := w.tgt.Clone(), w.tgt.Clone()
	rng := rand.New(rand.NewPCG(11, 13))
	for i, v := range w.tgt.Pix {
		dim.Pix[i] = clampU8(float64(v) * 0.5)
		grain.Pix[i] = clampU8(float64(v) + 5*rng.NormFloat64())
	}
	small := raster.New(w.tgt.W*2/3, w.tgt.H*2/3)
	raster.ResizeArea(small, w.tgt)
	k := float64(small.W) / float64(w.tgt.W)
	return []hoBare{
		{"bare", w.tgt, w.box},
		{"bare, mirrored", mirror, geom.Rect{X0: float64(w.tgt.W) - w.box.X1, Y0: w.box.Y0, X1: float64(w.tgt.W) - w.box.X0, Y1: w.box.Y1}},
		{"bare, a stop darker", dim, w.box},
		{"bare, grainy", grain, w.box},
		{"bare, two thirds the size", small, geom.Rect{X0: k * w.box.X0, Y0: k * w.box.Y0, X1: k * w.box.X1, Y1: k * w.box.Y1}},
	}
}

// hoRegion names the part of the face nearest (x, y): above the brows is the forehead.
func hoRegion(l *face.Landmarks68, x, y float64) string {
	if y < math.Min(l[19].Y, l[24].Y) {
		return "forehead"
	}
	best, at := math.Inf(1), 0
	for i, p := range l {
		if d := math.Hypot(x-p.X, y-p.Y); d < best {
			best, at = d, i
		}
	}
	switch {
	case at < 17:
		return "cheeks/jaw"
	case at < 27:
		return "brows"
	case at < 36:
		return "nose"
	case at < 48:
		return "eyes"
	}
	return "mouth"
}
