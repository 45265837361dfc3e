package pipeline

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// withMask is FaceFusion's temp_vision_mask at the end of an image: the processors' mask under
// the target's own alpha by minimum, and no alpha at all where every pixel is opaque
// (conditional_merge_vision_mask).
func TestWithMask(t *testing.T) {
	a := func(p ...uint8) *raster.Alpha { return &raster.Alpha{W: len(p), H: 1, Pix: p} }
	if withMask(nil, nil) != nil || withMask(nil, a(255, 255)) != nil {
		t.Error("an opaque mask gave an alpha")
	}
	target := a(255, 10, 200)
	if withMask(target, nil) != target {
		t.Error("without a mask the target's alpha changed")
	}
	got := withMask(target, a(100, 255, 250))
	if got == nil || string(got.Pix) != string([]uint8{100, 10, 200}) {
		t.Errorf("minimum: %v", got)
	}
	if string(target.Pix) != string([]uint8{255, 10, 200}) {
		t.Error("the target's alpha was changed in place")
	}
}
