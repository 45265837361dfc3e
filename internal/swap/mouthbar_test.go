package swap

import (
	"fmt"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A thin bar of a colour no mouth takes across the upper lip (a prop moustache, a pen held
// under the nose) is kept on the astronaut's small face (92 px), flat and noisy: it lies
// wholly in the mouth's zone, under occMinArea, and before keepForeign looked there it was
// swapped over in every colour. At least three quarters of it is kept: the occluders'
// feathered edge reaches into a bar this thin. On grace_hopper's large face the bar lies
// between the mouth's zone and the nose's, where no rule keeps a find under occMinArea: logged,
// not judged; so are bars of a lemon yellow (near the skin's own axis on some faces) and a
// lip's crimson. Most of the rest of the face stays swapped.
func TestForeignBarsOverTheUpperLipAreKept(t *testing.T) {
	fullTier(t, "swaps 20 covered photos")
	bar := occShape{"bar over the upper lip", func(l *face.Landmarks68, s, x, y float64) bool {
		c := l[33].Add(l[51].Sub(l[33]).Scale(0.6))
		return tsInRoundRect(x, y, c, 4, 0.14*s, 0.025*s, 0.02*s)
	}}
	hues := []struct {
		name   string
		c      raster.RGB
		judged bool
	}{
		{"leaf green", raster.RGB{R: 120, G: 190, B: 60}, true}, {"slate blue", raster.RGB{R: 80, G: 110, B: 160}, true},
		{"teal", raster.RGB{R: 40, G: 130, B: 125}, true}, {"lemon", raster.RGB{R: 235, G: 215, B: 45}, false},
		{"crimson", raster.RGB{R: 160, G: 30, B: 50}, false},
	}
	for wi, w := range hoWays(t) {
		small := wi == 1
		src, err := NewSource(w.srcImg, &w.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		bare := bareSwapped(t, src, w.tgt, w.lm)
		for _, tex := range occTextures[:2] {
			for _, h := range hues {
				c := occCase{shape: bar, tex: tex, hue: h.c, name: fmt.Sprintf("%s, a %s %s bar", w.name, tex.name, h.name)}
				r, after, _ := tsRun(t, src, w.tgt, w.lm, w.box, c, bare)
				saveForEyes(t, after, fmt.Sprintf("upperlipbar-%d-%s-%s.png", wi, tex.name, h.name))
				t.Logf("%s: %.1f%% kept, the rest %.1f%% swapped", c.name, 100*r.kept, 100*r.swapped)
				if !h.judged || !small {
					continue
				}
				if r.kept < 0.75 {
					t.Errorf("%s: %.1f%% of it kept, want ≥ 75%%", c.name, 100*r.kept)
				}
				if r.swapped < 0.8 {
					t.Errorf("%s: the rest of the face %.1f%% swapped, want ≥ 80%%", c.name, 100*r.swapped)
				}
			}
		}
	}
}

// Hair and paint at the mouth are no cover of a foreign colour: each of beardKinds (stubble,
// a moustache of hair among them) and lipsticks of the cold and dark shades over both sample
// faces' lips keep nothing there as one (the mouth's zone is looked at for such covers).
func TestForeignKeepsNothingOfHairOrPaintAtTheMouth(t *testing.T) {
	fullTier(t, "finds the landmarks of 26 photos")
	probeWays(t, func(toAstro bool, s *Swapper, tgt *raster.Image, lm face.Landmarks68) {
		box := geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}
		if toAstro {
			box = geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}
		}
		var imgs []*raster.Image
		var names []string
		for _, k := range beardKinds {
			img, _ := paintBeard(tgt, &lm, k)
			imgs, names = append(imgs, img), append(names, k.name)
		}
		for _, c := range []struct {
			name string
			hue  raster.RGB
		}{{"plum", raster.RGB{R: 90, G: 40, B: 60}}, {"violet", raster.RGB{R: 130, G: 80, B: 160}},
			{"cold pink", raster.RGB{R: 220, G: 130, B: 170}}, {"cold lips", raster.RGB{R: 120, G: 100, B: 130}},
			{"dark brown", raster.RGB{R: 80, G: 50, B: 50}}, {"nude", raster.RGB{R: 190, G: 140, B: 120}},
			{"coral", raster.RGB{R: 240, G: 110, B: 80}}} {
			imgs, names = append(imgs, paintLipstick(tgt, &lm, c.hue)), append(names, c.name+" lipstick")
		}
		for i, img := range imgs {
			found := landmarksIn(t, img, box)
			takenBack(s, img, &found)
			if s.foreignKept > 0 {
				t.Errorf("into astronaut %v, %s: %d px kept as covers of a foreign colour", toAstro, names[i], s.foreignKept)
			}
		}
	})
}
