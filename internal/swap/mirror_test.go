package swap

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// mirShapes are covers over one side of the face: a thumb on the cheekbone, a hand's edge
// along the nose, a braid down the cheek to the jaw and a cord across one cheek.
var mirShapes = []occShape{
	{"thumb on the cheekbone", func(l *face.Landmarks68, s, x, y float64) bool {
		c := l[41].Add(l[2]).Scale(0.5)
		return tsInRotEllipse(x, y, hoPt(c, s, 0.02, 0), -55, 0.15*s, 0.075*s)
	}},
	{"hand's edge along the nose", func(l *face.Landmarks68, s, x, y float64) bool {
		c := l[42].Add(l[35]).Scale(0.5)
		return tsInRoundRect(x, y, hoPt(c, s, 0.05, 0), 95, 0.3*s, 0.06*s, 0.04*s)
	}},
	{"braid down the cheek", func(l *face.Landmarks68, s, x, y float64) bool {
		a, b := hoPt(l[1], s, 0.1, -0.05), hoPt(l[5], s, 0.08, -0.02)
		for k := range 7 {
			t := float64(k) / 6
			p := a.Add(b.Sub(a).Scale(t))
			off := 0.025 * s * float64(1-2*(k%2))
			if math.Hypot(x-p.X-off, y-p.Y) <= 0.055*s {
				return true
			}
		}
		return false
	}},
	{"cord across the cheek", func(l *face.Landmarks68, s, x, y float64) bool {
		return hoBezierNear(x, y, hoPt(l[14], s, 0.02, -0.08), hoPt(l[53], s, 0.06, -0.14), hoPt(l[28], s, 0.03, 0), 0.02*s)
	}},
}

// mirTextures are the covers' textures: flat, and the luminance of camera.png and of the
// astronaut's suit about the hue.
func mirTextures(t testing.TB) []occTexture {
	lumTex := func(name string, ox, oy int) occTexture {
		img, err := raster.Load(testenv.Sample(t, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		var mean float64
		for y := range img.H {
			for x := range img.W {
				r, g, b := img.At(x, y)
				mean += (float64(r) + float64(g) + float64(b)) / 3
			}
		}
		mean /= float64(img.W * img.H)
		return occTexture{name, func(col raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
			r, g, b := img.At((x+ox)%img.W, (y+oy)%img.H)
			k := 1 + 0.5*((float64(r)+float64(g)+float64(b))/3-mean)/mean
			return raster.RGB{R: clampU8(k * float64(col.R)), G: clampU8(k * float64(col.G)), B: clampU8(k * float64(col.B))}
		}}
	}
	return []occTexture{
		{"flat", func(c raster.RGB, _, _ int, _ *rand.Rand) raster.RGB { return c }},
		lumTex("camera", 300, 20), lumTex("astronaut", 20, 380),
	}
}

// mirHues are skin hues on a face whose own skin is own.
func mirHues(own raster.RGB) []hoHue {
	return []hoHue{
		{"own skin", own, true}, {"own, warmer", raster.RGB{R: clampU8(float64(own.R) + 12), G: own.G, B: clampU8(float64(own.B) - 8)}, true},
		{"peach", raster.RGB{R: 232, G: 184, B: 150}, true}, {"tan", raster.RGB{R: 192, G: 146, B: 104}, true},
		{"pink", raster.RGB{R: 210, G: 136, B: 132}, true},
	}
}

// The family's survey: every shape, hue and texture into both sample photos, grace_hopper
// darkened to 0.75 and the astronaut mirrored, and what the mirror test alone finds on bare
// faces (each sample photo mirrored, a stop darker, grainy, at two thirds of its size, lit
// from one side, through JPEG at quality 30, tilted, turned a little): nothing. FACEFUSION_TEST_CASES=1 logs every case.
func TestOneSidedCoverSurvey(t *testing.T) {
	fullTier(t, "swaps 240 covered photos")
	floors := []float64{0.5, 0.72, 0.58, 0.75}
	ways, _ := tsWays(t)
	texes := mirTextures(t)
	for wi, w := range ways {
		src, err := NewSource(w.srcImg, &w.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		bare := bareSwapped(t, src, w.tgt, w.lm)
		var sum, n float64
		for _, sh := range mirShapes {
			var ss, sw, sn float64
			for _, h := range mirHues(w.ownSkin) {
				for _, tx := range texes {
					c := occCase{shape: sh, tex: tx, hue: h.c, name: sh.name + "/" + tx.name + "/" + h.name}
					r, _, _ := tsRun(t, src, w.tgt, w.lm, w.box, c, bare)
					ss, sw, sn = ss+r.kept, sw+r.swapped, sn+1
					if os.Getenv("FACEFUSION_TEST_CASES") != "" {
						t.Logf("%s, %s: %.1f%% kept, %.1f%% swapped", w.name, c.name, 100*r.kept, 100*r.swapped)
					}
				}
			}
			t.Logf("%s, %s: %.1f%% kept, the rest %.1f%% swapped", w.name, sh.name, 100*ss/sn, 100*sw/sn)
			sum, n = sum+ss, n+sn
		}
		t.Logf("%s: %.1f%% kept", w.name, 100*sum/n)
		if sum/n < floors[wi] {
			t.Errorf("%s: %.1f%% kept, want ≥ %.0f%%", w.name, 100*sum/n, 100*floors[wi])
		}
	}
	for _, w := range ways[:2] {
		src, err := NewSource(w.srcImg, &w.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		lit := w.tgt.Clone()
		sideLight(lit)
		c := w.box.Center()
		variants := append(hoBareVariants(w), hoBare{"side lit", lit, w.box}, hoBare{"jpeg q30", jpegOf(w.tgt, 30), w.box},
			hoBare{"tilted 12°", warpedPhoto(w.tgt, func(x, y float64) (float64, float64) {
				sn, cs := math.Sincos(12 * math.Pi / 180)
				return c.X + (x-c.X)*cs - (y-c.Y)*sn, c.Y + (x-c.X)*sn + (y-c.Y)*cs
			}), w.box},
			// One side drawn in and the other out, about as a head turned a little shows them.
			hoBare{"turned", warpedPhoto(w.tgt, func(x, y float64) (float64, float64) {
				u := (x - c.X) / w.box.W()
				return x + 0.3*w.box.W()*u*u, y
			}), w.box})
		for _, v := range variants {
			lm := landmarksIn(t, v.img, v.box)
			if n := mirrorFinds(src, v.img, &lm); n > 0 {
				t.Errorf("%s, %s: the mirror test finds %d px", w.name, v.name, n)
			}
		}
	}
}

// warpedPhoto is img sampled at from(x, y) for each pixel (x, y), bilinearly, the edge
// repeated.
func warpedPhoto(img *raster.Image, from func(x, y float64) (float64, float64)) *raster.Image {
	out := raster.New(img.W, img.H)
	for y := range img.H {
		for x := range img.W {
			u, v := from(float64(x), float64(y))
			u, v = min(float64(img.W-1), max(0, u)), min(float64(img.H-1), max(0, v))
			x0, y0 := min(img.W-2, int(u)), min(img.H-2, int(v))
			fx, fy := u-float64(x0), v-float64(y0)
			var c [3]float64
			for k, wt := range [4]float64{(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy} {
				r, g, b := img.At(x0+k%2, y0+k/2)
				c[0], c[1], c[2] = c[0]+wt*float64(r), c[1]+wt*float64(g), c[2]+wt*float64(b)
			}
			out.Set(x, y, clampU8(c[0]), clampU8(c[1]), clampU8(c[2]))
		}
	}
	return out
}

// mirrorFinds is how many pixels of img's face the mirror test finds, after the texture test
// as in occluders but with nothing else found.
func mirrorFinds(src *Source, img *raster.Image, lm *face.Landmarks68) int {
	opts := DefaultOptions()
	opts.Occluders = false
	s := NewSwapper(src, opts)
	s.Apply(img.Clone(), lm)
	b := geom.Bounds(lm[:])
	size := math.Max(b.W(), b.H())
	s.sampleSkin(img, lm, size, s.last)
	m := s.fitSkin()
	s.occ.Reset(s.last)
	s.texture(img, lm, &s.mask, size, s.last)
	s.occ.Reset(s.last)
	s.mirror(img, lm, &s.mask, size, s.last, m)
	n := 0
	for _, v := range s.occ.Pix {
		if v > 0.5 {
			n++
		}
	}
	return n
}

// One-sided covers of skin hues, drawn with a soft edge and a real photo's luminance or none,
// the landmarks found again on each covered photo: each side of the face is compared with its
// mirror, so each is kept although its colour is the skin's.
func TestApplyKeepsOneSidedCoversBySymmetry(t *testing.T) {
	t.Parallel()
	ways, _ := tsWays(t)
	tex := mirTextures(t)
	for _, c := range []struct {
		way             int
		shape, tex, hue string
		kept, swapped   float64
	}{
		{1, "thumb on the cheekbone", "camera", "own skin", 0.9, 0.9},
		{1, "thumb on the cheekbone", "flat", "tan", 0.85, 0.9},
		{1, "braid down the cheek", "flat", "pink", 0.85, 0.9},
		{3, "thumb on the cheekbone", "flat", "own skin", 0.85, 0.9},
		{3, "braid down the cheek", "astronaut", "peach", 0.85, 0.9},
		{0, "thumb on the cheekbone", "camera", "pink", 0.8, 0.9},
		{0, "braid down the cheek", "flat", "tan", 0.85, 0.9},
		{2, "thumb on the cheekbone", "flat", "pink", 0.85, 0.9},
	} {
		w := ways[c.way]
		src, err := NewSource(w.srcImg, &w.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		oc := occCase{name: c.shape + "/" + c.tex + "/" + c.hue}
		for _, sh := range mirShapes {
			if sh.name == c.shape {
				oc.shape = sh
			}
		}
		for _, tx := range tex {
			if tx.name == c.tex {
				oc.tex = tx
			}
		}
		for _, h := range mirHues(w.ownSkin) {
			if h.name == c.hue {
				oc.hue = h.c
			}
		}
		r, _, _ := tsRun(t, src, w.tgt, w.lm, w.box, oc, bareSwapped(t, src, w.tgt, w.lm))
		t.Logf("%s, %s: %.1f%% kept, %.1f%% of the rest swapped", w.name, oc.name, 100*r.kept, 100*r.swapped)
		if r.kept < c.kept || r.swapped < c.swapped {
			t.Errorf("%s, %s: %.1f%% kept (want ≥ %.0f%%), %.1f%% of the rest swapped (want ≥ %.0f%%)", w.name, oc.name, 100*r.kept, 100*c.kept, 100*r.swapped, 100*c.swapped)
		}
	}
}
