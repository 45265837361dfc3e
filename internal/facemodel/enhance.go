package facemodel

import (
	"fmt"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Enhancer is one FaceFusion face enhancer model's contract (face_enhancer/core.py): the
// Template crop at Size, RGB, (v/255 − 0.5)/0.5, NCHW as input 'input'; models with a
// 'weight' input (codeformer) also take a float64 [1] tensor; the output is clipped to
// [−1, 1], mapped to 0–255 and rounded.
type Enhancer struct {
	Name     string
	Template Template
	Size     int
	Weight   bool // has the 'weight' input
}

// FaceFusion's enhancer defaults: --face-enhancer-blend 80 (percent of the enhanced face
// kept) and --face-enhancer-weight 0.5 (codeformer's fidelity weight).
const (
	DefaultEnhancerBlend  = 80
	DefaultEnhancerWeight = 0.5
)

// Enhancers is FaceFusion 3.8.1's enhancer table. Its default is gfpgan_1.4.
var Enhancers = []Enhancer{
	{Name: "codeformer", Template: FFHQ512, Size: 512, Weight: true},
	{Name: "gfpgan_1.2", Template: FFHQ512, Size: 512},
	{Name: "gfpgan_1.3", Template: FFHQ512, Size: 512},
	{Name: "gfpgan_1.4", Template: FFHQ512, Size: 512},
	{Name: "gpen_bfr_256", Template: ArcFace128, Size: 256},
	{Name: "gpen_bfr_512", Template: FFHQ512, Size: 512},
	{Name: "gpen_bfr_1024", Template: FFHQ512, Size: 1024},
	{Name: "gpen_bfr_2048", Template: FFHQ512, Size: 2048},
	{Name: "restoreformer_plus_plus", Template: FFHQ512, Size: 512},
}

// LookupEnhancer finds an enhancer by FaceFusion's name.
func LookupEnhancer(name string) (Enhancer, error) {
	i := slices.IndexFunc(Enhancers, func(e Enhancer) bool { return e.Name == name })
	if i < 0 {
		names := make([]string, len(Enhancers))
		for j, e := range Enhancers {
			names[j] = e.Name
		}
		return Enhancer{}, fmt.Errorf("facemodel: unknown face enhancer %q: use one of %v", name, names)
	}
	return Enhancers[i], nil
}

// enhancerNorm: RGB, (v/255 − 0.5)/0.5.
var enhancerNorm = Norm{Scale: 255, Mean: [3]float64{0.5, 0.5, 0.5}, Std: [3]float64{0.5, 0.5, 0.5}}

// Prepare writes the crop (Size×Size) as the model's 'input' into dst.
func (e Enhancer) Prepare(dst []float32, crop *raster.Image) error {
	if crop.W != e.Size || crop.H != e.Size {
		return fmt.Errorf("facemodel: %s crop is %d×%d, want %d×%d", e.Name, crop.W, crop.H, e.Size, e.Size)
	}
	TensorFromImage(dst, crop, enhancerNorm)
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
				row[3*x] = uint8(math.RoundToEven(float64(v)))
			}
		}
	}
	return nil
}
