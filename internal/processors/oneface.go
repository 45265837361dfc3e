package processors

import (
	"time"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceByFace runs a processor whose model takes one face a call over b's faces in order, as
// FaceFusion's loop does: at gives a face's frame-to-crop map, edit its new crop and mask
// (valid until its next call), and each is pasted back before the next face is cut, so a
// face that overlaps an earlier one is cut from its result. The faces count in stage.
func FaceByFace(b *Batch, st Stats, stage Stage, at func(f *Face) geom.Affine,
	edit func(f *Face, m geom.Affine) (*raster.Image, []float32, error)) error {
	if len(b.Faces) == 0 {
		return nil
	}
	start := time.Now()
	for i := range b.Faces {
		f := &b.Faces[i]
		m := at(f)
		crop, mask, err := edit(f, m)
		if err != nil {
			return err
		}
		align.PasteBack(f.Frame, crop, mask, m)
	}
	st.Done(stage, start, len(b.Faces))
	return nil
}
