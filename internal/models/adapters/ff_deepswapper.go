package adapters

import (
	"fmt"
	"image"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// DeepSwapper is one of FaceFusion's deep_swapper models (a DeepFaceLive .dfm) on an engine, as
// its swap_face runs it: the face warped to dfl_whole_face at the file's side, sharpened, the
// swapped face colour-matched to the crop as far as their histograms differ, and masked by the
// job's box (with its padding), occlusion, area and region masks and the model's own two masks.
// A file with a morph input runs one face a call; one without, a batch.
type DeepSwapper struct {
	model    *catalog.Model
	tmpl     align.Template
	size     int
	morph    float32
	hasMorph bool
	eng      *infer.Engine
	mask     *masker
	crops    []*raster.Image // the warped crops, kept raw for the colour match
	outs     []*raster.Image // the swapped faces
	floats   []*raster.FloatImage
	sharp    *raster.Image
	blur     *raster.Image
	matched  *raster.Image
	deep     []float32
	tmp      []float32
	ws       align.MaskWorkspace
	cv       raster.CVScratch
	colour   facemodel.ColorMatcher
}

// NewDeepSwapper opens m (catalog.Select's, or a custom one from job.DeepSwapperEntry) from
// cfg.ModelsDir at morph (0–100).
func NewDeepSwapper(m *catalog.Model, cfg infer.SessionConfig, morph int, mask MaskOptions) (*DeepSwapper, error) {
	if morph < 0 || morph > 100 {
		return nil, fmt.Errorf("deep swapper morph %d: outside 0..100 (--deep-swapper-morph)", morph)
	}
	d := &DeepSwapper{model: m, tmpl: align.Templates[m.Template], morph: DeepSwapperMorph(morph)}
	var err error
	if d.eng, err = infer.OpenEngine(m.Spec(), cfg); err != nil {
		return nil, err
	}
	for _, in := range d.eng.Signature().Inputs {
		switch in.Name {
		case "in_face:0":
			if len(in.Shape) == 4 && in.Shape[1] > 0 && in.Shape[1] == in.Shape[2] {
				d.size = int(in.Shape[1])
			}
		case "morph_value:0":
			d.hasMorph = true
		}
	}
	if d.size == 0 {
		d.Close()
		return nil, fmt.Errorf("deep swapper %s %s: 'in_face:0' has no fixed square side (FaceFusion reads the crop size from it): use a DeepFaceLive export", m.Name, d.eng.Path())
	}
	b := d.eng.MaxBatch()
	if d.mask, err = newMasker(mask, d.size, b, true, cfg); err != nil {
		d.Close()
		return nil, err
	}
	for range b {
		f := &raster.FloatImage{}
		f.Reset(image.Rect(0, 0, d.size, d.size))
		d.crops, d.outs, d.floats = append(d.crops, raster.New(d.size, d.size)), append(d.outs, raster.New(d.size, d.size)), append(d.floats, f)
	}
	d.sharp, d.blur, d.matched = raster.New(d.size, d.size), raster.New(d.size, d.size), raster.New(d.size, d.size)
	d.deep, d.tmp = make([]float32, d.size*d.size), make([]float32, d.size*d.size)
	return d, nil
}

// DeepSwapperMorph is deep_swapper's 'morph_value:0' for --deep-swapper-morph m:
// numpy.interp(m, [0, 100], [0, 1]) as float32.
func DeepSwapperMorph(m int) float32 {
	if m >= 100 {
		return 1
	}
	return float32(0.01 * float64(m))
}

// CropSize is the side of the crops: the file's.
func (d *DeepSwapper) CropSize() int { return d.size }

// Group is how many faces one SwapCrops takes at most.
func (d *DeepSwapper) Group() int { return len(d.crops) }

// Align is the frame-to-crop map of the face with five points five.
func (d *DeepSwapper) Align(five [5]geom.Pt) geom.Affine { return align.Estimate(five, d.tmpl, d.size) }

// SwapCrops swaps up to Group faces: items[i]'s face cut at maps[i] (Align). It returns each
// face's swapped crop and mask, valid until the next call: pasting them is the caller's.
func (d *DeepSwapper) SwapCrops(items []FaceRef, maps []geom.Affine) ([]*raster.Image, [][]float32, error) {
	if d.eng == nil {
		return nil, nil, fmt.Errorf("deep swapper %s: SwapCrops after Close", d.model.Name)
	}
	n := len(items)
	for i, it := range items {
		align.WarpCrop(d.crops[i], it.Frame, maps[i])
	}
	if err := d.mask.before(d.crops[:n]); err != nil {
		return nil, nil, err
	}
	if err := d.run(n); err != nil {
		return nil, nil, err
	}
	for i, it := range items {
		d.matchColour(d.crops[i], d.outs[i])
		align.MinInto(d.mask.masks[i], d.deepMaskOf(i))
		if d.mask.area {
			if it.Landmarks == nil {
				return nil, nil, fmt.Errorf("deep swapper %s: the area mask needs the face's 68 landmarks", d.model.Name)
			}
			d.mask.areaMask(i, it.Landmarks, maps[i])
		}
		floatsOf(d.floats[i], d.outs[i])
	}
	if err := d.mask.after(n, d.floats[:n]); err != nil {
		return nil, nil, err
	}
	return d.outs[:n], d.mask.masks[:n], nil
}

// run packs the n crops (prepare_crop_frame: sharpened, /255, BGR, channel-last), runs one
// claim and unpacks each face (normalize_crop_frame) into outs and its two masks' minimum into
// the deep mask buffers.
func (d *DeepSwapper) run(n int) error {
	l, err := d.eng.Claim(n)
	if err != nil {
		return err
	}
	defer l.Release()
	for i := range n {
		d.sharpen(d.crops[i])
		in := l.Input("in_face:0", i).Float32()
		for p := range d.size * d.size {
			for c := range 3 {
				in[3*p+c] = float32(float64(d.sharp.Pix[3*p+2-c]) / 255)
			}
		}
		if d.hasMorph {
			l.Input("morph_value:0", i).Float32()[0] = d.morph
		}
	}
	if err := l.Run(); err != nil {
		return err
	}
	for i := range n {
		face, target, source := l.Output(1, i).Float32(), l.Output(0, i).Float32(), l.Output(2, i).Float32()
		out := d.outs[i]
		for p := range d.size * d.size {
			for c := range 3 {
				v := min(255, max(0, face[3*p+2-c]*255)) // (face · 255).clip(0, 255).astype(uint8)
				out.Pix[3*p+c] = uint8(v)
			}
		}
		mask := d.maskSlot(i)
		for p := range mask {
			mask[p] = min(1, max(0, min(source[p], target[p])))
		}
	}
	return nil
}

// maskSlot is slot i's buffer for the model's own mask: the masker's tmp, free until the area
// mask, which comes after the deep mask is taken in.
func (d *DeepSwapper) maskSlot(i int) []float32 { return d.mask.tmp[i] }

// deepMaskOf finishes slot i's model mask as prepare_crop_mask: eroded twice by a 3×3 cross
// (MORPH_ELLIPSE at 3), blurred by σ 6.25.
func (d *DeepSwapper) deepMaskOf(i int) []float32 {
	m := d.maskSlot(i)
	for range 2 {
		erodeCross(d.tmp, m, d.size)
		copy(m, d.tmp)
	}
	align.GaussianBlur(m, d.size, d.size, 6.25, &d.ws)
	return m
}

// erodeCross is cv2.erode by the 3×3 cross: each value the minimum of itself and its four
// neighbours inside the image (the border adds nothing to a minimum).
func erodeCross(dst, src []float32, side int) {
	for y := range side {
		for x := range side {
			v := src[y*side+x]
			if x > 0 {
				v = min(v, src[y*side+x-1])
			}
			if x < side-1 {
				v = min(v, src[y*side+x+1])
			}
			if y > 0 {
				v = min(v, src[(y-1)*side+x])
			}
			if y < side-1 {
				v = min(v, src[(y+1)*side+x])
			}
			dst[y*side+x] = v
		}
	}
}

// sharpen is prepare_crop_frame's cv2.addWeighted(crop, 1.75, GaussianBlur(crop, σ 2), −0.75, 0)
// into d.sharp.
func (d *DeepSwapper) sharpen(crop *raster.Image) {
	d.cv.GaussianBlur8(d.blur, crop, 2)
	addWeighted(d.sharp.Pix, crop.Pix, 1.75, d.blur.Pix, -0.75)
}

// addWeighted is cv2.addWeighted on 8 bits with gamma 0: a·alpha + (b·beta + 0) in float32 as
// OpenCV's multiply-adds nest, rounded half to even and saturated; dst may be a.
func addWeighted(dst, a []uint8, alpha float32, b []uint8, beta float32) {
	for i := range dst {
		v := float32(float32(a[i])*alpha) + float32(float32(b[i])*beta)
		dst[i] = raster.SaturateU8(float64(v))
	}
}

// matchColour is conditional_match_frame_color(raw, out): out blended with its colour match to
// raw by their histogram difference.
func (d *DeepSwapper) matchColour(raw, out *raster.Image) {
	f := facemodel.HistogramDifference(raw, out)
	copy(d.matched.Pix, out.Pix)
	d.colour.Match(raw, d.matched)
	addWeighted(out.Pix, out.Pix, float32(1-f), d.matched.Pix, float32(f))
}

// floatsOf copies the 8-bit crop into f, the face parser's input.
func floatsOf(f *raster.FloatImage, img *raster.Image) {
	for i, v := range img.Pix {
		f.Pix[i] = float32(v)
	}
}

// Close lets the swapper's engines go.
func (d *DeepSwapper) Close() error {
	var errs []error
	if d.mask != nil {
		errs = append(errs, d.mask.Close())
		d.mask = nil
	}
	if d.eng != nil {
		errs = append(errs, d.eng.Close())
		d.eng = nil
	}
	return joinErrs(errs)
}
