package swap

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Generated occluders on the real sample faces: shapes (a bar across the eyes or the
// cheeks, a hand over a cheek, glasses frames, a microphone, strands of hair) in hues that
// include the skin's own (reds, oranges, browns, tans) and textures (flat, noisy, striped,
// shaded). The target's landmarks are found on the occluded photo, as the pipeline finds
// them.

// occShape says which pixels of a face with landmarks l (size: its larger side) an occluder
// covers.
type occShape struct {
	name   string
	inside func(l *face.Landmarks68, size float64, x, y float64) bool
}

// occTexture is an occluder's colour at (x, y), from its base colour c.
type occTexture struct {
	name   string
	colour func(c raster.RGB, x, y int, rng *rand.Rand) raster.RGB
}

func clampU8(v float64) uint8 { return uint8(min(255, max(0, math.Round(v)))) }

func shade(c raster.RGB, d float64) raster.RGB {
	return raster.RGB{R: clampU8(float64(c.R) + d), G: clampU8(float64(c.G) + d), B: clampU8(float64(c.B) + d)}
}

var occTextures = []occTexture{
	{"flat", func(c raster.RGB, _, _ int, _ *rand.Rand) raster.RGB { return c }},
	{"noisy", func(c raster.RGB, _, _ int, rng *rand.Rand) raster.RGB { return shade(c, 10*rng.NormFloat64()) }},
	{"striped", func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
		return shade(c, 18*math.Sin(float64(x+2*y)/3))
	}},
	{"shaded", func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB { return shade(c, 0.25*float64((x+y)%160)-20) }},
}

// segDist is the distance from p to the segment a–b.
func segDist(p, a, b geom.Pt) float64 {
	ab, ap := b.Sub(a), p.Sub(a)
	t := min(1, max(0, dot(ap, ab)/dot(ab, ab)))
	return math.Hypot(ap.X-t*ab.X, ap.Y-t*ab.Y)
}

var occShapes = []occShape{
	{"bar over the eyes", func(l *face.Landmarks68, size, x, y float64) bool {
		c := geom.Mean(l[36:48])
		return x >= l[0].X-0.1*size && x <= l[16].X+0.1*size && math.Abs(y-c.Y) <= 0.075*size
	}},
	{"bar over the cheeks", func(l *face.Landmarks68, size, x, y float64) bool {
		c := l[30].Y
		return x >= l[0].X-0.1*size && x <= l[16].X+0.1*size && math.Abs(y-c) <= 0.05*size
	}},
	{"hand", func(l *face.Landmarks68, size, x, y float64) bool {
		// A palm over the left cheek and fingers reaching up over the eye.
		c := l[2].Add(l[31]).Scale(0.5)
		dx, dy := (x-c.X)/(0.22*size), (y-c.Y)/(0.3*size)
		if dx*dx+dy*dy <= 1 {
			return true
		}
		for k := range 4 {
			base := c.Add(geom.Pt{X: (float64(k) - 1.5) * 0.1 * size, Y: -0.2 * size})
			tip := base.Add(geom.Pt{X: 0.05 * size, Y: -0.3 * size})
			if segDist(geom.Pt{X: x, Y: y}, base, tip) <= 0.04*size {
				return true
			}
		}
		return false
	}},
	{"glasses", func(l *face.Landmarks68, size, x, y float64) bool {
		p := geom.Pt{X: x, Y: y}
		le, re := geom.Mean(l[36:42]), geom.Mean(l[42:48])
		r, t := 0.13*size, 0.02*size
		for _, e := range []geom.Pt{le, re} {
			if math.Abs(math.Hypot(x-e.X, y-e.Y)-r) <= t {
				return true
			}
		}
		return segDist(p, le.Add(geom.Pt{X: r}), re.Sub(geom.Pt{X: r})) <= t ||
			segDist(p, le.Sub(geom.Pt{X: r}), l[0]) <= t || segDist(p, re.Add(geom.Pt{X: r}), l[16]) <= t
	}},
	{"microphone", func(l *face.Landmarks68, size, x, y float64) bool {
		head := l[54].Add(geom.Pt{X: 0.02 * size, Y: 0.04 * size})
		if math.Hypot(x-head.X, y-head.Y) <= 0.1*size {
			return true
		}
		return segDist(geom.Pt{X: x, Y: y}, head, head.Add(geom.Pt{X: 0.15 * size, Y: 0.5 * size})) <= 0.035*size
	}},
	{"hair", func(l *face.Landmarks68, size, x, y float64) bool {
		// Strands falling from the forehead over the right brow and eye.
		top := l[24].Add(geom.Pt{Y: -0.25 * size})
		for k := range 4 {
			a := top.Add(geom.Pt{X: (float64(k) - 1.5) * 0.06 * size})
			b := a.Add(geom.Pt{X: 0.12 * size, Y: 0.45 * size})
			if segDist(geom.Pt{X: x, Y: y}, a, b) <= 0.018*size {
				return true
			}
		}
		return false
	}},
}

// occHues are the occluders' base colours: skin's own hues first.
var occHues = []struct {
	name string
	c    raster.RGB
}{
	{"skin", raster.RGB{R: 205, G: 150, B: 125}},
	{"tan", raster.RGB{R: 190, G: 150, B: 115}},
	{"red", raster.RGB{R: 175, G: 55, B: 50}},
	{"orange", raster.RGB{R: 230, G: 140, B: 70}},
	{"brown", raster.RGB{R: 110, G: 70, B: 45}},
	{"dark", raster.RGB{R: 30, G: 30, B: 35}},
	{"blue", raster.RGB{R: 40, G: 70, B: 200}},
}

// occCase is one occluder painted on one face.
type occCase struct {
	shape occShape
	tex   occTexture
	hue   raster.RGB
	name  string
}

// occResult is what a swap did with an occluder: the share of its pixels on the face that
// stayed (within 12 levels summed over the channels) and the share of the face's other
// pixels (clear of it by 5 % of the face size) that the swap changed, relative to the share
// it changes on the bare face.
type occResult struct{ kept, swapped float64 }

// faceHull is the convex hull of the landmarks and the forehead points: where the swap acts.
func faceHull(l *face.Landmarks68) []geom.Pt {
	var e [extPoints]geom.Pt
	extend(l, &e)
	_, h := convexHull(e[:], nil, nil)
	return h
}

func inPoly(poly []geom.Pt, x, y float64) bool {
	in := false
	for i, p := range poly {
		q := poly[(i+len(poly)-1)%len(poly)]
		if (p.Y > y) != (q.Y > y) && x < (q.X-p.X)*(y-p.Y)/(q.Y-p.Y)+p.X {
			in = !in
		}
	}
	return in
}

// inHull is inPoly(hull, x, y) for a pixel, first tested against the hull's box hb (the
// surveys test every pixel of the photo, most of them far off the face).
func inHull(hull []geom.Pt, hb geom.Rect, x, y int) bool {
	fx, fy := float64(x), float64(y)
	return fx >= hb.X0 && fx <= hb.X1 && fy >= hb.Y0 && fy <= hb.Y1 && inPoly(hull, fx, fy)
}

// hullMask is inHull(hull, geom.Bounds(hull), x, y) for every pixel of a w×h image, row by
// row: an edge's crossing of a row is worked out once, by inPoly's own expression, rather than
// once a pixel.
func hullMask(hull []geom.Pt, w, h int) []bool {
	hb := geom.Bounds(hull)
	in := make([]bool, w*h)
	var xs []float64
	for y := max(0, int(math.Ceil(hb.Y0))); y < h && float64(y) <= hb.Y1; y++ {
		fy := float64(y)
		xs = xs[:0]
		for i, p := range hull {
			q := hull[(i+len(hull)-1)%len(hull)]
			if (p.Y > fy) != (q.Y > fy) {
				xs = append(xs, (q.X-p.X)*(fy-p.Y)/(q.Y-p.Y)+p.X)
			}
		}
		for x := max(0, int(math.Ceil(hb.X0))); x < w && float64(x) <= hb.X1; x++ {
			odd := false
			for _, c := range xs {
				if float64(x) < c {
					odd = !odd
				}
			}
			in[y*w+x] = odd
		}
	}
	return in
}

func TestHullMaskIsInHull(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	const w, h = 61, 47
	for k := range 200 {
		// Polygons partly off the frame, some on whole pixels (edges and vertices right on a
		// pixel's centre), some convex hulls as faceHull's are, some not convex at all.
		pts := make([]geom.Pt, 3+rng.IntN(12))
		for i := range pts {
			pts[i] = geom.Pt{X: -10 + 80*rng.Float64(), Y: -10 + 65*rng.Float64()}
			if k%3 == 0 {
				pts[i] = geom.Pt{X: math.Round(pts[i].X), Y: math.Round(pts[i].Y)}
			}
		}
		poly := pts
		if k%2 == 0 {
			_, poly = convexHull(pts, nil, nil)
		}
		hb := geom.Bounds(poly)
		got := hullMask(poly, w, h)
		for y := range h {
			for x := range w {
				if want := inHull(poly, hb, x, y); got[y*w+x] != want {
					t.Fatalf("polygon %d %v: (%d, %d) in the mask %v, inHull %v", k, poly, x, y, got[y*w+x], want)
				}
			}
		}
	}
}

// occlusionRun paints c over tgt (whose bare landmarks are lm, whose detector box is box),
// finds the landmarks again on the painted photo, swaps src in and measures.
func occlusionRun(t testing.TB, src *Source, tgt *raster.Image, lm face.Landmarks68, box geom.Rect, c occCase, bare float64) (occResult, *raster.Image) {
	t.Helper()
	b := geom.Bounds(lm[:])
	size := math.Max(b.W(), b.H())
	onFace := hullMask(faceHull(&lm), tgt.W, tgt.H)
	rng := rand.New(rand.NewPCG(7, 7))
	painted := tgt.Clone()
	on := make([]bool, tgt.W*tgt.H)
	for y := range tgt.H {
		for x := range tgt.W {
			if c.shape.inside(&lm, size, float64(x), float64(y)) {
				col := c.tex.colour(c.hue, x, y, rng)
				painted.Set(x, y, col.R, col.G, col.B)
				on[y*tgt.W+x] = true
			}
		}
	}
	found := landmarksIn(t, painted, box)
	after := painted.Clone()
	NewSwapper(src, DefaultOptions()).Apply(after, &found)
	near := func(x, y int) bool { // within 5 % of the face size of the occluder
		r := int(0.05 * size)
		for v := max(0, y-r); v <= min(tgt.H-1, y+r); v += 2 {
			for u := max(0, x-r); u <= min(tgt.W-1, x+r); u += 2 {
				if on[v*tgt.W+u] {
					return true
				}
			}
		}
		return false
	}
	var kept, n, changed, m float64
	for y := range tgt.H {
		for x := range tgt.W {
			if !onFace[y*tgt.W+x] {
				continue
			}
			r1, g1, b1 := after.At(x, y)
			r0, g0, b0 := painted.At(x, y)
			d := math.Abs(float64(r1)-float64(r0)) + math.Abs(float64(g1)-float64(g0)) + math.Abs(float64(b1)-float64(b0))
			switch {
			case on[y*tgt.W+x]:
				n++
				if d <= 12 {
					kept++
				}
			case (x+y)%3 == 0 && !near(x, y):
				m++
				if d > 12 {
					changed++
				}
			}
		}
	}
	return occResult{kept: kept / n, swapped: changed / m / bare}, after
}

// bareSwapped is the share of the face's pixels a swap changes on the bare target.
func bareSwapped(t testing.TB, src *Source, tgt *raster.Image, lm face.Landmarks68) float64 {
	t.Helper()
	after := tgt.Clone()
	NewSwapper(src, DefaultOptions()).Apply(after, &lm)
	onFace := hullMask(faceHull(&lm), tgt.W, tgt.H)
	var changed, m float64
	for y := range tgt.H {
		for x := range tgt.W {
			if (x+y)%3 != 0 || !onFace[y*tgt.W+x] {
				continue
			}
			r1, g1, b1 := after.At(x, y)
			r0, g0, b0 := tgt.At(x, y)
			m++
			if math.Abs(float64(r1)-float64(r0))+math.Abs(float64(g1)-float64(g0))+math.Abs(float64(b1)-float64(b0)) > 12 {
				changed++
			}
		}
	}
	return changed / m
}

// photoWay is one way between the sample photos: the source swapped into the target, whose
// face has the landmarks lm in the detector's box, and the share of its bare face the swap
// changes.
type photoWay struct {
	src  *Source
	tgt  *raster.Image
	lm   face.Landmarks68
	box  geom.Rect
	bare float64
}

var (
	waysOnce   sync.Once
	sharedWays map[bool]*photoWay
)

// photoWays are both ways between the sample photos, by whether the target is the astronaut,
// made once per test binary (each costs two bare swaps) and shared: a Source is read-only.
func photoWays(t *testing.T) map[bool]*photoWay {
	t.Helper()
	waysOnce.Do(func() {
		p := photos(t)
		made := map[bool]*photoWay{}
		for _, toAstro := range []bool{false, true} {
			srcImg, srcLm, w := p.src, p.srcLm, &photoWay{tgt: p.dst, lm: p.dstLm, box: geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}}
			if toAstro {
				srcImg, srcLm, w = p.dst, p.dstLm, &photoWay{tgt: p.src, lm: p.srcLm, box: geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}}
			}
			src, err := NewSource(srcImg, &srcLm)
			if err != nil {
				t.Fatal(err)
			}
			w.src, w.bare = src, bareSwapped(t, src, w.tgt, w.lm)
			made[toAstro] = w
		}
		sharedWays = made
	})
	if sharedWays == nil {
		t.Fatal("the photo ways failed in an earlier test (see its error)")
	}
	return sharedWays
}

// coverCase is one of occCases, by name, swapped into the astronaut or into Grace Hopper, and
// the least share of the cover the swap must keep and of the rest of the face it must swap
// (of the bare face's).
type coverCase struct {
	toAstronaut   bool
	name          string
	kept, swapped float64
}

// checkCovers runs each case the way it names, logs what it keeps and swaps, and checks both.
func checkCovers(t *testing.T, ways map[bool]*photoWay, cases []coverCase) {
	t.Helper()
	for _, c := range cases {
		w := ways[c.toAstronaut]
		found := false
		for _, oc := range occCases() {
			if oc.name != c.name {
				continue
			}
			found = true
			r, _ := occlusionRun(t, w.src, w.tgt, w.lm, w.box, oc, w.bare)
			t.Logf("into astronaut %v, %s: %.1f%% kept, the rest of the face %.1f%% swapped", c.toAstronaut, c.name, 100*r.kept, 100*r.swapped)
			if r.kept < c.kept {
				t.Errorf("into astronaut %v, %s: %.1f%% of the cover kept (want ≥ %.0f%%)", c.toAstronaut, c.name, 100*r.kept, 100*c.kept)
			}
			if r.swapped < c.swapped {
				t.Errorf("into astronaut %v, %s: only %.1f%% of the rest of the face swapped (want ≥ %.0f%% of the bare face's)", c.toAstronaut, c.name, 100*r.swapped, 100*c.swapped)
			}
		}
		if !found {
			t.Fatalf("no case %q", c.name)
		}
	}
}

func occCases() []occCase {
	var out []occCase
	for _, sh := range occShapes {
		for _, tx := range occTextures {
			for _, h := range occHues {
				out = append(out, occCase{shape: sh, tex: tx, hue: h.c, name: fmt.Sprintf("%s/%s/%s", sh.name, tx.name, h.name)})
			}
		}
	}
	return out
}

// occSurvey swaps every case keep admits into the target and returns the mean kept share by
// shape, over the skin-like hues and over the others, and the mean swapped share.
func occSurvey(t testing.TB, src *Source, tgt *raster.Image, lm face.Landmarks68, box geom.Rect, keep func(occCase) bool) (kept map[string][2]float64, swapped float64) {
	bare := bareSwapped(t, src, tgt, lm)
	kept = map[string][2]float64{}
	counts := map[string][2]float64{}
	var n float64
	for _, c := range occCases() {
		if !keep(c) {
			continue
		}
		r, _ := occlusionRun(t, src, tgt, lm, box, c, bare)
		i := 1
		if skinLike(c.hue) {
			i = 0
		}
		k, m := kept[c.shape.name], counts[c.shape.name]
		k[i] += r.kept
		m[i]++
		kept[c.shape.name], counts[c.shape.name] = k, m
		swapped += r.swapped
		n++
	}
	for name, k := range kept {
		m := counts[name]
		kept[name] = [2]float64{k[0] / max(1, m[0]), k[1] / max(1, m[1])}
	}
	return kept, swapped / n
}

// skinLike reports whether c is one of the skin's own hues (the first five of occHues).
func skinLike(c raster.RGB) bool {
	for _, h := range occHues[:5] {
		if h.c == c {
			return true
		}
	}
	return false
}

// The survey of every case, both ways between the sample photos, for docs/performance.md
// (go test -run TestOccluderSurvey -v ./internal/swap): the share of the pixels of
// covers of skin's hues kept on average (the colour test alone kept few), of the others, and
// how much of the rest of the face is swapped, of the bare face's. The floors sit a little
// below today's figures (docs/performance.md).
// TestOccluderSecondSurvey holds covers of other shapes, hues and textures.
func TestOccluderSurvey(t *testing.T) {
	fullTier(t, "swaps 168 occluded photos each way")
	p := photos(t)
	floors := map[string][3]float64{ // skin's hues kept, others kept, swapped
		"astronaut → grace_hopper": {0.89, 0.98, 0.94}, "grace_hopper → astronaut": {0.93, 0.98, 0.88},
	}
	for _, dir := range []string{"astronaut → grace_hopper", "grace_hopper → astronaut"} {
		srcImg, srcLm, tgt, lm, box := p.src, p.srcLm, p.dst, p.dstLm, geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}
		if dir[0] == 'g' {
			srcImg, srcLm, tgt, lm, box = p.dst, p.dstLm, p.src, p.srcLm, geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}
		}
		src, err := NewSource(srcImg, &srcLm)
		if err != nil {
			t.Fatal(err)
		}
		kept, swapped := occSurvey(t, src, tgt, lm, box, func(occCase) bool { return true })
		var all [2]float64
		for _, sh := range occShapes {
			k := kept[sh.name]
			t.Logf("%s, %-20s kept: skin-like hues %5.1f%%, others %5.1f%%", dir, sh.name, 100*k[0], 100*k[1])
			all[0], all[1] = all[0]+k[0]/float64(len(occShapes)), all[1]+k[1]/float64(len(occShapes))
		}
		t.Logf("%s, all shapes kept: skin-like %5.1f%%, others %5.1f%%; the rest of the face swapped %5.1f%% of the bare face's", dir, 100*all[0], 100*all[1], 100*swapped)
		if f := floors[dir]; all[0] < f[0] || all[1] < f[1] || swapped < f[2] {
			t.Errorf("%s: covers of skin's hues kept %.1f%% (want ≥ %.0f%%), others %.1f%% (≥ %.0f%%), the rest of the face swapped %.1f%% (≥ %.0f%%)",
				dir, 100*all[0], 100*f[0], 100*all[1], 100*f[1], 100*swapped, 100*f[2])
		}
	}
}

// Covers of the skin's own hues stay in front, told from the skin by their edges and their
// texture rather than their colour, while the rest of the face is swapped: a flat bar of skin
// colour over the cheeks, a tan microphone, a shaded hand of skin colour, a flat orange bar
// over the eyes. The colour-only swapper kept little of each; this one must keep more (the
// floors below) and swap at least half as much of the rest of the face as of the bare face.
// Noisy and striped covers of skin's hues are the texture test's
// (TestApplyKeepsNoisyAndStripedCovers).
func TestApplyKeepsCoversOfSkinHues(t *testing.T) {
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	box := geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}
	bare := bareSwapped(t, src, p.dst, p.dstLm)
	for name, floor := range map[string]float64{
		"bar over the cheeks/flat/skin": 0.55, "microphone/flat/tan": 0.65,
		"hand/shaded/skin": 0.6, "bar over the eyes/flat/orange": 0.6,
	} {
		for _, c := range occCases() {
			if c.name != name {
				continue
			}
			r, _ := occlusionRun(t, src, p.dst, p.dstLm, box, c, bare)
			t.Logf("%s: %.1f%% kept, the rest of the face %.1f%% swapped", name, 100*r.kept, 100*r.swapped)
			if r.kept < floor {
				t.Errorf("%s: %.1f%% of the cover kept (want ≥ %.0f%%)", name, 100*r.kept, 100*floor)
			}
			if r.swapped < 0.5 {
				t.Errorf("%s: only %.1f%% of the rest of the face swapped (want ≥ 50%% of the bare face's)", name, 100*r.swapped)
			}
		}
	}
}

// Covers of varied hues and textures that colour and coarse structure missed and the detail
// test finds, both ways between the sample photos: grain, stripes and shading of skin's own
// hues and of others, a flat cover on grainy skin, flat covers over the eyes. Without the
// detail test they were mostly swapped over; each must keep its cover (the floors below),
// and the bare face must stay swapped as much as it was without the detail test (the least
// shares of its hull's pixels changed below), so the finds are the covers, not the face.
func TestApplyKeepsTexturedCovers(t *testing.T) {
	t.Parallel()
	ways := photoWays(t)
	for _, toAstro := range []bool{false, true} {
		bare, least := ways[toAstro].bare, 0.72
		if toAstro {
			least = 0.62
		}
		t.Logf("into astronaut %v: the bare face %.1f%% swapped", toAstro, 100*bare)
		if bare < least {
			t.Errorf("into astronaut %v: only %.1f%% of the bare face swapped (want ≥ %.0f%%): the cover tests take the face for a cover", toAstro, 100*bare, 100*least)
		}
	}
	checkCovers(t, ways, []coverCase{
		{false, "microphone/flat/orange", 0.65, 0.7}, {false, "microphone/shaded/tan", 0.65, 0.7},
		{false, "microphone/shaded/orange", 0.65, 0.7}, {true, "bar over the cheeks/striped/orange", 0.65, 0.7},
		{true, "bar over the eyes/shaded/red", 0.65, 0.7}, {true, "bar over the eyes/flat/red", 0.65, 0.7},
		{true, "hair/noisy/red", 0.65, 0.7}, {true, "hair/shaded/brown", 0.65, 0.7},
	})
}

// Glasses frames and strands of hair of the skin's own hues stay in front, found by their
// shape, a long band of even width, both ways between the sample photos. Without the
// thin-cover test (and the covered-sample check) the swap kept little of each frame on the
// astronaut's smooth face and of the red and brown ones on Grace Hopper's wrinkled one, and
// about half of the tan and brown strands on the astronaut; each must keep its floor below.
// On her face a ridge must be stronger and longer than her creases, and a frame of skin's
// lighter hues is fainter; the glasses test (rings.go) finds frames by their rings round both
// eyes, and with it the frames here keep well above these floors.
func TestApplyKeepsThinCovers(t *testing.T) {
	t.Parallel()
	checkCovers(t, photoWays(t), []coverCase{
		{false, "glasses/flat/red", 0.6, 0.75}, {false, "glasses/flat/brown", 0.35, 0.75},
		{false, "glasses/shaded/brown", 0.5, 0.75},
		{true, "glasses/flat/skin", 0.45, 0.75}, {true, "glasses/flat/tan", 0.45, 0.75},
		{true, "glasses/noisy/skin", 0.45, 0.75}, {true, "glasses/striped/tan", 0.45, 0.75},
		{true, "glasses/shaded/skin", 0.6, 0.75}, {true, "hair/flat/tan", 0.75, 0.75}, {true, "hair/flat/brown", 0.6, 0.75},
	})
}

// A cover over some of the skin sample discs (a bar over the eyes covers the two under them
// and the one between the brows; a hand those on its cheek) must not teach the skin model its
// colour: those discs are left out. Into Grace Hopper, a noisy blue bar over the eyes was
// swapped over and a flat blue hand left little of the rest of the face swapped while they
// were not; each must keep its cover and leave the rest of the face swapped (the floors
// below).
func TestApplyDropsCoveredSkinSamples(t *testing.T) {
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	box := geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}
	bare := bareSwapped(t, src, p.dst, p.dstLm)
	for name, floor := range map[string][2]float64{ // kept, swapped
		"bar over the eyes/noisy/blue": {0.9, 0.75}, "bar over the eyes/flat/dark": {0.9, 0.75}, "hand/flat/blue": {0.85, 0.9},
	} {
		for _, c := range occCases() {
			if c.name != name {
				continue
			}
			r, _ := occlusionRun(t, src, p.dst, p.dstLm, box, c, bare)
			t.Logf("%s: %.1f%% kept, the rest of the face %.1f%% swapped", name, 100*r.kept, 100*r.swapped)
			if r.kept < floor[0] || r.swapped < floor[1] {
				t.Errorf("%s: %.1f%% of the cover kept (want ≥ %.0f%%), the rest of the face %.1f%% swapped (want ≥ %.0f%% of the bare face's)",
					name, 100*r.kept, 100*floor[0], 100*r.swapped, 100*floor[1])
			}
		}
	}
}

// A flat hand over a cheek is one region between sharp edges, larger than any piece of the
// skin that the nose's and the eyes' edges cut apart: the structure test took it, the largest
// region, for the skin and the rest of the face for the cover. Its reference is now the
// largest region that looks like the sampled skin. Hands of skin's hues, flat, noisy and
// shaded, into the astronaut (and two into Grace Hopper) must keep nearly all of the hand
// and leave most of the rest of the face swapped (the floors below).
func TestApplyKeepsHandsAndSwapsTheRest(t *testing.T) {
	t.Parallel()
	checkCovers(t, photoWays(t), []coverCase{
		{false, "hand/flat/brown", 0.9, 0.9}, {false, "hand/shaded/tan", 0.9, 0.6},
		{true, "hand/flat/orange", 0.9, 0.7}, {true, "hand/flat/brown", 0.9, 0.7},
		{true, "hand/noisy/orange", 0.9, 0.7}, {true, "hand/noisy/brown", 0.9, 0.7},
		{true, "hand/shaded/tan", 0.9, 0.62}, {true, "hand/shaded/skin", 0.9, 0.5},
	})
}

// namedCover is one of a family's covers, by shape, texture and hue name, and the least share
// of it the swap must keep and of the rest of the face it must swap.
type namedCover struct {
	toAstronaut     bool
	shape, tex, hue string
	kept, swapped   float64
}

// checkNamedCovers runs each case the way it names (find builds it; a zero occCase when the
// family has no such cover) and checks both shares.
func checkNamedCovers(t *testing.T, cases []namedCover, find func(*photoWay, namedCover) occCase) {
	t.Helper()
	ways := photoWays(t)
	for _, c := range cases {
		w := ways[c.toAstronaut]
		oc := find(w, c)
		if oc.name == "" {
			t.Fatalf("no cover %s/%s/%s", c.shape, c.tex, c.hue)
		}
		r, _ := occlusionRun(t, w.src, w.tgt, w.lm, w.box, oc, w.bare)
		t.Logf("into astronaut %v, %s: %.1f%% kept, the rest of the face %.1f%% swapped", c.toAstronaut, oc.name, 100*r.kept, 100*r.swapped)
		if r.kept < c.kept || r.swapped < c.swapped {
			t.Errorf("into astronaut %v, %s: %.1f%% of the cover kept (want ≥ %.0f%%), the rest of the face %.1f%% swapped (want ≥ %.0f%% of the bare face's)",
				c.toAstronaut, oc.name, 100*r.kept, 100*c.kept, 100*r.swapped, 100*c.swapped)
		}
	}
}
