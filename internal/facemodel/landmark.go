package facemodel

import (
	"fmt"
	"math"

	"github.com/facefusion-hpc/facefusion/infer/catalog"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FAN4 is 2dfan4's catalog entry, the landmarker the adapter and the pipeline open: its crop size, normalisation (FaceFusion feeds it its BGR
// crop divided by 255) and heatmap grid (its second output, 68 maps of FAN4Heatmap²).
var FAN4 = catalog.Must("2dfan4")

// 2dfan4 geometry: a FAN4Size crop in, 68 points on a FAN4Heatmap grid out.
var (
	FAN4Size    = FAN4.Size
	FAN4Heatmap = int(FAN4.Want.Outputs[1].Shape[2])
)

const (
	fan4Reach = 195 // the box's long side spans 195 of the crop's 256 pixels
)

// DefaultLandmarkerScore is FaceFusion's --face-landmarker-score: below it the detector's
// five points are used for warping instead of the 68 landmarks' five.
const DefaultLandmarkerScore = 0.5

// FAN4Matrix is the frame→crop map of FaceFusion's detect_with_2dfan4: scale 195/long side
// of the box (at least 1 px), the box centre at the crop centre, then the crop rotated by
// angle degrees (0, 90, 180 or 270, counter-clockwise as cv2.getRotationMatrix2D) about its
// centre. Other angles are refused: FaceFusion's rotated crop would no longer be 256 wide.
func FAN4Matrix(box geom.Rect, angle int) (geom.Affine, error) {
	cosA, sinA, err := quarterTurn(angle)
	if err != nil {
		return geom.Affine{}, err
	}
	s := fan4Reach / math.Max(math.Max(box.W(), box.H()), 1)
	tx := (float64(FAN4Size) - (box.X0+box.X1)*s) * 0.5
	ty := (float64(FAN4Size) - (box.Y0+box.Y1)*s) * 0.5
	m := geom.Affine{A: s, C: tx, E: s, F: ty}
	c := float64(FAN4Size) / 2
	r := geom.Affine{A: cosA, B: sinA, C: (1-cosA)*c - sinA*c, D: -sinA, E: cosA, F: sinA*c + (1-cosA)*c}
	return m.Then(r), nil
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

// PrepareFAN4 writes the 2dfan4 input for the face in box (1·3·256·256 floats, NCHW, BGR,
// v/255) into dst and returns the frame→crop map DecodeFAN4 needs. Outside the frame the
// crop is black, as FaceFusion's warp. FaceFusion also boosts the contrast of very dark
// crops (CLAHE when mean Lab lightness < 30); that step is not done here.
func PrepareFAN4(dst []float32, frame *raster.Image, box geom.Rect, angle int) (geom.Affine, error) {
	m, err := FAN4Matrix(box, angle)
	if err != nil {
		return m, err
	}
	t := table(FAN4.Norm)
	warpTensorBlack(dst, FAN4Size, FAN4Size, frame, m, FAN4.Norm, &t)
	return m, nil
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

// FaceAngle is FaceFusion's estimate_face_angle: the direction from jaw point 0 to jaw point
// 16, snapped to the nearest of 0, 90, 180, 270 degrees. FaceFusion applies it to the 68
// points that its fan_68_5 model infers from the detector's five.
func FaceAngle(l *face.Landmarks68) int {
	theta := math.Mod(math.Atan2(l[16].Y-l[0].Y, l[16].X-l[0].X)*180/math.Pi+360, 360)
	best, bestD := 0, math.Inf(1)
	for i, a := range [5]float64{0, 90, 180, 270, 360} {
		if d := math.Abs(a - theta); d < bestD {
			best, bestD = i, d
		}
	}
	return (best * 90) % 360
}

// WarpFive is the five points FaceFusion warps a face by (its '5/68'): the 68 landmarks'
// five when the landmarker scored above threshold, else the detector's.
func WarpFive(detector [5]geom.Pt, l *face.Landmarks68, landmarkScore, threshold float64) [5]geom.Pt {
	if l != nil && landmarkScore > threshold {
		return l.Five()
	}
	return detector
}
