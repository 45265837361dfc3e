package swap

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Covers held in and at the mouth in a colour no mouth takes (beyond grey from the skin: a
// cobalt blue, a leaf green) are kept over the lips, whatever their shape: a whistle across
// the lips, a mouthguard between them, a kazoo from one corner out past the cheek and a spoon
// held sideways, its bowl over the lips, flat and striped, both ways between the sample
// photos. Lying within the lips' outline, or thin where they leave it, most of them were
// swapped over before the mouth was scored for such colours. The skin's own hue is logged,
// not judged; a striped cobalt cover on grace_hopper leaves the rest of her face a little less
// swapped, by the other rules.
func TestForeignCoversAtTheMouthAreKept(t *testing.T) {
	fullTier(t, "swaps 48 covered photos")
	mid := func(l *face.Landmarks68) geom.Pt { return l[62].Add(l[66]).Scale(0.5) }
	shapes := []occShape{
		{"whistle", func(l *face.Landmarks68, s, x, y float64) bool {
			return tsInRoundRect(x, y, hoPt(mid(l), s, -0.03, 0), 6, 0.11*s, 0.05*s, 0.02*s)
		}},
		{"mouthguard", func(l *face.Landmarks68, s, x, y float64) bool {
			return tsInRoundRect(x, y, mid(l), 0, 0.14*s, 0.045*s, 0.02*s)
		}},
		{"kazoo", func(l *face.Landmarks68, s, x, y float64) bool {
			return taperedStroke(x, y, hoPt(mid(l), s, 0.08, 0), hoPt(mid(l), s, -0.3, 0.04), 0.04*s, 0.025*s)
		}},
		{"spoon held sideways", func(l *face.Landmarks68, s, x, y float64) bool {
			m := mid(l)
			return tsInRotEllipse(x, y, hoPt(m, s, 0.02, 0), 0, 0.1*s, 0.055*s) ||
				taperedStroke(x, y, hoPt(m, s, 0.1, 0), hoPt(m, s, 0.5, 0.06), 0.014*s, 0.02*s)
		}},
	}
	textures := []occTexture{
		{"flat", func(c raster.RGB, _, _ int, _ *rand.Rand) raster.RGB { return c }},
		{"striped", func(c raster.RGB, _, y int, _ *rand.Rand) raster.RGB {
			if y%5 < 2 {
				return svScaled(c, 0.8)
			}
			return c
		}},
	}
	for _, w := range hoWays(t) {
		src, err := NewSource(w.srcImg, &w.srcLm)
		if err != nil {
			t.Fatal(err)
		}
		bare := bareSwapped(t, src, w.tgt, w.lm)
		hues := []hoHue{{"cobalt", raster.RGB{R: 40, G: 80, B: 190}, false}, {"leaf green", raster.RGB{R: 50, G: 140, B: 60}, false},
			{"own skin", w.ownSkin, true}}
		for _, sh := range shapes {
			for _, hu := range hues {
				for _, tx := range textures {
					name := fmt.Sprintf("%s, %s/%s/%s", w.name, sh.name, tx.name, hu.name)
					r, _, _ := tsRun(t, src, w.tgt, w.lm, w.box, occCase{shape: sh, tex: tx, hue: hu.c, name: name}, bare)
					t.Logf("%s: %.1f%% kept, %.1f%% swapped", name, 100*r.kept, 100*r.swapped)
					if !hu.skin && r.kept < 0.9 {
						t.Errorf("%s: %.1f%% of the cover kept, want 90%%", name, 100*r.kept)
					}
					if r.swapped < 0.8 {
						t.Errorf("%s: the rest of the face %.1f%% swapped, want 80%%", name, 100*r.swapped)
					}
				}
			}
		}
	}
}

// Bare mouths have no colour beyond grey: on both sample photos, each farther off, turned,
// dimmer and noisier, each under a cold, a green and a cyan cast (the last leaving even the
// skin greener than grey), and each with lips of the shades lips and lipsticks take (plum,
// berry, mauve, violet, a cold pink, the bluish grey of cold lips, dark brown), the mouth's
// zone gives no pixel past the tolerance.
func TestBareMouthsHaveNoForeignColour(t *testing.T) {
	fullTier(t, "finds the landmarks of eight made-over photos")
	ways := hoWays(t)
	var faces []hoWay
	for _, w := range ways {
		v := sv9Farther(w, w.name+", farther")
		findAgain(t, &v)
		faces = append(faces, w, v)
		for _, c := range []struct {
			name    string
			r, g, b float64
		}{{"cold", 0.9, 1, 1.12}, {"green", 0.94, 1.06, 0.94}, {"cyan", 0.7, 1.04, 1.1}} {
			cast := w
			cast.name = w.name + ", " + c.name
			cast.tgt = w.tgt.Clone()
			for i := 0; i+2 < len(cast.tgt.Pix); i += 3 {
				cast.tgt.Pix[i] = clampU8(c.r * float64(cast.tgt.Pix[i]))
				cast.tgt.Pix[i+1] = clampU8(c.g * float64(cast.tgt.Pix[i+1]))
				cast.tgt.Pix[i+2] = clampU8(c.b * float64(cast.tgt.Pix[i+2]))
			}
			findAgain(t, &cast)
			faces = append(faces, cast)
		}
		for _, c := range []struct {
			name string
			hue  raster.RGB
		}{{"plum", raster.RGB{R: 90, G: 40, B: 60}}, {"berry", raster.RGB{R: 120, G: 20, B: 70}},
			{"mauve", raster.RGB{R: 150, G: 90, B: 120}}, {"violet", raster.RGB{R: 130, G: 80, B: 160}},
			{"cold pink", raster.RGB{R: 220, G: 130, B: 170}}, {"cold lips", raster.RGB{R: 120, G: 100, B: 130}},
			{"dark brown", raster.RGB{R: 80, G: 50, B: 50}}} {
			lips := w
			lips.name, lips.tgt = w.name+", "+c.name+" lips", paintLipstick(w.tgt, &w.lm, c.hue)
			faces = append(faces, lips)
		}
	}
	p := photos(t)
	for _, f := range faces {
		s := probeSwapper(t, p.src, &p.srcLm)
		size, _, fr, ok := s.place(f.tgt, &f.lm)
		if !ok {
			t.Fatalf("%s: the face was not placed", f.name)
		}
		s.features(&f.lm, fr)
		s.occ.Reset(fr)
		s.sampleSkin(f.tgt, &f.lm, size, fr)
		m := s.fitSkin()
		s.stack = s.stack[:0]
		s.markForeignAtMouth(f.tgt, &f.lm, &s.mask, fr, m)
		marked := 0
		for _, v := range s.occ.Pix {
			if v > 0 {
				marked++
			}
		}
		if marked > 0 {
			t.Errorf("%s: %d pixels of the bare mouth's zone scored as a cover's colour", f.name, marked)
		}
	}
}
