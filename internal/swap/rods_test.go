package swap

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// Thin straight and curved covers unlike the survey's: pens, pencils, straws and cables of
// several widths, angles and places (a share of the face size wide), single curved strands
// and locks of bowed strands, in the target's own skin colour and others, flat, noisy, shaded
// along their length and cut from photographs.

// rodShape is a straight rod of half-width hw (a share of the face size) from a to b, each a
// landmark plus an offset in face sizes.
func rodShape(name string, hw float64, a, b [3]float64) occShape {
	return occShape{name, func(l *face.Landmarks68, size, x, y float64) bool {
		p0 := l[int(a[0])].Add(geom.Pt{X: a[1] * size, Y: a[2] * size})
		p1 := l[int(b[0])].Add(geom.Pt{X: b[1] * size, Y: b[2] * size})
		return segDist(geom.Pt{X: x, Y: y}, p0, p1) <= hw*size
	}}
}

// lockShape is n strands of half-width hw, each bowed like strandShape's, side by side
// gap face sizes apart along (dx, dy).
func lockShape(name string, n int, hw, dx, dy float64, a, b, c [3]float64) occShape {
	var strands []occShape
	for k := range n {
		o := float64(k) - float64(n-1)/2
		shift := func(p [3]float64) [3]float64 { return [3]float64{p[0], p[1] + o*dx, p[2] + o*dy} }
		strands = append(strands, strandShape(name, hw, shift(a), shift(b), shift(c)))
	}
	return occShape{name, func(l *face.Landmarks68, size, x, y float64) bool {
		for _, s := range strands {
			if s.inside(l, size, x, y) {
				return true
			}
		}
		return false
	}}
}

// thinShapes are the family's shapes.
var thinShapes = []occShape{
	// A pen across the left cheek, a little tilted, from past the outline to the nose.
	rodShape("pen on the cheek", 0.016, [3]float64{2, -0.12, 0.02}, [3]float64{31, -0.02, -0.03}),
	// A thicker pencil across both cheeks and the nose's tip, gently tilted.
	rodShape("pencil across", 0.025, [3]float64{3, -0.1, 0.0}, [3]float64{13, 0.1, -0.08}),
	// A straw in the mouth's corner, down and out past the jaw.
	rodShape("straw", 0.02, [3]float64{54, -0.02, 0}, [3]float64{12, 0.2, 0.25}),
	// A thin cable steeply down over the right cheek, from the temple past the jaw.
	rodShape("cable", 0.009, [3]float64{16, -0.05, -0.2}, [3]float64{11, -0.02, 0.2}),
	// A wide marker across the forehead, tilted.
	rodShape("marker on the forehead", 0.035, [3]float64{17, -0.1, -0.1}, [3]float64{26, 0.1, -0.2}),
	// A pen diagonally over the nose's bridge from the left brow to the right cheek.
	rodShape("diagonal pen", 0.018, [3]float64{17, 0, -0.05}, [3]float64{14, 0, 0.05}),
	// One curved strand from above the right brow over the eye onto the cheek.
	strandShape("strand over an eye", 0.013, [3]float64{24, -0.05, -0.3}, [3]float64{44, 0.06, -0.02}, [3]float64{46, 0.05, 0.22}),
	// Five bowed strands across both brows from the left temple.
	lockShape("lock across the brows", 5, 0.008, 0, 0.025, [3]float64{0, -0.1, -0.2}, [3]float64{21, 0.1, -0.02}, [3]float64{26, 0.1, -0.12}),
}

// imageTexture tints a photograph (a sample, tiled) to the cover's colour: its luma's
// deviation from its mean, scaled by k, added to each channel.
func imageTexture(t testing.TB, name, file string, k float64) occTexture {
	t.Helper()
	img, err := raster.Load(testenv.Sample(t, file))
	if err != nil {
		t.Fatal(err)
	}
	var mean float64
	for y := range img.H {
		for x := range img.W {
			r, g, b := img.At(x, y)
			mean += float64(luma(float32(r), float32(g), float32(b)))
		}
	}
	mean /= float64(img.W * img.H)
	return occTexture{name, func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
		r, g, b := img.At(x%img.W, y%img.H)
		return shade(c, k*(float64(luma(float32(r), float32(g), float32(b)))-mean))
	}}
}

// thinTextures are the family's textures: flat, fine noise, shaded slowly along the cover
// (about ±35 levels over a face's width), and tinted photographs of brick and coffee.
func thinTextures(t testing.TB) []occTexture {
	return []occTexture{
		occTextures[0],
		{"fine noise", func(c raster.RGB, _, _ int, rng *rand.Rand) raster.RGB { return shade(c, 6*rng.NormFloat64()) }},
		{"gradient", func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
			return shade(c, 35*math.Sin(float64(2*x+y)/90))
		}},
		imageTexture(t, "brick", "brick.png", 0.5),
		imageTexture(t, "coffee", "coffee.png", 0.5),
	}
}

// skinColour is the median colour of the target's cheeks (discs under each eye).
func skinColour(img *raster.Image, l *face.Landmarks68) raster.RGB {
	b := geom.Bounds(l[:])
	size := math.Max(b.W(), b.H())
	var ch [3][]int
	for _, c := range []geom.Pt{l[1].Add(l[41]).Scale(0.5), l[15].Add(l[46]).Scale(0.5)} {
		r := 0.05 * size
		for y := int(c.Y - r); y <= int(c.Y+r); y++ {
			for x := int(c.X - r); x <= int(c.X+r); x++ {
				if math.Hypot(float64(x)-c.X, float64(y)-c.Y) <= r {
					p, q, s := img.At(x, y)
					ch[0], ch[1], ch[2] = append(ch[0], int(p)), append(ch[1], int(q)), append(ch[2], int(s))
				}
			}
		}
	}
	med := func(v []int) uint8 {
		w := append([]int(nil), v...)
		for i := 1; i < len(w); i++ {
			for j := i; j > 0 && w[j] < w[j-1]; j-- {
				w[j], w[j-1] = w[j-1], w[j]
			}
		}
		return uint8(w[len(w)/2])
	}
	return raster.RGB{R: med(ch[0]), G: med(ch[1]), B: med(ch[2])}
}

// thinHue is one of the family's hues, from the target's own skin colour.
type thinHue struct {
	name     string
	skinLike bool
	of       func(skin raster.RGB) raster.RGB
}

var thinHues = []thinHue{
	{"own skin", true, func(s raster.RGB) raster.RGB { return s }},
	{"lighter skin", true, func(s raster.RGB) raster.RGB { return shade(s, 30) }},
	{"darker skin", true, func(s raster.RGB) raster.RGB {
		return raster.RGB{R: clampU8(0.7 * float64(s.R)), G: clampU8(0.7 * float64(s.G)), B: clampU8(0.7 * float64(s.B))}
	}},
	{"light grey", true, func(raster.RGB) raster.RGB { return raster.RGB{R: 200, G: 200, B: 200} }},
	{"green", false, func(raster.RGB) raster.RGB { return raster.RGB{R: 60, G: 140, B: 70} }},
	{"purple", false, func(raster.RGB) raster.RGB { return raster.RGB{R: 120, G: 60, B: 140} }},
	{"navy", false, func(raster.RGB) raster.RGB { return raster.RGB{R: 30, G: 40, B: 90} }},
}

// Pens, straws and pencils that run across the face's outline stay in front, whatever their
// hue (the target's own skin colour darker or lighter, light grey, green, navy) and texture
// (flat, shaded along their length, cut from photographs of brick and coffee): a line that
// crosses the outline's band across it is no line of the face's own, which end inside it or
// follow its outline. Before the outline's band took its own direction, a band crossing the
// side of the face there (rather than the jaw's chord) was cut off at the outline, and the swap
// kept little of each case here. Each must keep its floor below (the pencil into the
// astronaut's is the lowest: more of it is kept only if the bands found are kept past
// dropSmall).
func TestApplyKeepsRodsAcrossTheOutline(t *testing.T) {
	t.Parallel()
	ways := photoWays(t)
	tex := thinTextures(t)
	for _, c := range []struct {
		toAstronaut     bool
		shape, tex, hue string
		kept            float64
	}{
		{false, "pen on the cheek", "flat", "darker skin", 0.75},
		{false, "pen on the cheek", "gradient", "light grey", 0.75},
		{false, "pen on the cheek", "brick", "navy", 0.7},
		{false, "straw", "coffee", "green", 0.7},
		{false, "straw", "gradient", "darker skin", 0.65},
		{true, "straw", "flat", "light grey", 0.7},
		{true, "pencil across", "flat", "lighter skin", 0.6},
		{true, "pen on the cheek", "gradient", "darker skin", 0.65},
	} {
		w := ways[c.toAstronaut]
		oc := occCase{name: c.shape + "/" + c.tex + "/" + c.hue}
		for _, sh := range thinShapes {
			if sh.name == c.shape {
				oc.shape = sh
			}
		}
		for _, tx := range tex {
			if tx.name == c.tex {
				oc.tex = tx
			}
		}
		for _, h := range thinHues {
			if h.name == c.hue {
				oc.hue = h.of(skinColour(w.tgt, &w.lm))
			}
		}
		if oc.shape.inside == nil || oc.tex.colour == nil || oc.hue == (raster.RGB{}) {
			t.Fatalf("no case %s", oc.name)
		}
		r, _ := occlusionRun(t, w.src, w.tgt, w.lm, w.box, oc, w.bare)
		t.Logf("into astronaut %v, %s: %.1f%% kept, the rest of the face %.1f%% swapped", c.toAstronaut, oc.name, 100*r.kept, 100*r.swapped)
		if r.kept < c.kept || r.swapped < 0.85 {
			t.Errorf("into astronaut %v, %s: %.1f%% of the rod kept (want ≥ %.0f%%), the rest of the face %.1f%% swapped (want ≥ 85%% of the bare face's)",
				c.toAstronaut, oc.name, 100*r.kept, 100*c.kept, 100*r.swapped)
		}
	}
}
