package adapters

import (
	"fmt"
	"github.com/facefusion-hpc/facefusion/infer"
	"image"
	"slices"

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
	maps      []geom.Affine
	areas     []image.Rectangle
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
	e.maps = make([]geom.Affine, b)
	e.areas = make([]image.Rectangle, b)
	return e, nil
}

// Enhance enhances each item's face in place on its frame, up to MaxBatch faces per
// inference; faces of one frame whose paste areas overlap run in separate rounds.
func (e *FaceEnhancer) Enhance(items []FaceRef) error {
	if e.eng == nil {
		return fmt.Errorf("face enhancer %s: Enhance after Close", e.model.Name)
	}
	size, b := e.model.Size, e.eng.MaxBatch()
	for lo := 0; lo < len(items); {
		n := 0
		for lo+n < len(items) && n < b {
			it := items[lo+n]
			e.maps[n] = align.Estimate(it.Five, e.tmpl, size)
			e.areas[n] = align.PasteArea(it.Frame.W, it.Frame.H, size, size, e.maps[n]).Inset(-2)
			if clashes(items[lo:lo+n], e.areas[:n], it.Frame, e.areas[n]) {
				break
			}
			n++
		}
		if err := e.round(items[lo : lo+n]); err != nil {
			return err
		}
		lo += n
	}
	return nil
}

// round enhances up to MaxBatch faces: warp, the occlusion mask, one claim of the model, paste
// back. The claim is taken only once its faces are ready to pack and given back before the
// masks are finished, so the shared batch never waits on this worker's other work.
func (e *FaceEnhancer) round(items []FaceRef) error {
	for i, it := range items {
		align.WarpCrop(e.crops[i], it.Frame, e.maps[i])
	}
	crops := e.crops[:len(items)]
	if err := e.mask.before(crops); err != nil {
		return err
	}
	if err := e.enhance(crops); err != nil {
		return err
	}
	if err := e.mask.after(len(crops), nil); err != nil {
		return err
	}
	for i, it := range items {
		align.PasteBackEnhanced(it.Frame, e.crops[i], e.mask.masks[i], e.maps[i], e.blend)
	}
	return nil
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
