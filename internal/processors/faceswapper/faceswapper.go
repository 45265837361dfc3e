// Package faceswapper is FaceFusion's face_swapper processor: a swapper model's crops pasted
// back into the frames, or the classic swapper's warp of the source face.
package faceswapper

import (
	"fmt"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	"github.com/facefusion-hpc/facefusion/internal/processors/composite"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/swap"
)

func init() { processors.Register(job.ProcessorSwap, Open) }

// Open opens face_swapper_model: classic, or one of FaceFusion's swapper models with the
// source rank 0 found.
func Open(c *processors.Context) (processors.Processor, error) {
	if c.Config.FaceSwapperModel == "classic" {
		return &classic{sw: swap.NewSwapper(c.Source.Classic, swap.DefaultOptions()), st: c.Stats}, nil
	}
	return openModel(c)
}

// Balances says whether the swapper mixes each target face's identity into the source
// (--face-swapper-weight other than 0.5, a swapper that takes an embedding): the target faces
// then need their embeddings.
func Balances(cfg job.Config) bool {
	if !cfg.Swaps() || cfg.FaceSwapperModel == "classic" || facemodel.SwapperBalance(cfg.FaceSwapperWeight) == 0 {
		return false
	}
	sw, err := facemodel.LookupSwapper(cfg.FaceSwapperModel)
	return err == nil && sw.Balances()
}

// model is face_swapper with one of FaceFusion's models.
type model struct {
	sw      *adapters.FaceSwapper
	balance bool // the items carry each face's embedding
	rounds  *composite.Rounds
	items   []adapters.FaceRef
	st      processors.Stats
}

func openModel(c *processors.Context) (*model, error) {
	cfg := c.Config
	boost, _ := cfg.PixelBoost()
	sw, err := adapters.NewFaceSwapper(cfg.FaceSwapperModel, c.Session(cfg.FaceSwapperModel),
		adapters.SwapOptions{PixelBoost: boost, Balance: facemodel.SwapperBalance(cfg.FaceSwapperWeight), Mask: c.Mask})
	if err != nil {
		return nil, err
	}
	p := &model{sw: sw, balance: Balances(cfg), rounds: composite.NewRounds(sw.CropSize(), sw.Group()), st: c.Stats}
	if err := p.setSource(c); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// setSource gives the swapper the source face: its identity, or its crop for the swappers that
// take one.
func (p *model) setSource(c *processors.Context) error {
	switch src := c.Source; {
	case !src.WithSource:
		return nil
	case p.sw.TakesSourceFrame():
		if src.Frame == nil {
			return fmt.Errorf("face swapper %s: no source face image (rank 0's analysis did not reach this rank)", c.Config.FaceSwapperModel)
		}
		return p.sw.SetSourceFrame(src.Frame, src.Five)
	default:
		return p.sw.SetSource(*src.Embedding)
	}
}

func (p *model) ChangesFaces() bool { return true }

func (p *model) Close() error { return p.sw.Close() }

// ProcessFaces swaps the source identity into every face of b, round by round, each round's
// crops pasted back before the next is cut.
func (p *model) ProcessFaces(b *processors.Batch) error {
	p.items = p.items[:0]
	for _, f := range b.Faces {
		ref := adapters.FaceRef{Frame: f.Frame, Five: f.Face.Five, Landmarks: (*[68]geom.Pt)(&f.Face.Landmarks)}
		if p.balance {
			ref.Embedding = &f.Face.Embedding
		}
		p.items = append(p.items, ref)
	}
	start := time.Now()
	if err := p.swap(p.items); err != nil {
		return err
	}
	p.st.Done(processors.StageSwap, start, len(p.items))
	return nil
}

// swap swaps items in place on their frames.
func (p *model) swap(items []adapters.FaceRef) error {
	if err := p.sw.Ready(); err != nil {
		return err
	}
	face := func(i int) (*raster.Image, geom.Affine) { return items[i].Frame, p.sw.Align(items[i].Five) }
	return p.rounds.Each(len(items), face, func(lo, hi int, maps []geom.Affine) error {
		outs, masks, err := p.sw.SwapCrops(items[lo:hi], maps)
		if err != nil {
			return err
		}
		for i, out := range outs {
			align.PasteBackFloat(items[lo+i].Frame, out, masks[i], maps[i])
		}
		return nil
	})
}

// classic is face_swapper_model classic: this project's own swapper, the source face warped
// onto each face's 68 landmarks.
type classic struct {
	sw  *swap.Swapper
	lms []face.Landmarks68 // the faces' landmarks, the swapper's own copy
	st  processors.Stats
}

func (p *classic) ChangesFaces() bool { return true }

// AnalyseFace notes what covers f in frame, for the window's vote (swap.Swapper.Votes). Its
// time counts in the swap's stage (most of what Apply's occluders took before the vote).
func (p *classic) AnalyseFace(frame *raster.Image, f *face.Face) {
	start := time.Now()
	f.Cover, f.Looked = p.sw.FindCover(frame, &f.Landmarks), true
	p.st.Done(processors.StageSwap, start, 0)
}

func (p *classic) Close() error { return nil }

// ProcessFaces swaps the source face into every face of b, one after another.
func (p *classic) ProcessFaces(b *processors.Batch) error {
	p.lms = p.lms[:0]
	for _, f := range b.Faces {
		p.lms = append(p.lms, f.Face.Landmarks)
	}
	start := time.Now()
	for i, f := range b.Faces {
		if f.Face.SteadyTone.Weight > 0 {
			// Tone is the frame's own on the window's box (the worker measured it before any
			// processor ran), as steady as the landmarks.
			p.sw.Steady(f.Face.Tone, f.Face.SteadyTone)
		}
		if v := f.Face.Votes; v != nil {
			p.sw.Votes(v.Covers, v.Frames)
		}
		p.sw.Apply(f.Frame, &p.lms[i])
	}
	p.st.Done(processors.StageSwap, start, len(b.Faces))
	return nil
}
