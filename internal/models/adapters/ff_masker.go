package adapters

import (
	"fmt"
	"image"
	"slices"
	"strings"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// MaskOptions are FaceFusion's face mask settings: --face-mask-types, --face-mask-blur,
// --face-mask-padding, --face-occluder-model, --face-parser-model, --face-mask-areas and
// --face-mask-regions.
type MaskOptions struct {
	// Types are any of "box", "occlusion", "area" and "region"; the final mask is their
	// per-pixel minimum. Empty means box alone.
	Types []string
	// Blur is the box mask's blur (FaceFusion's default 0.3; 0 is a hard edge).
	Blur float64
	// Padding is the box mask's border in percent: top, right, bottom, left.
	Padding [4]int
	// Occluder is the occlusion model: xseg_1 (FaceFusion's default and "" here), xseg_2,
	// xseg_3, or "many", the minimum of all three.
	Occluder string
	// Parser is the region model: bisenet_resnet_34 (FaceFusion's default and "" here) or
	// bisenet_resnet_18.
	Parser string
	// Areas index align.MaskAreas, whose landmarks' hull the area mask covers; empty means all.
	Areas []int
	// Regions are the face-parser classes the region mask keeps (align.RegionClasses); empty
	// means align.DefaultRegions.
	Regions []int
}

// DefaultMaskOptions are FaceFusion's defaults: a box mask blurred 0.3, no padding.
func DefaultMaskOptions() MaskOptions {
	return MaskOptions{Types: []string{"box"}, Blur: 0.3}
}

// Occluders are the models FaceFusion's --face-occluder-model value name runs: the one named,
// or all of them for "many" ("" is FaceFusion's default, xseg_1).
func Occluders(name string) ([]*catalog.Model, error) {
	switch name {
	case "":
		name = "xseg_1"
	case "many":
		return catalog.Of(catalog.Occluder), nil
	}
	m, err := catalog.Select(catalog.Occluder, name)
	if err != nil {
		return nil, fmt.Errorf("face occluder model %q: use many, %s (--face-occluder-model)", name, strings.Join(catalog.Selectors(catalog.Occluder), ", "))
	}
	return []*catalog.Model{m}, nil
}

// ParserModel is the model FaceFusion's --face-parser-model value name runs ("" is its
// default, bisenet_resnet_34).
func ParserModel(name string) (*catalog.Model, error) {
	if name == "" {
		name = "bisenet_resnet_34"
	}
	m, err := catalog.Select(catalog.Parser, name)
	if err != nil {
		return nil, fmt.Errorf("face parser model %q: use %s (--face-parser-model)", name, strings.Join(catalog.Selectors(catalog.Parser), ", "))
	}
	return m, nil
}

// Every mask model's packing is checked at start-up: a catalog change align cannot pack
// panics here, in every test, not on a frame.
func init() {
	for _, m := range append(catalog.Of(catalog.Occluder), catalog.Of(catalog.Parser)...) {
		packer(m)
	}
}

// packer is how align packs a crop for the model m: its normalisation and layout.
func packer(m *catalog.Model) (align.Norm, align.Layout) {
	n := align.Norm{Mean: m.Norm.Mean, Std: m.Norm.Std, BGR: m.Norm.BGR}
	if m.Norm.Scale != 255 {
		panic("adapters: align packs v/255 normalisations only; " + m.Name + " has another scale")
	}
	if m.Norm.NHWC {
		return n, align.NHWC
	}
	return n, align.NCHW
}

// maskModel is one mask model's engine and how its crop is packed.
type maskModel struct {
	model  *catalog.Model
	eng    *infer.Engine
	norm   align.Norm
	layout align.Layout
	in     *raster.Image // the crop resized to the model's side
}

// masker makes the crop masks of one crop size for up to len(masks) crops at a time: the box
// mask once, the occlusion mask from the crop before the model runs, the area mask from the
// landmarks, the region mask from the model's result (FaceFusion's order in swap_face).
type masker struct {
	size                         int
	box, occlusion, area, region bool
	areas, regions               []int
	boxMask                      []float32
	occluders                    []maskModel
	parser                       maskModel
	labels                       int
	masks                        [][]float32
	tmp, acc                     [][]float32 // per slot: one model's mask, the occluders' minimum
	rs                           raster.Resizer
	ws                           align.MaskWorkspace
}

// newMasker checks opt and opens the mask models it needs. swapper is false for the
// enhancer, which FaceFusion masks by the box (always) and occlusion only.
func newMasker(opt MaskOptions, size, slots int, swapper bool, cfg infer.SessionConfig) (*masker, error) {
	m := &masker{size: size, regions: opt.Regions, areas: opt.Areas}
	if err := m.chooseTypes(opt.Types, swapper); err != nil {
		return nil, err
	}
	occluders, err := Occluders(opt.Occluder)
	if err != nil {
		return nil, err
	}
	parser, err := ParserModel(opt.Parser)
	if err != nil {
		return nil, err
	}
	m.labels = int(parser.Want.Outputs[0].Shape[1])
	if len(m.regions) == 0 {
		m.regions = align.DefaultRegions
	}
	for _, r := range m.regions {
		if r < 0 || r >= m.labels {
			return nil, fmt.Errorf("face mask region %d: not a face-parser class: use 0..%d (see align.RegionClasses)", r, m.labels-1)
		}
	}
	n := size * size
	m.boxMask = make([]float32, n)
	if m.box {
		align.BoxMask(m.boxMask, size, size, opt.Blur, opt.Padding, &m.ws)
	} else {
		for i := range m.boxMask {
			m.boxMask[i] = 1
		}
	}
	m.masks = make([][]float32, slots)
	m.tmp = make([][]float32, slots)
	for i := range m.masks {
		m.masks[i] = make([]float32, n)
		m.tmp[i] = make([]float32, n)
	}
	// The mask models open at the job's batch size (cfg.MaxBatch), not at slots: the swapper and
	// the enhancer share them through the rank's engines, and the first opener's batch stays.
	sub := cfg
	sub.SHA256 = ""
	sub.Dims = nil
	open := func(model *catalog.Model) (maskModel, error) {
		mm := maskModel{model: model, in: raster.New(model.Size, model.Size)}
		mm.norm, mm.layout = packer(model)
		var err error
		mm.eng, err = openModel(model.Name, sub)
		return mm, err
	}
	if m.occlusion {
		for _, model := range occluders {
			mm, err := open(model)
			if err != nil {
				m.Close()
				return nil, err
			}
			m.occluders = append(m.occluders, mm)
		}
		if len(m.occluders) > 1 {
			m.acc = make([][]float32, slots)
			for i := range m.acc {
				m.acc[i] = make([]float32, n)
			}
		}
	}
	if m.region {
		if m.parser, err = open(parser); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}

// chooseTypes sets the masks m makes from FaceFusion's mask types (box when none) and checks
// its areas (all when none). Areas and regions are the swapper's only.
func (m *masker) chooseTypes(types []string, swapper bool) error {
	if len(types) == 0 {
		types = []string{"box"}
	}
	for _, t := range types {
		switch t {
		case "box":
			m.box = true
		case "occlusion":
			m.occlusion = true
		case "area":
			m.area = swapper
		case "region":
			m.region = swapper
		default:
			return fmt.Errorf("face mask type %q: not one of box, occlusion, area, region (--face-mask-types)", t)
		}
	}
	if !swapper {
		m.box = true // FaceFusion's enhance_face starts from the box mask whatever the types
	}
	if len(m.areas) == 0 {
		for i := range align.MaskAreas {
			m.areas = append(m.areas, i)
		}
	}
	for _, a := range m.areas {
		if a < 0 || a >= len(align.MaskAreas) {
			return fmt.Errorf("face mask area %d: not one of align.MaskAreas (0..%d)", a, len(align.MaskAreas)-1)
		}
	}
	return nil
}

// before starts the masks of crops (the aligned target crops): box, then occlusion. With
// several occluders (FaceFusion's "many") their resized outputs' minimum is feathered once.
func (m *masker) before(crops []*raster.Image) error {
	for i := range crops {
		copy(m.masks[i], m.boxMask)
	}
	if !m.occlusion {
		return nil
	}
	for k := range m.occluders {
		o := &m.occluders[k]
		for lo := 0; lo < len(crops); lo += o.eng.MaxBatch() {
			hi := min(len(crops), lo+o.eng.MaxBatch())
			if err := m.occlude(o, k, crops[lo:hi], lo); err != nil {
				return err
			}
		}
	}
	for i := range crops {
		mask := m.tmp[i]
		if len(m.occluders) > 1 {
			mask = m.acc[i]
		}
		align.Feather(mask, m.size, m.size, &m.ws)
		align.MinInto(m.masks[i], mask)
	}
	return nil
}

// occlude runs one claim of occluder k on crops (slots from first on) and keeps each crop's
// clipped, resized output: in tmp, and its minimum with the earlier occluders' in acc.
func (m *masker) occlude(o *maskModel, k int, crops []*raster.Image, first int) error {
	l, err := o.eng.Claim(len(crops))
	if err != nil {
		return err
	}
	defer l.Release()
	for i, c := range crops {
		m.rs.Resize(o.in, o.in.Bounds(), c)
		o.norm.Pack(l.In(0, i).Float32(), o.in, o.layout)
	}
	if err := l.Run(); err != nil {
		return err
	}
	side := o.model.Size
	for i := range crops {
		tmp := m.tmp[first+i]
		align.ResizeMask(tmp, m.size, m.size, l.Output(0, i).Float32()[:side*side], side, side, true, &m.ws)
		if m.acc == nil {
			continue
		}
		if k == 0 {
			copy(m.acc[first+i], tmp)
		} else {
			align.MinInto(m.acc[first+i], tmp)
		}
	}
	return nil
}

// areaMask takes the area mask of the crop in slot i into its mask: the hull of the face's
// 68 landmarks (frame pixels) mapped into the crop by toCrop.
func (m *masker) areaMask(i int, landmarks *[68]geom.Pt, toCrop geom.Affine) {
	align.AreaMask(m.tmp[i], m.size, m.size, landmarks, toCrop, m.areas, &m.ws)
	align.MinInto(m.masks[i], m.tmp[i])
}

// after finishes the masks of the slots' crops: the region mask of swapped (the model's
// results as FaceFusion hands them to its face parser: float, 0–255, before any rounding),
// then the clip. swapped is nil where no region mask is made.
func (m *masker) after(n int, swapped []*raster.FloatImage) error {
	if m.region {
		for lo := 0; lo < n; lo += m.parser.eng.MaxBatch() {
			hi := min(n, lo+m.parser.eng.MaxBatch())
			if err := m.parse(swapped[lo:hi], m.masks[lo:hi], m.tmp[lo:hi]); err != nil {
				return err
			}
		}
	}
	for i := range n {
		align.Clip01(m.masks[i])
	}
	return nil
}

// parse runs one claim of the face parser and takes each crop's region mask into masks. Each
// crop is resized to the parser's side in float32 and normalised from there, as FaceFusion
// does with its float crop.
func (m *masker) parse(crops []*raster.FloatImage, masks, tmp [][]float32) error {
	p := &m.parser
	l, err := p.eng.Claim(len(crops))
	if err != nil {
		return err
	}
	defer l.Release()
	side := p.model.Size
	for i, c := range crops {
		p.norm.PackFloat(l.In(0, i).Float32(), c, side, p.layout, &m.ws)
	}
	if err := l.Run(); err != nil {
		return err
	}
	for i := range crops {
		align.RegionMask(tmp[i], m.size, m.size, align.ClassScores{Data: l.Output(0, i).Float32(), Classes: m.labels, W: side, H: side}, m.regions, &m.ws)
		align.MinInto(masks[i], tmp[i])
	}
	return nil
}

// Close lets the mask models' engines go (closing those that are the masker's own).
func (m *masker) Close() error {
	var errs []error
	for _, o := range m.occluders {
		if o.eng != nil {
			errs = append(errs, o.eng.Close())
		}
	}
	if m.parser.eng != nil {
		errs = append(errs, m.parser.eng.Close())
	}
	m.occluders, m.parser.eng = nil, nil
	return joinErrs(errs)
}

func joinErrs(errs []error) error {
	errs = slices.DeleteFunc(errs, func(e error) bool { return e == nil })
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}

// CropMasker makes FaceFusion's crop mask of one crop at a time from the crop alone (box,
// occlusion, area, region, as face_debugger's draw_face_mask does on its arcface_128 crop):
// the region mask reads the crop itself, not a swapped one.
type CropMasker struct {
	m    *masker
	crop []*raster.FloatImage
}

// NewCropMasker checks opt and opens the mask models it needs for crops size×size.
func NewCropMasker(opt MaskOptions, size int, cfg infer.SessionConfig) (*CropMasker, error) {
	m, err := newMasker(opt, size, 1, true, cfg)
	if err != nil {
		return nil, err
	}
	f := &raster.FloatImage{}
	f.Reset(image.Rect(0, 0, size, size))
	return &CropMasker{m: m, crop: []*raster.FloatImage{f}}, nil
}

// Mask returns the crop mask of crop (valid until the next call): landmarks are the face's
// 68 points in the frame, toCrop the frame-to-crop map.
func (c *CropMasker) Mask(crop *raster.Image, landmarks *[68]geom.Pt, toCrop geom.Affine) ([]float32, error) {
	m := c.m
	if err := m.before([]*raster.Image{crop}); err != nil {
		return nil, err
	}
	if m.area {
		m.areaMask(0, landmarks, toCrop)
	}
	if m.region {
		f := c.crop[0]
		for y := range crop.H {
			row, frow := crop.Pix[y*crop.Stride:][:3*crop.W], f.Pix[y*f.Stride:][:3*crop.W]
			for i, v := range row {
				frow[i] = float32(v)
			}
		}
	}
	if err := m.after(1, c.crop); err != nil {
		return nil, err
	}
	return m.masks[0], nil
}

// Close lets the mask models' engines go.
func (c *CropMasker) Close() error { return c.m.Close() }
