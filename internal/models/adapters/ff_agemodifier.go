package adapters

import (
	"fmt"
	"image"
	"slices"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// AgeModifier is one of FaceFusion's age_modifier models on an engine, as its modify_age runs
// them: fran on the face warped to its template at its size, masked by the box (face_mask_blur,
// no padding) and, where face_mask_types asks, occlusion; styleganex_age also on a wider crop
// (wide.go). Their 'direction' input has no batch axis (fran's carries each face's own age), so
// the engine runs one face at a time.
type AgeModifier struct {
	model     *catalog.Model
	tmpl      align.Template
	direction int // --age-modifier-direction, −100..100
	eng       *infer.Engine
	mask      *masker
	crop      *raster.Image
	out       *raster.FloatImage
	wide      *wideCrop // styleganex_age's; nil for fran
}

// AgeResult is one face's modified crop as FaceFusion pastes it back: Float (fran: 0–255 in
// floating point) or Crop (styleganex_age: 8 bits), its mask (the crop's size) and the
// frame-to-crop map it is pasted at. It is valid until the next ModifyCrop.
type AgeResult struct {
	Float *raster.FloatImage
	Crop  *raster.Image
	Mask  []float32
	Map   geom.Affine
}

// NewAgeModifier opens age_modifier_model name from cfg.ModelsDir at direction.
func NewAgeModifier(name string, cfg infer.SessionConfig, direction int, mask MaskOptions) (*AgeModifier, error) {
	m, err := catalog.Select(catalog.AgeModifier, name)
	if err != nil {
		return nil, err
	}
	if direction < -100 || direction > 100 {
		return nil, fmt.Errorf("age modifier direction %d: outside -100..100 (--age-modifier-direction)", direction)
	}
	tmpl, ok := align.Templates[m.Template]
	if !ok {
		return nil, fmt.Errorf("age modifier %s: unknown warp template %s", m.Name, m.Template)
	}
	a := &AgeModifier{model: m, tmpl: tmpl, direction: direction, crop: raster.New(m.Size, m.Size), out: &raster.FloatImage{}}
	a.out.Reset(image.Rect(0, 0, m.Size, m.Size))
	if a.eng, err = openModel(m.Name, cfg); err != nil {
		return nil, err
	}
	mask.Padding = [4]int{} // FaceFusion's create_box_mask(crop, blur, (0, 0, 0, 0))
	if m.WideSize > 0 {
		a.wide, err = newWideCrop(m, mask, cfg)
	} else {
		a.mask, err = newMasker(mask, m.Size, 1, false, cfg)
	}
	if err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// Align is the frame-to-crop map of the face with five points five.
func (a *AgeModifier) Align(five [5]geom.Pt) geom.Affine {
	return align.Estimate(five, a.tmpl, a.model.Size)
}

// Direction is fran's 'direction' for a face of the age range [lo, hi) (fairface's, as
// Python's range): numpy.mean of the range's ages, and that plus the job's direction, each
// /100 in float32 and clipped to [0, 1].
func Direction(age [2]int, direction int) [2]float32 {
	mean := float64(age[0]+age[1]-1) / 2 // numpy.mean(range(lo, hi))
	d := [2]float32{float32(mean), float32(mean + float64(direction))}
	for i := range d {
		d[i] = min(1, max(0, d[i]/100))
	}
	return d
}

// ModifyCrop ages the face it.Five places in it.Frame, of fairface's age range age (fran reads
// it), and returns its modified crop and mask: pasting them is the caller's.
func (a *AgeModifier) ModifyCrop(it FaceRef, age [2]int) (AgeResult, error) {
	if a.eng == nil {
		return AgeResult{}, fmt.Errorf("age modifier %s: ModifyCrop after Close", a.model.Name)
	}
	m := a.Align(it.Five)
	align.WarpCrop(a.crop, it.Frame, m)
	if a.wide != nil {
		return a.wide.modify(a, it, m)
	}
	crops := []*raster.Image{a.crop}
	if err := a.mask.before(crops); err != nil {
		return AgeResult{}, err
	}
	if err := a.run(Direction(age, a.direction)); err != nil {
		return AgeResult{}, err
	}
	if err := a.mask.after(1, nil); err != nil {
		return AgeResult{}, err
	}
	return AgeResult{Float: a.out, Mask: a.mask.masks[0], Map: m}, nil
}

// run runs the crop through one claim of the model into a.out.
func (a *AgeModifier) run(dir [2]float32) error {
	l, err := a.eng.Claim(1)
	if err != nil {
		return err
	}
	defer l.Release()
	facemodel.TensorFromImage(l.Input("target", 0).Float32(), a.crop, a.model.Norm)
	if slices.ContainsFunc(a.eng.Signature().Inputs, func(t infer.TensorSpec) bool { return t.Name == "direction" }) {
		copy(l.Input("direction", 0).Float32(), dir[:])
	}
	if err := l.Run(); err != nil {
		return err
	}
	// normalize_vision_frame: · deviation + mean, clipped to [0, 1], · 255, not rounded.
	align.Norm{Mean: a.model.Norm.Mean, Std: a.model.Norm.Std}.Unpack(a.out, l.Output(0, 0).Float32(), align.NCHW)
	return nil
}

// Close lets the modifier's engines go.
func (a *AgeModifier) Close() error {
	var errs []error
	if a.wide != nil {
		errs = append(errs, a.wide.close())
		a.wide = nil
	}
	if a.mask != nil {
		errs = append(errs, a.mask.Close())
		a.mask = nil
	}
	if a.eng != nil {
		errs = append(errs, a.eng.Close())
		a.eng = nil
	}
	return joinErrs(errs)
}
