// Package backgroundremover is FaceFusion's background_remover processor: a matting model's
// mask of every frame, the frame despilled and its background filled by the colours given, and
// the mask left as the frame's alpha (Batch.Alphas) for an output that keeps it.
package backgroundremover

import (
	"fmt"
	"slices"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

func init() { processors.Register(job.ProcessorRemoveBackground, Open) }

// remover is background_remover with background_remover_model.
type remover struct {
	model          *catalog.Model
	eng            *infer.Engine
	fill, despillC []int
	s              scratch
	// in and out are each frame's model input and outputs (out[i][k]: output k), outside the
	// engine's buffers; alphas are the masks handed out in Batch.Alphas, reused each batch.
	in     [][]float32
	out    [][][]float32
	alphas []*raster.Alpha
}

// Open opens background_remover_model: one engine per rank, batched over the worker's frames
// where the file's batch axis is dynamic.
func Open(c *processors.Context) (processors.Processor, error) {
	cfg := c.Config
	m, err := catalog.Select(catalog.BackgroundRemover, cfg.BackgroundRemoverModel)
	if err != nil {
		return nil, err
	}
	if len(cfg.BackgroundRemoverFillColor) != 4 || len(cfg.BackgroundRemoverDespillColor) != 4 {
		return nil, fmt.Errorf("background_remover: the fill and despill colours are R G B A")
	}
	eng, err := infer.OpenEngine(m.Spec(), c.Session(m.Name))
	if err != nil {
		return nil, err
	}
	return &remover{model: m, eng: eng, fill: slices.Clone(cfg.BackgroundRemoverFillColor),
		despillC: slices.Clone(cfg.BackgroundRemoverDespillColor)}, nil
}

// ChangesFaces: the frame is despilled and filled, faces included.
func (p *remover) ChangesFaces() bool { return true }

func (p *remover) Close() error { return p.eng.Close() }

// ProcessFrames removes the background of b's frames in place and sets their alphas, as many
// frames to a model run as the engine takes; each frame's bytes are its own.
func (p *remover) ProcessFrames(b *processors.Batch) error {
	for len(b.Alphas) < len(b.Frames) {
		b.Alphas = append(b.Alphas, nil)
	}
	for lo := 0; lo < len(b.Frames); lo += p.eng.MaxBatch() {
		hi := min(len(b.Frames), lo+p.eng.MaxBatch())
		if err := p.run(b, lo, hi); err != nil {
			return fmt.Errorf("background_remover %s: %w", p.model.Name, err)
		}
	}
	return nil
}

// run does frames lo..hi of b with one claim of the engine, the frame-sized work outside it.
func (p *remover) run(b *processors.Batch, lo, hi int) error {
	in := p.model.Want.Inputs[0].Shape[1] * int64(p.model.Size*p.model.Size)
	for len(p.in) < hi-lo {
		p.in, p.out = append(p.in, make([]float32, in)), append(p.out, nil)
	}
	for i, f := range b.Frames[lo:hi] {
		p.s.prepare(p.in[i], f, p.model)
	}
	if err := p.infer(hi - lo); err != nil {
		return err
	}
	for i, f := range b.Frames[lo:hi] {
		k := lo + i
		for len(p.alphas) <= k {
			p.alphas = append(p.alphas, &raster.Alpha{})
		}
		mask := p.alphas[k]
		mask.W, mask.H, mask.Pix = f.W, f.H, grow(mask.Pix, f.W*f.H)
		p.s.maskOf(mask.Pix, p.out[i][0], p.model, f.W, f.H)
		if p.model.Type == catalog.RemoverCorridorKey {
			p.s.replaceFrame(f, p.out[i][1], p.model.Size)
		}
		despill(f, p.despillC)
		fill(f, mask.Pix, p.fill)
		if prev := b.Alphas[k]; prev != nil && prev != mask && prev.W == f.W && prev.H == f.H {
			for j, v := range prev.Pix {
				mask.Pix[j] = min(mask.Pix[j], v)
			}
		}
		b.Alphas[k] = mask
	}
	return nil
}

// infer runs the first n prepared inputs and copies every output out.
func (p *remover) infer(n int) error {
	l, err := p.eng.Claim(n)
	if err != nil {
		return err
	}
	defer l.Release()
	for i := range n {
		l.Input("input", i).SetFloat32(0, p.in[i])
	}
	if err := l.Run(); err != nil {
		return err
	}
	outs := len(p.model.Want.Outputs)
	for i := range n {
		p.out[i] = grow(p.out[i], outs)
		for k := range outs {
			o := l.Output(k, i)
			p.out[i][k] = grow(p.out[i][k], o.Len())
			o.GetFloat32(p.out[i][k], 0)
		}
	}
	return nil
}
