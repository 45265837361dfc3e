package adapters

import (
	"errors"
	"fmt"
	"strings"

	"path/filepath"
	"slices"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// blazeSpec is one BlazeFace model's contract: the input side, the anchor strides, and the
// tensor signature the file must have. The outputs come in two heads (16×16 and 8×8 grids),
// each with a score tensor and a regression tensor.
type blazeSpec struct {
	name    string
	size    int
	strides []int
	input   string
	scores  [2]string // per head: [1, n, 1] logits
	boxes   [2]string // per head: [1, n, 16] regressions
	heads   [2]int64  // anchors per head
}

func (s *blazeSpec) signature() infer.Signature {
	f := func(name string, shape ...int64) infer.TensorSpec {
		return infer.TensorSpec{Name: name, Shape: shape, Type: infer.Float32}
	}
	sig := infer.Signature{Inputs: []infer.TensorSpec{f(s.input, 1, int64(s.size), int64(s.size), 3)}}
	for h := range s.heads {
		sig.Outputs = append(sig.Outputs, f(s.scores[h], 1, s.heads[h], 1))
	}
	for h := range s.heads {
		sig.Outputs = append(sig.Outputs, f(s.boxes[h], 1, s.heads[h], blazeCoords))
	}
	return sig
}

// sameTensors compares two tensor lists ignoring their order, which exporters do not keep
// stable.
func sameTensors(a, b []infer.TensorSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y infer.TensorSpec) bool {
			return x.Name == y.Name && x.Type == y.Type && slices.Equal(x.Shape, y.Shape)
		}) {
			return false
		}
	}
	return true
}

// The two MediaPipe BlazeFace models (keijiro's ONNX export): the front-camera model for faces
// filling much of the frame, and the back-camera model at twice the resolution for smaller,
// farther faces. Both decode 896 anchors on 16×16 and 8×8 grids.
var (
	blazeFront128 = &blazeSpec{
		name: "BlazeFace front 128", size: 128, strides: []int{8, 16, 16, 16},
		input:  "input:0",
		scores: [2]string{"Identity:0", "Identity_1:0"},
		boxes:  [2]string{"Identity_2:0", "Identity_3:0"},
		heads:  [2]int64{512, 384},
	}
	blazeBack256 = &blazeSpec{
		name: "BlazeFace back 256", size: 256, strides: []int{16, 32, 32, 32},
		input:  "input:0",
		scores: [2]string{"Identity:0", "Identity_1:0"},
		boxes:  [2]string{"Identity_2:0", "Identity_3:0"},
		heads:  [2]int64{512, 384},
	}
)

// BlazeFace is the MediaPipe BlazeFace face detector on an engine (the file fixes its batch axis
// at 1: each frame is one run, the workers' runs in flight at once on the shared session). Its
// scratch is allocated once, so Detect allocates nothing after the first frame of a given size.
// A BlazeFace is not safe for concurrent use: give each pipeline worker its own (they share the
// engine when the SessionConfig carries an infer.EngineSet).
type BlazeFace struct {
	path     string
	spec     *blazeSpec
	eng      *infer.Engine
	input    int    // the input's index in the file
	scores   [2]int // the heads' outputs' indices
	boxes    [2]int
	anchors  []geom.Pt
	resample letterboxResampler
	cands    []face.Detection
	dets     []face.Detection
}

const blazeKind = "blazeface model"

// NewBlazeFace loads a BlazeFace model (the front 128 or the back 256 export) after checking
// that its inputs and outputs are the ones this adapter decodes. cfg's ModelsDir is ignored:
// the file is modelPath.
func NewBlazeFace(modelPath string, cfg infer.SessionConfig) (*BlazeFace, error) {
	return newBlazeFace(modelPath, cfg, blazeFront128, blazeBack256)
}

// newBlazeFace accepts the model only if its signature is one of specs.
func newBlazeFace(modelPath string, cfg infer.SessionConfig, specs ...*blazeSpec) (*BlazeFace, error) {
	st, err := infer.ModelStat(modelPath)
	if err != nil {
		return nil, fmt.Errorf("%s %s: not found: run `make fetch` or set the model path in the config", blazeKind, modelPath)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s %s: is a directory, not an .onnx file: set the model path in the config", blazeKind, modelPath)
	}
	if cfg.Library != "" {
		if err := infer.Init(cfg.Library); err != nil {
			return nil, err
		}
	}
	found, err := infer.ReadSignature(modelPath)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v: re-fetch it with `make fetch` or fix the model path in the config", blazeKind, modelPath, err)
	}
	var spec *blazeSpec
	want := make([]string, len(specs))
	for i, s := range specs {
		sig := s.signature()
		want[i] = s.name + ": " + sig.String()
		if sameTensors(sig.Inputs, found.Inputs) && sameTensors(sig.Outputs, found.Outputs) {
			spec = s
			break
		}
	}
	if spec == nil {
		return nil, fmt.Errorf("%s %s: unexpected signature: want %s; found %s: use a MediaPipe BlazeFace ONNX export (make fetch provides one)",
			blazeKind, modelPath, strings.Join(want, " or "), found)
	}
	d := &BlazeFace{path: modelPath, spec: spec, anchors: blazeAnchors(spec.size, spec.strides)}
	if len(d.anchors) != int(spec.heads[0]+spec.heads[1]) {
		return nil, fmt.Errorf("%s %s: %d anchors for %d outputs: the anchor layout does not fit this model", blazeKind, modelPath, len(d.anchors), spec.heads[0]+spec.heads[1])
	}
	// The file's own order: the signature matched as a set.
	cfg.ModelsDir, cfg.MaxBatch, cfg.Dims = filepath.Dir(modelPath), 1, nil
	if d.eng, err = infer.OpenEngine(infer.Spec{Name: spec.name, File: filepath.Base(modelPath), Want: found}, cfg); err != nil {
		return nil, err
	}
	index := func(ts []infer.TensorSpec, name string) int {
		return slices.IndexFunc(ts, func(t infer.TensorSpec) bool { return t.Name == name })
	}
	sig := d.eng.Signature()
	d.input = index(sig.Inputs, spec.input)
	for h := range spec.heads {
		d.scores[h], d.boxes[h] = index(sig.Outputs, spec.scores[h]), index(sig.Outputs, spec.boxes[h])
	}
	d.resample.size = spec.size
	d.cands = make([]face.Detection, 0, len(d.anchors))
	d.dets = make([]face.Detection, 0, len(d.anchors))
	return d, nil
}

// InputSize is the side of the square model input in pixels (128 or 256).
func (d *BlazeFace) InputSize() int { return d.spec.size }

// Detect finds faces in img and returns those scoring at least minScore (MediaPipe uses 0.5),
// best first, with boxes and keypoints in img's pixel coordinates. A box may extend past the
// frame edge for a face cut by it. The whole frame is letterboxed into the model input, so faces
// much smaller than a tenth of the frame's long side are not found.
//
// The returned slice aliases the detector's buffer: it is valid until the next Detect or Close.
// Copy it to keep it.
func (d *BlazeFace) Detect(img *raster.Image, minScore float64) ([]face.Detection, error) {
	if d.eng == nil {
		return nil, fmt.Errorf("%s %s: Detect after Close", blazeKind, d.path)
	}
	if img == nil || img.W <= 0 || img.H <= 0 {
		return nil, errors.New("blazeface: empty image")
	}
	l, err := d.eng.Claim(1)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	d.resample.fill(l.In(d.input, 0).Float32(), img)
	if err := l.Run(); err != nil {
		return nil, err
	}
	size := float64(d.spec.size)
	n0 := int(d.spec.heads[0])
	d.cands = decodeBlaze(d.cands[:0], d.anchors[:n0], l.Output(d.scores[0], 0).Float32(), l.Output(d.boxes[0], 0).Float32(), size, minScore)
	d.cands = decodeBlaze(d.cands, d.anchors[n0:], l.Output(d.scores[1], 0).Float32(), l.Output(d.boxes[1], 0).Float32(), size, minScore)
	d.dets = weightedNMS(d.dets[:0], d.cands, nmsIoU)
	box := d.resample.box
	toFrame := func(p geom.Pt) geom.Pt { return box.toFrame(p.Scale(size)) }
	for i := range d.dets {
		det := &d.dets[i]
		p0 := toFrame(geom.Pt{X: det.Box.X0, Y: det.Box.Y0})
		p1 := toFrame(geom.Pt{X: det.Box.X1, Y: det.Box.Y1})
		det.Box = geom.Rect{X0: p0.X, Y0: p0.Y, X1: p1.X, Y1: p1.Y}
		for k := range det.Keypoints {
			det.Keypoints[k] = toFrame(det.Keypoints[k])
		}
	}
	return d.dets, nil
}

// Close lets the engine go (closing it when it is the detector's own). It is safe to call more
// than once.
func (d *BlazeFace) Close() error {
	if d.eng == nil {
		return nil
	}
	err := d.eng.Close()
	d.eng = nil
	return err
}
