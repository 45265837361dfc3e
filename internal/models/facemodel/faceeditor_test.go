package facemodel

import (
	"math"
	"testing"
)

// Interp is numpy 1.24's interp on [-1, 1] bit for bit (the values numpy gave, as hex floats),
// its ends exact.
func TestInterpIsNumpys(t *testing.T) {
	for _, c := range []struct{ x, lo, hi, want float64 }{
		{0.35, -0.015, 0.015, 0x1.5810624dd2f1cp-8},
		{-0.35, -0.0025, 0.0025, -0x1.cac083126e978p-11},
		{0.05, 60, -60, -0x1.8p+1},
		{0.65, -0.06, 0.06, 0x1.3f7ced916872ap-5},
		{-0.95, 20, -20, 0x1.3p+4},
		{1, -0.015, 0.015, 0.015}, {-1, -0.015, 0.015, -0.015},
	} {
		if got := Interp(c.x, c.lo, c.hi); got != c.want {
			t.Errorf("Interp(%v, %v, %v) = %x, want %x", c.x, c.lo, c.hi, got, c.want)
		}
	}
	// float32 + numpy.float64, stored as float32 (numpy gave 0x1.f3b646p-7)
	var e LivePortraitExpression
	e[1][1] = 0.01
	e.add(1, 1, Interp(0.35, -0.015, 0.015))
	if e[1][1] != float32(0x1.f3b646p-7) {
		t.Errorf("0.01 + interp = %x", e[1][1])
	}
}

// EditExpression on a zero expression: each slider's keypoints and axes, branches and signs
// as face_editor/core.py's edit functions, summed where two move one value, then limited.
func TestEditExpression(t *testing.T) {
	f := func(v float64) float32 { return float32(v) }
	lim := func(k, j int, v float64) float32 {
		return min(ExpressionMax[k][j], max(ExpressionMin[k][j], float32(v)))
	}
	all := func(v float64) FaceEditorSliders {
		return FaceEditorSliders{EyebrowDirection: v, EyeGazeHorizontal: v, EyeGazeVertical: v, EyeOpenRatio: v,
			LipOpenRatio: v, MouthGrim: v, MouthPout: v, MouthPurse: v, MouthSmile: v, MouthPositionHorizontal: v,
			MouthPositionVertical: v, HeadPitch: v, HeadYaw: v, HeadRoll: v}
	}
	for _, c := range []struct {
		name string
		s    FaceEditorSliders
		want map[[2]int]float32 // keypoint, axis → value; every other value stays 0
	}{
		{"eyebrow up", FaceEditorSliders{EyebrowDirection: 1}, map[[2]int]float32{{1, 1}: f(0.015), {2, 1}: f(-0.02)}},
		{"eyebrow down", FaceEditorSliders{EyebrowDirection: -1}, map[[2]int]float32{{1, 0}: f(0.015), {2, 0}: f(-0.02), {1, 1}: f(-0.005), {2, 1}: f(0.005)}},
		{"gaze right", FaceEditorSliders{EyeGazeHorizontal: 1}, map[[2]int]float32{{11, 0}: lim(11, 0, 0.015), {15, 0}: f(0.02)}},
		{"gaze left", FaceEditorSliders{EyeGazeHorizontal: -1}, map[[2]int]float32{{11, 0}: lim(11, 0, -0.02), {15, 0}: f(-0.015)}},
		{"gaze up", FaceEditorSliders{EyeGazeVertical: 1}, map[[2]int]float32{{1, 1}: f(0.0025), {2, 1}: f(-0.0025), {11, 1}: f(-0.01), {13, 1}: f(-0.005), {15, 1}: f(-0.01), {16, 1}: f(-0.005)}},
		{"grim", FaceEditorSliders{MouthGrim: 1}, map[[2]int]float32{{17, 2}: f(-0.005), {19, 2}: f(0.01), {20, 1}: lim(20, 1, -0.06), {20, 2}: lim(20, 2, -0.03)}},
		{"grim below", FaceEditorSliders{MouthGrim: -1}, map[[2]int]float32{{19, 1}: f(0.05), {19, 2}: f(0.02), {20, 2}: lim(20, 2, 0.03)}},
		{"position", FaceEditorSliders{MouthPositionHorizontal: -1, MouthPositionVertical: 1}, map[[2]int]float32{{19, 0}: lim(19, 0, -0.05), {20, 0}: lim(20, 0, -0.04), {19, 1}: f(-0.04), {20, 1}: f(-0.02)}},
		{"pout below", FaceEditorSliders{MouthPout: -1}, map[[2]int]float32{{19, 1}: f(-0.022), {19, 2}: f(-0.025), {20, 2}: f(0.002)}},
		{"purse below", FaceEditorSliders{MouthPurse: -1}, map[[2]int]float32{{14, 1}: f(0.02), {17, 2}: lim(17, 2, -0.01), {19, 2}: f(0.015), {20, 2}: f(0.002)}},
		{"smile", FaceEditorSliders{MouthSmile: 1}, map[[2]int]float32{{20, 1}: f(-0.015), {14, 1}: f(-0.025), {17, 1}: f(0.01), {17, 2}: f(0.004), {3, 1}: f(-0.0045), {7, 1}: f(-0.0045)}},
		{"the head and eyes' ratios move no expression", FaceEditorSliders{EyeOpenRatio: 1, LipOpenRatio: -1, HeadPitch: 1, HeadYaw: -1, HeadRoll: 1}, nil},
		// every slider at 1: (19, 1) takes the position's -0.04, the pout's -0.022 and the
		// purse's -0.04 in turn, (20, 1) the grim's, the position's and the smile's
		{"all at 1", all(1), map[[2]int]float32{{19, 1}: lim(19, 1, -0.102), {20, 1}: lim(20, 1, -0.095)}},
	} {
		var e LivePortraitExpression
		EditExpression(&e, &c.s)
		for k := range e {
			for j := range 3 {
				want, ok := c.want[[2]int{k, j}]
				if c.name == "all at 1" && !ok {
					continue
				}
				if d := math.Abs(float64(e[k][j] - want)); d > 2e-9 {
					t.Errorf("%s: expression[%d][%d] = %v, want %v", c.name, k, j, e[k][j], want)
				}
			}
		}
	}
}

// EditRotation: the sliders' degrees (pitch and yaw reversed), limited to ±30, ±60, ±20 about
// a face within them, and to the face's own pose where it is turned further.
func TestEditRotation(t *testing.T) {
	m := LivePortraitMotion{Pitch: 15, Yaw: -25, Roll: 10}
	same := func(a, b [3][3]float32) bool {
		for i := range 3 {
			for j := range 3 {
				if math.Abs(float64(a[i][j]-b[i][j])) > 1e-6 {
					return false
				}
			}
		}
		return true
	}
	for _, c := range []struct {
		name             string
		s                FaceEditorSliders
		pitch, yaw, roll float64
		m                LivePortraitMotion
	}{
		{"none", FaceEditorSliders{}, 15, -25, 10, m},
		{"ends", FaceEditorSliders{HeadPitch: 1, HeadYaw: -1, HeadRoll: 1}, -5, 35, 20, m},         // roll 25 limited to 20
		{"other ends", FaceEditorSliders{HeadPitch: -1, HeadYaw: 1, HeadRoll: -1}, 30, -60, -5, m}, // pitch 35, yaw -85 limited
		{"a face turned past a bound", FaceEditorSliders{HeadYaw: 1}, 0, -70, 0, LivePortraitMotion{Yaw: -70}},
	} {
		got := c.m.EditRotation(&c.s)
		if want := LivePortraitRotation64(c.pitch, c.yaw, c.roll); !same(got, want) {
			t.Errorf("%s: rotation %v, want that of (%v, %v, %v)", c.name, got, c.pitch, c.yaw, c.roll)
		}
	}
}

// The retargeters' rows: the keypoints, then calculate_distance_ratio of the eyes' (37-40 over
// 39-36, 43-46 over 45-42) and the lip's (62-66 over 54-48) points, and the goal by the sign.
func TestRetargetInputs(t *testing.T) {
	var lm [68][2]float64
	lm[37], lm[40], lm[39], lm[36] = [2]float64{10, 10}, [2]float64{10, 13}, [2]float64{20, 10}, [2]float64{0, 10}
	lm[43], lm[46], lm[45], lm[42] = [2]float64{50, 10}, [2]float64{50, 14}, [2]float64{60, 10}, [2]float64{40, 10}
	lm[62], lm[66], lm[54], lm[48] = [2]float64{30, 40}, [2]float64{33, 44}, [2]float64{50, 42}, [2]float64{10, 42}
	var p LivePortraitExpression
	p[20][2] = 0.5
	eye, lip := make([]float32, 66), make([]float32, 65)
	EyeRetargetInput(eye, &p, &lm, 0.5)
	if eye[62] != 0.5 || eye[63] != float32(3/(20+1e-6)) || eye[64] != float32(4/(20+1e-6)) || eye[65] != 0.6 {
		t.Errorf("eye row ends %v", eye[62:])
	}
	EyeRetargetInput(eye, &p, &lm, -0.05)
	if eye[65] != 0 {
		t.Errorf("closing: goal %v, want 0", eye[65])
	}
	LipRetargetInput(lip, &p, &lm, 0)
	if lip[62] != 0.5 || lip[63] != float32(5/(40+1e-6)) || lip[64] != 1 {
		t.Errorf("lip row ends %v", lip[62:])
	}
	LipRetargetInput(lip, &p, &lm, -1)
	if lip[64] != 0 {
		t.Errorf("closing: goal %v, want 0", lip[64])
	}
	var q LivePortraitExpression
	out := make([]float32, 63)
	out[4] = 0.25
	q.AddRetarget(out, -0.5)
	if q[1][1] != 0.125 {
		t.Errorf("a retarget times |slider|: %v, want 0.125", q[1][1])
	}
}
