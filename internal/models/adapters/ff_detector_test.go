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
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// ffConfig is a session config over the fixtures in dir.
func ffConfig(t testing.TB, dir string, maxBatch int) infer.SessionConfig {
	return infer.SessionConfig{ModelsDir: dir, Library: testenv.ORTLibrary(t), MaxBatch: maxBatch, Logf: func(string, ...any) {}}
}

func noiseFrame(r *rand.Rand, w, h int) *raster.Image {
	img := raster.New(w, h)
	for i := range img.Pix {
		img.Pix[i] = uint8(r.IntN(256))
	}
	return img
}

func near64(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestFaceDetectors runs each detector's fixture, whose outputs encode fixtures.TheFace at
// 640×640, through the real session: at 640×640 the face comes back as encoded; in a frame
// twice as large (shrunk to fit) every coordinate doubles; above its score it is gone. The
// retinaface stand-in adds its feature of the input, which on a black frame (−0.996 after
// normalisation) moves the face by less than a quarter pixel; yolo's and yunet's black input
// is 0, which adds nothing.
func TestFaceDetectors(t *testing.T) {
	dir := fixtures.Dir(t, "yoloface_8n", "scrfd_2.5g", "retinaface_10g", "yunet_2023_mar")
	f := fixtures.TheFace
	for _, model := range []string{"yolo_face", "scrfd", "retinaface", "yunet"} {
		tol, stol := 1e-3, 1e-6
		if model == "retinaface" {
			tol, stol = 0.25, 0.01
		}
		d, err := NewFaceDetector(model, 640, ffConfig(t, dir, 4))
		if err != nil {
			t.Fatal(err)
		}
		for _, scale := range []float64{1, 2} {
			img := raster.New(int(640*scale), int(640*scale))
			dets, err := d.Detect(img, 0.5)
			if err != nil {
				t.Fatal(err)
			}
			if len(dets) != 1 {
				t.Fatalf("%s ×%v: %d faces, want 1", model, scale, len(dets))
			}
			g := dets[0]
			want := geom.Rect{X0: float64(f.Box[0]) * scale, Y0: float64(f.Box[1]) * scale, X1: float64(f.Box[2]) * scale, Y1: float64(f.Box[3]) * scale}
			if !near64(g.Box.X0, want.X0, tol*scale) || !near64(g.Box.Y0, want.Y0, tol*scale) || !near64(g.Box.X1, want.X1, tol*scale) || !near64(g.Box.Y1, want.Y1, tol*scale) {
				t.Errorf("%s ×%v: box %+v, want %+v", model, scale, g.Box, want)
			}
			if !near64(g.Score, float64(f.Score), stol) {
				t.Errorf("%s: score %v, want %v", model, g.Score, f.Score)
			}
			for k, p := range f.Keypoints {
				w := geom.Pt{X: float64(p[0]) * scale, Y: float64(p[1]) * scale}
				if g.Five[k].Dist(w) > 1.5*tol*scale {
					t.Errorf("%s ×%v: five[%d] = %v, want %v", model, scale, k, g.Five[k], w)
				}
			}
			mouth := geom.Mean(g.Five[3:5])
			if g.Keypoints[0] != g.Five[0] || g.Keypoints[1] != g.Five[1] || g.Keypoints[2] != g.Five[2] || g.Keypoints[3] != mouth {
				t.Errorf("%s: keypoints %v do not follow five %v", model, g.Keypoints[:4], g.Five)
			}
		}
		if dets, err := d.Detect(raster.New(640, 640), 0.9); err != nil || len(dets) != 0 {
			t.Errorf("%s: above the face's score: %d faces, %v", model, len(dets), err)
		}
		img := raster.New(640, 640)
		if n := testing.AllocsPerRun(5, func() { d.Detect(img, 0.5) }); n != 0 {
			t.Errorf("%s: Detect allocates %v times per call", model, n)
		}
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}
	if _, err := NewFaceDetector("blazeface", 640, ffConfig(t, dir, 1)); err == nil {
		t.Error("unknown detector accepted")
	}
}

// TestRecognizer: the fixture's embedding is fixtures.RecognizerEmbedding of the arcface_112_v2
// crop at v/127.5 − 1; batches of 2 over 5 faces equal batch 1.
func TestRecognizer(t *testing.T) {
	dir := fixtures.Dir(t, "arcface_w600k_r50")
	r := rand.New(rand.NewPCG(7, 8))
	var items []FaceRef
	for range 5 {
		img := noiseFrame(r, 200, 180)
		items = append(items, FaceRef{Frame: img, Five: jitterFive(r, 60, 50, 80)})
	}
	var outs [2][]face.Embedding
	for i, b := range []int{1, 2} {
		rec, err := NewRecognizer(ffConfig(t, dir, b))
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = make([]face.Embedding, len(items))
		if err := rec.Embed(items, outs[i]); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(3, func() { rec.Embed(items, outs[i]) }); n != 0 {
			t.Errorf("batch %d: Embed allocates %v times per call", b, n)
		}
		rec.Close()
	}
	for i, it := range items {
		if outs[0][i] != outs[1][i] {
			t.Fatalf("face %d: batch 2 differs from batch 1", i)
		}
		in := make([]float32, 3*112*112)
		facemodel.PrepareArcFace(in, raster.New(112, 112), it.Frame, it.Five)
		want := fixtures.RecognizerEmbedding(in)
		e := outs[0][i]
		for j := range 512 {
			if !near64(float64(e.Raw[j]), want[j], 1e-5) {
				t.Fatalf("face %d: raw[%d] = %v, want %v", i, j, e.Raw[j], want[j])
			}
		}
	}
}

// jitterFive is a plausible face: the arcface_128 template at size s, moved to (x, y) and
// shaken by up to a pixel.
func jitterFive(r *rand.Rand, x, y, s float64) [5]geom.Pt {
	var p [5]geom.Pt
	for i, q := range [5]geom.Pt{{X: .36167656, Y: .40387734}, {X: .63696719, Y: .40235469}, {X: .50019687, Y: .56044219}, {X: .38710391, Y: .72160547}, {X: .61507734, Y: .72034453}} {
		p[i] = geom.Pt{X: x + q.X*s + r.Float64() - 0.5, Y: y + q.Y*s + r.Float64() - 0.5}
	}
	return p
}

// TestStandInsFollowTheInput: the retinaface, yolo_face and yunet stand-ins move their face
// with the frame's content (so a wrong letterbox, normalisation or colour order shows), but
// keep it: a noise frame, the same frame with red and blue swapped, and a black frame give
// three different faces near TheFace.
func TestStandInsFollowTheInput(t *testing.T) {
	dir := fixtures.Dir(t, "yoloface_8n", "retinaface_10g", "yunet_2023_mar")
	noise := noiseFrame(rand.New(rand.NewPCG(3, 4)), 640, 640)
	swapped := raster.New(640, 640)
	for i := 0; i < len(noise.Pix); i += 3 {
		swapped.Pix[i], swapped.Pix[i+1], swapped.Pix[i+2] = noise.Pix[i+2], noise.Pix[i+1], noise.Pix[i]
	}
	for _, model := range []string{"yolo_face", "retinaface", "yunet"} {
		d, err := NewFaceDetector(model, 640, ffConfig(t, dir, 1))
		if err != nil {
			t.Fatal(err)
		}
		var boxes []geom.Rect
		for _, img := range []*raster.Image{noise, swapped, raster.New(640, 640)} {
			dets, err := d.Detect(img, 0.5)
			if err != nil {
				t.Fatal(err)
			}
			if len(dets) != 1 || dets[0].Box.Center().Dist(geom.Pt{X: 320, Y: 244}) > 3 {
				t.Fatalf("%s: %+v, want one face near TheFace", model, dets)
			}
			boxes = append(boxes, dets[0].Box)
		}
		for i := range boxes {
			for j := range i {
				if math.Abs(boxes[i].X0-boxes[j].X0)+math.Abs(boxes[i].Y1-boxes[j].Y1) < 1e-3 {
					t.Errorf("%s: frames %d and %d give the same box %+v: the stand-in ignores its input", model, j, i, boxes[i])
				}
			}
		}
		d.Close()
	}
}
