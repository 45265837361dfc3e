package adapters

import (
	"fmt"
	"github.com/facefusion-hpc/facefusion/infer"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Landmarker2DFAN4 is FaceFusion's 2dfan4 68-point landmarker on a session (batch 1).
type Landmarker2DFAN4 struct {
	sess *infer.Session
}

// NewLandmarker2DFAN4 opens 2dfan4.onnx from cfg.ModelsDir.
func NewLandmarker2DFAN4(cfg infer.SessionConfig) (*Landmarker2DFAN4, error) {
	cfg.MaxBatch = 1
	s, err := openModel("2dfan4", cfg)
	if err != nil {
		return nil, err
	}
	return &Landmarker2DFAN4{sess: s}, nil
}

// Landmarks writes the 68 points of the face in box (frame pixels) into out and returns
// FaceFusion's landmark score (0–1; FaceFusion uses the points when it exceeds
// --face-landmarker-score, 0.5).
func (l *Landmarker2DFAN4) Landmarks(img *raster.Image, box geom.Rect, out *face.Landmarks68) (score float64, err error) {
	if l.sess == nil {
		return 0, fmt.Errorf("model 2dfan4: Landmarks after Close")
	}
	m, err := facemodel.PrepareFAN4(l.sess.Inputs()[0].Float32(), img, box, 0)
	if err != nil {
		return 0, err
	}
	if err := l.sess.Run(1); err != nil {
		return 0, err
	}
	outs := l.sess.Outputs()
	score, err = facemodel.DecodeFAN4(out, outs[0].Float32(), outs[1].Float32(), m)
	if err != nil {
		return 0, fmt.Errorf("model 2dfan4 %s: %w", l.sess.Path(), err)
	}
	return score, nil
}

// Close releases the session.
func (l *Landmarker2DFAN4) Close() error {
	if l.sess == nil {
		return nil
	}
	err := l.sess.Close()
	l.sess = nil
	return err
}
