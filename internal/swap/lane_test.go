package swap

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// pencilAcrossLips is a pencil held level between the lips, a twenty-third of the face thick,
// its tip past the image's left mouth corner and its length off the face to the right.
var pencilAcrossLips = occShape{"pencil between the lips", func(l *face.Landmarks68, s, x, y float64) bool {
	u, v := lcLocal(l, s, x, y)
	return math.Abs(v) <= 0.022 && u >= -0.2 && u <= 0.6
}}

// chevronKnit is a knit's chevrons: rows of Vs 6 pixels apart, ×0.88 to ×1.12.
var chevronKnit = occTexture{"knit", func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
	ax := x % 8
	if ax > 4 {
		ax = 8 - ax
	}
	k := 1 + 0.12*math.Sin(2*math.Pi*float64(y+ax)/6)
	return raster.RGB{R: clampU8(k * float64(c.R)), G: clampU8(k * float64(c.G)), B: clampU8(k * float64(c.B))}
}}

// A band found beside a feature and aimed into it is followed across it (see bandLane): a
// pencil between Grace Hopper's lips, told from her skin on her cheek, is kept over the mouth
// too, not only within its found piece's box. Slate, maroon and forest green, flat, knitted or
// with real skin's grain (a patch of the astronaut's chin); each must be kept almost whole,
// the rest of the face swapped as on the bare face. The flat and knitted ones are kept whole
// by the other rules as well; the grained ones need the lane. A flat maroon one is found with
// the shadow at the mouth's corner beside it, which the lane's fit leaves out.
func TestApplyKeepsBandsAcrossTheMouth(t *testing.T) {
	t.Parallel()
	p := photos(t)
	w := photoWays(t)[false]
	chin := skinPatchTexture("real skin", p.src, p.srcLm[8].Add(p.srcLm[57]).Scale(0.5), 7)
	hues := map[string]raster.RGB{"slate": {R: 90, G: 100, B: 115}, "maroon": {R: 110, G: 30, B: 40}, "forest green": {R: 40, G: 90, B: 50}}
	for _, c := range []struct {
		tex  occTexture
		hue  string
		kept float64
	}{
		{occTextures[0], "slate", 0.95}, {chevronKnit, "maroon", 0.95}, {chevronKnit, "forest green", 0.95}, {chin, "slate", 0.95},
		{chin, "forest green", 0.95}, {occTextures[0], "maroon", 0.95},
	} {
		oc := occCase{shape: pencilAcrossLips, tex: c.tex, hue: hues[c.hue], name: fmt.Sprintf("%s/%s", c.tex.name, c.hue)}
		r, _ := occlusionRun(t, w.src, w.tgt, w.lm, w.box, oc, w.bare)
		t.Logf("%s: %.1f%% kept, the rest of the face %.1f%% swapped", oc.name, 100*r.kept, 100*r.swapped)
		if r.kept < c.kept || r.swapped < 0.9 {
			t.Errorf("%s: %.1f%% of the pencil kept (want ≥ %.0f%%), the rest of the face %.1f%% swapped (want ≥ 90%% of the bare face's)",
				oc.name, 100*r.kept, 100*c.kept, 100*r.swapped)
		}
	}
}
