package facemodel

import (
	"fmt"
	"math"
	"sync"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FAN4 is 2dfan4's catalog entry, the landmarker the adapter and the pipeline open: its crop size, normalisation (FaceFusion feeds it its BGR
// crop divided by 255) and heatmap grid (its second output, 68 maps of FAN4Heatmap²).
var FAN4 = catalog.Must("2dfan4")

// Peppa is peppa_wutz's catalog entry: the same crop as 2dfan4's, 68 (x, y, confidence) rows out.
var Peppa = catalog.Must("peppa_wutz")

// Fan68From5 is fan_68_5's catalog entry: FaceFusion's estimate of 68 points from five, whose
// jaw gives the face angle the landmarkers turn their crop by.
var Fan68From5 = catalog.Must("fan_68_5")

// 2dfan4 geometry: a FAN4Size crop in, 68 points on a FAN4Heatmap grid out.
var (
	FAN4Size    = FAN4.Size
	FAN4Heatmap = int(FAN4.Want.Outputs[1].Shape[2])
)

const (
	fan4Reach = 195 // the box's long side spans 195 of the crop's 256 pixels
	// landmarkGrid is the grid both landmarkers give their points on (FaceFusion's /64·256).
	landmarkGrid = 64
)

// DefaultLandmarkerScore is FaceFusion's --face-landmarker-score: below it the detector's
// five points are used for warping instead of the 68 landmarks' five.
const DefaultLandmarkerScore = 0.5

// FAN4Matrix is the frame→crop map of FaceFusion's detect_with_2dfan4 (and
// detect_with_peppa_wutz, the same crop): scale 195/long side of the box (at least 1 px), the
// box centre at the crop centre, then the crop rotated by angle degrees (0, 90, 180 or 270,
// counter-clockwise as cv2.getRotationMatrix2D) about its centre. Other angles are refused:
// FaceFusion's rotated crop would no longer be 256 wide.
func FAN4Matrix(box geom.Rect, angle int) (geom.Affine, error) {
	t, r, err := landmarkMaps(box, angle)
	return t.Then(r), err
}

// landmarkMaps are FaceFusion's two maps: t (warp_face_by_translation, frame → crop) and r
// (create_rotation_matrix_and_size, crop → turned crop), r as cv2.getRotationMatrix2D computes
// it, so the second warp samples where FaceFusion's does.
func landmarkMaps(box geom.Rect, angle int) (t, r geom.Affine, err error) {
	if _, _, err := quarterTurn(angle); err != nil {
		return t, r, err
	}
	s := fan4Reach / math.Max(math.Max(box.W(), box.H()), 1)
	size := float64(FAN4Size)
	t = geom.Affine{A: s, C: (size - (box.X0+box.X1)*s) * 0.5, E: s, F: (size - (box.Y0+box.Y1)*s) * 0.5}
	rad := float64(angle) * (math.Pi / 180)
	a, b := math.Cos(rad), math.Sin(rad)
	c := size / 2
	r = geom.Affine{A: a, B: b, C: (1-a)*c - b*c, D: -b, E: a, F: b*c + (1-a)*c}
	// FaceFusion widens the canvas to the turned square's bounds: none for quarter turns, but
	// the shift is computed, as there, from the unrounded width.
	w := math.Abs(a)*size + math.Abs(b)*size
	h := math.Abs(b)*size + math.Abs(a)*size
	r.C += (w - size) * 0.5
	r.F += (h - size) * 0.5
	return t, r, nil
}

func quarterTurn(angle int) (cos, sin float64, err error) {
	switch ((angle % 360) + 360) % 360 {
	case 0:
		return 1, 0, nil
	case 90:
		return 0, 1, nil
	case 180:
		return -1, 0, nil
	case 270:
		return 0, -1, nil
	}
	return 0, 0, fmt.Errorf("facemodel: face angle %d is not one of FaceFusion's 0, 90, 180, 270", angle)
}

// landmarkBuffers are one crop's working images, pooled so a landmarker run allocates nothing.
type landmarkBuffers struct {
	crop, turned *raster.Image
	lab          []uint8 // L, a, b planes of the turned crop
}

var landmarkPool = sync.Pool{New: func() any {
	n := FAN4Size * FAN4Size
	return &landmarkBuffers{crop: raster.New(FAN4Size, FAN4Size), turned: raster.New(FAN4Size, FAN4Size), lab: make([]uint8, 3*n)}
}}

// PrepareFAN4 writes the 2dfan4 input for the face in box (1·3·256·256 floats, NCHW, BGR,
// v/255) into dst and returns the frame→model-crop map DecodeFAN4 needs: see prepareLandmark.
func PrepareFAN4(dst []float32, frame *raster.Image, box geom.Rect, angle int) (geom.Affine, error) {
	return prepareLandmark(dst, frame, box, angle, FAN4.Norm)
}

// PreparePeppa writes the peppa_wutz input, the same crop as 2dfan4's.
func PreparePeppa(dst []float32, frame *raster.Image, box geom.Rect, angle int) (geom.Affine, error) {
	return prepareLandmark(dst, frame, box, angle, Peppa.Norm)
}

// prepareLandmark is the crop of FaceFusion's detect_with_2dfan4 and detect_with_peppa_wutz:
// the frame warped into a 256 crop around the box (black outside), that crop warped again by
// the face angle's turn (so a turned crop keeps FaceFusion's black edge row where the turn
// about (128, 128) runs off the crop), then conditional_optimize_contrast, then the tensor.
func prepareLandmark(dst []float32, frame *raster.Image, box geom.Rect, angle int, n Norm) (geom.Affine, error) {
	t, r, err := landmarkMaps(box, angle)
	if err != nil {
		return t, err
	}
	b := landmarkPool.Get().(*landmarkBuffers)
	defer landmarkPool.Put(b)
	WarpBlack(b.crop, frame, t)
	crop := b.crop
	if angle%360 != 0 {
		WarpBlack(b.turned, b.crop, r)
		crop = b.turned
	}
	optimizeContrast(crop, b.lab)
	lut := table(n)
	tensorFromImage(dst, crop, n, &lut)
	return t.Then(r), nil
}

// darkLightness is FaceFusion's threshold on the crop's mean Lab lightness (0–255 scale) below
// which it equalises the lightness (CLAHE, clip limit 2, 8×8 tiles).
const darkLightness = 30

// optimizeContrast is FaceFusion's conditional_optimize_contrast on img, in place, through lab
// (3·W·H bytes): cv2.cvtColor(COLOR_RGB2Lab) on its BGR frame, so the conversion takes blue for
// red (our img is RGB: channel 2 goes in as red), CLAHE of the lightness when its mean is under
// 30, and back with COLOR_Lab2RGB. The 8-bit round trip alone changes samples; that is the point.
func optimizeContrast(img *raster.Image, lab []uint8) {
	n := img.W * img.H
	l, a, bb := lab[:n], lab[n:2*n], lab[2*n:3*n]
	sum := 0
	for y := range img.H {
		row := img.Pix[y*img.Stride:]
		for x := range img.W {
			i := y*img.W + x
			p := row[3*x:]
			l[i], a[i], bb[i] = raster.RGBToLab8(p[2], p[1], p[0])
			sum += int(l[i])
		}
	}
	// numpy's mean of the 8-bit plane is exact here (an integer sum over a power-of-two count).
	if float64(sum)/float64(n) < darkLightness {
		raster.CLAHE(l, img.W, img.H, 2, 8, 8)
	}
	for y := range img.H {
		row := img.Pix[y*img.Stride:]
		for x := range img.W {
			i := y*img.W + x
			p := row[3*x:]
			p[2], p[1], p[0] = raster.LabToRGB8(l[i], a[i], bb[i])
		}
	}
}

// DecodeFAN4 maps 2dfan4's outputs back to the frame: landmarks is its first output
// ([1,68,3]: x, y on the 64-grid, and a confidence FaceFusion ignores), heatmaps its second
// ([1,68,64,64]). The points are scaled ×256/64 and taken through the inverse of m. The
// score is FaceFusion's: the mean over points of each heatmap's peak, mapped from [0, 0.9]
// onto [0, 1] and clamped.
func DecodeFAN4(out *face.Landmarks68, landmarks, heatmaps []float32, m geom.Affine) (score float64, err error) {
	hw := FAN4Heatmap * FAN4Heatmap
	if len(landmarks) < 68*3 || len(heatmaps) < 68*hw {
		return 0, fmt.Errorf("facemodel: 2dfan4 gave %d landmark and %d heatmap values, want %d and %d: is the model file 2dfan4.onnx?", len(landmarks), len(heatmaps), 68*3, 68*hw)
	}
	inv, ok := m.Invert()
	if !ok {
		return 0, fmt.Errorf("facemodel: 2dfan4 crop map is singular (empty face box?)")
	}
	k := float32(FAN4Size) / float32(FAN4Heatmap)
	var sum float64
	for i := range 68 {
		p := geom.Pt{X: float64(landmarks[3*i] * k), Y: float64(landmarks[3*i+1] * k)}
		out[i] = inv.Apply(p)
		peak := heatmaps[i*hw]
		for _, v := range heatmaps[i*hw:][:hw] {
			if v > peak {
				peak = v
			}
		}
		sum += float64(peak)
	}
	return min(1, max(0, sum/68/0.9)), nil
}

// DecodePeppa maps peppa_wutz's output (68 rows of x, y on the 64-grid and a confidence) back
// to the frame through the inverse of m, and returns FaceFusion's score: the mean confidence
// mapped from [0, 0.95] onto [0, 1], clamped.
func DecodePeppa(out *face.Landmarks68, pred []float32, m geom.Affine) (score float64, err error) {
	if len(pred) < 68*3 {
		return 0, fmt.Errorf("facemodel: peppa_wutz gave %d values, want %d: is the model file peppa_wutz.onnx?", len(pred), 68*3)
	}
	inv, ok := m.Invert()
	if !ok {
		return 0, fmt.Errorf("facemodel: peppa_wutz crop map is singular (empty face box?)")
	}
	k := float32(Peppa.Size) / landmarkGrid
	var sum float64
	for i := range 68 {
		out[i] = inv.Apply(geom.Pt{X: float64(pred[3*i] * k), Y: float64(pred[3*i+1] * k)})
		sum += float64(pred[3*i+2])
	}
	return min(1, max(0, sum/68/0.95)), nil
}

// PickLandmarks is FaceFusion's detect_face_landmark choice between the landmarkers it ran (nil
// for one it did not, which scores 0): 2dfan4's points unless peppa_wutz's score beats 2dfan4's
// by 0.2 or more. It returns nil where that choice falls on 2dfan4 without a 2dfan4 run
// (peppa_wutz alone scoring under 0.2): FaceFusion's face then has no 68 points at all.
func PickLandmarks(fan4 *face.Landmarks68, s4 float64, peppa *face.Landmarks68, sp float64) (*face.Landmarks68, float64) {
	if fan4 == nil {
		s4 = 0
	}
	if peppa == nil {
		sp = 0
	}
	if s4 > sp-0.2 {
		if fan4 == nil {
			return nil, 0
		}
		return fan4, s4
	}
	return peppa, sp
}

// LandmarkerModels are the models --face-landmarker-model runs beside fan_68_5 (2dfan4,
// peppa_wutz, or many: both); ok is false for a value that is not one of FaceFusion's.
func LandmarkerModels(option string) (names []string, ok bool) {
	switch option {
	case FAN4.Selector():
		return []string{FAN4.Name}, true
	case Peppa.Selector():
		return []string{Peppa.Name}, true
	case LandmarkerMany:
		return []string{FAN4.Name, Peppa.Name}, true
	}
	return nil, false
}

// LandmarkerMany is FaceFusion's --face-landmarker-model value that runs both landmarkers.
const LandmarkerMany = "many"

// Prepare68From5 writes fan_68_5's input (the five points moved into ffhq_512's unit square,
// 10 floats) into dst and returns that move, which Decode68From5 undoes: FaceFusion's
// estimate_face_landmark_68_5.
func Prepare68From5(dst []float32, five [5]geom.Pt) geom.Affine {
	m := align.Estimate(five, align.FFHQ512, 1)
	for i, p := range five {
		q := m.Apply(p)
		dst[2*i], dst[2*i+1] = float32(q.X), float32(q.Y)
	}
	return m
}

// Decode68From5 maps fan_68_5's output (68 points in the unit square) back to the frame.
func Decode68From5(out *face.Landmarks68, pred []float32, m geom.Affine) error {
	if len(pred) < 68*2 {
		return fmt.Errorf("facemodel: fan_68_5 gave %d values, want %d: is the model file fan_68_5.onnx?", len(pred), 68*2)
	}
	inv, ok := m.Invert()
	if !ok {
		return fmt.Errorf("facemodel: the five points do not span a face (all at one place?)")
	}
	for i := range 68 {
		out[i] = inv.Apply(geom.Pt{X: float64(pred[2*i]), Y: float64(pred[2*i+1])})
	}
	return nil
}

// WarpFive is the five points FaceFusion warps a face by (its '5/68'): the 68 landmarks'
// five when the landmarker scored above threshold, else the detector's.
func WarpFive(detector [5]geom.Pt, l *face.Landmarks68, landmarkScore, threshold float64) [5]geom.Pt {
	if l != nil && landmarkScore > threshold {
		return l.Five()
	}
	return detector
}
