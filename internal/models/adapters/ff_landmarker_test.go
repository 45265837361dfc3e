package adapters

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
)

// turnedFive is a face's five points (eyes, nose, mouth corners) about (cx, cy), turned by
// angle degrees the way FaceFusion's angles go (90: the face's left-to-right runs downwards).
func turnedFive(cx, cy float64, angle float64) [5]geom.Pt {
	up := [5]geom.Pt{{X: -20, Y: -12}, {X: 20, Y: -12}, {X: 0, Y: 6}, {X: -15, Y: 25}, {X: 15, Y: 25}}
	a := angle * math.Pi / 180
	var out [5]geom.Pt
	for i, p := range up {
		out[i] = geom.Pt{X: cx + p.X*math.Cos(a) - p.Y*math.Sin(a), Y: cy + p.X*math.Sin(a) + p.Y*math.Cos(a)}
	}
	return out
}

// TestFaceLandmarker runs FaceFusion's landmarker on the stand-ins through the real runtime:
// fan_68_5's points and the angle they give, then each landmarker's points on the crop turned
// by that angle, the choice between them, and the five the warps use; every expectation is
// the stand-in's arithmetic on the tensors facemodel prepares.
func TestFaceLandmarker(t *testing.T) {
	dir := fixtures.Dir(t, "2dfan4", "peppa_wutz", "fan_68_5")
	cfg := func(string) infer.SessionConfig { return ffConfig(t, dir, 1) }
	img := noiseFrame(rand.New(rand.NewPCG(5, 6)), 300, 220)
	in := make([]float32, 3*256*256)
	for _, model := range []string{"2dfan4", "peppa_wutz", "many"} {
		l, err := NewFaceLandmarker(model, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, angle := range []int{0, 90, 180, 270} {
			f := face.Face{Detection: face.Detection{Box: geom.Rect{X0: 80, Y0: 40, X1: 190, Y1: 170}}}
			f.DetectorFive = turnedFive(135, 105, float64(angle)+7)
			if err := l.Landmark(img, &f, 0.5); err != nil {
				t.Fatal(err)
			}
			// fan_68_5: the stand-in's output moved back out of the unit square.
			var x [10]float32
			m := facemodel.Prepare68From5(x[:], f.DetectorFive)
			raw := fixtures.Fan685Output(x)
			inv, _ := m.Invert()
			for k := range 68 {
				if want := inv.Apply(geom.Pt{X: float64(raw[2*k]), Y: float64(raw[2*k+1])}); f.Landmarks68From5[k].Dist(want) > 1e-3 {
					t.Fatalf("%s: 68/5 point %d = %v, want %v", model, k, f.Landmarks68From5[k], want)
				}
			}
			if f.Angle != angle {
				t.Errorf("%s: a face turned by %d° has angle %d", model, angle+7, f.Angle)
			}
			// The landmarker's points, on the crop turned by the angle.
			var want face.Landmarks68
			var score float64
			if model == "peppa_wutz" {
				m, _ := facemodel.PreparePeppa(in, img, f.Box, angle)
				out := fixtures.PeppaOutput(fixtures.PeppaFeatures(in))
				score, _ = facemodel.DecodePeppa(&want, out[:], m)
			} else { // 2dfan4 (many picks it: the stand-in scores 1)
				m, _ := facemodel.PrepareFAN4(in, img, f.Box, angle)
				pts := fixtures.FAN4Points(in)
				inv, _ := m.Invert()
				for k := range 68 {
					want[k] = inv.Apply(geom.Pt{X: float64(pts[3*k]) * 4, Y: float64(pts[3*k+1]) * 4})
				}
				score = 1 // the stand-in's heatmap peaks k + mean average far above 0.9
			}
			for k := range 68 {
				if f.Landmarks[k].Dist(want[k]) > 1e-3 {
					t.Fatalf("%s, angle %d: point %d = %v, want %v", model, angle, k, f.Landmarks[k], want[k])
				}
			}
			if math.Abs(f.LandmarkScore-score) > 1e-5 {
				t.Errorf("%s, angle %d: score %v, want %v", model, angle, f.LandmarkScore, score)
			}
			if wf := facemodel.WarpFive(f.DetectorFive, &want, score, 0.5); f.Five[2].Dist(wf[2]) > 1e-3 {
				t.Errorf("%s: warp five %v, want %v", model, f.Five, wf)
			}
		}
		// --face-landmarker-score 0: no landmarker run; the 68 points are fan_68_5's.
		f := face.Face{Detection: face.Detection{Box: geom.Rect{X0: 80, Y0: 40, X1: 190, Y1: 170}}}
		f.DetectorFive = turnedFive(135, 105, 0)
		if err := l.Landmark(img, &f, 0); err != nil {
			t.Fatal(err)
		}
		if f.Landmarks != f.Landmarks68From5 || f.LandmarkScore != 0 || f.Five != f.DetectorFive {
			t.Errorf("%s at score 0: landmarks %v (score %v), five %v", model, f.Landmarks[:2], f.LandmarkScore, f.Five)
		}
		// BlazeFace's faces have no five: angle 0, and the landmarker's points even at score 0.
		blaze := face.Face{Detection: face.Detection{Box: f.Box}}
		if err := l.Landmark(img, &blaze, 0); err != nil {
			t.Fatal(err)
		}
		if blaze.Angle != 0 || blaze.LandmarkScore == 0 || blaze.Landmarks68From5 != (face.Landmarks68{}) || blaze.Five != blaze.Landmarks.Five() {
			t.Errorf("%s without five points: angle %d, score %v, five %v", model, blaze.Angle, blaze.LandmarkScore, blaze.Five)
		}
		if n := testing.AllocsPerRun(5, func() { l.Landmark(img, &f, 0.5) }); n != 0 {
			t.Errorf("%s: Landmark allocates %v times per call", model, n)
		}
		l.Close()
	}
	if _, err := NewFaceLandmarker("dlib_68", cfg); err == nil {
		t.Error("dlib_68 accepted as FaceFusion's landmarker")
	}
}
