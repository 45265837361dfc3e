package facemodel

import (
	"fmt"
	"slices"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Enhancer is one FaceFusion face enhancer model's processing (face_enhancer/core.py), made from
// its catalog entry by LookupEnhancer: the Template crop at Size, Norm (RGB, (v/255 − 0.5)/0.5),
// NCHW as input 'input'; models with a
// 'weight' input (codeformer) also take a float64 [1] tensor; the output is clipped to
// [−1, 1], mapped to 0–255 and rounded.
type Enhancer struct {
	Name     string
	Template Template
	Size     int
	Norm     Norm
	Weight   bool // has the 'weight' input
}

// FaceFusion's enhancer defaults: --face-enhancer-blend 80 (percent of the enhanced face
// kept) and --face-enhancer-weight 0.5 (codeformer's fidelity weight).
const (
	DefaultEnhancerBlend  = 80
	DefaultEnhancerWeight = 0.5
)

// LookupEnhancer finds an enhancer by FaceFusion's name in the catalog.
func LookupEnhancer(name string) (Enhancer, error) {
	m, err := catalog.Lookup(name)
	if err != nil || m.Kind != catalog.Enhancer {
		return Enhancer{}, fmt.Errorf("facemodel: unknown face enhancer %q: use one of %v", name, catalog.Selectors(catalog.Enhancer))
	}
	return Enhancer{Name: m.Name, Template: Template(m.Template), Size: m.Size, Norm: m.Norm,
		Weight: slices.ContainsFunc(m.Want.Inputs, func(t infer.TensorSpec) bool { return t.Name == "weight" })}, nil
}

// Prepare writes the crop (Size×Size) as the model's 'input' into dst.
func (e Enhancer) Prepare(dst []float32, crop *raster.Image) error {
	if crop.W != e.Size || crop.H != e.Size {
		return fmt.Errorf("facemodel: %s crop is %d×%d, want %d×%d", e.Name, crop.W, crop.H, e.Size, e.Size)
	}
	TensorFromImage(dst, crop, e.Norm)
	return nil
}

// Finish writes the model's output (3·Size·Size floats, RGB planes) into crop as FaceFusion's
// normalize_crop_frame: clip to [−1, 1], (x + 1)/2 · 255, rounded half to even (numpy).
func (e Enhancer) Finish(crop *raster.Image, src []float32) error {
	if crop.W != e.Size || crop.H != e.Size {
		return fmt.Errorf("facemodel: %s crop is %d×%d, want %d×%d", e.Name, crop.W, crop.H, e.Size, e.Size)
	}
	hw := e.Size * e.Size
	src = src[:3*hw]
	for c := range 3 {
		plane := src[c*hw:][:hw]
		for y := range e.Size {
			row := crop.Pix[y*crop.Stride+c:]
			for x := range e.Size {
				v := min(1, max(-1, plane[y*e.Size+x]))
				v = (v + 1) / 2 * 255
				row[3*x] = raster.SaturateU8(float64(v))
			}
		}
	}
	return nil
}
