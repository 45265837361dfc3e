package swap

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// scSpot is a small round thing on a face with landmarks l (size s: its larger side): where
// its centre lies, its area as a share of the face's hull, its aspect (a over b) and tilt,
// and its edge's width as a share of its radius (0: sharp, as a lens draws it).
type scSpot struct {
	name   string
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

// scResult is what a swap did with a spot: its interior's share kept, the rest of the face's
// share swapped (of the bare face's) and the share of the spot the occluders found before
// dropSmall.
type scResult struct{ kept, swapped, held float64 }

// scRun paints a spot of colour col over w's target by its coverage, finds the landmarks
// again, swaps w's source in and measures as tsRun does.
func scRun(t testing.TB, w *photoWay, sp scSpot, col raster.RGB, save string) scResult {
	t.Helper()
	tgt := w.tgt
	b := geom.Bounds(w.lm[:])
	size := math.Max(b.W(), b.H())
	hull := faceHull(&w.lm)
	hb := geom.Bounds(hull)
	cov := scCoverage(tgt.W, tgt.H, &w.lm, sp)
	painted := tgt.Clone()
	for i, a := range cov {
		if a <= 0 {
			continue
		}
		x, y := i%tgt.W, i/tgt.W
		r, g, bl := tgt.At(x, y)
		painted.Set(x, y, clampU8(a*float64(col.R)+(1-a)*float64(r)), clampU8(a*float64(col.G)+(1-a)*float64(g)), clampU8(a*float64(col.B)+(1-a)*float64(bl)))
	}
	found := landmarksIn(t, painted, w.box)
	after := painted.Clone()
	s := NewSwapper(w.src, DefaultOptions())
	s.spots.debug = scDebug
	s.Apply(after, &found)
	if save != "" {
		saveForEyes(t, after, save)
	}
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
	var kept, n, changed, m, held float64
	for y := range tgt.H {
		for x := range tgt.W {
			if !inHull(hull, hb, x, y) {
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
				if p := (image2pt{x, y}); p.in(s) && s.held.Pix[(y-s.last.Min.Y)*s.last.Dx()+x-s.last.Min.X] == 1 {
					held++
				}
			case a <= 0 && (x+y)%3 == 0 && !near(x, y):
				m++
				if d > 12 {
					changed++
				}
			}
		}
	}
	return scResult{kept / n, changed / m / w.bare, held / n}
}

type image2pt struct{ x, y int }

func (p image2pt) in(s *Swapper) bool {
	return p.x >= s.last.Min.X && p.x < s.last.Max.X && p.y >= s.last.Min.Y && p.y < s.last.Max.Y
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

func TestSmallCoverSurveyDev(t *testing.T) {
	if os.Getenv("SC_DEV") == "" {
		t.Skip()
	}
	if os.Getenv("SC_DEBUG") != "" {
		scDebug = func(f string, a ...any) { t.Logf(f, a...) }
		defer func() { scDebug = nil }()
	}
	ways := photoWays(t)
	for _, toAstro := range []bool{false, true} {
		w := ways[toAstro]
		own := hoSkinOf(w.tgt, &w.lm)
		by := map[string]*[2]float64{}
		add := func(k string, v float64) {
			if by[k] == nil {
				by[k] = &[2]float64{}
			}
			by[k][0] += v
			by[k][1]++
		}
		var keys []string
		for _, share := range []float64{0.008, 0.012, 0.02} {
			if o := os.Getenv("SC_SHARE"); o != "" && o != fmt.Sprint(share) {
				continue
			}
			for _, soft := range []float64{0, 0.35} {
				for pi, pl := range scPlaces {
					for hi, h := range scHues(own) {
						if o := os.Getenv("SC_HUE"); o != "" && o != h.name {
							continue
						}
						sp := scSpot{name: pl.name, centre: pl.at, share: share, aspect: 1 + 0.4*float64((pi+hi)%3), deg: float64(30 * hi), soft: soft}
						if scDebug != nil {
							t.Logf("== astro %v %.3f soft %.2f %s %s at %.0f", toAstro, share, soft, pl.name, h.name, pl.at(&w.lm, 100))
						}
						r := scRun(t, w, sp, h.c, "")
						for _, k := range []string{"hue " + h.name, "place " + pl.name, fmt.Sprintf("share %.3f", share), fmt.Sprintf("soft %.2f", soft), "all"} {
							if by[k] == nil {
								keys = append(keys, k)
							}
							add(k, r.kept)
						}
						add("swapped", r.swapped)
						if os.Getenv("SC_CASES") != "" {
							t.Logf("astro %v %.3f soft %.2f %-12s %-14s kept %5.1f held %5.1f swapped %5.1f", toAstro, share, soft, pl.name, h.name, 100*r.kept, 100*r.held, 100*r.swapped)
						}
					}
				}
			}
		}
		for _, k := range append(keys, "swapped") {
			t.Logf("astro %v %-20s %5.1f", toAstro, k, 100*by[k][0]/by[k][1])
		}
	}
}

var scDebug func(string, ...any)

func TestSpotDebug(t *testing.T) {
	if os.Getenv("SC_DEV") == "" {
		t.Skip()
	}
	scDebug = func(f string, a ...any) { t.Logf(f, a...) }
	defer func() { scDebug = nil }()
	p := photos(t)
	for _, toAstro := range []bool{false, true} {
		srcImg, srcLm, tgt, box := p.src, p.srcLm, p.dst, geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}
		if toAstro {
			srcImg, srcLm, tgt, box = p.dst, p.dstLm, p.src, geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}
		}
		src, err := NewSource(srcImg, &srcLm)
		if err != nil {
			t.Fatal(err)
		}
		opts := DefaultOptions()
		opts.Occluders = false
		s := NewSwapper(src, opts)
		s.spots.debug = scDebug
		for _, v := range bareVariants(t, tgt, box) {
			t.Logf("== bare astro %v %s", toAstro, v.name)
			px, _ := takenBack(s, v.img, &v.lm)
			t.Logf("   taken back %.0f", px)
		}
	}
	ways := photoWays(t)
	for _, toAstro := range []bool{false, true} {
		w := ways[toAstro]
		own := hoSkinOf(w.tgt, &w.lm)
		for _, soft := range []float64{0, 0.35} {
			for _, h := range scHues(own) {
				c := scPlaces[0].at(&w.lm, 0)
				t.Logf("== cover astro %v soft %.2f %s at %.0f,%.0f", toAstro, soft, h.name, c.X, c.Y)
				r := scRun(t, w, scSpot{centre: scPlaces[0].at, share: 0.012, aspect: 1.3, deg: 20, soft: soft}, h.c, "")
				t.Logf("   kept %.1f", 100*r.kept)
			}
		}
	}
}

func TestSpotDebugStill(t *testing.T) {
	if os.Getenv("SC_DEV") == "" {
		t.Skip()
	}
	p := photos(t)
	c := lossyStill{"grace_hopper.png", "140:120", 23, 8, geom.Rect{X0: 100, Y0: 70, X1: 220, Y1: 180}, p.src, p.srcLm}
	dir := t.TempDir()
	c.frames(t, dir, "", true)
	src, err := NewSource(c.src, &c.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Occluders = false
	s := NewSwapper(src, opts)
	s.spots.debug = func(f string, a ...any) { t.Logf(f, a...) }
	first, err := raster.Load(dir + "/01.png")
	if err != nil {
		t.Fatal(err)
	}
	lm := landmarksIn(t, first, c.box)
	for _, name := range []string{"01.png", "ref.png", "09.png", "17.png"} {
		frame, err := raster.Load(dir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		b := geom.Bounds(lm[:])
		t.Logf("== %s size %.1f", name, math.Max(b.W(), b.H()))
		px, _ := takenBack(s, frame, &lm)
		t.Logf("   taken back %.0f", px)
		if name == "ref.png" {
			saveForEyes(t, frame, "still_ref.png")
		}
	}
}
