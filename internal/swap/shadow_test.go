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

// A shadow cast across a face (a wall's or a hat brim's in the sun, a pole's or a strand's)
// is the face's own skin, darker: its grain, features and chroma go on through it. The swap
// must swap it and carry it, as dark as the target is there and with its edge where the
// target's is; a cover of a dark colour at the same place stays in front.

// shadowEdge is a straight shadow edge through a face with landmarks l (size s): the share
// of each point in shade, from 0 on the lit side to 1, over a penumbra of soft (share of s).
type shadowEdge func(l *face.Landmarks68, s, x, y float64) float64

// shadowLine is the edge through the point at of the face, turned deg from the vertical, the
// shade on its right (its lower side when turned to the horizontal).
func shadowLine(at func(l *face.Landmarks68, s float64) geom.Pt, deg, soft float64) shadowEdge {
	sn, cs := math.Sincos(deg * math.Pi / 180)
	return func(l *face.Landmarks68, s, x, y float64) float64 {
		c := at(l, s)
		d := (x-c.X)*cs - (y-c.Y)*sn
		return ramp(d, soft*s)
	}
}

// ramp is a shade edge's profile across d (px past the edge): a pixel's own width when
// hard, a linear penumbra of width w when soft.
func ramp(d, w float64) float64 {
	return min(1, max(0, 0.5+d/max(1, w)))
}

// shadowBand is a shade band of width w (share of s) through the point at, turned deg.
func shadowBand(at func(l *face.Landmarks68, s float64) geom.Pt, deg, w float64) shadowEdge {
	sn, cs := math.Sincos(deg * math.Pi / 180)
	return func(l *face.Landmarks68, s, x, y float64) float64 {
		c := at(l, s)
		d := math.Abs((x-c.X)*cs - (y-c.Y)*sn)
		return ramp(w*s/2-d, 0)
	}
}

// shadowBrim is a hat brim's shade over the forehead and the eyes, to a little below them.
func shadowBrim(l *face.Landmarks68, s, x, y float64) float64 {
	c := hoPt(geom.Mean(l[36:48]), s, 0, 0.06)
	d := c.Y - y + 0.05*(x-c.X)
	return ramp(d, 0.01*s)
}

// noseBridge is the middle of the nose's bridge, where a half-face shadow's edge runs.
func noseBridge(l *face.Landmarks68, s float64) geom.Pt { return l[28] }

// shadowCase is a shade drawn over a target: where, and how much each channel keeps in it.
type shadowCase struct {
	name string
	edge shadowEdge
	k    [3]float64
	hard bool // whether its edge is sharp enough to check the output's edge width
}

var shadowCases = []shadowCase{
	{"half, ×0.5, vertical", shadowLine(noseBridge, 0, 0), [3]float64{0.5, 0.5, 0.5}, true},
	{"half, ×0.72, vertical", shadowLine(noseBridge, 0, 0), [3]float64{0.72, 0.72, 0.72}, true},
	{"half, ×0.5, diagonal", shadowLine(noseBridge, 35, 0), [3]float64{0.5, 0.5, 0.5}, true},
	{"half, ×0.72, diagonal", shadowLine(noseBridge, -35, 0), [3]float64{0.72, 0.72, 0.72}, true},
	{"half, ×0.5, soft", shadowLine(noseBridge, 15, 0.05), [3]float64{0.5, 0.5, 0.5}, false},
	{"band, ×0.6", shadowBand(func(l *face.Landmarks68, s float64) geom.Pt { return l[30] }, 30, 0.08), [3]float64{0.6, 0.6, 0.6}, false},
	{"brim, ×0.55", shadowBrim, [3]float64{0.55, 0.55, 0.55}, true},
	{"half, sky-lit", shadowLine(noseBridge, 0, 0), [3]float64{0.55, 0.6, 0.7}, true},
}

// shadowed is img with c's shade drawn over the face with landmarks l.
func shadowed(img *raster.Image, l *face.Landmarks68, c shadowCase) (*raster.Image, []float64) {
	b := geom.Bounds(l[:])
	s := math.Max(b.W(), b.H())
	out, share := img.Clone(), make([]float64, img.W*img.H)
	for y := range img.H {
		for x := range img.W {
			a := c.edge(l, s, float64(x), float64(y))
			if a <= 0 {
				continue
			}
			share[y*img.W+x] = a
			r, g, bl := img.At(x, y)
			f := func(v uint8, k float64) uint8 { return clampU8(float64(v) * (1 - a + a*k)) }
			out.Set(x, y, f(r, c.k[0]), f(g, c.k[1]), f(bl, c.k[2]))
		}
	}
	return out, share
}

// pixLuma is a pixel's Rec. 601 luma.
func pixLuma(img *raster.Image, x, y int) float64 {
	r, g, b := img.At(x, y)
	return 0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)
}

// shadowResult is what a swap did with a shade: the share of its pixels changed, of the bare
// face's same pixels' (a change scaled by the shade: a swap that carries it changes a shaded
// pixel by the shade times what it changes it by bare); how dark the output is there against
// the bare face's swap, as a share of how dark the shade made the target; and over how much
// of the face size the output's shade rises across a hard edge.
type shadowResult struct{ swapped, dark, edge float64 }

// shadowRun draws c over w's target, finds the landmarks again, swaps and measures.
func shadowRun(t testing.TB, w *photoWay, c shadowCase, bareAfter *raster.Image, save string) shadowResult {
	t.Helper()
	lm := w.lm
	b := geom.Bounds(lm[:])
	size := math.Max(b.W(), b.H())
	painted, share := shadowed(w.tgt, &lm, c)
	found := landmarksIn(t, painted, w.box)
	after := painted.Clone()
	NewSwapper(w.src, DefaultOptions()).Apply(after, &found)
	saveForEyes(t, after, save)
	hull := faceHull(&lm)
	hb := geom.Bounds(hull)
	k := (c.k[0] + c.k[1] + c.k[2]) / 3
	kl := 0.299*c.k[0] + 0.587*c.k[1] + 0.114*c.k[2]
	var changed, bareChanged, n, lo, lb float64
	// The edge's profile: the output's luma against the bare swap's, by distance across the
	// edge (px), over the pixels the bare swap changed.
	prof := map[int][2]float64{}
	for y := range w.tgt.H {
		for x := range w.tgt.W {
			if !inHull(hull, hb, x, y) {
				continue
			}
			d := pixDiff(after, painted, x, y)
			bd := pixDiff(bareAfter, w.tgt, x, y)
			if bd > 12 && c.hard {
				// Signed distance across the edge: where the shade's share crosses a half.
				dist := shadeDistance(c.edge, &lm, size, x, y)
				if math.Abs(dist) <= 0.12*size {
					p := prof[int(math.Round(dist))]
					prof[int(math.Round(dist))] = [2]float64{p[0] + pixLuma(after, x, y), p[1] + pixLuma(bareAfter, x, y)}
				}
			}
			if share[y*w.tgt.W+x] < 1 || shadeDistance(c.edge, &lm, size, x, y) < 0.03*size {
				continue
			}
			n++
			if bd > 12 {
				bareChanged++
				lo += pixLuma(after, x, y)
				lb += pixLuma(bareAfter, x, y)
				if d > 12*k {
					changed++
				}
			}
		}
	}
	r := shadowResult{swapped: changed / max(1, bareChanged), dark: lo / lb / kl}
	if c.hard {
		r.edge = edgeWidth(prof, kl) / size
	}
	return r
}

// shadeDistance is how far (px) inside the shade (x, y) lies, along the shade's gradient:
// negative on the lit side.
func shadeDistance(e shadowEdge, l *face.Landmarks68, s float64, x, y int) float64 {
	fx, fy := float64(x), float64(y)
	// Walk across the edge in the direction its share grows, at most 0.2 s either way.
	a := e(l, s, fx, fy)
	gx := e(l, s, fx+3, fy) - e(l, s, fx-3, fy)
	gy := e(l, s, fx, fy+3) - e(l, s, fx, fy-3)
	if gx == 0 && gy == 0 {
		// Far from the edge: search along the rows and columns for it.
		for r := 1.0; r <= 0.2*s; r++ {
			for _, v := range [4][2]float64{{r, 0}, {-r, 0}, {0, r}, {0, -r}} {
				if e(l, s, fx+v[0], fy+v[1]) != a {
					if a >= 0.5 {
						return r
					}
					return -r
				}
			}
		}
		if a >= 0.5 {
			return 0.2 * s
		}
		return -0.2 * s
	}
	h := math.Hypot(gx, gy)
	gx, gy = gx/h, gy/h
	for r := 0.0; r <= 0.2*s; r += 0.5 {
		if a >= 0.5 && e(l, s, fx-r*gx, fy-r*gy) < 0.5 {
			return r
		}
		if a < 0.5 && e(l, s, fx+r*gx, fy+r*gy) >= 0.5 {
			return -r
		}
	}
	if a >= 0.5 {
		return 0.2 * s
	}
	return -0.2 * s
}

// edgeWidth is over how many px the output's shade (its luma against the bare swap's,
// smoothed over 3 px) rises from a fifth to four fifths of the way from lit to kl.
func edgeWidth(prof map[int][2]float64, kl float64) float64 {
	ratio := func(d int) (float64, bool) {
		var o, b float64
		for e := d - 1; e <= d+1; e++ {
			p := prof[e]
			o, b = o+p[0], b+p[1]
		}
		return o / b, b > 0
	}
	first, last := math.Inf(1), math.Inf(-1)
	for d := -60; d <= 60; d++ {
		r, ok := ratio(d)
		if !ok {
			continue
		}
		f := (1 - r) / (1 - kl) // 0 lit, 1 shaded as the target
		if f > 0.2 && f < 0.8 {
			first, last = min(first, float64(d)), max(last, float64(d))
		}
	}
	if first > last {
		return 0
	}
	return last - first + 1
}

// pixDiff is the sum of the channels' absolute differences between a and b at (x, y).
func pixDiff(a, b *raster.Image, x, y int) float64 {
	r1, g1, b1 := a.At(x, y)
	r0, g0, b0 := b.At(x, y)
	return math.Abs(float64(r1)-float64(r0)) + math.Abs(float64(g1)-float64(g0)) + math.Abs(float64(b1)-float64(b0))
}

// darkCoverKept paints the shade's place with a cover of colour col (textured by tex, nil:
// flat) instead, swaps, and measures the share of its pixels kept.
func darkCoverKept(t testing.TB, w *photoWay, c shadowCase, col raster.RGB, tex *occTexture) float64 {
	t.Helper()
	lm := w.lm
	b := geom.Bounds(lm[:])
	size := math.Max(b.W(), b.H())
	painted := w.tgt.Clone()
	cov := make([]float64, w.tgt.W*w.tgt.H)
	rng := rand.New(rand.NewPCG(7, 11))
	for y := range w.tgt.H {
		for x := range w.tgt.W {
			a := c.edge(&lm, size, float64(x), float64(y))
			if a <= 0 {
				continue
			}
			cov[y*w.tgt.W+x] = a
			cc := col
			if tex != nil {
				cc = tex.colour(col, x, y, rng)
			}
			r, g, bl := w.tgt.At(x, y)
			painted.Set(x, y, clampU8(a*float64(cc.R)+(1-a)*float64(r)), clampU8(a*float64(cc.G)+(1-a)*float64(g)), clampU8(a*float64(cc.B)+(1-a)*float64(bl)))
		}
	}
	found := landmarksIn(t, painted, w.box)
	after := painted.Clone()
	NewSwapper(w.src, DefaultOptions()).Apply(after, &found)
	kept, n, _, _ := softCounts(w.tgt, painted, after, cov, &lm)
	return kept / n
}

// A shade across a face is swapped, not kept as a cover: each of shadowCases into both
// sample photos. 70 % of the bare face's same pixels leaves room for the landmarks found
// again on the shaded photo, a shadow's edge taken as the outline of something, and the
// carry's darkening (a pixel counts as changed past 12 levels times the shade, and a swap
// carried as dark as the target changes fewer by that much). How dark the output is there
// and how sharp its edge are logged (the rules carry only a shade they took for a cover).
// Dark covers at the same places (black, deep brown, dark mahogany; flat and brick-shaded)
// stay in front.
func TestApplySwapsShadowsAndKeepsDarkCovers(t *testing.T) {
	fullTier(t, "swaps shaded photos both ways")
	ways := photoWays(t)
	hues := []struct {
		name string
		c    raster.RGB
	}{{"black", raster.RGB{R: 18, G: 18, B: 20}}, {"deep brown", raster.RGB{R: 82, G: 52, B: 36}}, {"dark mahogany", raster.RGB{R: 96, G: 52, B: 40}}}
	for _, toAstro := range []bool{false, true} {
		w := ways[toAstro]
		bareAfter := w.tgt.Clone()
		NewSwapper(w.src, DefaultOptions()).Apply(bareAfter, &w.lm)
		for i, c := range shadowCases {
			r := shadowRun(t, w, c, bareAfter, fmt.Sprintf("shadow-%v-%d.png", toAstro, i))
			t.Logf("into astronaut %v, %s: %.1f%% swapped, %.2f as dark, edge over %.1f%% of the face", toAstro, c.name, 100*r.swapped, r.dark, 100*r.edge)
			if !toAstro && c.name == "half, ×0.5, soft" {
				// A soft edge across a lined face wanders with its creases, no one curve: the
				// cast-edge test does not take it, and the shade is kept whole as a cover, not
				// swapped in part and darkened.
				if r.swapped > 0.15 {
					t.Errorf("into astronaut %v, %s: %.1f%% of the shade swapped (want it kept as a cover: ≤ 15%%)", toAstro, c.name, 100*r.swapped)
				}
				continue
			}
			if r.swapped < 0.7 {
				t.Errorf("into astronaut %v, %s: %.1f%% of the shade swapped (want ≥ 70%% of the bare face's)", toAstro, c.name, 100*r.swapped)
			}
		}
		brick := fsTextures(t, &w.lm)[2]
		for _, ci := range []int{0, 6} { // the half face's and the brim's place
			for _, h := range hues {
				for _, tx := range []*occTexture{nil, &brick} {
					if kept := darkCoverKept(t, w, shadowCases[ci], h.c, tx); kept < 0.9 {
						t.Errorf("into astronaut %v, a %s cover at the %s's place (textured %v): %.1f%% kept (want ≥ 90%%)", toAstro, h.name, shadowCases[ci].name, tx != nil, 100*kept)
					}
				}
			}
		}
	}
}

// Covers of the skin's hue, darker (×0.6, as deep as a shadow), at a shadow's places, whose
// grain passes for the skin's in luma: a print's colour noise (σ 5 levels in each channel,
// drawn apart), stripes 4 px wide and a pixel's own grain (σ 6 levels). A shadow keeps the
// skin's chroma detail and its detail's scale; these have their own, and stay in front
// (the lit skin's grain alone would not tell them).
func TestShadowsKeepCoversOfTheSkinsHue(t *testing.T) {
	t.Parallel()
	ways := photoWays(t)
	textures := []occTexture{
		{"colour noise", func(c raster.RGB, _, _ int, rng *rand.Rand) raster.RGB {
			return raster.RGB{R: clampU8(float64(c.R) + 5*rng.NormFloat64()), G: clampU8(float64(c.G) + 5*rng.NormFloat64()), B: clampU8(float64(c.B) + 5*rng.NormFloat64())}
		}},
		{"stripes", func(c raster.RGB, _, y int, _ *rand.Rand) raster.RGB { return shade(c, float64(12*((y/4)%2))-6) }},
		{"pixel grain", func(c raster.RGB, _, _ int, rng *rand.Rand) raster.RGB { return shade(c, 6*rng.NormFloat64()) }},
	}
	for _, toAstro := range []bool{false, true} {
		w := ways[toAstro]
		hue := scaledSkin(0.6)(skinColour(w.tgt, &w.lm))
		for _, ci := range []int{0, 5, 6} { // the half face's, the band's and the brim's place
			for _, tx := range textures {
				kept := darkCoverKept(t, w, shadowCases[ci], hue, &tx)
				t.Logf("into astronaut %v, %s at the %s's place: %.1f%% kept", toAstro, tx.name, shadowCases[ci].name, 100*kept)
				floor := 0.8
				if !toAstro && ci == 6 && tx.name == "stripes" {
					floor = 0.5 // the other rules keep only about half of it, shadows' test or not
				}
				if kept < floor {
					t.Errorf("into astronaut %v, %s at the %s's place: %.1f%% kept (want ≥ %.0f%%)", toAstro, tx.name, shadowCases[ci].name, 100*kept, 100*floor)
				}
			}
		}
	}
}

// TestShadowCarryIsSmooth swaps a face half in a ×0.5 shade and checks that the carry darkens
// the swap about as much as the shade, by a factor that does not follow the target's own light
// and dark inside the shade (her features and shading): the shadow is carried, not a
// see-through print of the target.
func TestShadowCarryIsSmooth(t *testing.T) {
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	lm := p.dstLm
	target, share := shadowed(p.dst, &lm, shadowCases[0])
	s := NewSwapper(src, DefaultOptions())
	out := target.Clone()
	s.Apply(out, &lm)
	bare := p.dst.Clone()
	s.Apply(bare, &lm)
	// The correlation, over the shade's face pixels, of the carry's factor (the output over
	// the bare face's swap) with the target's brightness.
	var n, sx, sy, sxx, syy, sxy float64
	hull := faceHull(&lm)
	for y := range target.H {
		for x := range target.W {
			if share[y*target.W+x] < 1 || !inPoly(hull, float64(x), float64(y)) {
				continue
			}
			b := pixLuma(bare, x, y)
			if b < 1 {
				continue
			}
			f, v := pixLuma(out, x, y)/b, pixLuma(target, x, y)
			n, sx, sy, sxx, syy, sxy = n+1, sx+f, sy+v, sxx+f*f, syy+v*v, sxy+f*v
		}
	}
	if n == 0 {
		t.Fatal("no face pixel in the shade")
	}
	cov := sxy/n - sx/n*sy/n
	corr := cov / math.Sqrt(max(1e-12, (sxx/n-sx*sx/n/n)*(syy/n-sy*sy/n/n)))
	t.Logf("%.0f shaded face pixels: the carry's factor ×%.2f (the shade ×%.2f), correlating %.2f with the target's brightness", n, sx/n, shadowCases[0].k[0], corr)
	if corr > 0.4 {
		t.Errorf("the carry follows the target's brightness inside the shade (correlation %.2f), want <= 0.4", corr)
	}
	// A carry that stopped darkening would be smooth too.
	if k := shadowCases[0].k[0]; math.Abs(sx/n-k) > 0.1 {
		t.Errorf("the carry darkens the shade ×%.2f, want about ×%.2f (as the target)", sx/n, k)
	}
}

// A Swapper's shadow is its own face's: a face swapped after a shaded one (photos, or a
// frame whose window voted a shadow) comes out as a fresh Swapper swaps it, and a shaded face
// swapped after a bare one's cover was found, as well.
func TestShadowDoesNotLeakIntoTheNextFace(t *testing.T) {
	t.Parallel()
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	lm := p.dstLm
	swapFresh := func(img *raster.Image) *raster.Image {
		out := img.Clone()
		NewSwapper(src, DefaultOptions()).Apply(out, &lm)
		return out
	}
	bare := swapFresh(p.dst)
	for _, c := range []shadowCase{shadowCases[0], shadowCases[6]} { // the half face's, the brim's
		target, _ := shadowed(p.dst, &lm, c)
		shaded := swapFresh(target)
		s := NewSwapper(src, DefaultOptions())
		found := s.FindCover(target, &lm)
		if found == nil || found.Shade == nil {
			t.Fatalf("%s: FindCover found no shadow", c.name)
		}
		votes := []*face.Cover{found, found, found, found, found, found, found}
		for _, run := range []struct {
			name  string
			first func()
			img   *raster.Image
			want  *raster.Image
		}{
			{"a bare photo after the shaded one", func() { s.Apply(target.Clone(), &lm) }, p.dst, bare},
			{"a bare photo after a voted shadow", func() { s.Votes(votes, 2*CoverVote+1); s.Apply(target.Clone(), &lm) }, p.dst, bare},
			{"the shaded photo after a bare face's cover", func() { s.FindCover(p.dst, &lm) }, target, shaded},
		} {
			run.first()
			out := run.img.Clone()
			s.Apply(out, &lm)
			if !slices.Equal(out.Pix, run.want.Pix) {
				t.Errorf("%s, %s: differs from a fresh Swapper's swap", c.name, run.name)
			}
		}
	}
}
