// Package frameenhancer is FaceFusion's frame_enhancer processor: every frame upscaled by the
// model tile by tile, as FaceFusion's create_tile_frames and merge_tile_frames cut and join it,
// then blended with the frame resized to the upscaled size (blend_merge_frame).
package frameenhancer

import (
	"fmt"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

func init() { processors.Register(job.ProcessorFrameEnhance, Open) }

// enhancer is frame_enhancer with frame_enhancer_model and frame_enhancer_blend.
type enhancer struct {
	model *catalog.Model
	eng   *infer.Engine
	bl    *Blend // frame_enhancer_blend's arithmetic
	st    processors.Stats
	rz    raster.Resizer
	todo  []tile // the batch's tiles, every frame's, in frame then row-major order
}

// tile is tile (row, col) of frame src of a batch, to be upscaled into out.
type tile struct {
	row, col int
	grid     Grid
	src, out *raster.Image
}

// Open opens frame_enhancer_model on the rank's shared session.
func Open(c *processors.Context) (processors.Processor, error) {
	cfg := c.Config
	m, err := catalog.Select(catalog.FrameEnhancer, cfg.FrameEnhancerModel)
	if err != nil {
		return nil, err
	}
	if cfg.FrameEnhancerBlend < 0 || cfg.FrameEnhancerBlend > 100 {
		return nil, fmt.Errorf("frame enhancer blend %d: outside 0..100 (--frame-enhancer-blend)", cfg.FrameEnhancerBlend)
	}
	eng, err := infer.OpenEngine(m.Spec(), c.Session(m.Name))
	if err != nil {
		return nil, err
	}
	return &enhancer{model: m, eng: eng, bl: NewBlend(align.EnhancerWeights(cfg.FrameEnhancerBlend)), st: c.Stats}, nil
}

// ChangesFaces is false: the enhancer changes the whole frame, and its size, not the faces
// as the identity measure reads them (it measures the swap before the upscale).
func (p *enhancer) ChangesFaces() bool { return false }

func (p *enhancer) Close() error { return p.eng.Close() }

// ProcessFrames upscales every frame of b, replacing b.Frames[k] with an image the model's
// scale times its size (b.Out[k] where it fits; and the frame of each of b.Faces with it). The tiles of all of b's frames go
// through the model in claims of the engine's batch, in one fixed order: the bytes are the
// same however frames were grouped.
func (p *enhancer) ProcessFrames(b *processors.Batch) error {
	start := time.Now()
	s := p.model.Scale
	p.todo = p.todo[:0]
	outs := make([]*raster.Image, len(b.Frames))
	for k, f := range b.Frames {
		g := NewGrid(p.model.Tile, f.W, f.H)
		// The output starts as the frame resized to the upscaled size (cv2.resize, INTER_LINEAR):
		// each tile's pixels are blended into it where they land.
		out := outFor(b, k, f.W*s, f.H*s)
		p.rz.Resize(out, out.Bounds(), f)
		outs[k] = out
		for r := range g.Rows {
			for c := range g.Cols {
				p.todo = append(p.todo, tile{row: r, col: c, grid: g, src: f, out: out})
			}
		}
	}
	for lo := 0; lo < len(p.todo); lo += p.eng.MaxBatch() {
		if err := p.run(p.todo[lo:min(lo+p.eng.MaxBatch(), len(p.todo))]); err != nil {
			return err
		}
	}
	for k, out := range outs {
		old := b.Frames[k]
		b.Frames[k] = out
		if k < len(b.Alphas) {
			// A mask an earlier processor left (background_remover's) follows the frame, as
			// FaceFusion's process_frame resizes temp_vision_mask.
			b.Alphas[k] = raster.ResizeAlpha(b.Alphas[k], out.W, out.H)
		}
		for i := range b.Faces {
			if b.Faces[i].Frame == old {
				b.Faces[i].Frame = out
			}
		}
	}
	p.st.Done(processors.StageFrameEnhance, start, len(b.Frames))
	return nil
}

// outFor is the image frame k of b is upscaled into: b.Out[k] when it is w×h and not the frame
// itself (frame_enhancer named twice upscales its own output), else a new one.
func outFor(b *processors.Batch, k, w, h int) *raster.Image {
	if k < len(b.Out) {
		if o := b.Out[k]; o != nil && o.W == w && o.H == h && o != b.Frames[k] {
			return o
		}
	}
	return raster.New(w, h)
}

// run upscales tiles in one claim of the model and blends each into its frame's output.
func (p *enhancer) run(tiles []tile) error {
	l, err := p.eng.Claim(len(tiles))
	if err != nil {
		return err
	}
	defer l.Release()
	size := p.model.Tile.Size
	for i, t := range tiles {
		t.grid.Prepare(l.Input("input", i).Float32(), t.src, t.row, t.col)
	}
	if err := l.Run(); err != nil {
		return fmt.Errorf("frame enhancer %s: %w", p.model.Name, err)
	}
	for i, t := range tiles {
		t.grid.Merge(t.out, l.Output(0, i).Float32(), size*p.model.Scale, p.model.Scale, t.row, t.col, p.bl)
	}
	return nil
}
