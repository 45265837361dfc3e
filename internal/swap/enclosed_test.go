package swap

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Small covers over the nose's bridge and between the eyes, each closed all round by its own
// sharp outline and a few percent of the face: a tape turned across the bridge, a round
// sticker on it and a square one between the brows, in hues that a pale face's colour model
// does not surely tell from its skin (a grey, paler than the skin and darker, as its
// shadows; a red-orange, more of the skin's own colour), flat and shaded by a weave. Each is
// kept whole instead of being taken, for its size, for a patch of skin.
func TestApplyKeepsSmallEnclosedCovers(t *testing.T) {
	ways := hoWays(t)
	flat := occTexture{"flat", func(c raster.RGB, _, _ int, _ *rand.Rand) raster.RGB { return c }}
	weave := occTexture{"weave", func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
		k := 1 + 0.12*math.Sin(float64(x)*0.9)*math.Sin(float64(y)*0.9)
		return raster.RGB{R: clampU8(k * float64(c.R)), G: clampU8(k * float64(c.G)), B: clampU8(k * float64(c.B))}
	}}
	tape := occShape{"tape across the bridge", func(l *face.Landmarks68, s, x, y float64) bool {
		return tsInRoundRect(x, y, l[27].Scale(0.3).Add(l[28].Scale(0.7)), 20, 0.14*s, 0.055*s, 0.01*s)
	}}
	sticker := occShape{"round sticker on the bridge", func(l *face.Landmarks68, s, x, y float64) bool {
		c := l[28]
		return math.Hypot(x-c.X, y-c.Y) <= 0.085*s
	}}
	square := occShape{"square between the brows", func(l *face.Landmarks68, s, x, y float64) bool {
		c := l[21].Add(l[22]).Scale(0.5).Scale(0.6).Add(l[27].Scale(0.4))
		return tsInRoundRect(x, y, c, 45, 0.07*s, 0.07*s, 0.01*s)
	}}
	grey, red := raster.RGB{R: 112, G: 110, B: 114}, raster.RGB{R: 220, G: 86, B: 44}
	cases := []struct {
		way   hoWay
		shape occShape
		tex   occTexture
		hue   raster.RGB
	}{
		{ways[1], tape, weave, grey}, {ways[1], sticker, flat, red}, {ways[1], square, weave, grey},
		{ways[0], tape, flat, grey}, {ways[0], sticker, flat, red},
	}
	for _, c := range cases {
		src, err := NewSource(c.way.srcImg, &c.way.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		bare := bareSwapped(t, src, c.way.tgt, c.way.lm)
		name := c.shape.name + ", " + c.tex.name
		r, after, _ := tsRun(t, src, c.way.tgt, c.way.lm, c.way.box, occCase{shape: c.shape, tex: c.tex, hue: c.hue, name: name}, bare)
		saveForEyes(t, after, "enclosed-"+c.way.name[len(c.way.name)-5:]+"-"+c.shape.name+".png")
		t.Logf("%s, %s %v: %.1f%% kept, the rest of the face %.1f%% swapped", c.way.name, name, c.hue, 100*r.kept, 100*r.swapped)
		if r.kept < 0.8 {
			t.Errorf("%s, %s %v: %.1f%% kept (want ≥ 80%%)", c.way.name, name, c.hue, 100*r.kept)
		}
		if r.swapped < 0.9 {
			t.Errorf("%s, %s %v: the rest of the face %.1f%% swapped (want ≥ 90%% of the bare face's)", c.way.name, name, c.hue, 100*r.swapped)
		}
	}
}
