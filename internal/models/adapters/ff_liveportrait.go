package adapters

import (
	"fmt"

	"github.com/facefusion-hpc/facefusion/infer"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// LivePortrait is LivePortrait's feature extractor, motion extractor and generator on the
// rank's engines (one session per file, shared by the workers): the chain expression_restorer
// runs, and face_editor with its retargeters and stitcher. None of the files batches (the
// pose outputs have no batch axis), so every call is one face.
type LivePortrait struct {
	feature, motion, generator *infer.Engine
	// face_editor's parts; nil where the chain was opened without them
	eye, lip, stitcher *infer.Engine
	in                 []float32 // one prepared crop, RGB planes at half the crop's side
}

// NewLivePortrait opens model set set's chain (live_portrait), each file on session(its name);
// editor adds face_editor's retargeters and stitcher.
func NewLivePortrait(set string, session func(model string) infer.SessionConfig, editor bool) (*LivePortrait, error) {
	lp := &LivePortrait{}
	type part struct {
		part string
		eng  **infer.Engine
	}
	parts := []part{{"feature_extractor", &lp.feature}, {"motion_extractor", &lp.motion}, {"generator", &lp.generator}}
	if editor {
		parts = append(parts, part{"eye_retargeter", &lp.eye}, part{"lip_retargeter", &lp.lip}, part{"stitcher", &lp.stitcher})
	}
	for _, p := range parts {
		m, err := catalog.Part(set, p.part)
		if err != nil {
			lp.Close()
			return nil, err
		}
		if *p.eng, err = openModel(m.Name, session(m.Name)); err != nil {
			lp.Close()
			return nil, err
		}
	}
	n := catalog.Must("live_portrait_motion_extractor").Size
	lp.in = make([]float32, 3*n*n)
	return lp, nil
}

// CropSize is the side of the crops the chain takes and gives: twice the extractors' input.
func (lp *LivePortrait) CropSize() int {
	return 2 * catalog.Must("live_portrait_motion_extractor").Size
}

// Prepare makes crop (CropSize square) the extractors' next input (prepare_crop_frame).
func (lp *LivePortrait) Prepare(crop *raster.Image) error {
	return facemodel.PrepareLivePortrait(lp.in, crop)
}

// Features runs the feature extractor on the prepared crop and copies its feature volume into
// volume (VolumeLen values).
func (lp *LivePortrait) Features(volume []float32) error {
	l, err := lp.feature.Claim(1)
	if err != nil {
		return err
	}
	defer l.Release()
	copy(l.Input("input", 0).Float32(), lp.in)
	if err := l.Run(); err != nil {
		return err
	}
	out := l.Output(0, 0).Float32()
	if len(volume) < len(out) {
		return fmt.Errorf("live_portrait feature volume: %d values, room for %d", len(out), len(volume))
	}
	copy(volume, out)
	return nil
}

// VolumeLen is the number of values of one feature volume.
func (lp *LivePortrait) VolumeLen() int {
	n := int64(1)
	for _, d := range catalog.Must("live_portrait_feature_extractor").Want.Outputs[0].Shape[1:] {
		n *= d
	}
	return int(n)
}

// Motion runs the motion extractor on the prepared crop.
func (lp *LivePortrait) Motion() (facemodel.LivePortraitMotion, error) {
	var m facemodel.LivePortraitMotion
	l, err := lp.motion.Claim(1)
	if err != nil {
		return m, err
	}
	defer l.Release()
	copy(l.Input("input", 0).Float32(), lp.in)
	if err := l.Run(); err != nil {
		return m, err
	}
	out := func(k int) []float32 { return l.Output(k, 0).Float32() }
	err = m.FromOutputs(out(0), out(1), out(2), out(3), out(4), out(5), out(6))
	return m, err
}

// Extract prepares crop (CropSize square) and runs both extractors on it: its feature volume
// into volume, and its motion.
func (lp *LivePortrait) Extract(crop *raster.Image, volume []float32) (facemodel.LivePortraitMotion, error) {
	if err := lp.Prepare(crop); err != nil {
		return facemodel.LivePortraitMotion{}, err
	}
	if err := lp.Features(volume); err != nil {
		return facemodel.LivePortraitMotion{}, err
	}
	return lp.Motion()
}

// Generate runs the generator on volume, warped from keypoints target to source (FaceFusion's
// names: 'source' is where the face goes), and writes its output into crop (CropSize square).
func (lp *LivePortrait) Generate(crop *raster.Image, volume []float32, source, target *facemodel.LivePortraitExpression) error {
	l, err := lp.generator.Claim(1)
	if err != nil {
		return err
	}
	defer l.Release()
	copy(l.Input("feature_volume", 0).Float32(), volume)
	source.Flat(l.Input("source", 0).Float32())
	target.Flat(l.Input("target", 0).Float32())
	if err := l.Run(); err != nil {
		return err
	}
	return facemodel.FinishLivePortrait(crop, l.Output(0, 0).Float32())
}

// Close lets the chain's engines go.
func (lp *LivePortrait) Close() error {
	var errs []error
	for _, e := range []**infer.Engine{&lp.feature, &lp.motion, &lp.generator, &lp.eye, &lp.lip, &lp.stitcher} {
		if *e != nil {
			errs = append(errs, (*e).Close())
			*e = nil
		}
	}
	return joinErrs(errs)
}

// --- expression_restorer ---

// FaceFusion's expression_restorer warps its crops with arcface_128 at 512×512 (its model
// set's template and size; face_editor's are ffhq_512).
const expressionTemplate = "arcface_128"

// RestoreRef is one face for the expression restorer: Frame as the processors before it left
// it, Original the same frame as the target gave it.
type RestoreRef struct {
	Frame, Original *raster.Image
	Five            [5]geom.Pt
}

// ExpressionRestorer is FaceFusion's expression_restorer on a LivePortrait chain: the
// unprocessed face's expression, in the areas asked for and mixed by the factor, put back
// on the processed face by the generator.
type ExpressionRestorer struct {
	lp                *LivePortrait
	tmpl              align.Template
	size, factor      int
	areas             []string
	mask              *masker
	temp, target, out *raster.Image
	volume            []float32
}

// NewExpressionRestorer opens model (live_portrait) for --expression-restorer-factor factor
// (0..100) and areas. As FaceFusion, its mask is the box (mask.Blur, no padding) and, when
// mask.Types asks, occlusion, from the processed face's crop.
func NewExpressionRestorer(model string, session func(string) infer.SessionConfig, factor int, areas []string, mask MaskOptions) (*ExpressionRestorer, error) {
	if factor < 0 || factor > 100 {
		return nil, fmt.Errorf("expression restorer factor %d: outside 0..100 (--expression-restorer-factor)", factor)
	}
	lp, err := NewLivePortrait(model, session, false)
	if err != nil {
		return nil, err
	}
	e := &ExpressionRestorer{lp: lp, tmpl: align.Templates[expressionTemplate], size: lp.CropSize(), factor: factor, areas: areas}
	mask.Padding = [4]int{}
	if e.mask, err = newMasker(mask, e.size, 1, false, session(catalog.Must("live_portrait_generator").Name)); err != nil {
		e.Close()
		return nil, err
	}
	e.temp, e.target, e.out = raster.New(e.size, e.size), raster.New(e.size, e.size), raster.New(e.size, e.size)
	e.volume = make([]float32, lp.VolumeLen())
	return e, nil
}

// CropSize is the side of the restorer's crops.
func (e *ExpressionRestorer) CropSize() int { return e.size }

// Align is the frame-to-crop map of the face with five points five.
func (e *ExpressionRestorer) Align(five [5]geom.Pt) geom.Affine {
	return align.Estimate(five, e.tmpl, e.size)
}

// Restore restores one face cut at m (Align) and hands back its new crop and mask, valid
// until the next call; pasting them is the caller's (apply_restore, restore_expression).
func (e *ExpressionRestorer) Restore(f RestoreRef, m geom.Affine) (*raster.Image, []float32, error) {
	if e.lp == nil {
		return nil, nil, fmt.Errorf("expression restorer: Restore after Close")
	}
	align.WarpCrop(e.target, f.Original, m)
	align.WarpCrop(e.temp, f.Frame, m)
	if err := e.mask.before([]*raster.Image{e.temp}); err != nil {
		return nil, nil, err
	}
	if err := e.lp.Prepare(e.target); err != nil {
		return nil, nil, err
	}
	target, err := e.lp.Motion()
	if err != nil {
		return nil, nil, err
	}
	temp, err := e.lp.Extract(e.temp, e.volume)
	if err != nil {
		return nil, nil, err
	}
	rot := facemodel.LivePortraitRotation(temp.Pitch, temp.Yaw, temp.Roll)
	restored := facemodel.RestoreExpression(&target.Expression, &temp.Expression, e.areas, e.factor)
	source, driving := temp.Keypoints(&rot, &restored), temp.Keypoints(&rot, &temp.Expression)
	if err := e.lp.Generate(e.out, e.volume, &source, &driving); err != nil {
		return nil, nil, err
	}
	if err := e.mask.after(1, nil); err != nil {
		return nil, nil, err
	}
	return e.out, e.mask.masks[0], nil
}

// Close lets the restorer's engines go.
func (e *ExpressionRestorer) Close() error {
	var errs []error
	if e.mask != nil {
		errs = append(errs, e.mask.Close())
		e.mask = nil
	}
	if e.lp != nil {
		errs = append(errs, e.lp.Close())
		e.lp = nil
	}
	return joinErrs(errs)
}
