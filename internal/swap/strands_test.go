package swap

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// strandShape is a strand of hair of half-width hw (a share of the face size) along the
// quadratic curve from a through b to c, each a landmark plus an offset in face sizes.
func strandShape(name string, hw float64, a, b, c [3]float64) occShape {
	at := func(l *face.Landmarks68, size float64, p [3]float64) geom.Pt {
		return l[int(p[0])].Add(geom.Pt{X: p[1] * size, Y: p[2] * size})
	}
	return occShape{name, func(l *face.Landmarks68, size, x, y float64) bool {
		p0, p1, p2 := at(l, size, a), at(l, size, b), at(l, size, c)
		// The curve lies in its points' box: a pixel farther than the width from it is off
		// every chord (the same answer, for a fraction of the surveys' time).
		r := hw * size
		if x < min(p0.X, p1.X, p2.X)-r || x > max(p0.X, p1.X, p2.X)+r || y < min(p0.Y, p1.Y, p2.Y)-r || y > max(p0.Y, p1.Y, p2.Y)+r {
			return false
		}
		q := geom.Pt{X: x, Y: y}
		const n = 24
		prev := p0
		for k := 1; k <= n; k++ {
			t := float64(k) / n
			u := 1 - t
			p := p0.Scale(u * u).Add(p1.Scale(2 * u * t)).Add(p2.Scale(t * t))
			if segDist(q, prev, p) <= hw*size {
				return true
			}
			prev = p
		}
		return false
	}}
}

// otherStrands are strands unlike the survey's four straight parallel ones: single, curved,
// of other widths and directions, falling over either brow, across the forehead or over a
// cheek, each from past the face's outline.
var otherStrands = []occShape{
	// One curl from above the left brow, bending over the eye onto the cheek.
	strandShape("curl", 0.016, [3]float64{19, -0.05, -0.28}, [3]float64{19, 0.08, 0.05}, [3]float64{36, -0.02, 0.25}),
	// A thin wisp leaning the other way over the right brow.
	strandShape("wisp", 0.011, [3]float64{25, 0.08, -0.3}, [3]float64{24, 0, -0.05}, [3]float64{44, -0.08, 0.12}),
	// A wide lock from above the left brow down past the eye's outer corner onto the cheek.
	strandShape("lock", 0.02, [3]float64{18, 0, -0.3}, [3]float64{36, -0.07, 0.02}, [3]float64{3, 0.1, 0}),
	// A straight strand across the forehead and down over the right eye.
	strandShape("across", 0.014, [3]float64{20, 0, -0.22}, [3]float64{23, 0, -0.08}, [3]float64{45, 0.03, 0.08}),
}

// Strands of hair stay in front whatever their curve, width and direction: single ones,
// curled or straight, thinner and wider than the survey's, falling over either brow and eye
// or down past the eye's corner onto the cheek, from past the face's outline. They run
// across the outline, across a brow and across the source's features, where the face's own
// lines do not, so thin covers count there: each case must keep its floor below. On Grace
// Hopper's wrinkled face strands of the skin's lighter hues are still mostly swapped over:
// fainter than her creases.
func TestApplyKeepsStrandsOfOtherShapes(t *testing.T) {
	t.Parallel()
	ways := photoWays(t)
	for _, c := range []struct {
		toAstronaut bool
		shape, tex  string
		hue         int // in occHues
		kept        float64
	}{
		{false, "curl", "flat", 2, 0.9}, {false, "wisp", "noisy", 2, 0.9},
		{false, "curl", "noisy", 1, 0.5}, {false, "curl", "noisy", 4, 0.35},
		{true, "curl", "flat", 0, 0.9}, {true, "curl", "noisy", 1, 0.9}, {true, "curl", "flat", 1, 0.7},
		{true, "wisp", "flat", 3, 0.9}, {true, "wisp", "noisy", 3, 0.9},
		{true, "lock", "flat", 1, 0.95}, {true, "lock", "noisy", 4, 0.95},
	} {
		w := ways[c.toAstronaut]
		oc := occCase{hue: occHues[c.hue].c}
		for _, sh := range otherStrands {
			if sh.name == c.shape {
				oc.shape = sh
			}
		}
		for _, tx := range occTextures {
			if tx.name == c.tex {
				oc.tex = tx
			}
		}
		name := c.shape + "/" + c.tex + "/" + occHues[c.hue].name
		r, _ := occlusionRun(t, w.src, w.tgt, w.lm, w.box, oc, w.bare)
		t.Logf("into astronaut %v, %s: %.1f%% kept, the rest of the face %.1f%% swapped", c.toAstronaut, name, 100*r.kept, 100*r.swapped)
		if r.kept < c.kept || r.swapped < 0.75 {
			t.Errorf("into astronaut %v, %s: %.1f%% of the strand kept (want ≥ %.0f%%), the rest of the face %.1f%% swapped (want ≥ 75%% of the bare face's)",
				c.toAstronaut, name, 100*r.kept, 100*c.kept, 100*r.swapped)
		}
	}
}
