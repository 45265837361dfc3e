// Package faceeditor is FaceFusion's face_editor processor: LivePortrait moves each selected
// face's eyebrows, gaze, eyes, lips, mouth and head pose by the fourteen sliders.
package faceeditor

import (
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

func init() { processors.Register(job.ProcessorFaceEditor, Open) }

// editor is face_editor with its model and sliders.
type editor struct {
	fe *adapters.FaceEditor
	st processors.Stats
}

// sliders are the job's face_editor sliders as the chain takes them.
func sliders(c *job.Config) facemodel.FaceEditorSliders {
	return facemodel.FaceEditorSliders{
		EyebrowDirection: c.FaceEditorEyebrowDirection, EyeGazeHorizontal: c.FaceEditorEyeGazeHorizontal,
		EyeGazeVertical: c.FaceEditorEyeGazeVertical, EyeOpenRatio: c.FaceEditorEyeOpenRatio,
		LipOpenRatio: c.FaceEditorLipOpenRatio, MouthGrim: c.FaceEditorMouthGrim, MouthPout: c.FaceEditorMouthPout,
		MouthPurse: c.FaceEditorMouthPurse, MouthSmile: c.FaceEditorMouthSmile,
		MouthPositionHorizontal: c.FaceEditorMouthPositionHorizontal, MouthPositionVertical: c.FaceEditorMouthPositionVertical,
		HeadPitch: c.FaceEditorHeadPitch, HeadYaw: c.FaceEditorHeadYaw, HeadRoll: c.FaceEditorHeadRoll,
	}
}

// Open opens face_editor_model with the job's sliders. FaceFusion's mask is the box alone
// (face_mask_blur, no padding), whatever face_mask_types says.
func Open(c *processors.Context) (processors.Processor, error) {
	fe, err := adapters.NewFaceEditor(c.Config.FaceEditorModel, c.Session, sliders(&c.Config), c.Mask.Blur)
	if err != nil {
		return nil, err
	}
	return &editor{fe: fe, st: c.Stats}, nil
}

func (p *editor) ChangesFaces() bool { return true }

func (p *editor) Close() error { return p.fe.Close() }

// ProcessFaces edits every face of b.
func (p *editor) ProcessFaces(b *processors.Batch) error {
	at := func(f *processors.Face) geom.Affine { return p.fe.Align(f.Face.Five) }
	return processors.FaceByFace(b, p.st, processors.StageFaceEditor, at, func(f *processors.Face, m geom.Affine) (*raster.Image, []float32, error) {
		return p.fe.Edit(f.Frame, (*[68]geom.Pt)(&f.Face.Landmarks), m)
	})
}
