package swap

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Covers of the skin's own hue across the mouth: one to four fingers of several widths and
// angles up from a hand below the chin, a thumb slanted 30°, each of the skin's
// colour, 15 levels lighter or darker, flat, lit on one side and shaded on the other, or
// with a photo's texture. The colour tests cannot tell them from the skin, and over the lips
// they do not look; the breaks they make in the lips are looked for. Each way must keep the
// covers on average (the floors below), and every case leave most of the rest of the face
// swapped.

// lipFinger is a band across the mouth: from the mouth's centre moved by off (shares of the
// face size along the mouth), turned by deg from straight up, half-width hw, from up above
// the lips to down below them (shares of the face size).
type lipFinger struct{ off, deg, hw, up, down float64 }

// lipFingerSets are the covers, each a set of bands.
var lipFingerSets = []struct {
	name string
	fs   []lipFinger
}{
	{"one finger", []lipFinger{{0.02, 0, 0.03, 0.1, 0.45}}},
	{"one slanted finger", []lipFinger{{-0.05, 20, 0.035, 0.1, 0.45}}},
	{"two fingers", []lipFinger{{-0.06, -8, 0.028, 0.09, 0.45}, {0.03, -4, 0.03, 0.11, 0.45}}},
	{"three thin fingers", []lipFinger{{-0.1, -12, 0.022, 0.08, 0.45}, {-0.02, -6, 0.024, 0.1, 0.45}, {0.06, 0, 0.022, 0.09, 0.45}}},
	{"four fingers", []lipFinger{{-0.13, 10, 0.03, 0.06, 0.45}, {-0.05, 6, 0.032, 0.09, 0.45}, {0.03, 2, 0.032, 0.1, 0.45}, {0.11, -2, 0.03, 0.08, 0.45}}},
	{"a thumb", []lipFinger{{0.08, -30, 0.045, 0.08, 0.45}}},
}

// lipFingerAt is the distance across the nearest band of fs on a face with landmarks l and
// size s from (x, y), signed (negative on its left), in shares of its half-width; ok is
// false off every band.
func lipFingerAt(l *face.Landmarks68, s float64, fs []lipFinger, x, y float64) (across float64, ok bool) {
	c := geom.Mean(l[48:60])
	a := l[54].Sub(l[48])
	a = a.Scale(1 / math.Hypot(a.X, a.Y))
	n := geom.Pt{X: -a.Y, Y: a.X}
	for _, f := range fs {
		sn, cs := math.Sincos(f.deg * math.Pi / 180)
		d, e := n.Scale(cs).Add(a.Scale(sn)), a.Scale(cs).Sub(n.Scale(sn))
		p := c.Add(a.Scale(f.off * s))
		q := geom.Pt{X: x, Y: y}.Sub(p)
		along, side := q.X*d.X+q.Y*d.Y, q.X*e.X+q.Y*e.Y
		if along >= -f.up*s && along <= f.down*s && math.Abs(side) <= f.hw*s {
			return side / (f.hw * s), true
		}
	}
	return 0, false
}

// lipFingerCases are every set in each of the skin's hues, with two of three textures, on a face with
// landmarks lm and size size.
func lipFingerCases(t *testing.T, skin raster.RGB, lm *face.Landmarks68, size float64) []occCase {
	coffee := loadPhotoTexture(t, "coffee.png", 0.5)
	var out []occCase
	for si, set := range lipFingerSets {
		fs := set.fs
		shape := occShape{set.name, func(l *face.Landmarks68, s, x, y float64) bool {
			_, ok := lipFingerAt(l, s, fs, x, y)
			return ok
		}}
		textures := []occTexture{
			occTextures[0],
			{"lit and shaded", func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB {
				// Lit on one side, its far side in shadow: up to 12 levels lighter, 25 darker.
				u, _ := lipFingerAt(lm, size, fs, float64(x), float64(y))
				return shade(c, 12-37*(u+1)*(u+1)/4)
			}},
			{"coffee", func(c raster.RGB, x, y int, _ *rand.Rand) raster.RGB { return coffee.tint(c, x+5, y+23) }},
		}
		for hi, h := range []struct {
			name string
			d    float64
		}{{"own skin", 0}, {"own+15", 15}, {"own-15", -15}} {
			// Two of the three textures, turning with the set and the hue.
			for k := range 2 {
				tx := textures[(si+hi+k)%len(textures)]
				out = append(out, occCase{shape: shape, tex: tx, hue: shade(skin, h.d), name: fmt.Sprintf("%s/%s/%s", set.name, tx.name, h.name)})
			}
		}
	}
	return out
}

func TestApplyKeepsSkinHuedFingersAcrossTheLips(t *testing.T) {
	t.Parallel()
	floors := map[bool]float64{false: 0.75, true: 0.65}
	ways := photoWays(t)
	for _, toAstro := range []bool{false, true} {
		w := ways[toAstro]
		b := geom.Bounds(w.lm[:])
		size := math.Max(b.W(), b.H())
		var kept, n float64
		for _, c := range lipFingerCases(t, hoSkinOf(w.tgt, &w.lm), &w.lm, size) {
			r, _ := occlusionRun(t, w.src, w.tgt, w.lm, w.box, c, w.bare)
			t.Logf("into astronaut %v, %s: %.1f%% kept, the rest of the face %.1f%% swapped", toAstro, c.name, 100*r.kept, 100*r.swapped)
			kept, n = kept+r.kept, n+1
			if r.swapped < 0.75 {
				t.Errorf("into astronaut %v, %s: the rest of the face %.1f%% swapped (want ≥ 75%% of the bare face's)", toAstro, c.name, 100*r.swapped)
			}
		}
		t.Logf("into astronaut %v: %.1f%% kept (mean)", toAstro, 100*kept/n)
		if got := kept / n; got < floors[toAstro] {
			t.Errorf("into astronaut %v: skin-hued fingers across the lips kept %.1f%% (mean), want ≥ %.0f%%", toAstro, 100*got, 100*floors[toAstro])
		}
	}
}

// The lips of bare faces (both photos, darker, brighter, mirrored, grainy, smaller) are
// nowhere broken: their own steps hold all along the mouth.
func TestLipBreaksFindNoneOnBareFaces(t *testing.T) {
	p := photos(t)
	s := NewSwapper(nil, DefaultOptions())
	for _, toAstro := range []bool{false, true} {
		tgt, box := p.dst, geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}
		if toAstro {
			tgt, box = p.src, geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}
		}
		for _, v := range bareVariants(t, tgt, box) {
			b := geom.Bounds(v.lm[:])
			s.lipBreaks(v.img, &v.lm, math.Max(b.W(), b.H()), func(cols [2]int) {
				t.Errorf("into astronaut %v, %s bare face: the lips are found broken at places %d to %d of %d", toAstro, v.name, cols[0], cols[1]-1, fingerCols)
			})
		}
	}
}
