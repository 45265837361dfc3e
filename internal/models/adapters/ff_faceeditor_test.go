package adapters

import (
	"math"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// feLandmarks are 68 points of lpScene's face: eyes 30 px wide and 9 open, the inner lips 6
// apart over a mouth 50 wide (the rest where the ratios do not look).
func feLandmarks() *[68]geom.Pt {
	var lm [68]geom.Pt
	for i := range lm {
		lm[i] = geom.Pt{X: 150 + float64(i), Y: 200}
	}
	eye := func(at int, x, y float64) {
		lm[at] = geom.Pt{X: x, Y: y}              // outer corner (36, 42)
		lm[at+1] = geom.Pt{X: x + 10, Y: y - 4.5} // top (37, 43)
		lm[at+3] = geom.Pt{X: x + 30, Y: y}       // inner corner (39, 45)
		lm[at+4] = geom.Pt{X: x + 11, Y: y + 4.5} // bottom (40, 46)
	}
	eye(36, 140, 150)
	eye(42, 230, 151)
	lm[48], lm[54] = geom.Pt{X: 180, Y: 250}, geom.Pt{X: 230, Y: 252}
	lm[62], lm[66] = geom.Pt{X: 205, Y: 248}, geom.Pt{X: 206, Y: 254}
	return &lm
}

// feWant is the crop the stand-ins give for frame's face at m with sliders s, by their
// arithmetic in float64 (fixtures.LP*) through FaceFusion's apply_edit.
func feWant(frame *raster.Image, m geom.Affine, lm *[68]geom.Pt, s facemodel.FaceEditorSliders) *[3][512][512]float64 {
	x := lpInput(frame, m)
	mo := lpMotion(x)
	rot := facemodel.LivePortraitRotation(mo.Pitch, mo.Yaw, mo.Roll)
	target := mo.Keypoints(&rot, &mo.Expression)
	e := mo.Expression
	facemodel.EditExpression(&e, &s)
	edited := mo.EditRotation(&s)
	source := mo.Keypoints(&edited, &e)
	var pts [68][2]float64
	for i, p := range lm {
		pts[i] = [2]float64{p.X, p.Y}
	}
	retarget := func(seed int, in []float32, slider float64) {
		out := make([]float32, 63)
		for j := range 63 {
			v := float64(fixtures.LPRetargetBias(seed, j))
			for i, x := range in {
				v += float64(x) * float64(fixtures.LPRetargetWeight(seed, len(in), i, j))
			}
			out[j] = float32(v)
		}
		source.AddRetarget(out, slider)
	}
	eye, lip := make([]float32, 66), make([]float32, 65)
	facemodel.EyeRetargetInput(eye, &target, &pts, s.EyeOpenRatio)
	retarget(41, eye, s.EyeOpenRatio)
	facemodel.LipRetargetInput(lip, &target, &pts, s.LipOpenRatio)
	retarget(61, lip, s.LipOpenRatio)
	sf, tf := make([]float32, 63), make([]float32, 63)
	source.Flat(sf)
	target.Flat(tf)
	stitched := make([]float32, 63)
	b := float64(fixtures.LPStitchBound)
	for j := range 63 {
		var u float64
		for i := range 63 {
			u += float64(sf[i]-tf[i]) * float64(fixtures.LPStitchMix(i, j))
		}
		stitched[j] = float32(float64(tf[j]) + b*math.Tanh(u/b))
	}
	return lpGenerated(x, stitched, tf)
}

// TestFaceEditorCrop: the edited crop is, within a level, the stand-ins' chain recomputed from
// FaceFusion's apply_edit, with every slider at 0, at its ends and mixed; the retargeters'
// sliders and the head's each change it by several levels, so that a mistake in either shows,
// and the crop is not saturated (a clipped crop would hide them).
func TestFaceEditorCrop(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: runs LivePortrait's six stand-ins eight times (make test)")
	}
	_, frame, _ := lpScene()
	lm := feLandmarks()
	five := [5]geom.Pt{{X: 155, Y: 150}, {X: 245, Y: 151}, {X: 200, Y: 200}, {X: 180, Y: 250}, {X: 230, Y: 252}}
	dir := fixtures.Dir(t, "live_portrait_feature_extractor", "live_portrait_motion_extractor", "live_portrait_generator",
		"live_portrait_eye_retargeter", "live_portrait_lip_retargeter", "live_portrait_stitcher")
	all := func(v float64) facemodel.FaceEditorSliders {
		return facemodel.FaceEditorSliders{EyebrowDirection: v, EyeGazeHorizontal: v, EyeGazeVertical: v, EyeOpenRatio: v,
			LipOpenRatio: v, MouthGrim: v, MouthPout: v, MouthPurse: v, MouthSmile: v, MouthPositionHorizontal: v,
			MouthPositionVertical: v, HeadPitch: v, HeadYaw: v, HeadRoll: v}
	}
	mixed := facemodel.FaceEditorSliders{EyebrowDirection: -1, EyeGazeHorizontal: 1, EyeGazeVertical: -0.5,
		MouthGrim: 0.35, MouthPout: -1, MouthSmile: 1, HeadPitch: -1, HeadYaw: 0.25, HeadRoll: 1}
	cases := []struct {
		name string
		s    facemodel.FaceEditorSliders
	}{{"zero", all(0)}, {"max", all(1)}, {"min", all(-1)}, {"mixed", mixed},
		{"eye-open", facemodel.FaceEditorSliders{EyeOpenRatio: 1}}, {"eye-close", facemodel.FaceEditorSliders{EyeOpenRatio: -1}},
		{"lip-open", facemodel.FaceEditorSliders{LipOpenRatio: 1}}, {"yaw", facemodel.FaceEditorSliders{HeadYaw: -1}}}
	crops := map[string]*raster.Image{}
	for _, c := range cases {
		fe, err := NewFaceEditor("live_portrait", func(string) infer.SessionConfig { return ffConfig(t, dir, 1) }, c.s, 0.3)
		if err != nil {
			t.Fatal(err)
		}
		m := fe.Align(five)
		got, mask, err := fe.Edit(frame, lm, m)
		if err != nil {
			t.Fatal(err)
		}
		if len(mask) != 512*512 || mask[256*512+256] < 0.999 || mask[0] > 0.01 {
			t.Errorf("%s: mask of %d values, centre %v, corner %v: want the box mask", c.name, len(mask), mask[256*512+256], mask[0])
		}
		want := feWant(frame, m, lm, c.s)
		bad, clipped := 0, 0
		for y := range 512 {
			for x := range 512 {
				for k := range 3 {
					g := float64(got.Pix[y*got.Stride+3*x+k])
					if g == 0 || g == 255 {
						clipped++
					}
					if math.Abs(g-want[k][y][x]) > 1 {
						if bad++; bad <= 3 {
							t.Errorf("%s: crop (%d, %d) channel %d = %v, want %v", c.name, x, y, k, g, want[k][y][x])
						}
					}
				}
			}
		}
		if bad > 3 {
			t.Errorf("%s: %d values off in all", c.name, bad)
		}
		t.Logf("%s: %d values clipped", c.name, clipped)
		if clipped > 512*512*3/10 {
			t.Errorf("%s: %d of the crop's values clipped: the stand-ins saturate", c.name, clipped)
		}
		crops[c.name] = got.Clone()
		fe.Close()
	}
	for _, pair := range [][2]string{{"zero", "max"}, {"zero", "min"}, {"max", "min"}, {"zero", "mixed"},
		{"zero", "eye-open"}, {"eye-open", "eye-close"}, {"zero", "lip-open"}, {"zero", "yaw"}} {
		d := maxDiff(crops[pair[0]], crops[pair[1]])
		t.Logf("%s and %s differ by up to %d levels", pair[0], pair[1], d)
		if d < 4 {
			t.Errorf("%s and %s differ by at most %d levels: the test cannot tell them apart", pair[0], pair[1], d)
		}
	}
	if _, err := NewFaceEditor("live_portrait", nil, facemodel.FaceEditorSliders{HeadYaw: 1.5}, 0.3); err == nil {
		t.Error("a slider at 1.5 accepted")
	}
}

// TestFaceEditorSliderRange: a slider outside -1..1 is refused naming its flag, its key, its
// value and the range, before any model is opened.
func TestFaceEditorSliderRange(t *testing.T) {
	for _, c := range []struct {
		s    facemodel.FaceEditorSliders
		want string
	}{
		{facemodel.FaceEditorSliders{HeadYaw: 1.5}, "--face-editor-head-yaw 1.5: outside -1..1 (face_editor_head_yaw)"},
		{facemodel.FaceEditorSliders{EyebrowDirection: -2}, "--face-editor-eyebrow-direction -2: outside -1..1 (face_editor_eyebrow_direction)"},
		{facemodel.FaceEditorSliders{MouthPositionVertical: math.NaN()}, "--face-editor-mouth-position-vertical NaN: outside -1..1"},
	} {
		_, err := NewFaceEditor("live_portrait", nil, c.s, 0.3)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.s, err, c.want)
		}
	}
}
