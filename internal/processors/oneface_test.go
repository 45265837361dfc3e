package processors_test

import (
	"errors"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	"github.com/facefusion-hpc/facefusion/internal/processors/processortest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceByFace: each face is cut from the frame as the faces before it left it (two overlapping
// faces of one frame, as FaceFusion's loop), pasted at its own map, and counted; an edit's
// error stops the batch uncounted.
func TestFaceByFace(t *testing.T) {
	frame := raster.New(64, 64)
	b := &processors.Batch{Frames: []*raster.Image{frame}, Faces: []processors.Face{
		{Frame: frame, Face: &face.Face{}}, {Frame: frame, Face: &face.Face{}}}}
	crop := raster.New(16, 16)
	mask := make([]float32, 16*16)
	for i := range mask {
		mask[i] = 1
	}
	// face 0's crop at (10, 10), face 1's at (18, 18): they share [18, 26)²
	shift := func(f *processors.Face) geom.Affine {
		d := 10.0
		if f == &b.Faces[1] {
			d = 18
		}
		return geom.Affine{A: 1, C: -d, E: 1, F: -d}
	}
	var seen [2]uint8
	edit := func(f *processors.Face, m geom.Affine) (*raster.Image, []float32, error) {
		k := 0
		if f == &b.Faces[1] {
			k = 1
		}
		seen[k], _, _ = f.Frame.At(20, 20)
		v := uint8(100 + 100*k)
		for y := range 16 {
			for x := range 16 {
				crop.Set(x, y, v, v, v)
			}
		}
		return crop, mask, nil
	}
	st := processortest.Count{}
	if err := processors.FaceByFace(b, st, processors.StageFaceEditor, shift, edit); err != nil {
		t.Fatal(err)
	}
	if seen != [2]uint8{0, 100} {
		t.Errorf("the faces saw %v at (20, 20), want [0 100]: the second is cut from the first's result", seen)
	}
	for _, c := range []struct {
		x, y int
		want uint8
	}{{12, 12, 100}, {20, 20, 200}, {30, 30, 200}, {5, 5, 0}, {40, 40, 0}} {
		if r, _, _ := frame.At(c.x, c.y); r != c.want {
			t.Errorf("(%d, %d) = %d, want %d", c.x, c.y, r, c.want)
		}
	}
	if st[processors.StageFaceEditor] != 2 {
		t.Errorf("counted %v, want 2 faces", st)
	}
	bad := errors.New("model failed")
	st = processortest.Count{}
	err := processors.FaceByFace(b, st, processors.StageFaceEditor, shift, func(*processors.Face, geom.Affine) (*raster.Image, []float32, error) {
		return nil, nil, bad
	})
	if !errors.Is(err, bad) || len(st) != 0 {
		t.Errorf("error %v, counted %v: want the edit's error, nothing counted", err, st)
	}
}
