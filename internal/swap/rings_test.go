package swap

import (
	"fmt"
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// frameShape is a pair of glasses other than the survey's (occShapes' "glasses"): each rim a
// rounded box of half-sizes hw×hh (share of the face size) and corner radius rc about a centre
// dx outwards and dy down from the eye's landmarks' mean, t thick, joined by a bridge across the
// nose at the rims' mid-height.
type frameShape struct {
	name          string
	hw, hh, rc, t float64
	dx, dy        float64
}

// inside reports whether (x, y) lies on the frame's rims or bridge.
func (f frameShape) inside(l *face.Landmarks68, size, x, y float64) bool {
	var cs [2]geom.Pt
	for e := range 2 {
		c := geom.Mean(l[36+6*e : 42+6*e])
		out := f.dx * size
		if e == 0 {
			out = -out
		}
		cs[e] = c.Add(geom.Pt{X: out, Y: f.dy * size})
		// The signed distance to the rounded box's outline.
		b := geom.Pt{X: (f.hw - f.rc) * size, Y: (f.hh - f.rc) * size}
		qx, qy := math.Abs(x-cs[e].X)-b.X, math.Abs(y-cs[e].Y)-b.Y
		d := math.Hypot(max(qx, 0), max(qy, 0)) + min(max(qx, qy), 0) - f.rc*size
		if math.Abs(d) <= f.t*size/2 {
			return true
		}
	}
	a, b := cs[0].Add(geom.Pt{X: f.hw * size}), cs[1].Sub(geom.Pt{X: f.hw * size})
	return segDist(geom.Pt{X: x, Y: y}, a, b) <= f.t*size/2
}

// frameShapes are glasses of other shapes and sizes than the survey's round ones (radius 0.13
// of the face size, 0.04 thick, centred on the eyes).
var frameShapes = []frameShape{
	{"small round, thin", 0.1, 0.1, 0.1, 0.02, 0, 0},
	{"large round, thick", 0.16, 0.16, 0.16, 0.05, 0, 0},
	{"rectangular", 0.15, 0.095, 0.03, 0.03, 0, 0},
	{"oval, set high and out", 0.14, 0.11, 0.11, 0.03, 0.015, -0.025},
	{"wide rectangular, thin", 0.17, 0.1, 0.02, 0.02, 0.01, 0},
	{"wide rectangular", 0.17, 0.1, 0.02, 0.03, 0.01, 0},
	{"rectangular, thin", 0.15, 0.095, 0.03, 0.02, 0, 0},
}

// Glasses of skin's own hues and of other shapes than the survey's (round and rectangular,
// thin and thick rims, small and large, set off the eyes' centres) stay in front, found as
// rings of one colour round both eyes, while the rest of the face is swapped. Without the
// glasses test the swap kept little of them on Grace Hopper's wrinkled face and about half
// on the astronaut's. Each frame must keep its floor, and the frames their mean's, below;
// the astronaut's are lower: on her small face (95 px) a thin wide rim of skin's hue is 2 px
// wide, and an orange one set high meets her brows.
func TestApplyKeepsGlassesOfManyShapes(t *testing.T) {
	t.Parallel()
	ways := photoWays(t)
	for _, toAstro := range []bool{false, true} {
		w, least, mean := ways[toAstro], 0.8, 0.9
		if toAstro {
			least, mean = 0.5, 0.85
		}
		var sum float64
		n := 0
		for _, f := range frameShapes {
			for _, h := range occHues[:5] {
				if h.name == "red" || h.name == "brown" { // found by their colour without the rings
					continue
				}
				c := occCase{shape: occShape{f.name, f.inside}, tex: occTextures[0], hue: h.c,
					name: fmt.Sprintf("into astronaut %v, %s/%s", toAstro, f.name, h.name)}
				r, _ := occlusionRun(t, w.src, w.tgt, w.lm, w.box, c, w.bare)
				t.Logf("%s: %.1f%% kept, the rest of the face %.1f%% swapped", c.name, 100*r.kept, 100*r.swapped)
				sum += r.kept
				n++
				if r.kept < least || r.swapped < 0.8 {
					t.Errorf("%s: %.1f%% of the frame kept (want ≥ %.0f%%), the rest of the face %.1f%% swapped (want ≥ 80%% of the bare face's)",
						c.name, 100*r.kept, 100*least, 100*r.swapped)
				}
			}
		}
		t.Logf("into astronaut %v: %.1f%% kept on average", toAstro, 100*sum/float64(n))
		if sum/float64(n) < mean {
			t.Errorf("into astronaut %v: %.1f%% of the frames kept on average (want ≥ %.0f%%)", toAstro, 100*sum/float64(n), 100*mean)
		}
	}
}
