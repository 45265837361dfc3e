package facemodel

import "math"

// face_editor's arithmetic (processors/modules/face_editor/core.py, apply_edit) on the
// LivePortrait chain: the sliders move the motion extractor's expression and pose, the eye and
// lip retargeters add a move of the keypoints for the eyes' and the lip's opening, and the
// stitcher makes the generator's source keypoints. numpy 1.24's promotions set the rounding:
// an expression value plus numpy.interp's float64 is computed in float64 and stored as
// float32; the edited angles stay float64 up to scipy's rotation; the retargeters' output
// times the slider's absolute value is float32.

// FaceEditorSliders are face_editor's fourteen sliders, each -1..1 (0: no change).
type FaceEditorSliders struct {
	EyebrowDirection, EyeGazeHorizontal, EyeGazeVertical, EyeOpenRatio, LipOpenRatio float64
	MouthGrim, MouthPout, MouthPurse, MouthSmile                                     float64
	MouthPositionHorizontal, MouthPositionVertical                                   float64
	HeadPitch, HeadYaw, HeadRoll                                                     float64
}

// Interp is numpy.interp(x, [-1, 1], [lo, hi]) as numpy 1.24 computes it: the ends exactly
// (and beyond them), elsewhere slope·(x − xp[0]) + fp[0], slope (fp[1] − fp[0]) / 2.
func Interp(x, lo, hi float64) float64 {
	if x <= -1 {
		return lo
	}
	if x >= 1 {
		return hi
	}
	slope := (hi - lo) / 2
	return float64(slope*(x+1)) + lo
}

// add is FaceFusion's expression[0, k, j] += v: float32 + float64 in float64, stored as float32.
func (e *LivePortraitExpression) add(k, j int, v float64) {
	e[k][j] = float32(float64(e[k][j]) + v)
}

// EditExpression applies the expression sliders to e in apply_edit's order (eye gaze, mouth
// grim, position, pout, purse, smile, eyebrow) and limits it (limit_expression).
func EditExpression(e *LivePortraitExpression, s *FaceEditorSliders) {
	in := Interp
	// edit_eye_gaze
	if h := s.EyeGazeHorizontal; h > 0 {
		e.add(11, 0, in(h, -0.015, 0.015))
		e.add(15, 0, in(h, -0.020, 0.020))
	} else {
		e.add(11, 0, in(h, -0.020, 0.020))
		e.add(15, 0, in(h, -0.015, 0.015))
	}
	v := s.EyeGazeVertical
	e.add(1, 1, in(v, -0.0025, 0.0025))
	e.add(2, 1, -in(v, -0.0025, 0.0025))
	e.add(11, 1, -in(v, -0.010, 0.010))
	e.add(13, 1, -in(v, -0.005, 0.005))
	e.add(15, 1, -in(v, -0.010, 0.010))
	e.add(16, 1, -in(v, -0.005, 0.005))
	// edit_mouth_grim
	if g := s.MouthGrim; g > 0 {
		e.add(17, 2, -in(g, -0.005, 0.005))
		e.add(19, 2, in(g, -0.01, 0.01))
		e.add(20, 1, -in(g, -0.06, 0.06))
		e.add(20, 2, -in(g, -0.03, 0.03))
	} else {
		e.add(19, 1, -in(g, -0.05, 0.05))
		e.add(19, 2, -in(g, -0.02, 0.02))
		e.add(20, 2, -in(g, -0.03, 0.03))
	}
	// edit_mouth_position
	e.add(19, 0, in(s.MouthPositionHorizontal, -0.05, 0.05))
	e.add(20, 0, in(s.MouthPositionHorizontal, -0.04, 0.04))
	if p := s.MouthPositionVertical; p > 0 {
		e.add(19, 1, -in(p, -0.04, 0.04))
		e.add(20, 1, -in(p, -0.02, 0.02))
	} else {
		e.add(19, 1, -in(p, -0.05, 0.05))
		e.add(20, 1, -in(p, -0.04, 0.04))
	}
	editMouth(e, s)
	// edit_eyebrow_direction
	if b := s.EyebrowDirection; b > 0 {
		e.add(1, 1, in(b, -0.015, 0.015))
		e.add(2, 1, -in(b, -0.020, 0.020))
	} else {
		e.add(1, 0, -in(b, -0.015, 0.015))
		e.add(2, 0, in(b, -0.020, 0.020))
		e.add(1, 1, in(b, -0.005, 0.005))
		e.add(2, 1, -in(b, -0.005, 0.005))
	}
	LimitExpression(e)
}

// editMouth is edit_mouth_pout, edit_mouth_purse and edit_mouth_smile, in that order.
func editMouth(e *LivePortraitExpression, s *FaceEditorSliders) {
	in := Interp
	if p := s.MouthPout; p > 0 {
		e.add(19, 1, -in(p, -0.022, 0.022))
		e.add(19, 2, in(p, -0.025, 0.025))
		e.add(20, 2, -in(p, -0.002, 0.002))
	} else {
		e.add(19, 1, in(p, -0.022, 0.022))
		e.add(19, 2, in(p, -0.025, 0.025))
		e.add(20, 2, -in(p, -0.002, 0.002))
	}
	if p := s.MouthPurse; p > 0 {
		e.add(19, 1, -in(p, -0.04, 0.04))
		e.add(19, 2, -in(p, -0.02, 0.02))
	} else {
		e.add(14, 1, -in(p, -0.02, 0.02))
		e.add(17, 2, in(p, -0.01, 0.01))
		e.add(19, 2, -in(p, -0.015, 0.015))
		e.add(20, 2, -in(p, -0.002, 0.002))
	}
	if m := s.MouthSmile; m > 0 {
		e.add(20, 1, -in(m, -0.015, 0.015))
		e.add(14, 1, -in(m, -0.025, 0.025))
		e.add(17, 1, in(m, -0.01, 0.01))
		e.add(17, 2, in(m, -0.004, 0.004))
		e.add(3, 1, -in(m, -0.0045, 0.0045))
		e.add(7, 1, -in(m, -0.0045, 0.0045))
	} else {
		e.add(14, 1, -in(m, -0.02, 0.02))
		e.add(17, 1, in(m, -0.003, 0.003))
		e.add(19, 1, in(m, -0.02, 0.02))
		e.add(19, 2, -in(m, -0.005, 0.005))
		e.add(20, 2, in(m, -0.01, 0.01))
		e.add(3, 1, in(m, -0.0045, 0.0045))
		e.add(7, 1, in(m, -0.0045, 0.0045))
	}
}

// EditRotation is edit_head_rotation: the motion's pose plus the head sliders' degrees
// (pitch ±20, yaw ±60, roll ±15, pitch and yaw reversed), in float64, limited to
// limit_angle's bounds about the face's own pose, as create_rotation's matrix.
func (m *LivePortraitMotion) EditRotation(s *FaceEditorSliders) [3][3]float32 {
	pitch := float64(m.Pitch) + Interp(s.HeadPitch, 20, -20)
	yaw := float64(m.Yaw) + Interp(s.HeadYaw, 60, -60)
	roll := float64(m.Roll) + Interp(s.HeadRoll, -15, 15)
	clip := func(v float64, own float32, lo, hi float64) float64 {
		// calculate_euler_limits: a face turned past a bound widens it on its side
		if own < 0 {
			lo = math.Min(float64(own), lo)
		} else {
			hi = math.Max(float64(own), hi)
		}
		return math.Min(math.Max(v, lo), hi)
	}
	return LivePortraitRotation64(clip(pitch, m.Pitch, -30, 30), clip(yaw, m.Yaw, -60, 60), clip(roll, m.Roll, -20, 20))
}

// DistanceRatio is calculate_distance_ratio on 68 points given as float64 pairs (FaceFusion's
// are float64 after scale_face): |p[top] − p[bottom]| / (|p[left] − p[right]| + 1e-6).
func DistanceRatio(p *[68][2]float64, top, bottom, left, right int) float64 {
	norm := func(a, b int) float64 {
		x, y := p[a][0]-p[b][0], p[a][1]-p[b][1]
		return math.Sqrt(float64(x*x) + float64(y*y))
	}
	return norm(top, bottom) / (norm(left, right) + 1e-6)
}

// EyeRetargetInput writes the eye retargeter's row (66): the keypoints, the left and the right
// eye's ratios, and the goal, 0 to close (a slider below 0) or 0.6 to open.
func EyeRetargetInput(dst []float32, points *LivePortraitExpression, lm *[68][2]float64, slider float64) {
	points.Flat(dst)
	goal := float32(0.6)
	if slider < 0 {
		goal = 0
	}
	dst[63] = float32(DistanceRatio(lm, 37, 40, 39, 36))
	dst[64] = float32(DistanceRatio(lm, 43, 46, 45, 42))
	dst[65] = goal
}

// LipRetargetInput writes the lip retargeter's row (65): the keypoints, the lip's ratio, and
// the goal, 0 to close or 1 to open.
func LipRetargetInput(dst []float32, points *LivePortraitExpression, lm *[68][2]float64, slider float64) {
	points.Flat(dst)
	goal := float32(1)
	if slider < 0 {
		goal = 0
	}
	dst[63] = float32(DistanceRatio(lm, 62, 66, 54, 48))
	dst[64] = goal
}

// AddRetarget adds a retargeter's output (63) times |slider| to p, in float32 as numpy does
// (the float64 factor is a scalar, cast to the array's float32).
func (e *LivePortraitExpression) AddRetarget(out []float32, slider float64) {
	f := float32(math.Abs(slider))
	for k := range e {
		for j := range 3 {
			e[k][j] += float32(out[3*k+j] * f)
		}
	}
}
