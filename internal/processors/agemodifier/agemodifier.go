// Package agemodifier is FaceFusion's age_modifier processor: each selected face made older or
// younger by age_modifier_model at age_modifier_direction, and pasted back.
package agemodifier

import (
	"time"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/processors"
)

func init() { processors.Register(job.ProcessorAge, Open) }

// modifier is age_modifier with age_modifier_model.
type modifier struct {
	am *adapters.AgeModifier
	st processors.Stats
}

// Open opens age_modifier_model at age_modifier_direction, masked as the job's face masks say.
func Open(c *processors.Context) (processors.Processor, error) {
	am, err := adapters.NewAgeModifier(c.Config.AgeModifierModel, c.Session(c.Config.AgeModifierModel), c.Config.AgeModifierDirection, c.Mask)
	if err != nil {
		return nil, err
	}
	return &modifier{am: am, st: c.Stats}, nil
}

func (p *modifier) ChangesFaces() bool { return true }

func (p *modifier) Close() error { return p.am.Close() }

// ProcessFaces modifies every face of b in FaceFusion's order, each pasted back before the next
// is cut (the model takes one face a run: its direction is the face's own age), so overlapping
// faces see each other's result as in FaceFusion's loop.
func (p *modifier) ProcessFaces(b *processors.Batch) error {
	start := time.Now()
	for _, f := range b.Faces {
		r, err := p.am.ModifyCrop(adapters.FaceRef{Frame: f.Frame, Five: f.Face.Five}, f.Face.Class.Age)
		if err != nil {
			return err
		}
		if r.Float != nil {
			align.PasteBackFloat(f.Frame, r.Float, r.Mask, r.Map)
		} else {
			align.PasteBack(f.Frame, r.Crop, r.Mask, r.Map)
		}
	}
	p.st.Done(processors.StageAge, start, len(b.Faces))
	return nil
}
