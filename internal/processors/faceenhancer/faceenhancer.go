// Package faceenhancer is FaceFusion's face_enhancer processor: an enhancer model's crops
// blended back into the frames.
package faceenhancer

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

func init() { processors.Register(job.ProcessorEnhance, Open) }

// enhancer is face_enhancer with face_enhancer_model.
type enhancer struct {
	en     *adapters.FaceEnhancer
	rounds *composite.Rounds
	items  []adapters.FaceRef
	st     processors.Stats
}

// Open opens face_enhancer_model at face_enhancer_blend and face_enhancer_weight.
func Open(c *processors.Context) (processors.Processor, error) {
	cfg := c.Config
	en, err := adapters.NewFaceEnhancer(cfg.FaceEnhancerModel, c.Session(cfg.FaceEnhancerModel),
		cfg.FaceEnhancerBlend, cfg.FaceEnhancerWeight, c.Mask)
	if err != nil {
		return nil, err
	}
	return &enhancer{en: en, rounds: composite.NewRounds(en.CropSize(), en.Group()), st: c.Stats}, nil
}

func (p *enhancer) ChangesFaces() bool { return true }

func (p *enhancer) Close() error { return p.en.Close() }

// ProcessFaces enhances every face of b, round by round, each round's crops blended back
// before the next is cut.
func (p *enhancer) ProcessFaces(b *processors.Batch) error {
	p.items = p.items[:0]
	for _, f := range b.Faces {
		p.items = append(p.items, adapters.FaceRef{Frame: f.Frame, Five: f.Face.Five, Landmarks: (*[68]geom.Pt)(&f.Face.Landmarks)})
	}
	start := time.Now()
	if err := p.enhance(p.items); err != nil {
		return err
	}
	p.st.Done(processors.StageEnhance, start, len(p.items))
	return nil
}

// enhance enhances items in place on their frames.
func (p *enhancer) enhance(items []adapters.FaceRef) error {
	face := func(i int) (*raster.Image, geom.Affine) { return items[i].Frame, p.en.Align(items[i].Five) }
	return p.rounds.Each(len(items), face, func(lo, hi int, maps []geom.Affine) error {
		crops, masks, err := p.en.EnhanceCrops(items[lo:hi], maps)
		if err != nil {
			return err
		}
		for i, crop := range crops {
			align.PasteBackEnhanced(items[lo+i].Frame, crop, masks[i], maps[i], p.en.Blend())
		}
		return nil
	})
}
