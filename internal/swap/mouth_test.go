package swap

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Covers at the mouth, of shapes and places the survey does not hold: a microphone held
// before the lips, a straw in the mouth, a hand over it. Their part on the face outside the
// mouth is found with some skin around it (a region test's piece), and their colour must be
// fitted to the cover's own pixels in it for them to grow over the mouth, and on over all of
// it: a smile's mouth is taller than the growth's reach on the skin. Each must keep 90 % of
// its cover, grainy fingers over the mouth (whose pieces' spread of colour was too wide for
// the growth) their own lower floors, and leave most of the rest of the face swapped.
var mouthShapes = map[string]func(l *face.Landmarks68, size, x, y float64) bool{
	"microphone before the lips": func(l *face.Landmarks68, size, x, y float64) bool {
		head := geom.Mean(l[48:60]).Add(geom.Pt{X: 0.03 * size, Y: 0.06 * size})
		if math.Hypot(x-head.X, y-head.Y) <= 0.07*size {
			return true
		}
		return segDist(geom.Pt{X: x, Y: y}, head, head.Add(geom.Pt{X: 0.1 * size, Y: 0.5 * size})) <= 0.03*size
	},
	"hand over the mouth": func(l *face.Landmarks68, size, x, y float64) bool {
		c := geom.Mean(l[48:60]).Add(geom.Pt{X: -0.05 * size, Y: 0.05 * size})
		dx, dy := (x-c.X)/(0.3*size), (y-c.Y)/(0.14*size)
		return dx*dx+dy*dy <= 1
	},
	"fingers over the mouth": func(l *face.Landmarks68, size, x, y float64) bool {
		// Two fingers up over the lips from a palm under the chin.
		p := geom.Pt{X: x, Y: y}
		chin := l[8].Add(geom.Pt{Y: 0.12 * size})
		if dx, dy := (x-chin.X)/(0.25*size), (y-chin.Y)/(0.12*size); dx*dx+dy*dy <= 1 {
			return true
		}
		mc := geom.Mean(l[48:60])
		for _, off := range []float64{-0.055, 0.055} {
			base := geom.Pt{X: mc.X + off*size, Y: chin.Y}
			tip := geom.Pt{X: base.X - 0.06*size, Y: l[33].Y - 0.02*size}
			if segDist(p, base, tip) <= 0.04*size {
				return true
			}
		}
		return false
	},
	"straw": func(l *face.Landmarks68, size, x, y float64) bool {
		a := geom.Mean(l[60:68])
		return segDist(geom.Pt{X: x, Y: y}, a, a.Add(geom.Pt{X: 0.3 * size, Y: 0.35 * size})) <= 0.02*size
	},
}

func TestApplyGrowsCoversIntoTheMouth(t *testing.T) {
	t.Parallel()
	ways := photoWays(t)
	gradient := occTexture{"gradient", func(c raster.RGB, _, y int, _ *rand.Rand) raster.RGB { return shade(c, 0.3*float64(y%200)-30) }}
	navy, green, grey := raster.RGB{R: 30, G: 40, B: 90}, raster.RGB{R: 60, G: 150, B: 70}, raster.RGB{R: 200, G: 200, B: 200}
	purple := raster.RGB{R: 120, G: 60, B: 150}
	for _, c := range []struct {
		toAstronaut bool
		shape       string
		tex         occTexture
		hue         raster.RGB
		kept        float64 // 0: 90 %
	}{
		{true, "microphone before the lips", occTextures[0], navy, 0}, {true, "microphone before the lips", gradient, navy, 0},
		{false, "straw", occTextures[0], green, 0}, {false, "straw", occTextures[0], navy, 0},
		{false, "straw", occTextures[0], grey, 0}, {false, "straw", gradient, green, 0},
		{true, "straw", occTextures[0], navy, 0},
		{true, "hand over the mouth", occTextures[0], green, 0}, {true, "hand over the mouth", gradient, purple, 0},
		{false, "fingers over the mouth", occTextures[1], green, 0.85}, {true, "fingers over the mouth", occTextures[1], green, 0.7},
	} {
		w := ways[c.toAstronaut]
		oc := occCase{shape: occShape{c.shape, mouthShapes[c.shape]}, tex: c.tex, hue: c.hue}
		r, _ := occlusionRun(t, w.src, w.tgt, w.lm, w.box, oc, w.bare)
		t.Logf("into astronaut %v, %s/%s/%v: %.1f%% kept, the rest of the face %.1f%% swapped", c.toAstronaut, c.shape, c.tex.name, c.hue, 100*r.kept, 100*r.swapped)
		if c.kept == 0 {
			c.kept = 0.9
		}
		if r.kept < c.kept || r.swapped < 0.85 {
			t.Errorf("into astronaut %v, %s/%s/%v: %.1f%% of the cover kept (want ≥ %.0f%%), the rest of the face %.1f%% swapped (want ≥ 85%% of the bare face's)",
				c.toAstronaut, c.shape, c.tex.name, c.hue, 100*r.kept, 100*c.kept, 100*r.swapped)
		}
	}
}
