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

// FaceDetector is one of FaceFusion's face detectors (yolo_face, scrfd, retinaface) on a
// session: frame in, faces with FaceFusion's five points out. It runs at batch 1 (as
// FaceFusion) and allocates nothing per frame once it has seen the most faces.
type FaceDetector struct {
	sess *infer.Session
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
			case 2: // [anchors, 1|4|10]
				w := int64([]int{1, 4, 10}[i/3])
				cfg.Dims[o.Name] = []int64{int64(lens[i]) / w, w}
			case 3: // yolo [1, 20, anchors]
				cfg.Dims[o.Name] = []int64{1, 20, int64(lens[i]) / 20}
			}
		}
	}
	sess, err := infer.OpenSession(m.Spec(), cfg)
	if err != nil {
		return nil, err
	}
	d := &FaceDetector{sess: sess, proc: proc}
	for _, o := range sess.Outputs() {
		d.outs = append(d.outs, o.Float32())
	}
	return d, nil
}

// Detect finds the faces in img scoring above minScore (FaceFusion's --face-detector-score),
// best first. Each detection has Box, Score, Five (FaceFusion's order: left eye, right eye,
// nose, left and right mouth corner) and Keypoints 0–3 (eyes, nose, mouth centre) for the
// dlib landmark path. The slice is reused by the next call.
func (d *FaceDetector) Detect(img *raster.Image, minScore float64) ([]face.Detection, error) {
	if d.sess == nil {
		return nil, fmt.Errorf("face detector: Detect after Close")
	}
	d.proc.Score = minScore
	fit := d.proc.Prepare(img, d.sess.Inputs()[0].Float32())
	if err := d.sess.Run(1); err != nil {
		return nil, err
	}
	var err error
	if d.dets, err = d.proc.Decode(d.outs, fit, d.dets[:0]); err != nil {
		return nil, fmt.Errorf("model %s %s: %w", d.sess.Spec().Name, d.sess.Path(), err)
	}
	return d.dets, nil
}

// Close releases the session.
func (d *FaceDetector) Close() error {
	if d.sess == nil {
		return nil
	}
	err := d.sess.Close()
	d.sess = nil
	return err
}
