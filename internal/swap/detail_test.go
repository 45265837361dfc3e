package swap

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A flat or softly lit cover of the skin's own hue over the nose (a pad, a tissue, a cupped
// hand) lies mostly where the tests leave the features out, so only what it hides tells it: a
// nose is never as flat as the skin around it, with its nostrils, the shine on its tip and
// its sides' shading. Both ways between the sample photos; into the astronaut, whose smooth
// skin is nearly as flat, they were swapped over but for the nose's flatness.
func TestApplyKeepsFlatCoversOverTheNose(t *testing.T) {
	ways := photoWays(t)
	pad := occShape{"pad over the nose", func(l *face.Landmarks68, s, x, y float64) bool {
		c := l[30].Add(l[33]).Scale(0.5)
		dx, dy := (x-c.X)/(0.15*s), (y-c.Y)/(0.11*s)
		return dx*dx+dy*dy <= 1
	}}
	lit := occTexture{"lit from the side", func(c raster.RGB, x, _ int, _ *rand.Rand) raster.RGB {
		return shade(c, 12*math.Sin(float64(x)/20))
	}}
	for _, c := range []struct {
		toAstronaut bool
		tex         occTexture
		hue         string
		of          func(raster.RGB) raster.RGB
	}{
		{false, occTextures[0], "own skin", scaledSkin(1)}, {false, lit, "own skin", scaledSkin(1)},
		{true, occTextures[0], "own skin", scaledSkin(1)}, {true, occTextures[0], "a shade lighter", scaledSkin(1.05)},
		{true, lit, "own skin", scaledSkin(1)},
	} {
		w := ways[c.toAstronaut]
		oc := occCase{shape: pad, tex: c.tex, hue: c.of(skinColour(w.tgt, &w.lm)), name: pad.name + "/" + c.tex.name + "/" + c.hue}
		r, _ := occlusionRun(t, w.src, w.tgt, w.lm, w.box, oc, w.bare)
		t.Logf("into astronaut %v, %s: %.1f%% kept, the rest of the face %.1f%% swapped", c.toAstronaut, oc.name, 100*r.kept, 100*r.swapped)
		if r.kept < 0.75 || r.swapped < 0.75 {
			t.Errorf("into astronaut %v, %s: %.1f%% of the cover kept (want ≥ 75%%), the rest of the face %.1f%% swapped (want ≥ 75%% of the bare face's)",
				c.toAstronaut, oc.name, 100*r.kept, 100*r.swapped)
		}
	}
}

// A soft nose is no cover: shallow focus blurs a close-up's nose tip and powder smooths it,
// but its nostrils and shading remain. The lower nose of each sample photo blurred (σ 0.8 %
// and 1.2 % of the face) loses no more of the swap than the sharp one.
func TestSoftNoseIsNoCover(t *testing.T) {
	p := photos(t)
	for _, f := range []struct {
		name      string
		tgt, src  *raster.Image
		lm, srcLm face.Landmarks68
	}{{"grace_hopper", p.dst, p.src, p.dstLm, p.srcLm}, {"astronaut", p.src, p.dst, p.srcLm, p.dstLm}} {
		src, err := NewSource(f.src, &f.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		opts := DefaultOptions()
		opts.Occluders = false
		sw := NewSwapper(src, opts)
		b := geom.Bounds(f.lm[:])
		size := math.Max(b.W(), b.H())
		takenBack := func(img *raster.Image) float64 {
			sw.Apply(img.Clone(), &f.lm)
			sw.occluders(img, &f.lm, &sw.mask, size, sw.last)
			var sum float64
			w := sw.last.Dx()
			for i, v := range sw.occ.Pix {
				sum += float64(sw.mask.At(sw.last.Min.X+i%w, sw.last.Min.Y+i/w) * (1 - v))
			}
			return sum
		}
		sharp := takenBack(f.tgt)
		lower := append([]geom.Pt(nil), f.lm[29:36]...)
		c := geom.Mean(lower)
		for i := range lower {
			lower[i] = c.Add(lower[i].Sub(c).Scale(1.3))
		}
		_, hull := convexHull(lower, nil, nil)
		for _, sigma := range []float64{0.008, 0.012} {
			blurred := raster.New(f.tgt.W, f.tgt.H)
			raster.GaussianBlur8(blurred, f.tgt, sigma*size)
			img := f.tgt.Clone()
			for y := range img.H {
				for x := range img.W {
					if inPoly(hull, float64(x), float64(y)) {
						r, g, b := blurred.At(x, y)
						img.Set(x, y, r, g, b)
					}
				}
			}
			soft := takenBack(img)
			t.Logf("%s, the lower nose blurred σ %.1f%%: %.0f px taken back (sharp: %.0f)", f.name, 100*sigma, soft, sharp)
			if soft > sharp+0.5 {
				t.Errorf("%s, the lower nose blurred σ %.1f%%: %.0f px taken back, want no more than the sharp nose's %.0f", f.name, 100*sigma, soft, sharp)
			}
		}
	}
}
