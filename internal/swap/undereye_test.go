package swap

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Strips stuck on the cheekbone below one eye of Grace Hopper's, wholly within the eye's zone
// (see eyeZones) and her glasses' lens, clear of the fold: a plaster tilted across it and a
// length of sports tape, white (paler and brighter than her skin, as the lens's glare makes
// it) and a skin's brown, flat and woven. Each is kept whole, the rest of the face swapped.
func TestApplyKeepsStripsBelowAnEye(t *testing.T) {
	way := hoWays(t)[0]
	flat := occTexture{"flat", func(c raster.RGB, _, _ int, _ *rand.Rand) raster.RGB { return c }}
	weave := occTexture{"weave", func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
		k := 1 + 0.06*math.Sin(float64(x)*1.3)*math.Sin(float64(y)*1.3)
		return raster.RGB{R: clampU8(k * float64(c.R)), G: clampU8(k * float64(c.G)), B: clampU8(k * float64(c.B))}
	}}
	plaster := occShape{"plaster below the image's left eye", func(l *face.Landmarks68, s, x, y float64) bool {
		return tsInRoundRect(x, y, hoPt(geom.Mean(l[36:42]), s, -0.01, 0.14), -8, 0.085*s, 0.03*s, 0.012*s)
	}}
	tape := occShape{"tape below the image's right eye", func(l *face.Landmarks68, s, x, y float64) bool {
		return tsInRoundRect(x, y, hoPt(geom.Mean(l[42:48]), s, 0.015, 0.15), 5, 0.11*s, 0.028*s, 0.006*s)
	}}
	white, brown := raster.RGB{R: 238, G: 236, B: 228}, raster.RGB{R: 112, G: 72, B: 52}
	cases := []struct {
		shape occShape
		tex   occTexture
		hue   raster.RGB
	}{
		{plaster, flat, white}, {plaster, flat, brown},
		{tape, flat, white}, {tape, weave, brown},
	}
	src, err := NewSource(way.srcImg, &way.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	bare := bareSwapped(t, src, way.tgt, way.lm)
	for _, c := range cases {
		name := c.shape.name + ", " + c.tex.name
		r, after, _ := tsRun(t, src, way.tgt, way.lm, way.box, occCase{shape: c.shape, tex: c.tex, hue: c.hue, name: name}, bare)
		saveForEyes(t, after, "undereye-"+c.shape.name+".png")
		t.Logf("%s, %s %v: %.1f%% kept, the rest of the face %.1f%% swapped", way.name, name, c.hue, 100*r.kept, 100*r.swapped)
		if r.kept < 0.8 {
			t.Errorf("%s, %s %v: %.1f%% kept (want ≥ 80%%)", way.name, name, c.hue, 100*r.kept)
		}
		if r.swapped < 0.9 {
			t.Errorf("%s, %s %v: the rest of the face %.1f%% swapped (want ≥ 90%% of the bare face's)", way.name, name, c.hue, 100*r.swapped)
		}
	}
}
