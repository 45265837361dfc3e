// Package lipsyncer is FaceFusion's lip_syncer processor: each selected face's mouth redrawn by
// a lip syncer model from the voice window of its frame's time.
package lipsyncer

import (
	"time"

	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/processors"
)

func init() { processors.Register(job.ProcessorLipSync, Open) }

// syncer is lip_syncer with lip_syncer_model at lip_syncer_weight.
type syncer struct {
	ls    *adapters.LipSyncer
	voice processors.VoiceFrames
	win   audio.Window
	st    processors.Stats
}

// Open opens lip_syncer_model. FaceFusion's masks are its model's (wav2lip's lower-face
// area, edtalk's box) whatever face_mask_types says, and the occlusion mask where it names
// occlusion.
func Open(c *processors.Context) (processors.Processor, error) {
	cfg := c.Config
	ls, err := adapters.NewLipSyncer(cfg.LipSyncerModel, c.Session(cfg.LipSyncerModel), cfg.LipSyncerWeight, c.Mask)
	if err != nil {
		return nil, err
	}
	return &syncer{ls: ls, voice: c.Voice, st: c.Stats}, nil
}

func (p *syncer) ChangesFaces() bool { return true }

func (p *syncer) Close() error { return p.ls.Close() }

// ProcessFaces syncs every face of b, one after another on its frame (a face's paste is in
// the frame before the next face's crop is cut, as FaceFusion's loop over the faces), each
// with its frame's window (b.Indices: the output frame, counted from the trim start, is the
// window's number, as FaceFusion's frame_number − trim_frame_start).
func (p *syncer) ProcessFaces(b *processors.Batch) error {
	start := time.Now()
	for _, f := range b.Faces {
		var win *audio.Window
		if p.voice != nil && f.At < len(b.Indices) && p.voice.Frame(b.Indices[f.At], &p.win) {
			win = &p.win
		}
		if err := p.ls.Sync(f.Frame, f.Face.Five, (*[68]geom.Pt)(&f.Face.Landmarks), win); err != nil {
			return err
		}
	}
	p.st.Done(processors.StageLipSync, start, len(b.Faces))
	return nil
}
