package swap

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The forehead's judges under a tinted light (a stage's, a club's, a monitor's, daylight
// through foliage; a white balance left wrong): the face and the cover painted on it both
// scaled by the light's channels. Under teal light Grace Hopper's skin is greener than red,
// "a colour no skin has", while a red mask stays red over green over blue; under a blue light
// her skin is bluer than green. Taking a hue for no skin's where a light can put skin there
// took the mask for the skin the witnesses side with, and a knit or a mask of her skin's
// darker shade the same way, leaving much of the rest of the face unswapped. A green mask
// under a warm light was half taken for skin: shadowed skin, unlike the judges, pulled the
// cover's median its way. A brown fringe under a blue light is of a skin's hue where the face
// is not: the forehead's two discs, on the fringe, judged alone and the whole face went. Each
// case's floors sit a little below what it kept and swapped before the hue rules.
func TestJudgesHoldUnderTintedLight(t *testing.T) {
	t.Parallel()
	ways := photoWays(t)
	fringe := occShape{"fringe to over the brows", func(l *face.Landmarks68, s, x, y float64) bool {
		return x >= l[0].X && x <= l[16].X && y <= min(l[19].Y, l[24].Y)-0.03*s && y >= l[19].Y-0.45*s
	}}
	brown := func(raster.RGB) raster.RGB { return raster.RGB{R: 90, G: 60, B: 40} }
	red := func(raster.RGB) raster.RGB { return raster.RGB{R: 175, G: 55, B: 50} }
	green := func(raster.RGB) raster.RGB { return raster.RGB{R: 40, G: 130, B: 60} }
	for _, c := range []struct {
		toAstronaut   bool
		light         string
		kr, kg, kb    float64
		shape         occShape
		hue           string
		of            func(raster.RGB) raster.RGB
		kept, swapped float64
	}{
		{false, "teal", 0.65, 1.05, 1.1, judgeMask, "red", red, 0.95, 0.7},
		{false, "blue", 0.7, 0.95, 1.3, judgeKnitScarf, "darker skin", scaledSkin(0.7), 0.95, 0.9},
		{false, "blue", 0.7, 0.95, 1.3, judgeMask, "darker skin", scaledSkin(0.7), 0.95, 0.65},
		{false, "warm", 1.2, 1, 0.7, judgeMask, "green", green, 0.95, 0.6},
		// Brown hair under a blue light keeps red over green over blue, her face does not: the
		// forehead's two discs on the fringe judge alone and the whole face is taken for a cover.
		{true, "blue", 0.7, 0.95, 1.3, fringe, "brown", brown, 0.95, 0.9},
	} {
		w := ways[c.toAstronaut]
		tint := func(v raster.RGB) raster.RGB {
			return raster.RGB{R: clampU8(float64(v.R) * c.kr), G: clampU8(float64(v.G) * c.kg), B: clampU8(float64(v.B) * c.kb)}
		}
		tgt := w.tgt.Clone()
		for i := 0; i+2 < len(tgt.Pix); i += 3 {
			v := tint(raster.RGB{R: tgt.Pix[i], G: tgt.Pix[i+1], B: tgt.Pix[i+2]})
			tgt.Pix[i], tgt.Pix[i+1], tgt.Pix[i+2] = v.R, v.G, v.B
		}
		lm := landmarksIn(t, tgt, w.box)
		bare := bareSwapped(t, w.src, tgt, lm)
		oc := occCase{shape: c.shape, tex: occTextures[1], hue: tint(c.of(skinColour(w.tgt, &lm))), name: c.light + " light, " + c.shape.name + "/" + c.hue}
		r, _ := occlusionRun(t, w.src, tgt, lm, w.box, oc, bare)
		oc.name = map[bool]string{false: "into Grace Hopper, ", true: "into the astronaut, "}[c.toAstronaut] + oc.name
		t.Logf("%s: %.1f%% kept, the rest of the face %.1f%% swapped", oc.name, 100*r.kept, 100*r.swapped)
		if r.kept < c.kept || r.swapped < c.swapped {
			t.Errorf("%s: %.1f%% of the cover kept (want ≥ %.0f%%), the rest of the face %.1f%% swapped (want ≥ %.0f%% of the bare face's)",
				oc.name, 100*r.kept, 100*c.kept, 100*r.swapped, 100*c.swapped)
		}
	}
}
