package facemodel

import (
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// create_rotation is scipy's extrinsic 'xyz': roll about z after yaw about y after pitch
// about x, so a point on the x axis turned by yaw alone goes to −z, by roll alone to +y, and
// the product of the three elementary rotations (Rz·Ry·Rx) is the matrix.
func TestLivePortraitRotation(t *testing.T) {
	near := func(a float32, b float64) bool { return math.Abs(float64(a)-b) < 1e-6 }
	r := LivePortraitRotation(0, 90, 0)
	if !near(r[2][0], -1) || !near(r[0][2], 1) {
		t.Errorf("yaw 90: %v, want x → −z", r)
	}
	r = LivePortraitRotation(0, 0, 90)
	if !near(r[1][0], 1) {
		t.Errorf("roll 90: %v, want x → +y", r)
	}
	p, y, rl := 10.0, -25.0, 7.0
	rad := func(d float64) float64 { return d * math.Pi / 180 }
	rx := [3][3]float64{{1, 0, 0}, {0, math.Cos(rad(p)), -math.Sin(rad(p))}, {0, math.Sin(rad(p)), math.Cos(rad(p))}}
	ry := [3][3]float64{{math.Cos(rad(y)), 0, math.Sin(rad(y))}, {0, 1, 0}, {-math.Sin(rad(y)), 0, math.Cos(rad(y))}}
	rz := [3][3]float64{{math.Cos(rad(rl)), -math.Sin(rad(rl)), 0}, {math.Sin(rad(rl)), math.Cos(rad(rl)), 0}, {0, 0, 1}}
	mul := func(a, b [3][3]float64) (o [3][3]float64) {
		for i := range 3 {
			for j := range 3 {
				for k := range 3 {
					o[i][j] += a[i][k] * b[k][j]
				}
			}
		}
		return o
	}
	want := mul(rz, mul(ry, rx))
	got := LivePortraitRotation(float32(p), float32(y), float32(rl))
	for i := range 3 {
		for j := range 3 {
			if !near(got[i][j], want[i][j]) {
				t.Errorf("R[%d][%d] = %v, want %v", i, j, got[i][j], want[i][j])
			}
		}
	}
}

// restrict_expression_areas and the factor: at 0 the processed face's expression stays (as
// limited); at 100 (1.2) the target's is pushed past itself, only in the areas named; the
// keypoints in no area never take the target's.
func TestRestoreExpression(t *testing.T) {
	var target, temp LivePortraitExpression
	for k := range target {
		for j := range 3 {
			target[k][j] = 0.3 * (ExpressionMin[k][j] + ExpressionMax[k][j]) // inside the bounds
			temp[k][j] = 0.1 * (ExpressionMin[k][j] + ExpressionMax[k][j])
		}
	}
	both := []string{"upper-face", "lower-face"}
	if got := RestoreExpression(&target, &temp, both, 0); got != temp {
		t.Errorf("factor 0: %v, want the processed face's %v", got, temp)
	}
	if RestoreFactor(100) != 1.2 || math.Abs(RestoreFactor(80)-0.96) > 1e-15 || RestoreFactor(0) != 0 {
		t.Errorf("factors %v %v %v, want numpy.interp's 1.2, 0.96, 0", RestoreFactor(100), RestoreFactor(80), RestoreFactor(0))
	}
	upper := map[int]bool{1: true, 2: true, 6: true, 10: true, 11: true, 12: true, 13: true, 15: true, 16: true}
	lower := map[int]bool{3: true, 7: true, 14: true, 17: true, 18: true, 19: true, 20: true}
	for _, areas := range [][]string{both, {"upper-face"}, {"lower-face"}} {
		got := RestoreExpression(&target, &temp, areas, 100)
		for k := range got {
			restored := upper[k] && areas[0] == "upper-face" || lower[k] && (len(areas) == 2 || areas[0] == "lower-face")
			for j := range 3 {
				from := temp[k][j] // FaceFusion mixes the processed face's with itself there
				if restored {
					from = target[k][j]
				}
				w := float32(from*float32(1.2)) + float32(temp[k][j]*float32(1-1.2))
				w = min(ExpressionMax[k][j], max(ExpressionMin[k][j], w))
				if got[k][j] != w {
					t.Errorf("areas %v: keypoint %d axis %d = %v, want %v (restored %v)", areas, k, j, got[k][j], w, restored)
				}
			}
		}
	}
	wild := target
	wild[5][1] = 1
	if got := RestoreExpression(&wild, &temp, both, 100); got[5][1] != temp[5][1] {
		t.Errorf("keypoint 5 took the target's expression")
	}
	wild[3][1] = 1
	if got := RestoreExpression(&wild, &temp, both, 100); got[3][1] != ExpressionMax[3][1] {
		t.Errorf("keypoint 3 not limited: %v", got[3][1])
	}
}

// prepare_crop_frame halves the crop by INTER_AREA, (sum+2)>>2 for an exact halving, and
// scales RGB by 1/255; normalize_crop_frame clips to 0..1 and truncates ·255.
func TestLivePortraitPrepareFinish(t *testing.T) {
	crop := raster.New(4, 4)
	// top-left 2×2 block, red: 10, 11, 11, 11 → 43+2 >> 2 = 11; green 1,2,2,2 → 9>>2 = 2
	crop.Set(0, 0, 10, 1, 200)
	crop.Set(1, 0, 11, 2, 200)
	crop.Set(0, 1, 11, 2, 201)
	crop.Set(1, 1, 11, 2, 201)
	dst := make([]float32, 3*2*2)
	if err := PrepareLivePortrait(dst, crop); err != nil {
		t.Fatal(err)
	}
	if dst[0] != float32(11/255.0) || dst[4] != float32(2/255.0) || dst[8] != float32(201/255.0) {
		t.Errorf("prepared %v, want 11/255, 2/255, 201/255 (the rounded 2×2 means, RGB)", dst)
	}
	out := raster.New(2, 1)
	// R plane, G plane, B plane; each pixel (0, 0) then (1, 0)
	if err := FinishLivePortrait(out, []float32{0.5, 1.7, -0.2, 0.99999, 0.1, 0.00393}); err != nil {
		t.Fatal(err)
	}
	r, g, b := out.At(0, 0)
	r1, g1, b1 := out.At(1, 0)
	if r != 127 || g != 0 || b != 25 || r1 != 255 || g1 != 254 || b1 != 1 {
		t.Errorf("finished (%d %d %d) (%d %d %d), want (127 0 25) (255 254 1): clipped, truncated", r, g, b, r1, g1, b1)
	}
}

// The keypoints are scale·(motion_points @ rotationᵀ + expression) + translation: a point on
// the x axis turned by yaw 90 goes to −z, then the expression, the scale and the translation
// per axis.
func TestLivePortraitKeypoints(t *testing.T) {
	m := LivePortraitMotion{Yaw: 90, Scale: 2, Translation: [3]float32{0.5, -1, 0.25}}
	m.Points[0] = [3]float32{1, 0, 0}
	m.Points[1] = [3]float32{0, 1, 0}
	var e LivePortraitExpression
	e[0] = [3]float32{0.1, 0.2, 0.3}
	rot := LivePortraitRotation(m.Pitch, m.Yaw, m.Roll)
	got := m.Keypoints(&rot, &e)
	want := [2][3]float64{{2*0.1 + 0.5, 2*0.2 - 1, 2*(-1+0.3) + 0.25}, {0.5, 2 - 1, 0.25}}
	for k := range want {
		for j := range 3 {
			if math.Abs(float64(got[k][j])-want[k][j]) > 1e-6 {
				t.Errorf("keypoint %d axis %d = %v, want %v", k, j, got[k][j], want[k][j])
			}
		}
	}
}
