package adapters

import (
	"fmt"
	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/catalog"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// MaskOptions are FaceFusion's face mask settings: --face-mask-types, --face-mask-blur,
// --face-mask-padding and --face-mask-regions.
type MaskOptions struct {
	// Types are any of "box", "occlusion" (xseg_1) and "region" (bisenet_resnet_34); the
	// final mask is their per-pixel minimum. Empty means box alone.
	Types []string
	// Blur is the box mask's blur (FaceFusion's default 0.3; 0 is a hard edge).
	Blur float64
	// Padding is the box mask's border in percent: top, right, bottom, left.
	Padding [4]int
	// Regions are the face-parser classes the region mask keeps (align.RegionClasses); empty
	// means align.DefaultRegions.
	Regions []int
}

// DefaultMaskOptions are FaceFusion's defaults: a box mask blurred 0.3, no padding.
func DefaultMaskOptions() MaskOptions {
	return MaskOptions{Types: []string{"box"}, Blur: 0.3}
}

// The mask models (FaceFusion's xseg_1 and bisenet_resnet_34) and their input sides.
var (
	occluderModel = catalog.Must("xseg_1")
	parserModel   = catalog.Must("bisenet_resnet_34")
	occluderSize  = occluderModel.Size
	parserSize    = parserModel.Size
	parserLabels  = int(parserModel.Want.Outputs[0].Shape[1])
	// How align packs their crops, settled at start-up (a catalog change align cannot pack
	// panics here, in every test, not on a frame).
	occluderNorm, occluderLayout = packer(occluderModel)
	parserNorm, parserLayout     = packer(parserModel)
)

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

// masker makes the crop masks of one crop size for up to len(masks) crops at a time: the box
// mask once, the occlusion mask from the crop before the model runs, the region mask from the
// model's result (FaceFusion's order in swap_face).
type masker struct {
	size                   int
	box, occlusion, region bool
	regions                []int
	boxMask                []float32
	occluder, parser       *infer.Engine
	masks                  [][]float32
	tmp                    []float32
	small, large           *raster.Image
	rs                     raster.Resizer
	ws                     align.MaskWorkspace
}

// newMasker checks opt and opens the mask models it needs. allowRegion is false for the
// enhancer, which FaceFusion masks by box and occlusion only.
func newMasker(opt MaskOptions, size, slots int, allowRegion bool, cfg infer.SessionConfig) (*masker, error) {
	m := &masker{size: size, regions: opt.Regions}
	types := opt.Types
	if len(types) == 0 {
		types = []string{"box"}
	}
	for _, t := range types {
		switch t {
		case "box":
			m.box = true
		case "occlusion":
			m.occlusion = true
		case "region":
			m.region = allowRegion
		default:
			return nil, fmt.Errorf("face mask type %q: not supported: use box, occlusion or region (--face-mask-types)", t)
		}
	}
	if len(m.regions) == 0 {
		m.regions = align.DefaultRegions
	}
	for _, r := range m.regions {
		if r < 0 || r >= parserLabels {
			return nil, fmt.Errorf("face mask region %d: not a face-parser class: use 0..%d (see align.RegionClasses)", r, parserLabels-1)
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
	m.tmp = make([]float32, n)
	m.masks = make([][]float32, slots)
	for i := range m.masks {
		m.masks[i] = make([]float32, n)
	}
	// The mask models open at the job's batch size (cfg.MaxBatch), not at slots: the swapper and
	// the enhancer share them through the rank's engines, and the first opener's batch stays.
	sub := cfg
	sub.SHA256 = ""
	sub.Dims = nil
	var err error
	if m.occlusion {
		if m.occluder, err = openModel(occluderModel.Name, sub); err != nil {
			return nil, err
		}
		m.small = raster.New(occluderSize, occluderSize)
	}
	if m.region {
		if m.parser, err = openModel(parserModel.Name, sub); err != nil {
			m.Close()
			return nil, err
		}
		m.large = raster.New(parserSize, parserSize)
	}
	return m, nil
}

// before starts the masks of crops (the aligned target crops): box, then occlusion.
func (m *masker) before(crops []*raster.Image) error {
	for i := range crops {
		copy(m.masks[i], m.boxMask)
	}
	if !m.occlusion {
		return nil
	}
	for lo := 0; lo < len(crops); lo += m.occluder.MaxBatch() {
		hi := min(len(crops), lo+m.occluder.MaxBatch())
		if err := m.occlude(crops[lo:hi], m.masks[lo:hi]); err != nil {
			return err
		}
	}
	return nil
}

// occlude runs one claim of the occluder and takes each crop's occlusion mask into masks.
func (m *masker) occlude(crops []*raster.Image, masks [][]float32) error {
	l, err := m.occluder.Claim(len(crops))
	if err != nil {
		return err
	}
	defer l.Release()
	norm, layout := occluderNorm, occluderLayout
	for i, c := range crops {
		m.rs.Resize(m.small, m.small.Bounds(), c)
		norm.Pack(l.In(0, i).Float32(), m.small, layout)
	}
	if err := l.Run(); err != nil {
		return err
	}
	for i := range crops {
		align.OcclusionMask(m.tmp, m.size, m.size, l.Output(0, i).Float32()[:occluderSize*occluderSize], occluderSize, occluderSize, &m.ws)
		align.MinInto(masks[i], m.tmp)
	}
	return nil
}

// after finishes the masks of crops (the model's results, 8-bit): region, then the clip.
func (m *masker) after(crops []*raster.Image) error {
	if m.region {
		for lo := 0; lo < len(crops); lo += m.parser.MaxBatch() {
			hi := min(len(crops), lo+m.parser.MaxBatch())
			if err := m.parse(crops[lo:hi], m.masks[lo:hi]); err != nil {
				return err
			}
		}
	}
	for i := range crops {
		align.Clip01(m.masks[i])
	}
	return nil
}

// parse runs one claim of the face parser and takes each crop's region mask into masks.
func (m *masker) parse(crops []*raster.Image, masks [][]float32) error {
	l, err := m.parser.Claim(len(crops))
	if err != nil {
		return err
	}
	defer l.Release()
	norm, layout := parserNorm, parserLayout
	for i, c := range crops {
		m.rs.Resize(m.large, m.large.Bounds(), c)
		norm.Pack(l.In(0, i).Float32(), m.large, layout)
	}
	if err := l.Run(); err != nil {
		return err
	}
	for i := range crops {
		align.RegionMask(m.tmp, m.size, m.size, l.Output(0, i).Float32(), parserLabels, parserSize, parserSize, m.regions, &m.ws)
		align.MinInto(masks[i], m.tmp)
	}
	return nil
}

// Close lets the mask models' engines go (closing those that are the masker's own).
func (m *masker) Close() error {
	var errs []error
	for _, e := range []*infer.Engine{m.occluder, m.parser} {
		if e != nil {
			errs = append(errs, e.Close())
		}
	}
	m.occluder, m.parser = nil, nil
	return joinErrs(errs)
}

func joinErrs(errs []error) error {
	errs = slices.DeleteFunc(errs, func(e error) bool { return e == nil })
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}
