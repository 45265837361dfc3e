// Package deepswapper is FaceFusion's deep_swapper processor: each selected face swapped for a
// trained DeepFaceLive identity (deep_swapper_model at deep_swapper_morph) and pasted back.
package deepswapper

import (
	"time"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	"github.com/facefusion-hpc/facefusion/internal/processors/composite"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

func init() { processors.Register(job.ProcessorDeepSwap, Open) }

// swapper is deep_swapper with deep_swapper_model.
type swapper struct {
	ds     *adapters.DeepSwapper
	rounds *composite.Rounds
	items  []adapters.FaceRef
	st     processors.Stats
}

// Open opens deep_swapper_model (FaceFusion's, or a file of models_dir/custom) at
// deep_swapper_morph, masked as the job's face masks say.
func Open(c *processors.Context) (processors.Processor, error) {
	m, err := c.Config.DeepSwapperEntry()
	if err != nil {
		return nil, err
	}
	ds, err := adapters.NewDeepSwapper(m, c.Session(m.Name), c.Config.DeepSwapperMorph, c.Mask)
	if err != nil {
		return nil, err
	}
	return &swapper{ds: ds, rounds: composite.NewRounds(ds.CropSize(), ds.Group()), st: c.Stats}, nil
}

func (p *swapper) ChangesFaces() bool { return true }

func (p *swapper) Close() error { return p.ds.Close() }

// ProcessFaces swaps every face of b, round by round, each round's crops pasted back before the
// next is cut, so overlapping faces see each other's result as in FaceFusion's loop.
func (p *swapper) ProcessFaces(b *processors.Batch) error {
	p.items = p.items[:0]
	for _, f := range b.Faces {
		p.items = append(p.items, adapters.FaceRef{Frame: f.Frame, Five: f.Face.Five, Landmarks: (*[68]geom.Pt)(&f.Face.Landmarks)})
	}
	start := time.Now()
	face := func(i int) (*raster.Image, geom.Affine) { return p.items[i].Frame, p.ds.Align(p.items[i].Five) }
	err := p.rounds.Each(len(p.items), face, func(lo, hi int, maps []geom.Affine) error {
		crops, masks, err := p.ds.SwapCrops(p.items[lo:hi], maps)
		if err != nil {
			return err
		}
		for i, crop := range crops {
			align.PasteBack(p.items[lo+i].Frame, crop, masks[i], maps[i])
		}
		return nil
	})
	if err != nil {
		return err
	}
	p.st.Done(processors.StageDeepSwap, start, len(p.items))
	return nil
}
