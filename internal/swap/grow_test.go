package swap

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// A cover found beside a feature continues into it: a microphone's head at the mouth's corner,
// of skin's own hues and red, on the astronaut's face (the part over the lips and the
// unfound rest of its head were swapped over, 11–26 % kept; now 94–99 %) and a brown one on
// Grace Hopper's (9 %; now 92 %); a bar over her cheeks crossing her nostrils (69–72 % of the
// grainy or striped ones, the part over the nose swapped; now 91–94 %). The floors sit below;
// the rest of the face stays swapped.
func TestApplyGrowsCoversIntoFeatures(t *testing.T) {
	p := photos(t)
	cases := []struct {
		toAstronaut bool
		name        string
	}{
		{true, "microphone/flat/skin"}, {true, "microphone/flat/tan"}, {true, "microphone/shaded/tan"},
		{true, "microphone/flat/red"}, {false, "microphone/flat/brown"},
		{false, "bar over the cheeks/noisy/blue"}, {false, "bar over the cheeks/striped/red"},
	}
	for _, toAstro := range []bool{false, true} {
		srcImg, srcLm, tgt, lm, box := p.src, p.srcLm, p.dst, p.dstLm, geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}
		if toAstro {
			srcImg, srcLm, tgt, lm, box = p.dst, p.dstLm, p.src, p.srcLm, geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}
		}
		src, err := NewSource(srcImg, &srcLm)
		if err != nil {
			t.Fatal(err)
		}
		bare := bareSwapped(t, src, tgt, lm)
		for _, tc := range cases {
			if tc.toAstronaut != toAstro {
				continue
			}
			for _, c := range occCases() {
				if c.name != tc.name {
					continue
				}
				r, _ := occlusionRun(t, src, tgt, lm, box, c, bare)
				t.Logf("into astronaut %v, %s: %.1f%% kept, the rest of the face %.1f%% swapped", toAstro, tc.name, 100*r.kept, 100*r.swapped)
				if r.kept < 0.85 {
					t.Errorf("into astronaut %v, %s: %.1f%% of the cover kept (want ≥ 85%%)", toAstro, tc.name, 100*r.kept)
				}
				if r.swapped < 0.85 {
					t.Errorf("into astronaut %v, %s: only %.1f%% of the rest of the face swapped (want ≥ 85%% of the bare face's)", toAstro, tc.name, 100*r.swapped)
				}
			}
		}
	}
}
