package adapters

import (
	"fmt"
	"slices"

	"github.com/facefusion-hpc/facefusion/infer"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceEnhancer is one of FaceFusion's face enhancers (codeformer, gfpgan_1.2/1.3/1.4,
// gpen_bfr_256/512/1024/2048, restoreformer_plus_plus) on an engine, batched like FaceSwapper.
type FaceEnhancer struct {
	model facemodel.Enhancer
	tmpl  align.Template
	eng   *infer.Engine
	// weight is codeformer's fidelity, packed with every face; hasWeight says the model takes it.
	weight    float64
	hasWeight bool
	blend     int
	mask      *masker
	crops     []*raster.Image
}

// NewFaceEnhancer opens FaceFusion's enhancer model from cfg.ModelsDir. blend is
// --face-enhancer-blend (0–100: how much of the enhanced face is kept; FaceFusion's default
// 80), weight --face-enhancer-weight (codeformer's fidelity, 0–1; others ignore it). As
// FaceFusion, the enhancer's mask is the box (mask.Blur, no padding) and, when mask.Types
// asks, occlusion; region is not used.
func NewFaceEnhancer(model string, cfg infer.SessionConfig, blend int, weight float64, mask MaskOptions) (*FaceEnhancer, error) {
	en, err := facemodel.LookupEnhancer(model)
	if err != nil {
		return nil, err
	}
	if blend < 0 || blend > 100 {
		return nil, fmt.Errorf("face enhancer blend %d: outside 0..100 (--face-enhancer-blend)", blend)
	}
	tmpl, ok := align.Templates[string(en.Template)]
	if !ok {
		return nil, fmt.Errorf("face enhancer %s: unknown warp template %s", model, en.Template)
	}
	e := &FaceEnhancer{model: en, tmpl: tmpl, blend: blend, weight: weight}
	if e.eng, err = openModel(model, cfg); err != nil {
		return nil, err
	}
	e.hasWeight = slices.ContainsFunc(e.eng.Signature().Inputs, func(t infer.TensorSpec) bool { return t.Name == "weight" })
	mask.Padding = [4]int{}
	b := e.eng.MaxBatch()
	if e.mask, err = newMasker(mask, en.Size, b, false, cfg); err != nil {
		e.Close()
		return nil, err
	}
	for range b {
		e.crops = append(e.crops, raster.New(en.Size, en.Size))
	}
	return e, nil
}

// CropSize is the side of the crops the enhancer works on: the model's.
func (e *FaceEnhancer) CropSize() int { return e.model.Size }

// Group is how many faces one EnhanceCrops takes at most: the engine's MaxBatch.
func (e *FaceEnhancer) Group() int { return len(e.crops) }

// Blend is --face-enhancer-blend, how much of the enhanced face the paste keeps (0–100).
func (e *FaceEnhancer) Blend() int { return e.blend }

// Align is the frame-to-crop map of the face with five points five.
func (e *FaceEnhancer) Align(five [5]geom.Pt) geom.Affine {
	return align.Estimate(five, e.tmpl, e.model.Size)
}

// EnhanceCrops enhances up to Group faces: items[i]'s face is cut at maps[i] (Align), masked
// and run in one claim of the model. It hands back each face's enhanced crop and its mask,
// valid until the next call: pasting them into the frames (at Blend) is the caller's. The
// claim is taken only once its faces are ready to pack and given back before the masks are
// finished, so the shared batch never waits on this worker's other work.
func (e *FaceEnhancer) EnhanceCrops(items []FaceRef, maps []geom.Affine) ([]*raster.Image, [][]float32, error) {
	if e.eng == nil {
		return nil, nil, fmt.Errorf("face enhancer %s: Enhance after Close", e.model.Name)
	}
	for i, it := range items {
		align.WarpCrop(e.crops[i], it.Frame, maps[i])
	}
	crops := e.crops[:len(items)]
	if err := e.mask.before(crops); err != nil {
		return nil, nil, err
	}
	if err := e.enhance(crops); err != nil {
		return nil, nil, err
	}
	if err := e.mask.after(len(crops), nil); err != nil {
		return nil, nil, err
	}
	return crops, e.mask.masks[:len(items)], nil
}

// enhance runs crops through one claim of the model, in place.
func (e *FaceEnhancer) enhance(crops []*raster.Image) error {
	l, err := e.eng.Claim(len(crops))
	if err != nil {
		return err
	}
	defer l.Release()
	for i, c := range crops {
		if err := e.model.Prepare(l.Input("input", i).Float32(), c); err != nil {
			return err
		}
		if e.hasWeight {
			l.Input("weight", i).Float64()[0] = e.weight
		}
	}
	if err := l.Run(); err != nil {
		return err
	}
	for i, c := range crops {
		if err := e.model.Finish(c, l.Output(0, i).Float32()); err != nil {
			return err
		}
	}
	return nil
}

// Close lets the enhancer's engines go (closing those that are its own).
func (e *FaceEnhancer) Close() error {
	var errs []error
	if e.mask != nil {
		errs = append(errs, e.mask.Close())
		e.mask = nil
	}
	if e.eng != nil {
		errs = append(errs, e.eng.Close())
		e.eng = nil
	}
	return joinErrs(errs)
}
