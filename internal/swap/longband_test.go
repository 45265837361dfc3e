package swap

import (
	"fmt"
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// longBandShapes are straight bands 4–6 % of the face wide laid along Grace Hopper's cheeks
// below the eyes, crossing none of her features: a headset's microphone boom from before the
// image's left ear down the cheek towards the chin, a pen held up across the image's right
// cheek from below the jaw, and a lanyard's cord down the image's right cheek from the temple.
var longBandShapes = []occShape{
	{"microphone boom", func(l *face.Landmarks68, s, x, y float64) bool {
		return taperedStroke(x, y, hoPt(l[0], s, 0.08, -0.02), hoPt(l[5], s, 0.14, -0.04), 0.03*s, 0.022*s)
	}},
	{"pen from below the jaw", func(l *face.Landmarks68, s, x, y float64) bool {
		return tsNearSeg(x, y, hoPt(l[9], s, 0.04, 0.25), hoPt(l[13], s, -0.06, -0.26), 0.025*s)
	}},
	{"lanyard down the cheek", func(l *face.Landmarks68, s, x, y float64) bool {
		return tsNearSeg(x, y, hoPt(l[15], s, -0.1, -0.12), hoPt(l[12], s, -0.09, 0.03), 0.028*s)
	}},
}

// Long skin-hued bands below the eyes are no folds of the face wherever they lie (see
// pairLongest): the band finder keeps them though they cross no feature. Grace Hopper's own
// skin, flat or with real skin's grain (a patch of the astronaut's chin), and slate ones; each
// must keep its floor, the rest of the face swapped as on the bare face. Without the rule the
// swap kept 7–19 % of the skin-hued ones. A tan band, darker than her skin, is still lost
// on all three, and so is the slate boom.
func TestApplyKeepsLongSkinHuedBandsOnTheCheek(t *testing.T) {
	t.Parallel()
	p := photos(t)
	w := photoWays(t)[false]
	chin := skinPatchTexture("real skin", p.src, p.srcLm[8].Add(p.srcLm[57]).Scale(0.5), 7)
	hues := map[string]raster.RGB{"own": hoSkinOf(w.tgt, &w.lm), "slate": {R: 90, G: 100, B: 115}}
	for _, c := range []struct {
		shape int
		hue   string
		grain bool
		kept  float64
	}{
		{0, "own", false, 0.6}, {1, "own", false, 0.75}, {2, "own", false, 0.6}, {2, "own", true, 0.4},
		{1, "slate", false, 0.95}, {2, "slate", true, 0.95},
	} {
		oc := occCase{shape: longBandShapes[c.shape], tex: occTextures[0], hue: hues[c.hue]}
		if c.grain {
			oc.tex = chin
		}
		oc.name = fmt.Sprintf("%s/%s/%s", oc.shape.name, oc.tex.name, c.hue)
		wantBandKept(t, w, oc, c.kept)
	}
}

// A bare face's own long bands below the eyes (its folds, the jaw's shading) are not taken
// for such covers on Grace Hopper's photo grainy (noise of σ 6 levels) or enlarged 1.5×
// (a larger face on a finer grid): skinBands marks nothing.
func TestLongBandsFindNothingOnGrainyOrEnlargedBareFaces(t *testing.T) {
	p := photos(t)
	grainy := noisyLit(p.dst, 3, func(float64) float64 { return 1 }, func(float64) float64 { return 6 })
	big, bigLm := enlarged(p.dst, p.dstLm, 1.5)
	for _, f := range []struct {
		name string
		img  *raster.Image
		lm   face.Landmarks68
	}{{"grainy", grainy, p.dstLm}, {"enlarged", big, bigLm}} {
		src, err := NewSource(p.src, &p.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		sw := NewSwapper(src, DefaultOptions())
		sw.Apply(f.img.Clone(), &f.lm)
		if found := marked(&sw.pairBand); found > 0 {
			t.Errorf("%s: a skin-hued band of %d grid px found", f.name, found)
		}
	}
}

// Nor are a forehead's furrows, deepened (×0.8 or ×0.7 at their middles) and half as wide
// again apart as the narrowest band, though the band between two runs as long and level as a
// strap across Grace Hopper's forehead: it lies above her eyes (see pairLongest).
func TestLongBandsFindNothingOnAFurrowedForehead(t *testing.T) {
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ depth, apart float64 }{{0.2, 0.06}, {0.3, 0.08}} {
		img := furrowed(p.dst, &p.dstLm, f.depth, 0.08, 0.08+f.apart)
		sw := NewSwapper(src, DefaultOptions())
		sw.Apply(img, &p.dstLm)
		if found := marked(&sw.pairBand); found > 0 {
			t.Errorf("furrows ×%v, %v apart: a skin-hued band of %d grid px found", 1-f.depth, f.apart, found)
		}
	}
}

// furrowed is img with level furrows across lm's forehead from above one brow's middle to
// the other's, ups above them (shares of the face size): the skin darkened by depth at each
// furrow's line, less off it (a Gaussian across it of σ 0.8 % of the face size).
func furrowed(img *raster.Image, lm *face.Landmarks68, depth float64, ups ...float64) *raster.Image {
	b := geom.Bounds(lm[:])
	s := math.Max(b.W(), b.H())
	sigma := 0.008 * s
	out := img.Clone()
	for _, up := range ups {
		a, c := hoPt(lm[18], s, 0, -up), hoPt(lm[25], s, 0, -up)
		for y := range img.H {
			for x := range img.W {
				d := segDist(geom.Pt{X: float64(x), Y: float64(y)}, a, c)
				if d > 3*sigma {
					continue
				}
				k := 1 - depth*math.Exp(-0.5*(d/sigma)*(d/sigma))
				r, g, bl := out.At(x, y)
				out.Set(x, y, clampU8(k*float64(r)), clampU8(k*float64(g)), clampU8(k*float64(bl)))
			}
		}
	}
	return out
}

// enlarged is img scaled by k (bilinear), and lm with it.
func enlarged(img *raster.Image, lm face.Landmarks68, k float64) (*raster.Image, face.Landmarks68) {
	out := raster.New(int(float64(img.W)*k), int(float64(img.H)*k))
	for y := range out.H {
		for x := range out.W {
			u, v := math.Max(0, (float64(x)+0.5)/k-0.5), math.Max(0, (float64(y)+0.5)/k-0.5)
			x0, y0 := min(img.W-2, int(u)), min(img.H-2, int(v))
			fu, fv := math.Min(1, u-float64(x0)), math.Min(1, v-float64(y0))
			var c [3]float64
			for _, q := range [4]struct {
				dx, dy int
				w      float64
			}{{0, 0, (1 - fu) * (1 - fv)}, {1, 0, fu * (1 - fv)}, {0, 1, (1 - fu) * fv}, {1, 1, fu * fv}} {
				r, g, b := img.At(x0+q.dx, y0+q.dy)
				c[0], c[1], c[2] = c[0]+q.w*float64(r), c[1]+q.w*float64(g), c[2]+q.w*float64(b)
			}
			out.Set(x, y, clampU8(c[0]), clampU8(c[1]), clampU8(c[2]))
		}
	}
	for i := range lm {
		lm[i] = lm[i].Add(geom.Pt{X: 0.5, Y: 0.5}).Scale(k).Sub(geom.Pt{X: 0.5, Y: 0.5})
	}
	return out, lm
}
