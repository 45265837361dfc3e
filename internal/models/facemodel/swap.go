package facemodel

import (
	"fmt"
	"image"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// SwapperType groups FaceFusion's swappers by how they take their source and de-normalise
// (catalog.SwapperType).
type SwapperType = catalog.SwapperType

const (
	Inswapper = catalog.Inswapper
	Hyperswap = catalog.Hyperswap
	Simswap   = catalog.Simswap
	Ghost     = catalog.Ghost
	Hififace  = catalog.Hififace
	Blendswap = catalog.Blendswap
	Uniface   = catalog.Uniface
)

// Swapper is one FaceFusion face swapper model's processing (face_swapper/core.py), made from
// its catalog entry by LookupSwapper. The target input is the Template crop at Size, RGB, (v/255 − Mean)/Std,
// NCHW; the output is RGB planes, de-normalised (×Std+Mean) only for ghost, hififace,
// hyperswap and uniface, clipped to [0, 1] and ×255.
type Swapper struct {
	Name      string
	Type      SwapperType
	Template  Template
	Size      int
	Mean, Std [3]float64
	FP16      bool // FaceFusion marks the model's precision fp16
	// Converter is the model (catalog name) FaceFusion passes the raw source embedding through
	// first (inputs 'input' [1,512]); empty when none.
	Converter string
	// PixelBoost are the crop sizes FaceFusion offers (--face-swapper-pixel-boost); the
	// first is its default. A boost of k·Size runs the model on k² interleaved tiles.
	PixelBoost []int
	// SourceTemplate and SourceSize are the source face crop of the swappers that take one
	// (blendswap, uniface).
	SourceTemplate Template
	SourceSize     int
}

// LookupSwapper finds a swapper by FaceFusion's name in the catalog.
func LookupSwapper(name string) (Swapper, error) {
	m, err := catalog.Lookup(name)
	if err != nil || m.Kind != catalog.Swapper {
		return Swapper{}, fmt.Errorf("facemodel: unknown face swapper %q: use one of %v", name, catalog.Selectors(catalog.Swapper))
	}
	return Swapper{Name: m.Name, Type: m.SwapperType, Template: Template(m.Template), Size: m.Size,
		Mean: m.Norm.Mean, Std: m.Norm.Std, FP16: m.FP16, Converter: m.Converter, PixelBoost: m.Sizes,
		SourceTemplate: Template(m.SourceTemplate), SourceSize: m.SourceSize}, nil
}

// TakesEmbedding says whether the model's 'source' input is an embedding ([1,512]); the
// others (blendswap, uniface) take a source face crop instead.
func (s Swapper) TakesEmbedding() bool { return s.Type != Blendswap && s.Type != Uniface }

// TargetNorm is how the target crop is normalised.
func (s Swapper) TargetNorm() Norm { return Norm{Scale: 255, Mean: s.Mean, Std: s.Std} }

// boostFactor checks that crop is a whole multiple k of the model size.
func (s Swapper) boostFactor(w, h int) (int, error) {
	if w != h || w%s.Size != 0 || w == 0 {
		return 0, fmt.Errorf("facemodel: %s crop is %d×%d, want a square multiple of %d (see --face-swapper-pixel-boost)", s.Name, w, h, s.Size)
	}
	return w / s.Size, nil
}

// PrepareTarget writes tile t (0 ≤ t < k², k = crop side / Size) of the target crop as the
// model's 'target' input (3·Size·Size floats) into dst. FaceFusion's pixel boost takes tile
// t = a·k + b to be the crop's pixels (i·k + a, j·k + b); with no boost, k = 1 and the tile is
// the crop.
func (s Swapper) PrepareTarget(dst []float32, crop *raster.Image, t int) error {
	k, err := s.boostFactor(crop.W, crop.H)
	if err != nil {
		return err
	}
	n := s.TargetNorm()
	lut := table(n)
	a, b := t/k, t%k
	hw := s.Size * s.Size
	dst = dst[:3*hw]
	for i := range s.Size {
		row := crop.Pix[(i*k+a)*crop.Stride+3*b:]
		for j := range s.Size {
			px := row[3*k*j:]
			for p := range 3 {
				dst[p*hw+i*s.Size+j] = lut[p][px[channel(n, p)]]
			}
		}
	}
	return nil
}

// FinishOutput writes the model's output for tile t (3·Size·Size floats, RGB planes) into
// crop, the pixel-boosted crop as a float RGB image of 0–255 values over [0,k·Size)². It
// de-normalises for ghost, hififace, hyperswap and uniface, clips to [0, 1] and scales by
// 255 without rounding, as FaceFusion (its paste-back truncates to 8 bits after blending).
func (s Swapper) FinishOutput(crop *raster.FloatImage, src []float32, t int) error {
	k, err := s.boostFactor(crop.Rect.Dx(), crop.Rect.Dy())
	if err != nil {
		return err
	}
	denorm := s.Type == Ghost || s.Type == Hififace || s.Type == Hyperswap || s.Type == Uniface
	a, b := t/k, t%k
	hw := s.Size * s.Size
	src = src[:3*hw]
	for c := range 3 {
		plane := src[c*hw:][:hw]
		std, mean := s.Std[c], s.Mean[c]
		for i := range s.Size {
			row := crop.Pix[(i*k+a)*crop.Stride+3*b+c:]
			for j := range s.Size {
				// float64 like numpy's arithmetic with FaceFusion's list-valued mean/std.
				v := float64(plane[i*s.Size+j])
				if denorm {
					v = v*std + mean
				}
				row[3*k*j] = float32(min(1, max(0, v)) * 255)
			}
		}
	}
	return nil
}

// NewBoostCrop is a zeroed float crop for a swapper at a pixel-boost size.
func NewBoostCrop(size int) *raster.FloatImage {
	f := &raster.FloatImage{}
	f.Reset(image.Rect(0, 0, size, size))
	return f
}

// SourceEmbedding writes the swapper's 'source' input ([1,512]) for the source identity
// into dst, as FaceFusion's prepare_source_embedding:
//   - inswapper: (raw · emap)/‖raw‖, emap being the model's last initializer (512×512,
//     row-major) which the caller reads from the model file;
//   - hyperswap: the normed embedding;
//   - ghost: converted, the output of Converter fed the raw embedding;
//   - simswap, hififace: converted, scaled to unit length.
//
// emap and converted may be nil where the type does not use them.
func (s Swapper) SourceEmbedding(dst []float32, src *face.Embedding, emap, converted []float32) error {
	dst = dst[:EmbeddingLen]
	switch s.Type {
	case Inswapper:
		if len(emap) < EmbeddingLen*EmbeddingLen {
			return fmt.Errorf("facemodel: %s needs its 512×512 emap (the model's last initializer), got %d values: is %s.onnx intact?", s.Name, len(emap), s.Name)
		}
		ProjectEmap(dst, src.Raw[:], emap)
	case Hyperswap:
		copy(dst, src.Norm[:])
	case Ghost, Simswap, Hififace:
		if len(converted) < EmbeddingLen {
			return fmt.Errorf("facemodel: %s needs the 512 outputs of %s, got %d values", s.Name, s.Converter, len(converted))
		}
		if s.Type == Ghost {
			copy(dst, converted[:EmbeddingLen])
		} else {
			normalize(dst, converted[:EmbeddingLen])
		}
	default:
		return fmt.Errorf("facemodel: %s takes a source face crop, not an embedding", s.Name)
	}
	return nil
}

// ProjectEmap is inswapper's source: dst = (raw · emap)/‖raw‖ with emap 512×512 row-major
// (dst[j] = Σ_i raw[i]·emap[i·512 + j] / ‖raw‖).
func ProjectEmap(dst, raw, emap []float32) {
	dst = dst[:EmbeddingLen]
	var acc [EmbeddingLen]float64
	for i, r := range raw[:EmbeddingLen] {
		row := emap[i*EmbeddingLen:][:EmbeddingLen]
		for j, e := range row {
			acc[j] += float64(r) * float64(e)
		}
	}
	n := norm(raw[:EmbeddingLen])
	for j := range dst {
		dst[j] = float32(acc[j] / n)
	}
}

// DefaultSwapperWeight is FaceFusion's --face-swapper-weight, at which the balance leaves the
// source unchanged.
const DefaultSwapperWeight = 0.5

// SwapperBalance is the share of the target face's own identity FaceFusion's
// balance_source_embedding mixes into the source for --face-swapper-weight weight:
// numpy.interp(weight, [0, 1], [0.35, −0.35]) rounded to float32 (0 at the default 0.5,
// where the source is used as it is; 0.35 at weight 0, −0.35 at weight 1).
func SwapperBalance(weight float64) float32 {
	return float32(0.35 + min(1, max(0, weight))*(-0.35-0.35))
}

// Balances says whether the swapper's source is balanced against each target face (the
// swappers that take an embedding; FaceFusion skips blendswap and uniface).
func (s Swapper) Balances() bool { return s.TakesEmbedding() }

// BalanceSource is FaceFusion's balance_source_embedding: dst = src·(1 − w) + target·w in
// float32, w = SwapperBalance(weight), with the target face's embedding as FaceFusion takes
// it: raw for ghost, else divided by its norm in float32 (numpy's linalg.norm of a float32
// vector). dst and src may be the same slice.
func (s Swapper) BalanceSource(dst, src []float32, target *face.Embedding, w float32) {
	dst, src = dst[:EmbeddingLen], src[:EmbeddingLen]
	tgt := target.Raw[:]
	var n float32 = 1
	if s.Type != Ghost {
		n = float32(norm(tgt))
	}
	k := 1 - w
	for i := range dst {
		t := tgt[i]
		if s.Type != Ghost {
			t /= n
		}
		// The conversions keep each product rounded to float32, as numpy's, never fused.
		dst[i] = float32(src[i]*k) + float32(t*w)
	}
}

// PrepareSourceFrame writes the 'source' input of a swapper that takes a face crop (blendswap,
// uniface) into dst (3·SourceSize² floats): FaceFusion's prepare_source_frame, the source frame
// warped by the source face's five points onto SourceTemplate at SourceSize (replicated
// border), RGB, v/255, NCHW. crop is the caller's SourceSize² scratch image, which receives the
// warped face.
func (s Swapper) PrepareSourceFrame(dst []float32, crop, frame *raster.Image, five [5]geom.Pt) error {
	if s.TakesEmbedding() {
		return fmt.Errorf("facemodel: %s takes a source embedding, not a face crop", s.Name)
	}
	tmpl, ok := align.Templates[string(s.SourceTemplate)]
	if !ok || crop.W != s.SourceSize || crop.H != s.SourceSize {
		return fmt.Errorf("facemodel: %s: source crop %d×%d on template %q, want %d×%d on one of FaceFusion's templates", s.Name, crop.W, crop.H, s.SourceTemplate, s.SourceSize, s.SourceSize)
	}
	align.WarpCrop(crop, frame, align.Estimate(five, tmpl, s.SourceSize))
	n := Norm{Scale: 255, Std: [3]float64{1, 1, 1}}
	t := table(n)
	tensorFromImage(dst, crop, n, &t)
	return nil
}
