// Package framecolorizer is FaceFusion's frame_colorizer processor: every frame made grey,
// coloured by a colorizer model (ddcolor or deoldify) at frame_colorizer_size, merged back
// under the frame's own lightness and blended by frame_colorizer_blend.
package framecolorizer

import (
	"fmt"
	"path/filepath"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/processors"
)

func init() { processors.Register(job.ProcessorColorize, Open) }

// colorizer is frame_colorizer with frame_colorizer_model.
type colorizer struct {
	model *catalog.Model
	eng   *infer.Engine
	size  int
	blend int
	s     scratch
	// in and out are each frame's model input and output, outside the engine's buffers
	in, out [][]float32
}

// Open opens frame_colorizer_model for frames of frame_colorizer_size: one engine per rank
// (the Context's sessions), batched over the worker's frames where the file's batch axis is
// dynamic.
func Open(c *processors.Context) (processors.Processor, error) {
	cfg := c.Config
	m, err := catalog.Select(catalog.Colorizer, cfg.FrameColorizerModel)
	if err != nil {
		return nil, err
	}
	size, err := cfg.ColorizerSize()
	if err != nil {
		return nil, fmt.Errorf("frame_colorizer_size: %v", err)
	}
	sc := c.Session(m.Name)
	eng, err := openEngine(m, size, sc)
	if err != nil {
		return nil, err
	}
	return &colorizer{model: m, eng: eng, size: size, blend: cfg.FrameColorizerBlend}, nil
}

// openEngine opens m with its sides fixed at size: the input's and, by its name in the file, the
// output's (FaceFusion's sides are dynamic in the file and follow the size it feeds).
func openEngine(m *catalog.Model, size int, sc infer.SessionConfig) (*infer.Engine, error) {
	s := int64(size)
	planes := m.Want.Outputs[0].Shape[1]
	sc.Dims = map[string][]int64{"input": {1, 3, s, s}}
	if sc.Library != "" {
		_ = infer.Init(sc.Library) // a failure is reported by the open below
	}
	if sig, err := infer.ReadSignature(filepath.Join(sc.ModelsDir, m.File)); err == nil && len(sig.Outputs) > 0 {
		sc.Dims[sig.Outputs[0].Name] = []int64{1, planes, s, s}
	}
	return infer.OpenEngine(m.Spec(), sc)
}

// ChangesFaces: the whole frame, faces included, is coloured.
func (p *colorizer) ChangesFaces() bool { return true }

func (p *colorizer) Close() error { return p.eng.Close() }

// ProcessFrames colours b's frames in place, as many to a model run as the engine takes.
// Each frame's bytes are its own: how the frames were grouped does not change them.
func (p *colorizer) ProcessFrames(b *processors.Batch) error {
	for lo := 0; lo < len(b.Frames); lo += p.eng.MaxBatch() {
		hi := min(len(b.Frames), lo+p.eng.MaxBatch())
		if err := p.run(b, lo, hi); err != nil {
			return fmt.Errorf("frame_colorizer %s: %w", p.model.Name, err)
		}
	}
	return nil
}

// run colours frames lo..hi of b in one claim of the engine. The frames are made grey before
// the claim and coloured after it, so that the rank's shared batch waits on no frame-sized work.
func (p *colorizer) run(b *processors.Batch, lo, hi int) error {
	frames := b.Frames[lo:hi]
	n := 3 * p.size * p.size
	for len(p.in) < len(frames) {
		p.in, p.out = append(p.in, make([]float32, n)), append(p.out, nil)
	}
	for i, f := range frames {
		p.s.prepare(p.in[i], f, p.model.Type, p.size)
	}
	if err := p.infer(len(frames)); err != nil {
		return err
	}
	for i, f := range frames {
		p.s.merge(f, p.out[i], p.model.Type, p.size, p.blend)
	}
	return nil
}

// infer runs the first n prepared inputs and copies their outputs out.
func (p *colorizer) infer(n int) error {
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
	for i := range n {
		o := l.Output(0, i)
		p.out[i] = grow(p.out[i], o.Len())
		o.GetFloat32(p.out[i], 0)
	}
	return nil
}
