package adapters

import (
	"fmt"
	"strings"

	"github.com/facefusion-hpc/facefusion/infer"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceFusion's face_editor warps its crops with ffhq_512 at 512×512 about the five points
// spread by 1.5 from the nose tip (edit_face's scale_face_landmark_5).
const (
	editorTemplate = "ffhq_512"
	editorSpread   = 1.5
)

// FaceEditor is FaceFusion's face_editor on a LivePortrait chain with its retargeters and
// stitcher: the sliders move the face's expression, eyes, lips and head pose, and the
// generator redraws the crop; its mask is the box (face_mask_blur, no padding) alone.
type FaceEditor struct {
	lp         *LivePortrait
	tmpl       align.Template
	size       int
	sliders    facemodel.FaceEditorSliders
	mask       []float32
	crop, out  *raster.Image
	volume     []float32
	eyeIn      []float32
	lipIn      []float32
	retargeted []float32
}

// NewFaceEditor opens model (live_portrait) with the sliders s; blur is face_mask_blur.
func NewFaceEditor(model string, session func(string) infer.SessionConfig, s facemodel.FaceEditorSliders, blur float64) (*FaceEditor, error) {
	for _, sl := range []struct {
		name string
		v    float64
	}{{"eyebrow-direction", s.EyebrowDirection}, {"eye-gaze-horizontal", s.EyeGazeHorizontal},
		{"eye-gaze-vertical", s.EyeGazeVertical}, {"eye-open-ratio", s.EyeOpenRatio}, {"lip-open-ratio", s.LipOpenRatio},
		{"mouth-grim", s.MouthGrim}, {"mouth-pout", s.MouthPout}, {"mouth-purse", s.MouthPurse}, {"mouth-smile", s.MouthSmile},
		{"mouth-position-horizontal", s.MouthPositionHorizontal}, {"mouth-position-vertical", s.MouthPositionVertical},
		{"head-pitch", s.HeadPitch}, {"head-yaw", s.HeadYaw}, {"head-roll", s.HeadRoll}} {
		// The job's validation refuses these first; a caller that bypasses it (a test, a
		// library user) still learns which slider is wrong.
		if !(sl.v >= -1 && sl.v <= 1) {
			return nil, fmt.Errorf("--face-editor-%s %g: outside -1..1 (face_editor_%s)", sl.name, sl.v, strings.ReplaceAll(sl.name, "-", "_"))
		}
	}
	lp, err := NewLivePortrait(model, session, true)
	if err != nil {
		return nil, err
	}
	e := &FaceEditor{lp: lp, tmpl: align.Templates[editorTemplate], size: lp.CropSize(), sliders: s}
	e.mask = make([]float32, e.size*e.size)
	var ws align.MaskWorkspace
	align.BoxMask(e.mask, e.size, e.size, blur, [4]int{}, &ws)
	e.crop, e.out = raster.New(e.size, e.size), raster.New(e.size, e.size)
	e.volume = make([]float32, lp.VolumeLen())
	e.eyeIn, e.lipIn, e.retargeted = make([]float32, 66), make([]float32, 65), make([]float32, 63)
	return e, nil
}

// CropSize is the side of the editor's crops.
func (e *FaceEditor) CropSize() int { return e.size }

// Align is the frame-to-crop map of the face with five points five ('5/68').
func (e *FaceEditor) Align(five [5]geom.Pt) geom.Affine {
	var spread [5]geom.Pt
	for i, p := range five {
		spread[i] = geom.Pt{X: (p.X-five[2].X)*editorSpread + five[2].X, Y: (p.Y-five[2].Y)*editorSpread + five[2].Y}
	}
	return align.Estimate(spread, e.tmpl, e.size)
}

// Edit edits the face cut from frame at m (Align) whose 68 points are lm, and hands back its
// new crop and the box mask, valid until the next call; pasting them is the caller's.
func (e *FaceEditor) Edit(frame *raster.Image, lm *[68]geom.Pt, m geom.Affine) (*raster.Image, []float32, error) {
	if e.lp == nil {
		return nil, nil, fmt.Errorf("face editor: Edit after Close")
	}
	align.WarpCrop(e.crop, frame, m)
	motion, err := e.lp.Extract(e.crop, e.volume)
	if err != nil {
		return nil, nil, err
	}
	var pts [68][2]float64
	for i, p := range lm {
		pts[i] = [2]float64{p.X, p.Y}
	}
	rot := facemodel.LivePortraitRotation(motion.Pitch, motion.Yaw, motion.Roll)
	target := motion.Keypoints(&rot, &motion.Expression)
	expression := motion.Expression
	facemodel.EditExpression(&expression, &e.sliders)
	edited := motion.EditRotation(&e.sliders)
	source := motion.Keypoints(&edited, &expression)
	facemodel.EyeRetargetInput(e.eyeIn, &target, &pts, e.sliders.EyeOpenRatio)
	if err := e.retarget(e.lp.eye, e.eyeIn); err != nil {
		return nil, nil, err
	}
	source.AddRetarget(e.retargeted, e.sliders.EyeOpenRatio)
	facemodel.LipRetargetInput(e.lipIn, &target, &pts, e.sliders.LipOpenRatio)
	if err := e.retarget(e.lp.lip, e.lipIn); err != nil {
		return nil, nil, err
	}
	source.AddRetarget(e.retargeted, e.sliders.LipOpenRatio)
	if err := e.stitch(&source, &target); err != nil {
		return nil, nil, err
	}
	if err := e.lp.Generate(e.out, e.volume, &source, &target); err != nil {
		return nil, nil, err
	}
	return e.out, e.mask, nil
}

// retarget runs a retargeter on its row in, its output into e.retargeted.
func (e *FaceEditor) retarget(eng *infer.Engine, in []float32) error {
	l, err := eng.Claim(1)
	if err != nil {
		return err
	}
	defer l.Release()
	copy(l.Input("input", 0).Float32(), in)
	if err := l.Run(); err != nil {
		return err
	}
	out := l.Output(0, 0).Float32()
	if len(out) < len(e.retargeted) {
		return fmt.Errorf("live_portrait retargeter: %d values, want %d", len(out), len(e.retargeted))
	}
	copy(e.retargeted, out)
	return nil
}

// stitch replaces source by the stitcher's keypoints for source and target.
func (e *FaceEditor) stitch(source, target *facemodel.LivePortraitExpression) error {
	l, err := e.lp.stitcher.Claim(1)
	if err != nil {
		return err
	}
	defer l.Release()
	source.Flat(l.Input("source", 0).Float32())
	target.Flat(l.Input("target", 0).Float32())
	if err := l.Run(); err != nil {
		return err
	}
	out := l.Output(0, 0).Float32()
	if len(out) < 3*facemodel.LivePortraitPoints {
		return fmt.Errorf("live_portrait stitcher: %d values, want %d", len(out), 3*facemodel.LivePortraitPoints)
	}
	for k := range source {
		copy(source[k][:], out[3*k:3*k+3])
	}
	return nil
}

// Close lets the editor's engines go.
func (e *FaceEditor) Close() error {
	if e.lp == nil {
		return nil
	}
	err := e.lp.Close()
	e.lp = nil
	return err
}
