package adapters

import (
	"fmt"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
)

// VoiceExtractor is one of FaceFusion's voice extractors (kim_vocal_1, kim_vocal_2,
// uvr_mdxnet) on a session of its own: it runs once a job, on the whole source track
// (audio.ExtractVoice), not per worker. It is an audio.VoiceModel.
type VoiceExtractor struct {
	sess   *infer.Session
	frames int
	item   int // values per block
}

// NewVoiceExtractor opens the voice extractor name from cfg.ModelsDir, one block a run.
func NewVoiceExtractor(name string, cfg infer.SessionConfig) (*VoiceExtractor, error) {
	m, err := catalog.Select(catalog.VoiceExtractor, name)
	if err != nil {
		return nil, err
	}
	cfg.MaxBatch, cfg.Engines = 1, nil
	s, err := infer.OpenSession(m.Spec(), cfg)
	if err != nil {
		return nil, err
	}
	in := s.Inputs()[0]
	return &VoiceExtractor{sess: s, frames: int(in.Shape[3]), item: in.ItemLen()}, nil
}

// Frames is the file's input dimension 3, as FaceFusion reads it.
func (v *VoiceExtractor) Frames() int { return v.frames }

// Run runs blocks blocks, one a session run.
func (v *VoiceExtractor) Run(in []float32, blocks int) ([]float32, error) {
	if len(in) != blocks*v.item {
		return nil, fmt.Errorf("voice extractor %s: %d values for %d blocks of %d", v.sess.Spec().Name, len(in), blocks, v.item)
	}
	out := make([]float32, len(in))
	for b := 0; b < blocks; b++ {
		v.sess.Inputs()[0].SetFloat32(0, in[b*v.item:(b+1)*v.item])
		if err := v.sess.Run(1); err != nil {
			return nil, err
		}
		v.sess.Outputs()[0].GetFloat32(out[b*v.item:(b+1)*v.item], 0)
	}
	return out, nil
}

// Close lets the session go.
func (v *VoiceExtractor) Close() error { return v.sess.Close() }
