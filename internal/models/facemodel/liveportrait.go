package facemodel

import (
	"fmt"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// LivePortrait's chain as FaceFusion 3.8.1 runs it (processors/live_portrait.py and
// expression_restorer/core.py; face_editor runs the same chain with more parts): the crop is
// shrunk to half its side and fed RGB/255 to the feature and motion extractors; the motion
// extractor's pose, scale, translation, expression and keypoints make the keypoints the
// generator warps the feature volume from and to; the generator's RGB output in 0..1 is the
// new crop. Everything here is float32 in numpy's order of operations, so the arithmetic on
// the extractors' outputs rounds as FaceFusion's does.

// LivePortraitPoints is the number of LivePortrait's implicit keypoints (expression and
// motion points are 21×3).
const LivePortraitPoints = 21

// LivePortraitExpression is one face's LivePortrait expression or keypoints, [21][3] (x, y, z).
type LivePortraitExpression [LivePortraitPoints][3]float32

// LivePortraitMotion is the motion extractor's output for one crop, in its output order.
type LivePortraitMotion struct {
	Pitch, Yaw, Roll float32 // degrees
	Scale            float32
	Translation      [3]float32
	Expression       LivePortraitExpression
	Points           LivePortraitExpression // the canonical keypoints (motion_points)
}

// ExpressionMin and ExpressionMax are the bounds FaceFusion's limit_expression clips an
// expression to, per keypoint and axis.
var (
	ExpressionMin = LivePortraitExpression{
		{-2.88067125e-02, -8.12731311e-02, -1.70541159e-03},
		{-4.88598682e-02, -3.32196616e-02, -1.67431499e-04},
		{-6.75425082e-02, -4.28681746e-02, -1.98950816e-04},
		{-7.23103955e-02, -3.28503326e-02, -7.31324719e-04},
		{-3.87073644e-02, -6.01546466e-02, -5.50269964e-04},
		{-6.38048723e-02, -2.23840728e-01, -7.13261834e-04},
		{-3.02710701e-02, -3.93195450e-02, -8.24086510e-06},
		{-2.95799859e-02, -5.39318882e-02, -1.74219604e-04},
		{-2.92359516e-02, -1.53050944e-02, -6.30460854e-05},
		{-5.56493877e-03, -2.34344602e-02, -1.26858242e-04},
		{-4.37593013e-02, -2.77768299e-02, -2.70503685e-02},
		{-1.76926646e-02, -1.91676542e-02, -1.15090821e-04},
		{-8.34268332e-03, -3.99775570e-03, -3.27481248e-05},
		{-3.40162888e-02, -2.81868968e-02, -1.96679524e-04},
		{-2.91855410e-02, -3.97511162e-02, -2.81230678e-05},
		{-1.50395725e-02, -2.49494594e-02, -9.42573533e-05},
		{-1.67938769e-02, -2.00953931e-02, -4.00750607e-04},
		{-1.86435618e-02, -2.48535164e-02, -2.74416432e-02},
		{-4.61211195e-03, -1.21660791e-02, -2.93173041e-04},
		{-4.10017073e-02, -7.43824020e-02, -4.42762971e-02},
		{-1.90370996e-02, -3.74363363e-02, -1.34740388e-02},
	}
	ExpressionMax = LivePortraitExpression{
		{4.46682945e-02, 7.08772913e-02, 4.08344204e-04},
		{2.14308221e-02, 6.15894832e-02, 4.85319615e-05},
		{3.02363783e-02, 4.45043296e-02, 1.28298725e-05},
		{3.05869691e-02, 3.79812494e-02, 6.57040102e-04},
		{4.45670523e-02, 3.97259220e-02, 7.10966764e-04},
		{9.43699256e-02, 9.85926315e-02, 2.02551950e-04},
		{1.61131397e-02, 2.92906128e-02, 3.44733417e-06},
		{5.23825921e-02, 1.07065082e-01, 6.61510974e-04},
		{2.85718683e-03, 8.32320191e-03, 2.39314613e-04},
		{2.57947259e-02, 1.60935968e-02, 2.41853559e-05},
		{4.90833223e-02, 3.43903080e-02, 3.22353356e-02},
		{1.44766076e-02, 3.39248963e-02, 1.42291479e-04},
		{8.75749043e-04, 6.82212645e-03, 2.76097053e-05},
		{1.86958015e-02, 3.84016186e-02, 7.33085908e-05},
		{2.01714113e-02, 4.90544215e-02, 2.34028921e-05},
		{2.46518422e-02, 3.29151377e-02, 3.48571630e-05},
		{2.22457591e-02, 1.21796541e-02, 1.56396593e-04},
		{1.72109623e-02, 3.01626958e-02, 1.36556877e-02},
		{1.83460284e-02, 1.61141958e-02, 2.87440169e-04},
		{3.57594155e-02, 1.80554688e-01, 2.75554154e-02},
		{2.17450950e-02, 8.66811201e-02, 3.34241726e-02},
	}
)

// LimitExpression clips e to ExpressionMin..ExpressionMax, in place (limit_expression).
func LimitExpression(e *LivePortraitExpression) {
	for k := range e {
		for j := range 3 {
			e[k][j] = min(ExpressionMax[k][j], max(ExpressionMin[k][j], e[k][j]))
		}
	}
}

// LivePortraitRotation is create_rotation: scipy's Rotation.from_euler('xyz', [pitch, yaw, roll], degrees)
// as a float32 matrix. Lowercase 'xyz' is extrinsic, R = Rz(roll)·Ry(yaw)·Rx(pitch); scipy
// works in float64, rounded to float32 at the end as FaceFusion's astype does.
func LivePortraitRotation(pitch, yaw, roll float32) [3][3]float32 {
	return LivePortraitRotation64(float64(pitch), float64(yaw), float64(roll))
}

// LivePortraitRotation64 is LivePortraitRotation of angles in float64 (face_editor's edited
// pose, which numpy keeps in float64).
func LivePortraitRotation64(pitch, yaw, roll float64) [3][3]float32 {
	rad := func(d float64) (float64, float64) {
		r := d * (math.Pi / 180)
		return math.Sin(r), math.Cos(r)
	}
	sp, cp := rad(pitch)
	sy, cy := rad(yaw)
	sr, cr := rad(roll)
	m := [3][3]float64{
		{cr * cy, cr*sy*sp - sr*cp, cr*sy*cp + sr*sp},
		{sr * cy, sr*sy*sp + cr*cp, sr*sy*cp - cr*sp},
		{-sy, cy * sp, cy * cp},
	}
	var out [3][3]float32
	for i := range 3 {
		for j := range 3 {
			out[i][j] = float32(m[i][j])
		}
	}
	return out
}

// Keypoints are the points the generator takes for a motion m with expression e:
// scale·(motion_points @ rotationᵀ + e) + translation.
func (m *LivePortraitMotion) Keypoints(rot *[3][3]float32, e *LivePortraitExpression) LivePortraitExpression {
	var out LivePortraitExpression
	for k := range out {
		p := &m.Points[k]
		for j := range 3 {
			// numpy's float32 matmul; every product and sum rounded to float32 (no fused
			// multiply-add: the explicit conversions forbid it)
			r := float32(p[0]*rot[j][0]) + float32(p[1]*rot[j][1])
			r = float32(r) + float32(p[2]*rot[j][2])
			out[k][j] = float32(m.Scale*float32(r+e[k][j])) + m.Translation[j]
		}
	}
	return out
}

// FromOutputs fills m from the motion extractor's seven outputs, in file order.
func (m *LivePortraitMotion) FromOutputs(pitch, yaw, roll, scale, translation, expression, points []float32) error {
	n := 3 * LivePortraitPoints
	if len(pitch) < 1 || len(yaw) < 1 || len(roll) < 1 || len(scale) < 1 || len(translation) < 3 || len(expression) < n || len(points) < n {
		return fmt.Errorf("facemodel: live_portrait motion extractor outputs are short")
	}
	m.Pitch, m.Yaw, m.Roll, m.Scale = pitch[0], yaw[0], roll[0], scale[0]
	copy(m.Translation[:], translation)
	for k := range LivePortraitPoints {
		copy(m.Expression[k][:], expression[3*k:3*k+3])
		copy(m.Points[k][:], points[3*k:3*k+3])
	}
	return nil
}

// Flat writes e as the generator's [21,3] input.
func (e *LivePortraitExpression) Flat(dst []float32) {
	for k := range e {
		copy(dst[3*k:3*k+3], e[k][:])
	}
}

// ExpressionArea is one of expression_restorer_areas: the keypoints whose expression it
// restores from the target face.
type ExpressionArea struct {
	Name   string
	Points []int
}

// ExpressionAreas are FaceFusion's areas (restrict_expression_areas). The keypoints in
// neither (0, 4, 5, 8, 9) always keep the processed face's expression.
var ExpressionAreas = []ExpressionArea{
	{"upper-face", []int{1, 2, 6, 10, 11, 12, 13, 15, 16}},
	{"lower-face", []int{3, 7, 14, 17, 18, 19, 20}},
}

// RestoreExpression is apply_restore's expression: target's (the unprocessed face) in the
// areas named, temp's (the processed face) elsewhere, mixed with temp's by factor
// (numpy.interp(factor, [0, 100], [0, 1.2]) of --expression-restorer-factor), then limited.
func RestoreExpression(target, temp *LivePortraitExpression, areas []string, factor int) LivePortraitExpression {
	out := *target
	keep := map[int]bool{0: true, 4: true, 5: true, 8: true, 9: true}
	for _, a := range ExpressionAreas {
		if !contains(areas, a.Name) {
			for _, k := range a.Points {
				keep[k] = true
			}
		}
	}
	for k := range keep {
		out[k] = temp[k]
	}
	f := RestoreFactor(factor)
	a, b := float32(f), float32(1-f)
	for k := range out {
		for j := range 3 {
			out[k][j] = float32(out[k][j]*a) + float32(temp[k][j]*b)
		}
	}
	LimitExpression(&out)
	return out
}

// RestoreFactor is numpy.interp(factor, [0, 100], [0, 1.2]) as numpy computes it: the end
// point exactly, elsewhere slope·x.
func RestoreFactor(factor int) float64 {
	if factor >= 100 {
		return 1.2
	}
	if factor <= 0 {
		return 0
	}
	slope := (1.2 - 0) / (100.0 - 0)
	return slope*float64(factor) + 0
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// PrepareLivePortrait writes crop (2n×2n) as LivePortrait's input (n×n, prepare_crop_frame):
// cv2.resize to half with INTER_AREA, which for an exact halving is the 2×2 mean rounded,
// (sum + 2) >> 2, then RGB planes of v/255 (computed in float64, stored as float32).
func PrepareLivePortrait(dst []float32, crop *raster.Image) error {
	if crop.W != crop.H || crop.W%2 != 0 {
		return fmt.Errorf("facemodel: live_portrait crop is %d×%d, want an even square", crop.W, crop.H)
	}
	n := crop.W / 2
	if len(dst) < 3*n*n {
		return fmt.Errorf("facemodel: live_portrait input holds %d values, want %d", len(dst), 3*n*n)
	}
	for y := range n {
		r0 := crop.Pix[2*y*crop.Stride:]
		r1 := crop.Pix[(2*y+1)*crop.Stride:]
		for x := range n {
			for c := range 3 {
				s := int(r0[6*x+c]) + int(r0[6*x+3+c]) + int(r1[6*x+c]) + int(r1[6*x+3+c])
				dst[c*n*n+y*n+x] = float32(float64((s+2)>>2) / 255.0)
			}
		}
	}
	return nil
}

// FinishLivePortrait writes the generator's output (RGB planes, crop.W×crop.H) into crop as
// normalize_crop_frame: clip to 0..1, ·255 in float32, truncated to 8 bits (astype(uint8)).
func FinishLivePortrait(crop *raster.Image, src []float32) error {
	hw := crop.W * crop.H
	if len(src) < 3*hw {
		return fmt.Errorf("facemodel: live_portrait output holds %d values, want %d", len(src), 3*hw)
	}
	for c := range 3 {
		plane := src[c*hw:][:hw]
		for y := range crop.H {
			row := crop.Pix[y*crop.Stride+c:]
			for x := range crop.W {
				v := min(1, max(0, plane[y*crop.W+x]))
				row[3*x] = uint8(float32(v * 255))
			}
		}
	}
	return nil
}
