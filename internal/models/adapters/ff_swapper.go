package adapters

import (
	"fmt"
	"path/filepath"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// SwapOptions are a swapper's per-run settings.
type SwapOptions struct {
	// PixelBoost is the crop side FaceFusion's --face-swapper-pixel-boost asks for (its
	// "512x512" is 512): a whole multiple k of the model's size, run as k² tiles. 0 means the
	// model's size.
	PixelBoost int
	// Balance is facemodel.SwapperBalance of FaceFusion's --face-swapper-weight: the share of
	// each target face's own identity mixed into the source (0, the zero value, at FaceFusion's
	// default weight 0.5, leaves the source as it is). Swappers that take a face crop ignore it.
	Balance float32
	Mask    MaskOptions
}

// FaceSwapper is one of FaceFusion's face swappers (inswapper_128(_fp16), hyperswap_*,
// simswap_*, ghost_*, hififace_unofficial_256, blendswap_256, uniface_256) on an engine, with
// its mask models. SwapCrops claims the tiles of consecutive faces up to the engine's MaxBatch,
// which batches them with the other workers'; the result is the same as one at a time.
type FaceSwapper struct {
	model facemodel.Swapper
	tmpl  align.Template
	eng   *infer.Engine
	conv  *infer.Engine
	emap  []float32
	boost int
	tiles int // k², tiles per face
	group int // faces per round
	mask  *masker

	source    []float32 // an embedding, or a face crop's tensor (blendswap, uniface)
	hasSource bool
	balance   float32
	balanced  [][]float32 // per face of a round: the source balanced against it
	srcCrop   *raster.Image
	crops     []*raster.Image
	outs      []*raster.FloatImage
	scratch   []float32 // one tile, for float16 models
}

// NewFaceSwapper opens FaceFusion's swapper model (inswapper_128, inswapper_128_fp16,
// hyperswap_1a_256, …, simswap_256, ghost_1_256, …) from cfg.ModelsDir with the converter
// (crossface_simswap, crossface_ghost) and mask models (xseg_*, bisenet_resnet_*) it needs.
func NewFaceSwapper(model string, cfg infer.SessionConfig, opt SwapOptions) (*FaceSwapper, error) {
	sw, err := facemodel.LookupSwapper(model)
	if err != nil {
		return nil, err
	}
	c := catalog.Must(sw.Name)
	tmpl, ok := align.Templates[string(sw.Template)]
	if !ok {
		return nil, fmt.Errorf("face swapper %s: unknown warp template %s", model, sw.Template)
	}
	boost := opt.PixelBoost
	if boost == 0 {
		boost = sw.Size
	}
	if boost < sw.Size || boost%sw.Size != 0 {
		return nil, fmt.Errorf("face swapper %s: pixel boost %d is not a multiple of its %d px: use one of %v (--face-swapper-pixel-boost)", model, boost, sw.Size, sw.PixelBoost)
	}
	k := boost / sw.Size
	s := &FaceSwapper{model: sw, tmpl: tmpl, boost: boost, tiles: k * k, source: make([]float32, facemodel.EmbeddingLen)}
	if !sw.TakesEmbedding() {
		s.source = make([]float32, 3*sw.SourceSize*sw.SourceSize)
		s.srcCrop = raster.New(sw.SourceSize, sw.SourceSize)
	} else {
		s.balance = opt.Balance
	}
	fail := func(err error) (*FaceSwapper, error) {
		s.Close()
		return nil, err
	}
	if s.eng, err = openModel(model, cfg); err != nil {
		return nil, err
	}
	s.group = max(1, s.eng.MaxBatch()/s.tiles)
	switch sw.Type {
	case facemodel.Inswapper:
		if s.emap, err = infer.Emap(filepath.Join(cfg.ModelsDir, c.File)); err != nil {
			return fail(err)
		}
	case facemodel.Simswap, facemodel.Ghost, facemodel.Hififace:
		sub := cfg
		sub.MaxBatch, sub.SHA256, sub.Dims = 1, "", nil
		if s.conv, err = openModel(sw.Converter, sub); err != nil {
			return fail(fmt.Errorf("face swapper %s needs its embedding converter: %w", model, err))
		}
	}
	if s.mask, err = newMasker(opt.Mask, boost, s.group, true, cfg); err != nil {
		return fail(err)
	}
	for range s.group {
		s.crops = append(s.crops, raster.New(boost, boost))
		s.outs = append(s.outs, facemodel.NewBoostCrop(boost))
	}
	if s.balance != 0 {
		for range s.group {
			s.balanced = append(s.balanced, make([]float32, facemodel.EmbeddingLen))
		}
	}
	s.scratch = make([]float32, 3*sw.Size*sw.Size)
	return s, nil
}

// SetSource sets the identity to swap in, from the source face's arcface embedding; it is
// prepared as FaceFusion's prepare_source_embedding for the model (inswapper: the emap
// projection; hyperswap: the unit embedding; simswap, ghost: through the crossface converter).
func (s *FaceSwapper) SetSource(emb face.Embedding) error {
	if s.eng == nil {
		return fmt.Errorf("face swapper %s: SetSource after Close", s.model.Name)
	}
	if !s.model.TakesEmbedding() {
		return fmt.Errorf("face swapper %s takes the source face as an image: call SetSourceFrame", s.model.Name)
	}
	if s.conv == nil {
		if err := s.model.SourceEmbedding(s.source, &emb, s.emap, nil); err != nil {
			return err
		}
		s.hasSource = true
		return nil
	}
	l, err := s.conv.Claim(1)
	if err != nil {
		return err
	}
	defer l.Release()
	l.In(0, 0).SetFloat32(0, emb.Raw[:])
	if err := l.Run(); err != nil {
		return err
	}
	if err := s.model.SourceEmbedding(s.source, &emb, s.emap, l.Output(0, 0).Float32()[:facemodel.EmbeddingLen]); err != nil {
		return err
	}
	s.hasSource = true
	return nil
}

// TakesSourceFrame says whether the model's source is a face crop (SetSourceFrame) rather than
// an embedding (SetSource).
func (s *FaceSwapper) TakesSourceFrame() bool { return !s.model.TakesEmbedding() }

// SetSourceFrame sets the source of a swapper that takes a face crop (blendswap, uniface): the
// face with five points five in frame, warped as FaceFusion's prepare_source_frame.
func (s *FaceSwapper) SetSourceFrame(frame *raster.Image, five [5]geom.Pt) error {
	if s.eng == nil {
		return fmt.Errorf("face swapper %s: SetSourceFrame after Close", s.model.Name)
	}
	if err := s.model.PrepareSourceFrame(s.source, s.srcCrop, frame, five); err != nil {
		return err
	}
	s.hasSource = true
	return nil
}

// CropSize is the side of the crops the swapper works on: the pixel boost.
func (s *FaceSwapper) CropSize() int { return s.boost }

// Group is how many faces one SwapCrops takes at most.
func (s *FaceSwapper) Group() int { return s.group }

// Align is the frame-to-crop map of the face with five points five.
func (s *FaceSwapper) Align(five [5]geom.Pt) geom.Affine {
	return align.Estimate(five, s.tmpl, s.boost)
}

// Ready says why the swapper cannot swap yet (closed, or no source), nil when it can.
func (s *FaceSwapper) Ready() error {
	if s.eng == nil {
		return fmt.Errorf("face swapper %s: Swap after Close", s.model.Name)
	}
	if !s.hasSource {
		return fmt.Errorf("face swapper %s: no source face: call SetSource first", s.model.Name)
	}
	return nil
}

// SwapCrops swaps the source identity into up to Group faces: items[i]'s face is cut at
// maps[i] (Align), masked, and run with the tiles in claims of up to MaxBatch. It hands back
// each face's swapped crop and its mask, valid until the next call: pasting them into the
// frames is the caller's. No claim is held while the masks run.
func (s *FaceSwapper) SwapCrops(items []FaceRef, maps []geom.Affine) ([]*raster.FloatImage, [][]float32, error) {
	if err := s.Ready(); err != nil {
		return nil, nil, err
	}
	for i, it := range items {
		align.WarpCrop(s.crops[i], it.Frame, maps[i])
		if s.balance != 0 {
			if it.Embedding == nil {
				return nil, nil, fmt.Errorf("face swapper %s: --face-swapper-weight other than %g needs each target face's embedding", s.model.Name, facemodel.DefaultSwapperWeight)
			}
			s.model.BalanceSource(s.balanced[i], s.source, it.Embedding, s.balance)
		}
	}
	crops := s.crops[:len(items)]
	if err := s.mask.before(crops); err != nil {
		return nil, nil, err
	}
	if s.mask.area {
		for i, it := range items {
			if it.Landmarks == nil {
				return nil, nil, fmt.Errorf("face swapper %s: the area mask needs the face's 68 landmarks", s.model.Name)
			}
			s.mask.areaMask(i, it.Landmarks, maps[i])
		}
	}
	b := s.eng.MaxBatch()
	total := len(items) * s.tiles
	for lo := 0; lo < total; lo += b {
		if err := s.swapTiles(lo, min(total, lo+b)); err != nil {
			return nil, nil, err
		}
	}
	if err := s.mask.after(len(items), s.outs); err != nil {
		return nil, nil, err
	}
	return s.outs[:len(items)], s.mask.masks[:len(items)], nil
}

// swapTiles runs tiles lo..hi of the round (tile q is tile q%tiles of face q/tiles) through one
// claim: each item gets its target tile and the source identity.
func (s *FaceSwapper) swapTiles(lo, hi int) error {
	l, err := s.eng.Claim(hi - lo)
	if err != nil {
		return err
	}
	defer l.Release()
	for q := lo; q < hi; q++ {
		crop, tile, tgt := s.crops[q/s.tiles], q%s.tiles, l.Input("target", q-lo)
		if tgt.Type == infer.Float16 {
			s.model.PrepareTarget(s.scratch, crop, tile)
			tgt.SetFloat32(0, s.scratch)
		} else if err := s.model.PrepareTarget(tgt.Float32(), crop, tile); err != nil {
			return err
		}
		src := s.source
		if s.balance != 0 {
			src = s.balanced[q/s.tiles]
		}
		l.Input("source", q-lo).SetFloat32(0, src)
	}
	if err := l.Run(); err != nil {
		return err
	}
	for q := lo; q < hi; q++ {
		res, tile, out := s.outs[q/s.tiles], q%s.tiles, l.Output(0, q-lo)
		src := s.scratch
		if out.Type == infer.Float16 {
			out.GetFloat32(s.scratch, 0)
		} else {
			src = out.Float32()[:len(s.scratch)]
		}
		if err := s.model.FinishOutput(res, src, tile); err != nil {
			return err
		}
	}
	return nil
}

// Close lets the swapper's engines go (closing those that are its own).
func (s *FaceSwapper) Close() error {
	var errs []error
	if s.mask != nil {
		errs = append(errs, s.mask.Close())
		s.mask = nil
	}
	for _, p := range []**infer.Engine{&s.eng, &s.conv} {
		if *p != nil {
			errs = append(errs, (*p).Close())
			*p = nil
		}
	}
	return joinErrs(errs)
}
