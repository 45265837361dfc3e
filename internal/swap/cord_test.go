package swap

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Thin cords across a cheek (a hoodie's drawstring, a cable, a lanyard), unlike the surveys'
// covers: from past the outline towards the mouth or the nose, straight and gently bowed,
// 1/30 to 1/15 of the face wide, of saturated hues near the skin's (red-orange, orange,
// pink), flat or shaded by camera.png, softly edged (tsCoverage), the landmarks found again
// on the covered photo. Pixel by pixel their colour is within the skin model's slack for a
// dark channel (a saturated colour has one), or further along the skin's own axis, where
// nothing counts; and a cord over a skin sample disc turned the skin's axis towards its own
// colour. Without the hue bands and the axis found again, some red-orange and orange ones
// into Grace Hopper were mostly swapped over; the cords must keep at least 0.9 on average,
// and most of the rest of the face stay swapped. Still lost: the thinnest cord, orange and
// flat, across Grace Hopper's lower cheek towards the mouth's corner. Cords of the skin's
// own hue are not among them: no colour tells them.

// cordShapes are the cords: shares of the face size from landmarks (see strandShape, rodShape).
var cordShapes = []occShape{
	strandShape("bowed cord to the mouth", 0.017, [3]float64{3, -0.12, -0.02}, [3]float64{4, 0.12, -0.06}, [3]float64{48, -0.05, -0.03}),
	rodShape("cord to the nose", 0.025, [3]float64{14, 0.12, 0.02}, [3]float64{35, 0.06, 0.01}),
	strandShape("bowed cord to the lips", 0.02, [3]float64{13, 0.12, 0.05}, [3]float64{12, -0.15, -0.08}, [3]float64{54, 0.06, -0.06}),
	rodShape("steep cord", 0.033, [3]float64{1, -0.1, -0.05}, [3]float64{49, -0.07, -0.04}),
}

var cordHues = []struct {
	name string
	c    raster.RGB
}{
	{"red-orange", raster.RGB{R: 214, G: 80, B: 40}},
	{"orange", raster.RGB{R: 230, G: 140, B: 50}},
	{"pink", raster.RGB{R: 225, G: 150, B: 160}},
}

func TestApplyKeepsSaturatedCordsAcrossTheCheek(t *testing.T) {
	t.Parallel()
	ways := photoWays(t)
	var sum, n float64
	for _, toAstro := range []bool{false, true} {
		w := ways[toAstro]
		tex := tsTextures(t, &w.lm)
		for _, sh := range cordShapes {
			for _, h := range cordHues {
				for _, tx := range []occTexture{tex[0], tex[3]} {
					c := occCase{shape: sh, tex: tx, hue: h.c, name: sh.name + "/" + tx.name + "/" + h.name}
					r, _, px := tsRun(t, w.src, w.tgt, w.lm, w.box, c, w.bare)
					if px == 0 {
						continue // too thin on the small face to have an inside
					}
					sum, n = sum+r.kept, n+1
					t.Logf("into astronaut %v, %s: %.1f%% kept, the rest of the face %.1f%% swapped", toAstro, c.name, 100*r.kept, 100*r.swapped)
					if r.swapped < 0.85 {
						t.Errorf("into astronaut %v, %s: the rest of the face %.1f%% swapped, want ≥ 85%% of the bare face's", toAstro, c.name, 100*r.swapped)
					}
				}
			}
		}
	}
	t.Logf("mean kept %.1f%%", 100*sum/n)
	if sum/n < 0.9 {
		t.Errorf("the cords kept %.1f%% (mean), want ≥ 90%%", 100*sum/n)
	}
}

// A bare face's own redder places (cheeks, the folds beside the mouth, the shadow under the
// jaw, the lips' edge) are no bands of a cover's hue: on the sample photos, bare and darkened,
// lightened, JPEG'd and warmly lit, hueBands keeps nothing.
func TestHueBandsFindNothingOnBareFaces(t *testing.T) {
	eachBareFaceSwapped(t, func(f bareFaceCase, sw *Swapper) {
		if found := marked(&sw.hueBand); found > 0 {
			t.Errorf("%s: a band of %d grid px of a cover's hue found", f.name, found)
		}
	})
}
