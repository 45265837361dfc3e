// Package expressionrestorer is FaceFusion's expression_restorer processor: LivePortrait
// puts the target face's original expression back on the face the processors before it
// changed (a swapped face keeps the target's smile).
package expressionrestorer

import (
	"fmt"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

func init() { processors.Register(job.ProcessorExpression, Open) }

// restorer is expression_restorer with its model, factor and areas.
type restorer struct {
	er *adapters.ExpressionRestorer
	st processors.Stats
}

// Open opens expression_restorer_model at expression_restorer_factor and _areas.
func Open(c *processors.Context) (processors.Processor, error) {
	cfg := c.Config
	er, err := adapters.NewExpressionRestorer(cfg.ExpressionRestorerModel, c.Session,
		cfg.ExpressionRestorerFactor, cfg.ExpressionRestorerAreas, c.Mask)
	if err != nil {
		return nil, err
	}
	return &restorer{er: er, st: c.Stats}, nil
}

func (p *restorer) ChangesFaces() bool { return true }

// ReadsOriginals: the original expression is read from the frame as the target gave it.
func (p *restorer) ReadsOriginals() bool { return true }

func (p *restorer) Close() error { return p.er.Close() }

// ProcessFaces restores every face of b from its frame in b.Originals.
func (p *restorer) ProcessFaces(b *processors.Batch) error {
	at := func(f *processors.Face) geom.Affine { return p.er.Align(f.Face.Five) }
	return processors.FaceByFace(b, p.st, processors.StageExpression, at, func(f *processors.Face, m geom.Affine) (*raster.Image, []float32, error) {
		if f.At >= len(b.Originals) || b.Originals[f.At] == nil {
			return nil, nil, fmt.Errorf("expression restorer: frame %d of the batch has no original (the worker keeps one when a step reads it)", f.At)
		}
		return p.er.Restore(adapters.RestoreRef{Frame: f.Frame, Original: b.Originals[f.At], Five: f.Face.Five}, m)
	})
}
