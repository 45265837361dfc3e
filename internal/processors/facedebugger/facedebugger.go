// Package facedebugger is FaceFusion's face_debugger processor: face_debugger_items drawn over
// each selected face.
package facedebugger

import (
	"fmt"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/processors"
)

func init() { processors.Register(job.ProcessorDebug, Open) }

// debugger is face_debugger with face_debugger_items.
type debugger struct {
	d     *facemodel.Debugger
	masks *adapters.CropMasker // the face-mask item's mask types beyond the box; nil: none
}

// MasksWithModels reports whether face_debugger's face-mask needs mask models: a mask type
// beyond the box.
func MasksWithModels(cfg job.Config) bool {
	return cfg.Debugs() && slices.Contains(cfg.FaceDebuggerItems, "face-mask") &&
		slices.ContainsFunc(cfg.FaceMaskTypes, func(t string) bool { return t != "box" })
}

// Open prepares face_debugger_items and, for face-mask, the job's mask models.
func Open(c *processors.Context) (processors.Processor, error) {
	cfg := c.Config
	d, err := facemodel.NewDebugger(cfg.FaceDebuggerItems, cfg.MaskPadding())
	if err != nil {
		return nil, fault.AsUsage(fmt.Errorf("face_debugger_items (--face-debugger-items): %w", err))
	}
	p := &debugger{d: d}
	// FaceFusion's draw_face_mask runs every mask type on its crop, the box unblurred.
	if MasksWithModels(cfg) {
		opt := c.Mask
		opt.Blur = 0
		if p.masks, err = adapters.NewCropMasker(opt, facemodel.DebugCrop, c.Session("")); err != nil {
			return nil, err
		}
		d.UseMasker(p.masks)
	}
	return p, nil
}

// ChangesFaces is false: the debugger's lines and dots are not the face.
func (p *debugger) ChangesFaces() bool { return false }

func (p *debugger) Close() error {
	if p.masks != nil {
		return p.masks.Close()
	}
	return nil
}

// ProcessFaces draws the items over every face of b, in order.
func (p *debugger) ProcessFaces(b *processors.Batch) error {
	for _, f := range b.Faces {
		if err := p.d.Draw(f.Frame, f.Face); err != nil {
			return err
		}
	}
	return nil
}
