package swap

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// knitShapes are covers of a knitted mitten or sleeve's size on a face (s: the face's larger
// side; the image's left is the face's right).
var knitShapes = []occShape{
	{"mitten on the cheek", func(l *face.Landmarks68, s, x, y float64) bool {
		return tsInRotEllipse(x, y, hoPt(l[2].Add(l[31]).Scale(0.5), s, -0.02, 0.02), 70, 0.17*s, 0.13*s)
	}},
	{"cuff across the chin", func(l *face.Landmarks68, s, x, y float64) bool {
		return tsInRoundRect(x, y, hoPt(l[8], s, 0.02, -0.06), 8, 0.3*s, 0.08*s, 0.05*s)
	}},
	{"hand spread before the face", func(l *face.Landmarks68, s, x, y float64) bool {
		c := hoPt(l[57], s, 0.04, 0.05)
		if tsInRotEllipse(x, y, c, 0, 0.17*s, 0.13*s) {
			return true
		}
		for k := range 4 {
			base := hoPt(c, s, -0.12+0.08*float64(k), -0.08)
			if tsNearSeg(x, y, base, hoPt(base, s, -0.05+0.03*float64(k), -0.3), 0.04*s) {
				return true
			}
		}
		return false
	}},
}

// knitTextures are a flat cover and three regular fabrics: a knit's chevrons (stitches 8 px
// wide and 5 tall, each leg shaded in five steps), a fine weave (threads 7 and 5 px apart, ±8 %)
// and a basket weave (pairs of threads 3 px wide crossing in 6 px squares, lit along their
// length).
func knitTextures() []occTexture {
	scale := func(c raster.RGB, k float64) raster.RGB {
		return raster.RGB{R: clampU8(k * float64(c.R)), G: clampU8(k * float64(c.G)), B: clampU8(k * float64(c.B))}
	}
	return []occTexture{
		{"flat", func(c raster.RGB, _, _ int, _ *rand.Rand) raster.RGB { return c }},
		{"knit", func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
			u := x % 8
			// Each leg slants down to the stitch's middle: its shading runs along the leg.
			t := (y + 5*int(math.Abs(float64(u)-3.5))/4) % 5
			k := [5]float64{0.9, 0.97, 1.04, 1.08, 1.0}[t]
			if u == 0 {
				k = 0.88
			}
			return scale(c, k)
		}},
		{"fine weave", func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
			return scale(c, 1+0.08*math.Cos(2*math.Pi*float64(x)/7)*math.Cos(2*math.Pi*float64(y)/5))
		}},
		{"basket weave", func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
			along := y % 3
			if (x/6+y/6)%2 == 0 {
				along = x % 3
			}
			return scale(c, [3]float64{0.93, 1.05, 1.01}[along])
		}},
	}
}

// A knitted or woven cover of skin's hues on grace_hopper's grainy face is kept as a flat one
// is: its texture repeats, which her grain does not. Her bare face, plain and darkened with a
// sensor's noise, and the astronaut's have no regular texture.
func TestKnitCoversOnAGrainyFace(t *testing.T) {
	fullTier(t, "swaps knitted and woven covers into grace_hopper")
	ways := hoWays(t)
	w := ways[0] // astronaut → grace_hopper
	src, err := NewSource(w.srcImg, &w.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	bare := bareSwapped(t, src, w.tgt, w.lm)
	hues := []hoHue{{"own skin", w.ownSkin, true}, {"tan", raster.RGB{R: 196, G: 154, B: 108}, true}}
	least := map[string]float64{"flat": 0.9, "knit": 0.8, "fine weave": 0.8, "basket weave": 0.85}
	for _, tx := range knitTextures() {
		var kept float64
		for _, sh := range knitShapes {
			for _, h := range hues {
				c := occCase{shape: sh, tex: tx, hue: h.c, name: sh.name + "/" + tx.name + "/" + h.name}
				r, _, _ := tsRun(t, src, w.tgt, w.lm, w.box, c, bare)
				kept += r.kept / float64(len(knitShapes)*len(hues))
				if os.Getenv("FACEFUSION_TEST_CASES") != "" {
					t.Logf("%s: %.1f%% kept, %.1f%% swapped", c.name, 100*r.kept, 100*r.swapped)
				}
			}
		}
		t.Logf("%s: %.1f%% kept", tx.name, 100*kept)
		if kept < least[tx.name] {
			t.Errorf("%s covers of skin's hues: %.1f%% kept, want ≥ %.0f%%", tx.name, 100*kept, 100*least[tx.name])
		}
	}
	dim := w.tgt.Clone()
	rng := rand.New(rand.NewPCG(5, 5))
	for i, v := range dim.Pix {
		dim.Pix[i] = clampU8(0.7*float64(v) + 4*rng.NormFloat64())
	}
	for _, c := range []struct {
		name string
		img  *raster.Image
		box  geom.Rect
	}{{"grace_hopper", w.tgt, w.box}, {"grace_hopper ×0.7, noisy", dim, w.box}, {"astronaut", ways[1].tgt, ways[1].box}} {
		lm := landmarksIn(t, c.img, c.box)
		s := NewSwapper(src, DefaultOptions())
		size, _, fr, ok := s.place(c.img, &lm)
		if !ok {
			t.Fatalf("%s: the face was not placed", c.name)
		}
		s.features(&lm, fr)
		s.occ.Reset(fr)
		s.latticeFinds(c.img, &lm, &s.mask, size, fr)
		n := 0
		for _, v := range s.occ.Pix {
			if v > 0.5 {
				n++
			}
		}
		if n > 0 {
			t.Errorf("%s: %d px of the bare face taken for a regular texture", c.name, n)
		}
	}
}
