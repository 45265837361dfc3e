package swap

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// noseBand is a plaster across the nose's bridge: a rounded band about a third of the face's
// size long, centred between the eyes a little below their line (between landmarks 27 and 28)
// and turned deg degrees from it, its ends reaching the eyes' inner corners.
func noseBand(deg float64) occShape {
	return occShape{"plaster across the nose's bridge", func(l *face.Landmarks68, s, x, y float64) bool {
		c := l[27].Scale(0.4).Add(l[28].Scale(0.6))
		e := l[42].Sub(l[39])
		return tsInRoundRect(x, y, c, math.Atan2(e.Y, e.X)*180/math.Pi+deg, 0.17*s, 0.06*s, 0.03*s)
	}}
}

// mirrored is a way with its target flipped left to right, the landmarks found again on it.
func mirrored(t *testing.T, w hoWay) hoWay {
	m := w
	m.tgt = w.tgt.Clone()
	for y := range m.tgt.H {
		for x := range m.tgt.W {
			r, g, b := w.tgt.At(m.tgt.W-1-x, y)
			m.tgt.Set(x, y, r, g, b)
		}
	}
	fw := float64(m.tgt.W)
	m.box = geom.Rect{X0: fw - w.box.X1, Y0: w.box.Y0, X1: fw - w.box.X0, Y1: w.box.Y1}
	m.lm = landmarksIn(t, m.tgt, m.box)
	m.name += ", mirrored"
	return m
}

// A flat band across the nose's bridge is found beside each eye's inner corner, cut there by
// the eyes' outlines; both pieces, and the ridge between them, are one cover, not two finds
// each under the least a cover must cover.
func TestApplyKeepsBandsAcrossTheNoseBridge(t *testing.T) {
	ways := hoWays(t)
	flat := occTexture{"flat", func(c raster.RGB, _, _ int, _ *rand.Rand) raster.RGB { return c }}
	cases := []struct {
		way  hoWay
		name string
		hue  raster.RGB
		deg  float64
	}{
		{ways[0], "white", raster.RGB{R: 240, G: 238, B: 232}, -6},
		{ways[0], "dark grey", raster.RGB{R: 40, G: 40, B: 45}, 0},
		{mirrored(t, ways[1]), "red-orange", raster.RGB{R: 225, G: 95, B: 55}, 0},
	}
	for _, c := range cases {
		src, err := NewSource(c.way.srcImg, &c.way.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		bare := bareSwapped(t, src, c.way.tgt, c.way.lm)
		oc := occCase{shape: noseBand(c.deg), tex: flat, hue: c.hue, name: c.name}
		r, after, _ := tsRun(t, src, c.way.tgt, c.way.lm, c.way.box, oc, bare)
		saveForEyes(t, after, "noseband-"+c.name+".png")
		t.Logf("%s, %s band: %.1f%% kept, the rest of the face %.1f%% swapped", c.way.name, c.name, 100*r.kept, 100*r.swapped)
		if r.kept < 0.8 {
			t.Errorf("%s, %s band across the bridge: %.1f%% kept (want ≥ 80%%)", c.way.name, c.name, 100*r.kept)
		}
		if r.swapped < 0.9 {
			t.Errorf("%s, %s band across the bridge: the rest of the face %.1f%% swapped (want ≥ 90%% of the bare face's)", c.way.name, c.name, 100*r.swapped)
		}
	}
}
