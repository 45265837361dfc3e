package facemodel

import (
	"fmt"
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FaceFusion's defaults: --face-detector-score 0.5, and the NMS IoU it uses with one angle.
const (
	DefaultDetectorScore = 0.5
	DefaultNMSThreshold  = 0.4
)

// anchorStrides are the feature-map strides of scrfd and retinaface; each output triple is
// (scores, box distances, keypoint distances) for one stride, two anchors per cell.
var anchorStrides = [3]int{8, 16, 32}

const anchorsPerCell = 2

// Fit records how a frame was placed in the detector input: shrunk (never enlarged) to W×H
// to fit, top-left aligned, the rest zero. FaceFusion maps outputs back with the ratios of
// the whole-pixel sizes, FrameW/W and FrameH/H, not the scale it resized by.
type Fit struct {
	FrameW, FrameH int
	W, H           int
}

// FitFrame is FaceFusion's restrict_frame: frames larger than size×size on either side are
// scaled by min(size/h, size/w) with the new sides truncated to whole pixels.
func FitFrame(w, h, size int) Fit {
	f := Fit{FrameW: w, FrameH: h, W: w, H: h}
	if w > size || h > size {
		s := min(float64(size)/float64(h), float64(size)/float64(w))
		f.W, f.H = int(float64(w)*s), int(float64(h)*s)
	}
	return f
}

// ToFrame maps a point in detector-input pixels to frame pixels.
func (f Fit) ToFrame(p geom.Pt) geom.Pt {
	return geom.Pt{X: p.X * float64(f.FrameW) / float64(f.W), Y: p.Y * float64(f.FrameH) / float64(f.H)}
}

// ToInput is the inverse of ToFrame.
func (f Fit) ToInput(p geom.Pt) geom.Pt {
	return geom.Pt{X: p.X * float64(f.W) / float64(f.FrameW), Y: p.Y * float64(f.H) / float64(f.FrameH)}
}

// Detector prepares input for and decodes output of one detector model at one size. It
// keeps its scratch buffers between calls, so it is not safe for concurrent use; make one
// per pipeline worker.
type Detector struct {
	Model *catalog.Model
	Size  int
	// Score is the detection threshold (FaceFusion's --face-detector-score) and NMS the IoU
	// above which a lower-scored box is dropped; NewDetector sets FaceFusion's defaults.
	Score, NMS float64

	yolo    bool
	yunet   bool
	lut     [3][256]float32
	resizer raster.Resizer
	canvas  *raster.Image
	cands   []face.Detection
}

// NewDetector checks that FaceFusion offers the detector m at size and returns its processor.
func NewDetector(m *catalog.Model, size int) (*Detector, error) {
	if m.Kind != catalog.Detector {
		return nil, fmt.Errorf("facemodel: %s is a %s, not a face detector: use one of %v", m.Name, m.Kind, catalog.Selectors(catalog.Detector))
	}
	if !slices.Contains(m.Sizes, size) {
		return nil, fmt.Errorf("facemodel: face detector %s does not take size %d: use one of %v", m.Selector(), size, m.Sizes)
	}
	d := &Detector{Model: m, Size: size, Score: DefaultDetectorScore, NMS: DefaultNMSThreshold, yolo: m.Selector() == yoloFace, yunet: m.Selector() == yuNet}
	d.lut = table(m.Norm)
	d.canvas = raster.New(size, size)
	return d, nil
}

// yoloFace is the detector whose output is one [1,20,N] tensor of boxes, not anchor triples.
const yoloFace = "yolo_face"

// yuNet is the detector with one anchor per cell and separate class and objectness scores.
const yuNet = "yunet"

// InputShape is the model input's NCHW shape at batch 1.
func (d *Detector) InputShape() []int64 { return []int64{1, 3, int64(d.Size), int64(d.Size)} }

// OutputLens are the element counts Decode expects, in the model's output order: yolo_face
// one [1,20,N] tensor; scrfd and retinaface scores, boxes and keypoints for strides 8, 16, 32.
func (d *Detector) OutputLens() []int {
	var buf [12]int
	return slices.Clone(d.outputLens(&buf))
}

func (d *Detector) yoloAnchors() int {
	n := 0
	for _, s := range anchorStrides {
		n += (d.Size / s) * (d.Size / s)
	}
	return n
}

// Prepare writes frame as the model's input (3·Size·Size floats, NCHW, BGR) into dst and
// returns the placement Decode needs to map boxes back.
func (d *Detector) Prepare(frame *raster.Image, dst []float32) Fit {
	f := FitFrame(frame.W, frame.H, d.Size)
	clear(d.canvas.Pix)
	if f.W != frame.W || f.H != frame.H {
		d.resizer.Resize(d.canvas, image.Rect(0, 0, f.W, f.H), frame)
	} else {
		for y := range frame.H {
			copy(d.canvas.Pix[y*d.canvas.Stride:], frame.Pix[y*frame.Stride:][:3*frame.W])
		}
	}
	tensorFromImage(dst, d.canvas, d.Model.Norm, &d.lut)
	return f
}

// Decode turns the model's outputs into detections in frame coordinates, appending to dst the
// survivors of the score threshold and NMS, best first (FaceFusion's order). outputs are
// the model's output tensors in order, flat; only their first OutputLens() elements are read.
func (d *Detector) Decode(outputs [][]float32, f Fit, dst []face.Detection) ([]face.Detection, error) {
	var err error
	if d.cands, err = d.Candidates(outputs, f, d.cands[:0]); err != nil {
		return dst, err
	}
	n := len(dst)
	dst = NMS(dst, d.cands, d.Score, d.NMS)
	SetKeypoints(dst[n:])
	return dst, nil
}

// Candidates appends to dst the model's faces scoring at least the threshold, in frame
// coordinates and the model's own order, before NMS: FaceFusion pools them over detectors and
// angles and applies NMS once (see NMSThreshold).
func (d *Detector) Candidates(outputs [][]float32, f Fit, dst []face.Detection) ([]face.Detection, error) {
	var buf [12]int
	lens := d.outputLens(&buf)
	if len(outputs) < len(lens) {
		return dst, fmt.Errorf("facemodel: face detector %s gave %d outputs, want %d: is the model file %s?", d.Model.Selector(), len(outputs), len(lens), d.fileName())
	}
	for i, n := range lens {
		if len(outputs[i]) < n {
			return dst, fmt.Errorf("facemodel: face detector %s output %d holds %d values, want %d at size %d: is the model file %s and --face-detector-size right?", d.Model.Selector(), i, len(outputs[i]), n, d.Size, d.fileName())
		}
	}
	rx, ry := float64(f.FrameW)/float64(f.W), float64(f.FrameH)/float64(f.H)
	switch {
	case d.yolo:
		dst = d.decodeYOLO(dst, outputs[0], rx, ry)
	case d.yunet:
		dst = d.decodeYuNet(dst, outputs, rx, ry)
	default:
		dst = d.decodeAnchors(dst, outputs, rx, ry)
	}
	return dst, nil
}

// SetKeypoints fills the pipeline's BlazeFace-shaped keypoints from Five: 0–2 are the eyes and
// nose, 3 the mouth centre; the ears (4, 5) are unknown and left at zero. Five keeps
// FaceFusion's five points (left eye, right eye, nose tip, left and right mouth corner).
func SetKeypoints(dets []face.Detection) {
	for i := range dets {
		f := &dets[i].Five
		dets[i].Keypoints = [6]geom.Pt{f[0], f[1], f[2], geom.Mean(f[3:5])}
	}
}

func (d *Detector) outputLens(buf *[12]int) []int {
	if d.yolo {
		buf[0] = 20 * d.yoloAnchors()
		return buf[:1]
	}
	if d.yunet { // cls, obj, bbox, kps; per stride 8, 16, 32; one anchor per cell
		for j, k := range [4]int{1, 1, 4, 10} {
			for i, s := range anchorStrides {
				g := d.Size / s
				buf[3*j+i] = k * g * g
			}
		}
		return buf[:12]
	}
	for j, k := range [3]int{1, 4, 10} {
		for i, s := range anchorStrides {
			g := d.Size / s
			buf[3*j+i] = k * g * g * anchorsPerCell
		}
	}
	return buf[:9]
}

func (d *Detector) fileName() string { return d.Model.File }

// decodeAnchors follows FaceFusion's detect_with_scrfd/retinaface: anchor (x, y) of cell
// (row i, column j) is (j, i)·stride, each repeated for the two anchors of the cell; boxes are
// the anchor minus/plus the left, top, right, bottom distances × stride, keypoints the anchor
// plus their offsets × stride. FaceFusion keeps scores ≥ the threshold here (NMS then
// keeps only > it). One FaceFusion quirk is deliberately not copied: it guards each stride
// with numpy.any(keep_indices), which is false when the only kept anchor is index 0, so a
// lone face in the top-left cell is dropped there and kept here.
func (d *Detector) decodeAnchors(dst []face.Detection, out [][]float32, rx, ry float64) []face.Detection {
	for si, s := range anchorStrides {
		g := d.Size / s
		n := g * g * anchorsPerCell
		scores, boxes, kps := out[si][:n], out[si+3][:4*n], out[si+6][:10*n]
		fs := float32(s)
		for k, sc := range scores {
			if float64(sc) < d.Score {
				continue
			}
			cell := k / anchorsPerCell
			ax, ay := float64((cell%g)*s), float64((cell/g)*s)
			b := boxes[4*k:][:4]
			c := face.Detection{Score: float64(sc), Box: normRect(geom.Rect{
				X0: (ax - float64(b[0]*fs)) * rx, Y0: (ay - float64(b[1]*fs)) * ry,
				X1: (ax + float64(b[2]*fs)) * rx, Y1: (ay + float64(b[3]*fs)) * ry,
			})}
			p := kps[10*k:][:10]
			for j := range 5 {
				c.Five[j] = geom.Pt{X: (ax + float64(p[2*j]*fs)) * rx, Y: (ay + float64(p[2*j+1]*fs)) * ry}
			}
			dst = append(dst, c)
		}
	}
	return dst
}

// decodeYOLO follows detect_with_yolo_face: the [1,20,N] output read as N rows of (cx, cy,
// w, h, score, 5 × (x, y, visibility)), kept when score > the threshold.
func (d *Detector) decodeYOLO(dst []face.Detection, out []float32, rx, ry float64) []face.Detection {
	n := d.yoloAnchors()
	at := func(ch, i int) float64 { return float64(out[ch*n+i]) }
	for i := range n {
		sc := at(4, i)
		if !(sc > d.Score) {
			continue
		}
		cx, cy, w, h := at(0, i), at(1, i), at(2, i), at(3, i)
		c := face.Detection{Score: sc, Box: normRect(geom.Rect{
			X0: (cx - w/2) * rx, Y0: (cy - h/2) * ry, X1: (cx + w/2) * rx, Y1: (cy + h/2) * ry,
		})}
		for j := range 5 {
			c.Five[j] = geom.Pt{X: at(5+3*j, i) * rx, Y: at(6+3*j, i) * ry}
		}
		dst = append(dst, c)
	}
	return dst
}

// decodeYuNet follows detect_with_yunet: per stride, the score is class × objectness (kept
// when ≥ the threshold); the anchor of cell (row i, column j) is (j, i)·stride; the box centre
// is the anchor plus its offset × stride, its sides exp(size) × stride; the points the anchor
// plus their offsets × stride.
func (d *Detector) decodeYuNet(dst []face.Detection, out [][]float32, rx, ry float64) []face.Detection {
	for si, s := range anchorStrides {
		g := d.Size / s
		n := g * g
		cls, obj, boxes, kps := out[si][:n], out[si+3][:n], out[si+6][:4*n], out[si+9][:10*n]
		fs := float64(float32(s))
		for k := range n {
			sc := cls[k] * obj[k]
			if float64(sc) < d.Score {
				continue
			}
			ax, ay := float64((k%g)*s), float64((k/g)*s)
			b := boxes[4*k:][:4]
			cx, cy := float64(b[0])*fs+ax, float64(b[1])*fs+ay
			// numpy takes exp of the float32 output in float32.
			w, h := float64(float32(math.Exp(float64(b[2])))*float32(s)), float64(float32(math.Exp(float64(b[3])))*float32(s))
			c := face.Detection{Score: float64(sc), Box: normRect(geom.Rect{
				X0: (cx - w/2) * rx, Y0: (cy - h/2) * ry, X1: (cx + w/2) * rx, Y1: (cy + h/2) * ry,
			})}
			p := kps[10*k:][:10]
			for j := range 5 {
				c.Five[j] = geom.Pt{X: (float64(p[2*j])*fs + ax) * rx, Y: (float64(p[2*j+1])*fs + ay) * ry}
			}
			dst = append(dst, c)
		}
	}
	return dst
}

// normRect is FaceFusion's normalize_bounding_box: corners sorted so X0 ≤ X1, Y0 ≤ Y1.
func normRect(r geom.Rect) geom.Rect {
	if r.X0 > r.X1 {
		r.X0, r.X1 = r.X1, r.X0
	}
	if r.Y0 > r.Y1 {
		r.Y0, r.Y1 = r.Y1, r.Y0
	}
	return r
}

// NMS is cv2.dnn.NMSBoxes as FaceFusion calls it: candidates scoring above score are taken
// best first (ties in input order), and each is kept unless its IoU with an already kept box
// exceeds iou. The kept faces are appended to dst in that order. cands is reordered.
func NMS(dst, cands []face.Detection, score, iou float64) []face.Detection {
	slices.SortStableFunc(cands, func(a, b face.Detection) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	base := len(dst)
	for _, c := range cands {
		if !(c.Score > score) {
			break
		}
		keep := true
		for _, k := range dst[base:] {
			if c.Box.IoU(k.Box) > iou {
				keep = false
				break
			}
		}
		if keep {
			dst = append(dst, c)
		}
	}
	return dst
}
