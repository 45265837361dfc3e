// Package expressionrestorer is FaceFusion's expression_restorer processor: LivePortrait
// puts the target face's original expression back on the face the processors before it
// changed (a swapped face keeps the target's smile).
package expressionrestorer

import (
	"fmt"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	"github.com/facefusion-hpc/facefusion/internal/processors/composite"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

func init() { processors.Register(job.ProcessorExpression, Open) }

// restorer is expression_restorer with its model, factor and areas.
type restorer struct {
	er     *adapters.ExpressionRestorer
	rounds *composite.Rounds
	st     processors.Stats
}

// Open opens expression_restorer_model at expression_restorer_factor and _areas.
func Open(c *processors.Context) (processors.Processor, error) {
	cfg := c.Config
	er, err := adapters.NewExpressionRestorer(cfg.ExpressionRestorerModel, c.Session,
		cfg.ExpressionRestorerFactor, cfg.ExpressionRestorerAreas, c.Mask)
	if err != nil {
		return nil, err
	}
	// The chain takes one face a call: a round is one face, pasted before the next is cut,
	// as FaceFusion's loop does.
	return &restorer{er: er, rounds: composite.NewRounds(er.CropSize(), 1), st: c.Stats}, nil
}

func (p *restorer) ChangesFaces() bool { return true }

// ReadsOriginals: the original expression is read from the frame as the target gave it.
func (p *restorer) ReadsOriginals() bool { return true }

func (p *restorer) Close() error { return p.er.Close() }

// ProcessFaces restores every face of b from its frame in b.Originals.
func (p *restorer) ProcessFaces(b *processors.Batch) error {
	if len(b.Faces) == 0 {
		return nil
	}
	start := time.Now()
	face := func(i int) (*raster.Image, geom.Affine) { return b.Faces[i].Frame, p.er.Align(b.Faces[i].Face.Five) }
	err := p.rounds.Each(len(b.Faces), face, func(lo, _ int, maps []geom.Affine) error {
		f := b.Faces[lo]
		if f.At >= len(b.Originals) || b.Originals[f.At] == nil {
			return fmt.Errorf("expression restorer: frame %d of the batch has no original (the worker keeps one when a step reads it)", f.At)
		}
		crop, mask, err := p.er.Restore(adapters.RestoreRef{Frame: f.Frame, Original: b.Originals[f.At], Five: f.Face.Five}, maps[0])
		if err != nil {
			return err
		}
		align.PasteBack(f.Frame, crop, mask, maps[0])
		return nil
	})
	if err != nil {
		return err
	}
	p.st.Done(processors.StageExpression, start, len(b.Faces))
	return nil
}
