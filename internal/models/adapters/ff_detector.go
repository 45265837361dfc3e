package adapters

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceDetector is FaceFusion's face detection (face_detector.detect_faces and
// detect_faces_by_angle, pooled as get_many_faces pools them) on engines: frame in, faces with
// FaceFusion's five points out. The model is one of yolo_face, scrfd, retinaface, yunet, or
// many (retinaface, scrfd and yolo_face together). Each frame is one batch-1 run per model and
// angle (as FaceFusion; the anchor detectors' outputs have no batch axis), the workers' runs in
// flight at once on the shared sessions.
type FaceDetector struct {
	model  string
	units  []detectorUnit
	opts   FrameOptions
	outs   [][]float32
	cands  []face.Detection
	dets   []face.Detection
	turned *raster.Image // the frame turned by an angle
	padded *raster.Image // the frame with the margin
}

// detectorUnit is one model of the detector: its engine and pre/post-processing.
type detectorUnit struct {
	eng  *infer.Engine
	proc *facemodel.Detector
}

// FrameOptions are what FaceFusion does to the frame around the models: the margin (top,
// right, bottom, left percentages, --face-detector-margin) padded on before detection and the
// angles (--face-detector-angles) the frame is also searched at, turned; nil means {0}.
type FrameOptions struct {
	Margin [4]int
	Angles []int
}

// NewFaceDetector opens the detector FaceFusion calls model at its --face-detector-size size
// (0: 640, FaceFusion's default), every model on cfg, with FaceFusion's default margin and
// angle.
func NewFaceDetector(model string, size int, cfg infer.SessionConfig) (*FaceDetector, error) {
	return OpenFaceDetector(model, size, FrameOptions{}, func(string) infer.SessionConfig { return cfg })
}

// OpenFaceDetector opens the detector FaceFusion calls model at size with opts; cfgFor gives
// each model's session config by its catalog name.
func OpenFaceDetector(model string, size int, opts FrameOptions, cfgFor func(name string) infer.SessionConfig) (*FaceDetector, error) {
	sels := []string{model}
	if model == "many" {
		sels = facemodel.ManyDetectors
	}
	if len(opts.Angles) == 0 {
		opts.Angles = []int{0}
	}
	d := &FaceDetector{model: model, opts: opts}
	for _, sel := range sels {
		m, err := catalog.Select(catalog.Detector, sel)
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("%v or many (--face-detector-model)", err)
		}
		u, err := openUnit(m, size, cfgFor(m.Name))
		if err != nil {
			d.Close()
			return nil, err
		}
		d.units = append(d.units, u)
	}
	n := 0
	for _, u := range d.units {
		n = max(n, len(u.eng.Signature().Outputs))
	}
	d.outs = make([][]float32, n)
	return d, nil
}

func openUnit(m *catalog.Model, size int, cfg infer.SessionConfig) (detectorUnit, error) {
	if size == 0 {
		size = m.Size
	}
	proc, err := facemodel.NewDetector(m, size)
	if err != nil {
		return detectorUnit{}, err
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
			if i >= len(lens) || len(o.Shape) == 0 || i >= len(m.Want.Outputs) {
				break
			}
			want := m.Want.Outputs[i].Shape
			switch {
			case len(o.Shape) == 2 && len(want) == 2: // [anchors, 1|4|10]: the width is the catalog's
				cfg.Dims[o.Name] = []int64{int64(lens[i]) / want[1], want[1]}
			case len(o.Shape) == 3 && len(want) == 3 && want[2] > 0: // yunet [1, cells, 1|4|10]
				cfg.Dims[o.Name] = []int64{1, int64(lens[i]) / want[2], want[2]}
			case len(o.Shape) == 3 && len(want) == 3: // yolo [1, 20, anchors]
				cfg.Dims[o.Name] = []int64{1, want[1], int64(lens[i]) / want[1]}
			}
		}
	}
	eng, err := infer.OpenEngine(m.Spec(), cfg)
	if err != nil {
		return detectorUnit{}, err
	}
	return detectorUnit{eng: eng, proc: proc}, nil
}

// Detect finds the faces in img scoring above minScore (FaceFusion's --face-detector-score),
// best first. Each detection has Box, Score, Five (FaceFusion's order: left eye, right eye,
// nose, left and right mouth corner) and Keypoints 0–3 (eyes, nose, mouth centre) for the
// dlib landmark path. FaceFusion finds no face at all with a score threshold of 0. The slice
// is reused by the next call.
func (d *FaceDetector) Detect(img *raster.Image, minScore float64) ([]face.Detection, error) {
	if d.units == nil {
		return nil, fmt.Errorf("face detector: Detect after Close")
	}
	d.cands, d.dets = d.cands[:0], d.dets[:0]
	for _, angle := range d.opts.Angles {
		frame, back := img, geom.Identity
		if angle != 0 {
			m, w, h := facemodel.Rotation(float64(angle), img.W, img.H)
			if d.turned == nil || cap(d.turned.Pix) < 3*w*h {
				d.turned = raster.New(w, h)
			}
			*d.turned = raster.Image{Pix: d.turned.Pix[:3*w*h], Stride: 3 * w, W: w, H: h}
			facemodel.WarpBlack(d.turned, img, m)
			frame = d.turned
			back, _ = facemodel.InvertAffine(m) // a turn is never singular
		}
		start := len(d.cands)
		if err := d.detectFrame(frame, minScore); err != nil {
			return nil, err
		}
		if angle != 0 {
			for i := range d.cands[start:] {
				facemodel.TransformDetection(&d.cands[start+i], back)
			}
		}
	}
	if !(minScore > 0) || len(d.cands) == 0 {
		return d.dets, nil
	}
	d.dets = facemodel.NMS(d.dets, d.cands, minScore, facemodel.NMSThreshold(d.model, len(d.opts.Angles)))
	facemodel.SetKeypoints(d.dets)
	return d.dets, nil
}

// detectFrame is FaceFusion's detect_faces: the frame with the margin through each model, the
// candidates moved back by the margin, appended to d.cands.
func (d *FaceDetector) detectFrame(frame *raster.Image, minScore float64) error {
	top, right, bottom, left := facemodel.MarginPixels(frame.W, frame.H, d.opts.Margin)
	if top|right|bottom|left != 0 {
		d.padded = facemodel.PadFrame(d.padded, frame, top, right, bottom, left)
		frame = d.padded
	}
	for _, u := range d.units {
		start := len(d.cands)
		var err error
		if d.cands, err = u.detect(frame, minScore, d.outs, d.cands); err != nil {
			return err
		}
		for i := range d.cands[start:] {
			facemodel.ShiftDetection(&d.cands[start+i], left, top)
		}
	}
	return nil
}

func (u detectorUnit) detect(frame *raster.Image, minScore float64, outs [][]float32, dst []face.Detection) ([]face.Detection, error) {
	u.proc.Score = minScore
	l, err := u.eng.Claim(1)
	if err != nil {
		return dst, err
	}
	defer l.Release()
	fit := u.proc.Prepare(frame, l.In(0, 0).Float32())
	if err := l.Run(); err != nil {
		return dst, err
	}
	n := len(u.eng.Signature().Outputs)
	for k := range n {
		outs[k] = l.Output(k, 0).Float32()
	}
	dst, err = u.proc.Candidates(outs[:n], fit, dst)
	clear(outs) // the views end with the lease
	if err != nil {
		return dst, fmt.Errorf("model %s %s: %w", u.eng.Spec().Name, u.eng.Path(), err)
	}
	return dst, nil
}

// Close lets the engines go (closing each that is the detector's own).
func (d *FaceDetector) Close() error {
	var first error
	for _, u := range d.units {
		if err := u.eng.Close(); err != nil && first == nil {
			first = err
		}
	}
	d.units = nil
	return first
}

// Models are the catalog names of the models the detector runs.
func (d *FaceDetector) Models() []string {
	var out []string
	for _, u := range d.units {
		out = append(out, u.proc.Model.Name)
	}
	return slices.Clip(out)
}
