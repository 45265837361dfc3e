package swap

import (
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// scSpot is a small round thing on a face with landmarks l (size s: its larger side): where
// its centre lies, its area as a share of the face's hull, its aspect (a over b) and tilt,
// and its edge's width as a share of its radius (0: sharp, as a lens draws it).
type scSpot struct {
	centre func(l *face.Landmarks68, s float64) geom.Pt
	share  float64
	aspect float64
	deg    float64
	soft   float64
}

// scPlaces are spots on the skin clear of the features.
var scPlaces = []struct {
	name string
	at   func(l *face.Landmarks68, s float64) geom.Pt
}{
	{"left cheek", func(l *face.Landmarks68, s float64) geom.Pt { return l[2].Scale(0.5).Add(l[31].Scale(0.5)) }},
	{"right cheek", func(l *face.Landmarks68, s float64) geom.Pt { return l[14].Scale(0.55).Add(l[35].Scale(0.45)) }},
	{"forehead", func(l *face.Landmarks68, s float64) geom.Pt {
		return hoPt(l[19].Scale(0.5).Add(l[24].Scale(0.5)), s, 0.05, -0.08)
	}},
	{"chin", func(l *face.Landmarks68, s float64) geom.Pt { return l[8].Scale(0.55).Add(l[57].Scale(0.45)) }},
	{"jaw", func(l *face.Landmarks68, s float64) geom.Pt {
		return hoPt(l[5].Scale(0.6).Add(l[48].Scale(0.4)), s, 0, 0)
	}},
}

// polyArea is the area of polygon p.
func polyArea(p []geom.Pt) float64 {
	var a float64
	for i, q := range p {
		r := p[(i+1)%len(p)]
		a += q.X*r.Y - r.X*q.Y
	}
	return math.Abs(a) / 2
}

// scCoverage is how much of each pixel of a w×h photo the spot covers on a face with
// landmarks l: an ellipse of its area, a lens's softness (tsCoverage) or, soft, a ramp of
// its edge's width across the outline.
func scCoverage(w, h int, l *face.Landmarks68, sp scSpot) []float64 {
	b := geom.Bounds(l[:])
	s := math.Max(b.W(), b.H())
	area := sp.share * polyArea(faceHull(l))
	bx := math.Sqrt(area / math.Pi / sp.aspect)
	ax := sp.aspect * bx
	c := sp.centre(l, s)
	if sp.soft == 0 {
		return tsCoverage(w, h, func(x, y float64) bool { return tsInRotEllipse(x, y, c, sp.deg, ax, bx) })
	}
	out := make([]float64, w*h)
	sn, cs := math.Sincos(sp.deg * math.Pi / 180)
	band := sp.soft * bx
	for y := max(0, int(c.Y-ax-band-2)); y < min(h, int(c.Y+ax+band+3)); y++ {
		for x := max(0, int(c.X-ax-band-2)); x < min(w, int(c.X+ax+band+3)); x++ {
			dx, dy := float64(x)-c.X, float64(y)-c.Y
			u, v := (dx*cs+dy*sn)/ax, (-dx*sn+dy*cs)/bx
			// Distance past the outline, about, in pixels along the minor axis.
			d := (math.Hypot(u, v) - 1) * bx
			out[y*w+x] = min(1, max(0, 0.5-d/band))
		}
	}
	return out
}

// scResult is what a swap did with a spot: its interior's share kept and the rest of the
// face's share swapped (of the bare face's).
type scResult struct{ kept, swapped float64 }

// scRun paints a spot of colour col over w's target by its coverage, finds the landmarks
// again, swaps w's source in and measures as tsRun does.
// The spot's colour at each pixel is tex's (nil: flat).
func scRun(t testing.TB, w *photoWay, sp scSpot, col raster.RGB, tex *occTexture, save string) scResult {
	t.Helper()
	tgt := w.tgt
	cov := scCoverage(tgt.W, tgt.H, &w.lm, sp)
	painted := tgt.Clone()
	for i, a := range cov {
		if a <= 0 {
			continue
		}
		x, y := i%tgt.W, i/tgt.W
		r, g, bl := tgt.At(x, y)
		col := col
		if tex != nil {
			col = tex.colour(col, x, y, nil)
		}
		painted.Set(x, y, clampU8(a*float64(col.R)+(1-a)*float64(r)), clampU8(a*float64(col.G)+(1-a)*float64(g)), clampU8(a*float64(col.B)+(1-a)*float64(bl)))
	}
	found := landmarksIn(t, painted, w.box)
	after := painted.Clone()
	NewSwapper(w.src, DefaultOptions()).Apply(after, &found)
	if save != "" {
		saveForEyes(t, after, save)
	}
	kept, n, changed, m := softCounts(tgt, painted, after, cov, &w.lm)
	return scResult{kept / n, changed / m / w.bare}
}

// scHues are small covers' colours on a face whose skin is own.
func scHues(own raster.RGB) []hoHue {
	return []hoHue{
		{"black", raster.RGB{R: 18, G: 18, B: 20}, false}, {"teal", raster.RGB{R: 20, G: 128, B: 128}, false},
		{"white", raster.RGB{R: 240, G: 240, B: 236}, false}, {"red", raster.RGB{R: 200, G: 40, B: 40}, false},
		{"own skin", own, true}, {"own, darker", shade(own, -40), true},
		{"beige plaster", raster.RGB{R: 222, G: 184, B: 150}, true}, {"deep brown", raster.RGB{R: 82, G: 52, B: 36}, true},
	}
}

// A survey of small covers: 0.8, 1.2 and 2 % of the face, sharp-edged and soft-edged, on
// the cheeks, the chin, the jaw and the forehead, in scHues, flat, glossy or shaded as the
// fourth survey's textures, into both sample photos (480 swaps, the landmarks found again
// on each). FACEFUSION_TEST_CASES=1 logs every case.
func TestSmallCoverSurvey(t *testing.T) {
	fullTier(t, "swaps 480 photos with small covers")
	// Others' hues kept, skin's hues kept (means over the cases). A dark or deep brown cover
	// of a mole's size and colour is swapped as a mole is (see spotShadeMost).
	floors := map[bool][2]float64{false: {0.92, 0.44}, true: {0.86, 0.51}}
	ways := photoWays(t)
	for _, toAstro := range []bool{false, true} {
		w := ways[toAstro]
		textures := fsTextures(t, &w.lm)
		type tally struct{ sum, n float64 }
		by := map[string]*tally{}
		var keys []string
		add := func(k string, v float64) {
			if by[k] == nil {
				by[k] = &tally{}
				keys = append(keys, k)
			}
			by[k].sum += v
			by[k].n++
		}
		for si, share := range []float64{0.008, 0.012, 0.02} {
			for e, soft := range []float64{0, 0.35} {
				for pi, pl := range scPlaces {
					for hi, h := range scHues(hoSkinOf(w.tgt, &w.lm)) {
						sp := scSpot{centre: pl.at, share: share, aspect: 1 + 0.4*float64((pi+hi)%3), deg: float64(30 * hi), soft: soft}
						tx := textures[(si+e+pi+hi)%len(textures)]
						r := scRun(t, w, sp, h.c, &tx, "")
						group := "others' hues"
						if h.skin {
							group = "skin's hues"
						}
						for _, k := range []string{group, "hue " + h.name, "place " + pl.name, fmt.Sprintf("%.1f %% of the face", 100*share), fmt.Sprintf("edge %.2f", soft), "texture " + tx.name} {
							add(k, r.kept)
						}
						add("the rest swapped", r.swapped)
						if os.Getenv("FACEFUSION_TEST_CASES") != "" {
							t.Logf("into astronaut %v, %s %s %s, %.1f %% of the face, edge %.2f: %.1f%% kept, the rest %.1f%% swapped", toAstro, h.name, tx.name, pl.name, 100*share, soft, 100*r.kept, 100*r.swapped)
						}
					}
				}
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			t.Logf("into astronaut %v, %-22s %5.1f%%", toAstro, k, 100*by[k].sum/by[k].n)
		}
		for i, k := range []string{"others' hues", "skin's hues"} {
			if got := by[k].sum / by[k].n; got < floors[toAstro][i] {
				t.Errorf("into astronaut %v: %s kept %.1f%%, want ≥ %.0f%%", toAstro, k, 100*got, 100*floors[toAstro][i])
			}
		}
		if got := by["the rest swapped"].sum / by["the rest swapped"].n; got < 0.97 {
			t.Errorf("into astronaut %v: the rest of the face %.1f%% swapped, want ≥ 97%%", toAstro, 100*got)
		}
	}
}

// scBlemish is a mark of the skin's own drawn on a face with landmarks l (size s): its centre,
// its area as a share of the face's hull, its colour from the skin's own and its edge.
type scBlemish struct {
	at    func(l *face.Landmarks68, s float64) geom.Pt
	share float64
	col   func(own raster.RGB) raster.RGB
	// soft: the opacity falls from the core (half the radius) to nothing at 1.3 radii;
	// glow: a Gaussian of σ the radius, 0.85 at its peak; else sharp.
	soft, glow bool
}

// scBlemishes are moles, freckles and shine on a face: what the swap must swap.
func scBlemishes() []scBlemish {
	mole := func(own raster.RGB) raster.RGB {
		return raster.RGB{R: clampU8(0.5 * float64(own.R)), G: clampU8(0.38 * float64(own.G)), B: clampU8(0.32 * float64(own.B))}
	}
	freckle := func(own raster.RGB) raster.RGB {
		return raster.RGB{R: clampU8(0.82 * float64(own.R)), G: clampU8(0.68 * float64(own.G)), B: clampU8(0.6 * float64(own.B))}
	}
	shine := func(own raster.RGB) raster.RGB { return shade(own, 60) }
	at := func(a, b int, k, dx, dy float64) func(l *face.Landmarks68, s float64) geom.Pt {
		return func(l *face.Landmarks68, s float64) geom.Pt {
			return hoPt(l[a].Scale(1-k).Add(l[b].Scale(k)), s, dx, dy)
		}
	}
	out := []scBlemish{
		{at(2, 31, 0.45, 0, -0.04), 0.004, mole, true, false}, {at(14, 35, 0.5, 0, 0.03), 0.003, mole, true, false},
		{at(8, 57, 0.4, 0.06, 0), 0.002, mole, true, false}, {at(3, 31, 0.4, 0, 0.02), 0.003, mole, false, false},
		{at(19, 24, 0.3, 0, -0.1), 0.001, mole, true, false},
		{at(1, 41, 0.5, 0.02, 0.04), 0.004, shine, false, true}, {at(15, 46, 0.5, -0.02, 0.04), 0.003, shine, false, true},
		{at(21, 22, 0.5, 0, -0.12), 0.005, shine, false, true}, {at(8, 57, 0.5, 0, 0), 0.002, shine, false, true},
	}
	for k := range 12 { // freckles across the cheeks and the nose's bridge
		a, b := 1+k%3, 29
		if k%2 == 1 {
			a = 15 - k%3
		}
		out = append(out, scBlemish{at(a, b, 0.3+0.1*float64(k%4), 0, 0.01*float64(k%5)-0.02), 0.0003, freckle, true, false})
	}
	return out
}

// scPaintBlemishes draws bs over a copy of tgt (its face's landmarks lm, its skin own).
func scPaintBlemishes(tgt *raster.Image, lm *face.Landmarks68, own raster.RGB, bs []scBlemish) *raster.Image {
	out := tgt.Clone()
	b := geom.Bounds(lm[:])
	s := math.Max(b.W(), b.H())
	area := polyArea(faceHull(lm))
	for _, bl := range bs {
		c, r, col := bl.at(lm, s), math.Sqrt(bl.share*area/math.Pi), bl.col(own)
		if bl.soft || bl.glow {
			r /= 0.9 // the same ink as a sharp mark of the share
		}
		for y := int(c.Y - 3*r - 1); y <= int(c.Y+3*r+1); y++ {
			for x := int(c.X - 3*r - 1); x <= int(c.X+3*r+1); x++ {
				if x < 0 || y < 0 || x >= tgt.W || y >= tgt.H {
					continue
				}
				d := math.Hypot(float64(x)-c.X, float64(y)-c.Y) / r
				var a float64
				switch {
				case bl.glow:
					a = 0.85 * math.Exp(-d*d/2)
				case bl.soft:
					a = min(1, max(0, (1.3-d)/0.8))
				case d <= 1:
					a = 1
				}
				if a <= 0 {
					continue
				}
				r0, g0, b0 := out.At(x, y)
				out.Set(x, y, clampU8(a*float64(col.R)+(1-a)*float64(r0)), clampU8(a*float64(col.G)+(1-a)*float64(g0)), clampU8(a*float64(col.B)+(1-a)*float64(b0)))
			}
		}
	}
	return out
}

// Moles, freckles and spots of shine are the skin's own and swapped with it: drawn on both
// sample photos, none of them is kept as a small cover, the larger moles (0.3–0.4 % of the
// face, one sharp-edged) and the spots of shine (up to 0.5 %, soft) included. The
// landmarks are the bare face's: found again, they shift, and Grace Hopper's own glasses,
// which the bare face's landmarks leave unfound, come and go with them.
func TestSmallBlemishesAreSwapped(t *testing.T) {
	probeWays(t, func(toAstro bool, s *Swapper, tgt *raster.Image, lm face.Landmarks68) {
		bare, _ := takenBack(s, tgt, &lm)
		marked := scPaintBlemishes(tgt, &lm, hoSkinOf(tgt, &lm), scBlemishes())
		saveForEyes(t, marked, fmt.Sprintf("blemishes_%v.png", toAstro))
		px, _ := takenBack(s, marked, &lm)
		t.Logf("into astronaut %v: the occluders take back %.0f px with the blemishes, %.0f without", toAstro, px, bare)
		if s.spots.kept > 0 {
			t.Errorf("into astronaut %v: %d of the moles, freckles and spots of shine kept as small covers", toAstro, s.spots.kept)
		}
	})
}

// Small covers stay in front, whatever their hue: a sticker, a plaster or a pin of 0.8–2 %
// of the face (about 2–3 cm across on a real one), black, teal, white, red, deep brown and
// of skin's hues (the face's own, darker, a plaster's beige), sharp-edged and soft-edged
// (a ramp over a third of its radius), on the cheeks, the chin, the jaw and the forehead of
// both sample photos, the landmarks found again on each. Before keepSpots dropSmall took
// all of them out with the skin's own marks (only what other tests kept, or where the swap
// changes little, stayed).
func TestSmallCoversStayInFront(t *testing.T) {
	t.Parallel()
	// Others' hues kept, skin's hues kept (means). A cover of the skin's hue whose outline
	// blends into the skin around it is swapped, so the skin's hues' floors are the lower.
	floors := map[bool][2]float64{false: {0.9, 0.40}, true: {0.95, 0.58}}
	ways := photoWays(t)
	for wi, toAstro := range []bool{false, true} {
		w := ways[toAstro]
		var kept, swapped [2]float64 // by whether the hue is skin's
		var n [2]float64
		for hi, h := range scHues(hoSkinOf(w.tgt, &w.lm)) {
			for e, soft := range []float64{0, 0.35} {
				pl := scPlaces[(hi+2*e+wi)%len(scPlaces)]
				sp := scSpot{centre: pl.at, share: []float64{0.008, 0.012, 0.02}[(hi+e)%3], aspect: 1 + 0.3*float64(hi%3), deg: float64(40 * hi), soft: soft}
				r := scRun(t, w, sp, h.c, nil, "")
				t.Logf("into astronaut %v, %s %s (%.1f %% of the face, edge %.2f): %.1f%% kept, the rest %.1f%% swapped", toAstro, h.name, pl.name, 100*sp.share, soft, 100*r.kept, 100*r.swapped)
				k := 0
				if h.skin {
					k = 1
				}
				kept[k] += r.kept
				swapped[k] += r.swapped
				n[k]++
			}
		}
		all, rest := (kept[0]+kept[1])/(n[0]+n[1]), (swapped[0]+swapped[1])/(n[0]+n[1])
		t.Logf("into astronaut %v: %.1f%% kept (others %.1f%%, skin's hues %.1f%%), the rest %.1f%% swapped", toAstro, 100*all, 100*kept[0]/n[0], 100*kept[1]/n[1], 100*rest)
		f := floors[toAstro]
		for i, what := range []string{"others' hues kept", "skin's hues kept"} {
			if kept[i]/n[i] < f[i] {
				t.Errorf("into astronaut %v: %s %.1f%%, want ≥ %.0f%%", toAstro, what, 100*kept[i]/n[i], 100*f[i])
			}
		}
		if rest < 0.95 {
			t.Errorf("into astronaut %v: the rest of the face %.1f%% swapped, want ≥ 95%%", toAstro, 100*rest)
		}
	}
}

// BenchmarkKeepSpots is the small covers' test on BenchmarkApply's face.
func BenchmarkKeepSpots(b *testing.B) {
	s := NewSwapper(newSource(b), DefaultOptions())
	frame := skin(1280, 720, 6)
	target := place(100, 8, 640, 330)
	s.Apply(frame.Clone(), &target)
	bb := geom.Bounds(target[:])
	size := math.Max(bb.W(), bb.H())
	for b.Loop() {
		s.keepSpots(frame, &target, &s.mask, size, s.last, skinModel{ux: 1})
	}
}
