// Package pipeline is one rank's face pipeline: it analyses the source face once, then streams a
// frame range of the target through decode → detect → landmarks → swap → encode, with the
// stages overlapped, a bounded number of frames in flight, and no allocation per frame.
package pipeline

import (
	"math"
	"sort"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Detector finds faces in a frame (infer.BlazeFace). The result may alias the detector's
// buffers until its next call.
type Detector interface {
	Detect(img *raster.Image, minScore float64) ([]face.Detection, error)
	Close() error
}

// Landmarker places 68 points in a dlib-convention face rectangle (landmark.Predictor);
// PredictMean is the mean of Predict over several boxes.
type Landmarker interface {
	Predict(img *raster.Image, box geom.Rect, out *face.Landmarks68)
	PredictMean(img *raster.Image, boxes []geom.Rect, out *face.Landmarks68)
	MeanShape() face.Landmarks68
}

// Analyzer turns a frame into faces with landmarks. One per goroutine: it reuses its buffers.
type Analyzer struct {
	det     Detector
	lm      Landmarker
	score   float64
	unit    []geom.Pt // the landmarker's mean shape in its unit face rectangle
	anchors [4]geom.Pt
	faces   []face.Face
	boxes   [4]geom.Rect // landmarks' scratch
}

// NewAnalyzer joins a detector (owned by the analyzer from now on) and a shared landmarker.
func NewAnalyzer(det Detector, lm Landmarker, minScore float64) *Analyzer {
	mean := lm.MeanShape()
	return &Analyzer{det: det, lm: lm, score: minScore, unit: append([]geom.Pt(nil), mean[:]...), anchors: keypointAnchors(&mean)}
}

// Close releases the detector.
func (a *Analyzer) Close() error { return a.det.Close() }

// Faces returns the faces of img, largest first. The slice is reused by the next call.
func (a *Analyzer) Faces(img *raster.Image) ([]face.Face, error) {
	dets, err := a.det.Detect(img, a.score)
	if err != nil {
		return nil, err
	}
	a.faces = a.faces[:0]
	for _, d := range dets {
		var f face.Face
		f.Detection = d
		a.landmarks(img, &f)
		a.faces = append(a.faces, f)
	}
	sort.SliceStable(a.faces, func(i, j int) bool { return a.faces[i].Box.Area() > a.faces[j].Box.Area() })
	return a.faces, nil
}

// landmarks runs the landmarker twice. A shape regressor is only as good as the box it
// starts from, and dlib's model was trained on its HOG detector's boxes, not BlazeFace's:
// even a few pixels of systematic offset send it to a wrong shape. So the first box is where
// the landmarker's own mean shape lands when its eyes, nose tip and mouth are fitted to the
// detector's keypoints, and the second is refitted to the first pass's 68 points.
// Each pass is the mean over four boxes (steadyBoxes).
func (a *Analyzer) landmarks(img *raster.Image, f *face.Face) {
	k := f.Keypoints // right eye, left eye (image left, right), nose tip, mouth centre
	a.lm.PredictMean(img, steadyBoxes(&a.boxes, unitBox(geom.Similarity(a.anchors[:], []geom.Pt{k[0], k[1], k[2], k[3]})))[:], &f.Landmarks)
	a.lm.PredictMean(img, steadyBoxes(&a.boxes, unitBox(geom.Similarity(a.unit, f.Landmarks[:])))[:], &f.Landmarks)
}

// BoxShift is how far, in pixels, steadyBoxes moves the landmarker's box each way. dlib's trees
// compare single pixels, so on a still face in a lossy clip a keyframe's change of a level or
// two, or a tenth of a pixel of the detector's box, moved its 68 points by 1.4–2.1 px a point
// from frame to frame (three still clips at crf 23 to 30); the mean over four boxes 1.5 px
// either way moved them by a third of that, and the smoothing window had that much less to
// spread (see "A still face" in docs/performance.md).
const BoxShift = 1.5

// steadyBoxes writes to boxes b moved by BoxShift each way in x and in y, and returns them.
func steadyBoxes(boxes *[4]geom.Rect, b geom.Rect) *[4]geom.Rect {
	for i, d := range [4][2]float64{{-1, -1}, {-1, 1}, {1, -1}, {1, 1}} {
		dx, dy := d[0]*BoxShift, d[1]*BoxShift
		boxes[i] = geom.Rect{X0: b.X0 + dx, Y0: b.Y0 + dy, X1: b.X1 + dx, Y1: b.Y1 + dy}
	}
	return boxes
}

// unitBox is the axis-aligned square that m makes of the unit square, ignoring its rotation
// (the landmarker's boxes are upright).
func unitBox(m geom.Affine) geom.Rect {
	c := m.Apply(geom.Pt{X: 0.5, Y: 0.5})
	side := math.Hypot(m.A, m.D)
	return geom.Rect{X0: c.X - side/2, Y0: c.Y - side/2, X1: c.X + side/2, Y1: c.Y + side/2}
}

// keypointAnchors are the mean shape's counterparts of the detector's first four keypoints.
func keypointAnchors(mean *face.Landmarks68) [4]geom.Pt {
	return [4]geom.Pt{geom.Mean(mean[36:42]), geom.Mean(mean[42:48]), mean[30], geom.Mean(mean[48:68])}
}
