package swap

import (
	"fmt"
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// bandOffShapes are bands 4–6 % of the face wide held from beyond the face across a feature,
// whose part on the face is shorter than a quarter of it: a lollipop's stick from between the
// lips down past the chin, a headset microphone's boom from the mouth's corner back past the
// cheek, and a spoon's handle from the mouth down past the jaw.
var bandOffShapes = map[string]occShape{
	"stick": {"lollipop stick", func(l *face.Landmarks68, s, x, y float64) bool {
		mid := l[62].Add(l[66]).Scale(0.5)
		return tsNearSeg(x, y, mid, hoPt(l[8], s, 0.05, 0.3), 0.02*s)
	}},
	"boom": {"microphone boom", func(l *face.Landmarks68, s, x, y float64) bool {
		return tsNearSeg(x, y, hoPt(l[48], s, 0.02, 0), hoPt(l[2], s, -0.3, -0.06), 0.022*s)
	}},
	"spoon": {"spoon handle", func(l *face.Landmarks68, s, x, y float64) bool {
		mid := l[62].Add(l[66]).Scale(0.5)
		sn, cs := math.Sincos(30 * math.Pi / 180)
		return tsNearSeg(x, y, mid, hoPt(mid, s, 0.6*cs, 0.6*sn), 0.028*s)
	}},
}

// A band held from beyond the face (see skinBands) shows less of its length on it than a band
// lying on the face must, and covers less of it than dropSmall keeps; one along the nose's
// line below the mouth is no nose's ridge. Grace Hopper's own skin, a peach and a tan, flat
// or noisy, and a slate one: each case must keep its floor, the rest of the face swapped as on
// the bare face. The swap kept 15 % of the peach sticks and of the flat tan spoon. A tan or an
// own-skin stick, a flat own-skin boom and a spoon held at 40° are still lost.
func TestApplyKeepsSkinHuedBandsLeavingTheFace(t *testing.T) {
	t.Parallel()
	w := photoWays(t)[false]
	hues := map[string]raster.RGB{"own": hoSkinOf(w.tgt, &w.lm), "peach": {R: 232, G: 180, B: 150},
		"tan": {R: 196, G: 154, B: 108}, "slate": {R: 90, G: 100, B: 115}}
	for _, c := range []struct {
		shape, hue string
		noisy      bool
		kept       float64
	}{
		{"stick", "peach", false, 0.75}, {"stick", "peach", true, 0.8}, {"stick", "slate", false, 0.9},
		{"spoon", "tan", false, 0.9}, {"spoon", "tan", true, 0.9}, {"spoon", "peach", false, 0.9},
		{"boom", "own", true, 0.9}, {"boom", "tan", false, 0.9},
	} {
		oc := occCase{shape: bandOffShapes[c.shape], tex: occTextures[0], hue: hues[c.hue]}
		if c.noisy {
			oc.tex = occTextures[1]
		}
		oc.name = fmt.Sprintf("%s/%s/%s", c.shape, oc.tex.name, c.hue)
		wantBandKept(t, w, oc, c.kept)
	}
}

// Under a clear lens a codec flattens the skin below an eye's outer corner into a block, paler
// than the skin about it (the lens's glare), that runs to the temple: a band the length of one
// held from beyond the face, but it crosses no mouth. Grace Hopper's portrait with such a
// block below the image's right eye takes back no more than the bare portrait.
func TestSkinBandsOffTheFaceAboutAnEyeAreSwapped(t *testing.T) {
	p := photos(t)
	s := probeSwapper(t, p.src, &p.srcLm)
	lm := p.dstLm
	bare, _ := takenBack(s, p.dst, &lm)
	ew := lm[45].Dist(lm[42])
	lid := lm[46].Add(lm[47]).Scale(0.5)
	x0, x1 := int(lm[45].X-0.15*ew), int(lm[16].X)
	for _, c := range []struct {
		below, tall, paler float64
	}{{0.3, 0.25, 1.1}, {0.35, 0.3, 1.15}, {0.3, 0.3, 1.2}} {
		img := p.dst.Clone()
		y0 := int(lid.Y + (c.below-c.tall/2)*ew)
		y1 := int(lid.Y + (c.below+c.tall/2)*ew)
		var sum [3]float64
		n := 0.0
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				r, g, b := img.At(x, y)
				sum[0], sum[1], sum[2], n = sum[0]+float64(r), sum[1]+float64(g), sum[2]+float64(b), n+1
			}
		}
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				img.Set(x, y, clampU8(c.paler*sum[0]/n), clampU8(c.paler*sum[1]/n), clampU8(c.paler*sum[2]/n))
			}
		}
		px, _ := takenBack(s, img, &lm)
		t.Logf("block %.2f eye widths below the lid, %.2f tall, ×%.2f: %.0f px taken back (bare %.0f)", c.below, c.tall, c.paler, px, bare)
		if px > bare+40 {
			saveForEyes(t, img, fmt.Sprintf("lensblock_%.2f_%.2f.png", c.below, c.paler))
			t.Errorf("block %.2f eye widths below the lid, ×%.2f: %.0f px taken back, bare %.0f", c.below, c.paler, px, bare)
		}
	}
}
