package swap

import (
	"fmt"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// blAt is a point a share k of the way from landmark a to b, moved (dx, dy) faces.
func blAt(a, b int, k, dx, dy float64) func(l *face.Landmarks68, s float64) geom.Pt {
	return func(l *face.Landmarks68, s float64) geom.Pt {
		return hoPt(l[a].Scale(1-k).Add(l[b].Scale(k)), s, dx, dy)
	}
}

// blShades are the skin's own darker, browner and redder marks: a mole, an age spot, a red
// spot (melanin and blood).
var blShades = []struct {
	name string
	col  func(own raster.RGB) raster.RGB
}{
	{"mole", func(o raster.RGB) raster.RGB {
		return raster.RGB{R: clampU8(0.5 * float64(o.R)), G: clampU8(0.38 * float64(o.G)), B: clampU8(0.32 * float64(o.B))}
	}},
	{"age spot", func(o raster.RGB) raster.RGB {
		return raster.RGB{R: clampU8(0.8 * float64(o.R)), G: clampU8(0.66 * float64(o.G)), B: clampU8(0.55 * float64(o.B))}
	}},
	{"red spot", func(o raster.RGB) raster.RGB {
		return raster.RGB{R: o.R, G: clampU8(0.62 * float64(o.G)), B: clampU8(0.62 * float64(o.B))}
	}},
}

// Moles, age spots and red spots of 0.5–1.5 % of the face, sharp-edged and soft, on the
// cheeks, the chin and the brow of both photos, are the skin's: none is kept in front as a
// small cover (what the colour tests take back of the red ones is theirs).
func TestShadedBlemishesAreSwapped(t *testing.T) {
	fullTier(t, "swaps blemishes under shading")
	places := []struct {
		name string
		at   func(l *face.Landmarks68, s float64) geom.Pt
	}{{"left cheek", blAt(2, 31, 0.45, 0, -0.04)}, {"right cheek", blAt(14, 35, 0.5, 0, 0.03)}, {"chin", blAt(8, 57, 0.4, 0.06, 0)}, {"brow", blAt(19, 24, 0.3, 0, -0.1)}}
	shares := []float64{0.005, 0.007, 0.01, 0.015}
	probeWays(t, func(toAstro bool, s *Swapper, tgt *raster.Image, lm face.Landmarks68) {
		bare, _ := takenBack(s, tgt, &lm)
		own := hoSkinOf(tgt, &lm)
		for ci, c := range blShades {
			for pi, pl := range places {
				for e, soft := range []bool{false, true} {
					for si, share := range shares {
						if (ci+pi+e+si)%2 == 1 && share != 0.007 && share != 0.015 {
							continue // half the small ones
						}
						m := scPaintBlemishes(tgt, &lm, own, []scBlemish{{pl.at, share, c.col, soft, false}})
						px, _ := takenBack(s, m, &lm)
						t.Logf("into astronaut %v: a %s on the %s (%.1f %%, soft %v): %.0f px taken back (bare %.0f)", toAstro, c.name, pl.name, 100*share, soft, px, bare)
						if s.spots.kept > 0 {
							t.Errorf("into astronaut %v: a %s on the %s (%.1f %% of the face, soft %v): %d kept as covers, %.0f px taken back (bare %.0f)",
								toAstro, c.name, pl.name, 100*share, soft, s.spots.kept, px, bare)
						}
					}
				}
			}
		}
	})
}

// blTint is img under another light: each channel scaled, with a grain of ±noise levels.
func blTint(img *raster.Image, kr, kg, kb float64, noise int) *raster.Image {
	out := img.Clone()
	seed := uint32(7)
	for y := range img.H {
		for x := range img.W {
			r, g, b := img.At(x, y)
			n := 0.0
			if noise > 0 {
				seed = seed*1664525 + 1013904223
				n = float64(int(seed>>24)%(2*noise+1) - noise)
			}
			out.Set(x, y, clampU8(float64(r)*kr+n), clampU8(float64(g)*kg+n), clampU8(float64(b)*kb+n))
		}
	}
	return out
}

// Grace Hopper's clear glasses close in the skin under each lens (the rim and the under-eye
// fold); under a warm light with grain, or beside a pale patch on her cheek, that skin is
// still hers: nothing is taken back.
func TestSkinUnderLensIsSwapped(t *testing.T) {
	p := photos(t)
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.Occluders = false
	s := NewSwapper(src, opts)
	lm := p.dstLm
	bare, _ := takenBack(s, p.dst, &lm)
	pale := func(o raster.RGB) raster.RGB { return shade(o, 35) }
	for _, c := range []struct {
		name string
		img  *raster.Image
	}{
		{"warm light and grain", blTint(p.dst, 1.08, 1, 0.8, 10)},
		{"a pale patch on the left cheek", scPaintBlemishes(p.dst, &lm, hoSkinOf(p.dst, &lm), []scBlemish{{blAt(2, 31, 0.45, 0, -0.04), 0.015, pale, true, false}})},
	} {
		px, _ := takenBack(s, c.img, &lm)
		t.Logf("%s: %.0f px taken back (bare %.0f)", c.name, px, bare)
		if px > bare+40 {
			saveForEyes(t, c.img, fmt.Sprintf("underlens_%s.png", c.name))
			t.Errorf("%s: %.0f px taken back, bare %.0f", c.name, px, bare)
		}
	}
}
