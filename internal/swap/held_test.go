package swap

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Things held to the lower face from outside it: a microphone's head on the side of the
// chin, a spoon at the lips' corner, a thumb over the jaw, two fingertips on the cheek. Each
// covers less of the face than occMinArea (1–2.3 % of it), the floor under which a find was
// dropped as a blemish, and continues across the face's outline: what was found of it was
// dropped, whatever its colour. keepHeld keeps such finds: covers of other hues and of the
// skin's must each keep at least their floors below (means, each way). What is not found at
// all (a skin-hued fingertip on a cheek, a spoon's bowl of the skin's colour) is not helped,
// so the skin's hues' floors are the lower.
var heldShapes = []occShape{
	{"microphone at the chin's side", func(l *face.Landmarks68, s, x, y float64) bool {
		head := l[10].Add(geom.Pt{X: 0.02 * s, Y: -0.04 * s})
		if math.Hypot(x-head.X, y-head.Y) <= 0.06*s {
			return true
		}
		return segDist(geom.Pt{X: x, Y: y}, head, head.Add(geom.Pt{X: 0.35 * s, Y: 0.3 * s})) <= 0.022*s
	}},
	{"spoon at the lips' corner", func(l *face.Landmarks68, s, x, y float64) bool {
		bowl := l[54].Add(geom.Pt{X: 0.09 * s, Y: 0.04 * s})
		if dx, dy := (x-bowl.X)/(0.06*s), (y-bowl.Y)/(0.04*s); dx*dx+dy*dy <= 1 {
			return true
		}
		return segDist(geom.Pt{X: x, Y: y}, bowl, bowl.Add(geom.Pt{X: 0.45 * s, Y: 0.1 * s})) <= 0.015*s
	}},
	{"thumb over the jaw", func(l *face.Landmarks68, s, x, y float64) bool {
		tip := l[5].Add(geom.Pt{X: 0.05 * s, Y: -0.03 * s})
		return segDist(geom.Pt{X: x, Y: y}, tip, tip.Add(geom.Pt{X: -0.3 * s, Y: 0.2 * s})) <= 0.04*s
	}},
	{"fingertips on the cheek", func(l *face.Landmarks68, s, x, y float64) bool {
		for k := range 2 {
			tip := l[13+k].Add(geom.Pt{X: -0.05 * s, Y: -0.03 * s})
			if segDist(geom.Pt{X: x, Y: y}, tip, tip.Add(geom.Pt{X: 0.3 * s, Y: 0.05 * s})) <= 0.028*s {
				return true
			}
		}
		return false
	}},
}

// heldHue is a cover's colour from the target's skin, and whether it is one of a skin's.
type heldHue struct {
	name string
	of   func(skin raster.RGB) raster.RGB
	skin bool
}

var heldHues = []heldHue{
	{"own skin", scaledSkin(1), true},
	{"own-20", func(c raster.RGB) raster.RGB { return shade(c, -20) }, true},
	{"darker skin", scaledSkin(0.7), true},
	{"tan", func(raster.RGB) raster.RGB { return raster.RGB{R: 205, G: 150, B: 110} }, true},
	{"lighter skin", func(c raster.RGB) raster.RGB { return shade(c, 30) }, true},
	{"navy", func(raster.RGB) raster.RGB { return raster.RGB{R: 30, G: 35, B: 70} }, false},
	{"purple", func(raster.RGB) raster.RGB { return raster.RGB{R: 120, G: 55, B: 130} }, false},
}

func TestApplyKeepsThingsHeldToTheLowerFace(t *testing.T) {
	t.Parallel()
	coffee := loadPhotoTexture(t, "coffee.png", 0.5)
	textures := []occTexture{
		occTextures[0],
		{"shaded", func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB { return shade(c, 0.2*float64((2*x+y)%200)-20) }},
		{"coffee", func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB { return coffee.tint(c, x+5, y+23) }},
	}
	floors := map[bool][2]float64{false: {0.48, 0.78}, true: {0.72, 0.9}} // skin's hues, others (means)
	ways := photoWays(t)
	for _, toAstro := range []bool{false, true} {
		w := ways[toAstro]
		skin := skinColour(w.tgt, &w.lm)
		var kept, n [2]float64
		var swapped float64
		for si, sh := range heldShapes {
			for hi, h := range heldHues {
				tx := textures[(si+hi)%len(textures)]
				c := occCase{shape: sh, tex: tx, hue: h.of(skin), name: sh.name + "/" + tx.name + "/" + h.name}
				r, _ := occlusionRun(t, w.src, w.tgt, w.lm, w.box, c, w.bare)
				t.Logf("into astronaut %v, %s: %.1f%% kept, the rest of the face %.1f%% swapped", toAstro, c.name, 100*r.kept, 100*r.swapped)
				i := 1
				if h.skin {
					i = 0
				}
				kept[i] += r.kept
				n[i]++
				swapped += r.swapped
				if r.swapped < 0.85 {
					t.Errorf("into astronaut %v, %s: the rest of the face %.1f%% swapped (want ≥ 85%% of the bare face's)", toAstro, c.name, 100*r.swapped)
				}
			}
		}
		f := floors[toAstro]
		t.Logf("into astronaut %v: skin's hues %.1f%% kept, others %.1f%%, the rest of the face %.1f%% swapped", toAstro, 100*kept[0]/n[0], 100*kept[1]/n[1], 100*swapped/(n[0]+n[1]))
		for i, what := range []string{"skin's hues", "other hues"} {
			if got := kept[i] / n[i]; got < f[i] {
				t.Errorf("into astronaut %v: covers of %s kept %.1f%% (mean), want ≥ %.0f%%", toAstro, what, 100*got, 100*f[i])
			}
		}
	}
}
