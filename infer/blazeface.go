package infer

import (
	"errors"
	"fmt"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/logging"
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

func (s *blazeSpec) signature() signature {
	f := ort.TensorElementDataType(ort.TensorElementDataTypeFloat)
	sig := signature{Inputs: []tensorSig{{s.input, []int64{1, int64(s.size), int64(s.size), 3}, f}}}
	for h := range s.heads {
		sig.Outputs = append(sig.Outputs, tensorSig{s.scores[h], []int64{1, s.heads[h], 1}, f})
	}
	for h := range s.heads {
		sig.Outputs = append(sig.Outputs, tensorSig{s.boxes[h], []int64{1, s.heads[h], blazeCoords}, f})
	}
	return sig
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

// BlazeFace is the MediaPipe BlazeFace face detector on one ONNX Runtime session. Its tensors
// and scratch buffers are allocated once, so Detect allocates nothing after the first frame of
// a given size. A BlazeFace is not safe for concurrent use: give each pipeline worker its own.
type BlazeFace struct {
	path     string
	spec     *blazeSpec
	session  *ort.AdvancedSession
	input    *ort.Tensor[float32]
	scores   [2]*ort.Tensor[float32]
	boxes    [2]*ort.Tensor[float32]
	anchors  []geom.Pt
	resample letterboxResampler
	cands    []face.Detection
	dets     []face.Detection
}

const blazeKind = "blazeface model"

// NewBlazeFace loads a BlazeFace model (the front 128 or the back 256 export) after checking
// that its inputs and outputs are the ones this adapter decodes.
func NewBlazeFace(modelPath string, opts Options) (*BlazeFace, error) {
	return newBlazeFace(modelPath, opts, blazeFront128, blazeBack256)
}

// newBlazeFace accepts the model only if its signature is one of specs.
func newBlazeFace(modelPath string, opts Options, specs ...*blazeSpec) (*BlazeFace, error) {
	if err := ensureRuntime(opts); err != nil {
		return nil, err
	}
	found, err := readSignature(blazeKind, modelPath)
	if err != nil {
		return nil, err
	}
	var spec *blazeSpec
	want := make([]string, len(specs))
	for i, s := range specs {
		want[i] = s.name + ": " + s.signature().String()
		if s.signature().equal(found) {
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
	if err := d.open(opts); err != nil {
		d.Close()
		return nil, err
	}
	d.resample.size = spec.size
	d.cands = make([]face.Detection, 0, len(d.anchors))
	d.dets = make([]face.Detection, 0, len(d.anchors))
	return d, nil
}

// open creates the tensors and the session bound to them.
func (d *BlazeFace) open(opts Options) error {
	s := d.spec
	var err error
	tensor := func(shape ...int64) *ort.Tensor[float32] {
		if err != nil {
			return nil
		}
		var t *ort.Tensor[float32]
		t, err = ort.NewEmptyTensor[float32](ort.NewShape(shape...))
		return t
	}
	d.input = tensor(1, int64(s.size), int64(s.size), 3)
	for h := range s.heads {
		d.scores[h] = tensor(1, s.heads[h], 1)
		d.boxes[h] = tensor(1, s.heads[h], blazeCoords)
	}
	if err != nil {
		return fmt.Errorf("%s %s: cannot allocate tensors: %s", blazeKind, d.path, oneLine(err))
	}
	so, err := sessionOptions(opts)
	if err != nil {
		return err
	}
	defer so.Destroy()
	if _, note, err := applyProviders(so, opts.Execution); err != nil {
		return fmt.Errorf("%s %s: %w", blazeKind, d.path, err)
	} else if note != "" {
		logf := opts.Logf
		if logf == nil {
			logf = logging.Default().Warnf
		}
		logf("%s", note)
	}
	d.session, err = ort.NewAdvancedSession(d.path,
		[]string{s.input},
		[]string{s.scores[0], s.scores[1], s.boxes[0], s.boxes[1]},
		[]ort.Value{d.input},
		[]ort.Value{d.scores[0], d.scores[1], d.boxes[0], d.boxes[1]},
		so)
	if err != nil {
		return fmt.Errorf("%s %s: cannot create a session: %s", blazeKind, d.path, oneLine(err))
	}
	return nil
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
	if d.session == nil {
		return nil, fmt.Errorf("%s %s: Detect after Close", blazeKind, d.path)
	}
	if img == nil || img.W <= 0 || img.H <= 0 {
		return nil, errors.New("blazeface: empty image")
	}
	d.resample.fill(d.input.GetData(), img)
	if err := d.session.Run(); err != nil {
		return nil, runError(blazeKind, d.path, err)
	}
	size := float64(d.spec.size)
	n0 := int(d.spec.heads[0])
	d.cands = decodeBlaze(d.cands[:0], d.anchors[:n0], d.scores[0].GetData(), d.boxes[0].GetData(), size, minScore)
	d.cands = decodeBlaze(d.cands, d.anchors[n0:], d.scores[1].GetData(), d.boxes[1].GetData(), size, minScore)
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

// Close releases the session and tensors. It is safe to call more than once.
func (d *BlazeFace) Close() error {
	var errs []error
	if d.session != nil {
		errs = append(errs, d.session.Destroy())
		d.session = nil
	}
	for _, t := range []*ort.Tensor[float32]{d.input, d.scores[0], d.scores[1], d.boxes[0], d.boxes[1]} {
		if t != nil {
			errs = append(errs, t.Destroy())
		}
	}
	d.input, d.scores, d.boxes = nil, [2]*ort.Tensor[float32]{}, [2]*ort.Tensor[float32]{}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s %s: close: %s", blazeKind, d.path, oneLine(err))
	}
	return nil
}
