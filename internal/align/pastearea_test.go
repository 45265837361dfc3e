package align

import (
	"image"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceFusion maps its integer crop corners back with cv2.transform, which returns them
// rounded to integers; flooring the exact corners instead widened the area by a column
// whenever a corner's fraction was under a half, and the faint mask there changed pixels
// FaceFusion leaves alone.
func TestPasteAreaRoundsCorners(t *testing.T) {
	for _, c := range []struct {
		tx, ty float64 // the crop's corner (0, 0) in the frame
		want   image.Rectangle
	}{
		{35.73, 10.2, image.Rect(36, 10, 164, 138)},
		{37.29, -59.7, image.Rect(37, 0, 165, 68)},
		{35.5, 10.5, image.Rect(36, 10, 164, 138)}, // half to even
		{36.5, 11.5, image.Rect(36, 12, 164, 140)},
		{450.6, 400.4, image.Rect(451, 400, 512, 512)},
	} {
		m := geom.Affine{A: 1, E: 1, C: -c.tx, F: -c.ty}
		if got := PasteArea(512, 512, 128, 128, m); got != c.want {
			t.Errorf("corner at (%v, %v): PasteArea = %v, want %v", c.tx, c.ty, got, c.want)
		}
	}
}

// A pixel outside the rounded area keeps its value even where the mask would reach it.
func TestPasteBackLeavesColumnOutsideArea(t *testing.T) {
	frame := raster.New(64, 64)
	crop := raster.New(16, 16)
	for i := range crop.Pix {
		crop.Pix[i] = 255
	}
	mask := make([]float32, 16*16)
	for i := range mask {
		mask[i] = 1
	}
	m := geom.Affine{A: 1, E: 1, C: -9.7, F: -9.7} // corner (9.7, 9.7): area from 10; pixel 9 samples the mask at −0.7
	PasteBack(frame, crop, mask, m)
	if v := frame.Pix[20*frame.Stride+3*9]; v != 0 {
		t.Errorf("pixel (9, 20), outside the area [10, 26), became %d", v)
	}
	if v := frame.Pix[20*frame.Stride+3*10]; v == 0 {
		t.Error("pixel (10, 20), inside the area, was not pasted")
	}
}
