package swap

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A cover shaded over its face is found in pieces and completed over the rest of it: an oval
// lid before Grace Hopper's lower cheek, shaded as brick.png's luminance. Olive or tan, it is
// found where it lies far from the skin; of her own skin's hue or lighter, where it is
// smoother than her grainy skin. Without the completion only those pieces were kept; each
// hue must keep most of the lid (the floors below), and the rest of the face stays swapped.
func TestApplyCompletesShadedCovers(t *testing.T) {
	p := photos(t)
	box := geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}
	src, err := NewSource(p.src, &p.srcLm)
	if err != nil {
		t.Fatal(err)
	}
	bare := bareSwapped(t, src, p.dst, p.dstLm)
	lid := occShape{"shaded lid", func(l *face.Landmarks68, s, x, y float64) bool {
		return tsInRotEllipse(x, y, hoPt(l[4], s, 0.17, -0.04), 25, 0.16*s, 0.09*s)
	}}
	brick, own := fsPhotoShading(t, "brick", 53, 29), hoSkinOf(p.dst, &p.dstLm)
	for _, hue := range []struct {
		name string
		c    raster.RGB
		kept float64
	}{
		{"olive", raster.RGB{R: 168, G: 142, B: 98}, 0.82}, {"tan", raster.RGB{R: 200, G: 150, B: 110}, 0.82},
		{"own skin", own, 0.65}, {"own, lighter", shade(own, 25), 0.65},
	} {
		r, _, _ := tsRun(t, src, p.dst, p.dstLm, box, occCase{shape: lid, tex: brick, hue: hue.c, name: hue.name}, bare)
		t.Logf("%s lid: %.1f%% kept, the rest of the face %.1f%% swapped", hue.name, 100*r.kept, 100*r.swapped)
		if r.kept < hue.kept || r.swapped < 0.97 {
			t.Errorf("%s lid: %.1f%% kept (want ≥ %.0f%%), the rest of the face %.1f%% swapped (want ≥ 97%%)", hue.name, 100*r.kept, 100*hue.kept, 100*r.swapped)
		}
	}
}
