package swap

import (
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Each test here holds a cover that one piece of the colour rules alone keeps: without that
// piece the cover is swapped over.

// fpCase is a cover painted flat into one of hoWays' photos (way) and how much of it must be
// kept.
type fpCase struct {
	way   int
	shape occShape
	hue   raster.RGB
	name  string
}

func fpRun(t *testing.T, cases []fpCase, least float64) {
	t.Helper()
	ways := hoWays(t)
	srcs := make([]*Source, len(ways))
	for i, w := range ways {
		src, err := NewSource(w.srcImg, &w.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		srcs[i] = src
	}
	flat := occTexture{"flat", func(c raster.RGB, _, _ int, _ *rand.Rand) raster.RGB { return c }}
	for _, c := range cases {
		w := ways[c.way]
		r, _, on := tsRun(t, srcs[c.way], w.tgt, w.lm, w.box, occCase{shape: c.shape, tex: flat, hue: c.hue, name: c.name}, 1)
		if on < 8 {
			t.Errorf("%s, %s: only %.0f px of the cover's interior on the face: the test's shape is misplaced", w.name, c.name, on)
			continue
		}
		if r.kept < least {
			t.Errorf("%s, %s: %.1f%% of it kept, want ≥ %.0f%%", w.name, c.name, 100*r.kept, 100*least)
		}
	}
}

// tabbedGuard is a mouthguard between the lips, a little tilted, with a tab out past the image's
// left corner of the mouth.
var tabbedGuard = occShape{"tabbed mouthguard", func(l *face.Landmarks68, s, x, y float64) bool {
	m := l[62].Add(l[66]).Scale(0.5)
	return tsInRoundRect(x, y, m, 3, 0.13*s, 0.05*s, 0.02*s) || tsInRoundRect(x, y, hoPt(m, s, -0.1, 0.01), 0, 0.04*s, 0.03*s, 0.01*s)
}}

// A blue mouthguard no greener than grey (ln(R/G) ≥ 0: the mouth's green test passes it) lies
// past grey away from the skin: that test alone keeps it.
func TestMouthKeepsABlueGuardPastGrey(t *testing.T) {
	fpRun(t, []fpCase{
		{0, tabbedGuard, raster.RGB{R: 60, G: 60, B: 230}, "royal blue tabbed mouthguard"},
		{1, tabbedGuard, raster.RGB{R: 30, G: 30, B: 110}, "navy tabbed mouthguard"},
	}, 0.85)
}

// wingStud is a bead on the image's left nostril's wing.
var wingStud = occShape{"stud on the left wing", func(l *face.Landmarks68, s, x, y float64) bool {
	return tsInRotEllipse(x, y, hoPt(l[31], s, -0.005, -0.03), 0, 0.025*s, 0.025*s)
}}

// cannulaTubes is a nasal cannula: its two prongs up into the nostrils from the bend between
// them, and the tube out to either cheek.
var cannulaTubes = occShape{"cannula with its tubes", func(l *face.Landmarks68, s, x, y float64) bool {
	a, b := hoPt(l[32], s, 0, 0.03), hoPt(l[34], s, 0, 0.03)
	return tsNearSeg(x, y, a, b, 0.014*s) || tsNearSeg(x, y, a, hoPt(l[32], s, 0, -0.01), 0.013*s) ||
		tsNearSeg(x, y, b, hoPt(l[34], s, 0, -0.01), 0.013*s) ||
		tsNearSeg(x, y, a, hoPt(l[32], s, -0.14, 0.06), 0.01*s) || tsNearSeg(x, y, b, hoPt(l[34], s, 0.14, 0.06), 0.01*s)
}}

// On a pale face's nose, a cover paler than the skin and no brighter (a grey cannula, a
// purple-grey stud) is kept by the nose's "paler" test, and one paler and much darker (a dark
// grey or charcoal stud) by its "paler and much darker" one.
func TestForeignKeepsPaleAndDarkGreyOnAPaleNose(t *testing.T) {
	fpRun(t, []fpCase{
		{0, cannulaTubes, raster.RGB{R: 120, G: 120, B: 120}, "grey cannula with its tubes"},
		{0, wingStud, raster.RGB{R: 110, G: 100, B: 140}, "purple-grey stud"},
		{0, wingStud, raster.RGB{R: 70, G: 70, B: 72}, "dark grey stud"},
		{0, wingStud, raster.RGB{R: 45, G: 45, B: 48}, "charcoal stud"},
	}, 0.85)
}

// A cover that runs on past the nose's band, small enough that dropSmall took its find out, is
// kept with the piece over the nose: a slate cannula's prong and its tube out over the cheek, a
// navy septum bead with its chain down over the lip.
func TestForeignKeepsWhatContinuesPastTheNose(t *testing.T) {
	fpRun(t, []fpCase{
		{0, occShape{"prong and tube", func(l *face.Landmarks68, s, x, y float64) bool {
			a := hoPt(l[34], s, 0, 0.03)
			return tsNearSeg(x, y, a, hoPt(l[34], s, 0, -0.01), 0.016*s) || tsNearSeg(x, y, a, hoPt(a, s, 0.16, 0.053), 0.012*s)
		}}, raster.RGB{R: 60, G: 80, B: 120}, "slate cannula prong and tube"},
		{0, occShape{"septum bead and chain", func(l *face.Landmarks68, s, x, y float64) bool {
			c := hoPt(l[33], s, 0, 0.03)
			return tsInRotEllipse(x, y, hoPt(l[33], s, 0, 0.015), 0, 0.022*s, 0.022*s) || tsNearSeg(x, y, c, hoPt(c, s, -0.04, 0.16), 0.012*s)
		}}, raster.RGB{R: 34, G: 44, B: 96}, "navy septum bead and chain"},
	}, 0.85)
}
