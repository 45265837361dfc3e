package adapters

import (
	"fmt"
	"path/filepath"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/catalog"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceDetector is one of FaceFusion's face detectors (yolo_face, scrfd, retinaface) on an
// engine: frame in, faces with FaceFusion's five points out. Each frame is one batch-1 run (as
// FaceFusion; the anchor detectors' outputs have no batch axis), the workers' runs in flight at
// once on the shared session. It allocates nothing per frame once it has seen the most faces.
type FaceDetector struct {
	eng  *infer.Engine
	proc *facemodel.Detector
	outs [][]float32
	dets []face.Detection
}

// NewFaceDetector opens the detector FaceFusion calls model (yolo_face, scrfd, retinaface) at
// its --face-detector-size size (0: 640, FaceFusion's default).
func NewFaceDetector(model string, size int, cfg infer.SessionConfig) (*FaceDetector, error) {
	m, err := catalog.Select(catalog.Detector, model)
	if err != nil {
		return nil, fmt.Errorf("%v (--face-detector-model)", err)
	}
	if size == 0 {
		size = m.Size
	}
	proc, err := facemodel.NewDetector(m, size)
	if err != nil {
		return nil, err
	}
	cfg.MaxBatch = 1
	cfg.Dims = map[string][]int64{"input": {1, 3, int64(size), int64(size)}}
	// The anchor detectors' outputs are dynamic in the file: their lengths follow the size.
	if cfg.Library != "" {
		_ = infer.Init(cfg.Library) // a failure is reported by the open below
	}
	if sig, err := infer.ReadSignature(filepath.Join(cfg.ModelsDir, m.File)); err == nil {
		lens := proc.OutputLens()
		for i, o := range sig.Outputs {
			if i >= len(lens) || len(o.Shape) == 0 {
				break
			}
			switch len(o.Shape) {
			case 2: // [anchors, 1|4|10]: the width is the catalog's
				w := m.Want.Outputs[i].Shape[1]
				cfg.Dims[o.Name] = []int64{int64(lens[i]) / w, w}
			case 3: // yolo [1, 20, anchors]
				w := m.Want.Outputs[i].Shape[1]
				cfg.Dims[o.Name] = []int64{1, w, int64(lens[i]) / w}
			}
		}
	}
	eng, err := infer.OpenEngine(m.Spec(), cfg)
	if err != nil {
		return nil, err
	}
	return &FaceDetector{eng: eng, proc: proc, outs: make([][]float32, len(eng.Signature().Outputs))}, nil
}

// Detect finds the faces in img scoring above minScore (FaceFusion's --face-detector-score),
// best first. Each detection has Box, Score, Five (FaceFusion's order: left eye, right eye,
// nose, left and right mouth corner) and Keypoints 0–3 (eyes, nose, mouth centre) for the
// dlib landmark path. The slice is reused by the next call.
func (d *FaceDetector) Detect(img *raster.Image, minScore float64) ([]face.Detection, error) {
	if d.eng == nil {
		return nil, fmt.Errorf("face detector: Detect after Close")
	}
	d.proc.Score = minScore
	l, err := d.eng.Claim(1)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	fit := d.proc.Prepare(img, l.In(0, 0).Float32())
	if err := l.Run(); err != nil {
		return nil, err
	}
	for k := range d.outs {
		d.outs[k] = l.Output(k, 0).Float32()
	}
	d.dets, err = d.proc.Decode(d.outs, fit, d.dets[:0])
	clear(d.outs) // the views end with the lease
	if err != nil {
		return nil, fmt.Errorf("model %s %s: %w", d.eng.Spec().Name, d.eng.Path(), err)
	}
	return d.dets, nil
}

// Close lets the engine go (closing it when it is the detector's own).
func (d *FaceDetector) Close() error {
	if d.eng == nil {
		return nil
	}
	err := d.eng.Close()
	d.eng = nil
	return err
}
