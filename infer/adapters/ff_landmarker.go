package adapters

import (
	"fmt"
	"github.com/facefusion-hpc/facefusion/infer"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Landmarker2DFAN4 is FaceFusion's 2dfan4 68-point landmarker on an engine, one face per run
// (batch 1, the workers' runs in flight at once).
type Landmarker2DFAN4 struct {
	eng *infer.Engine
}

// NewLandmarker2DFAN4 opens 2dfan4.onnx from cfg.ModelsDir.
func NewLandmarker2DFAN4(cfg infer.SessionConfig) (*Landmarker2DFAN4, error) {
	cfg.MaxBatch = 1
	e, err := openModel(facemodel.FAN4.Name, cfg)
	if err != nil {
		return nil, err
	}
	return &Landmarker2DFAN4{eng: e}, nil
}

// Landmarks writes the 68 points of the face in box (frame pixels) into out and returns
// FaceFusion's landmark score (0–1; FaceFusion uses the points when it exceeds
// --face-landmarker-score, 0.5).
func (l *Landmarker2DFAN4) Landmarks(img *raster.Image, box geom.Rect, out *face.Landmarks68) (score float64, err error) {
	if l.eng == nil {
		return 0, fmt.Errorf("model 2dfan4: Landmarks after Close")
	}
	ls, err := l.eng.Claim(1)
	if err != nil {
		return 0, err
	}
	defer ls.Release()
	m, err := facemodel.PrepareFAN4(ls.In(0, 0).Float32(), img, box, 0)
	if err != nil {
		return 0, err
	}
	if err := ls.Run(); err != nil {
		return 0, err
	}
	score, err = facemodel.DecodeFAN4(out, ls.Output(0, 0).Float32(), ls.Output(1, 0).Float32(), m)
	if err != nil {
		return 0, fmt.Errorf("model 2dfan4 %s: %w", l.eng.Path(), err)
	}
	return score, nil
}

// Close lets the engine go (closing it when it is the landmarker's own).
func (l *Landmarker2DFAN4) Close() error {
	if l.eng == nil {
		return nil
	}
	err := l.eng.Close()
	l.eng = nil
	return err
}
