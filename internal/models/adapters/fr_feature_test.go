package adapters_test

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/landmark"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestFRFeatureTellsPeopleApart runs the embedded default's recognizer (the real fr_feature.onnx
// from `make fetch`) on faces found by BlazeFace and dlib: one person against a copy of the
// same photo scaled and moved, or mirrored, scores high; two people score low. Measured (this
// test's log): astronaut vs its 0.8× shifted copy 0.990, grace_hopper vs its mirror 0.948;
// astronaut vs grace_hopper 0.092, the two altered copies 0.138. (skimage's lfw_subset faces
// are 25×25 px, too small for BlazeFace: not used.)
func TestFRFeatureTellsPeopleApart(t *testing.T) {
	cfg := infer.SessionConfig{ModelsDir: testenv.Cache(t) + "/models", Library: testenv.ORTLibrary(t)}
	rec, err := adapters.NewFRFeature(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if rec.Name() != "fr_feature" {
		t.Errorf("name %q", rec.Name())
	}
	det, err := adapters.NewBlazeFace(testenv.Model(t, "blazeface_back_256.onnx"), infer.SessionConfig{Library: testenv.ORTLibrary(t)})
	if err != nil {
		t.Fatal(err)
	}
	lm, err := landmark.Load(testenv.Model(t, "shape_predictor_68_face_landmarks.dat"))
	if err != nil {
		t.Fatal(err)
	}
	an := pipeline.NewAnalyzer(det, lm, 0.5)
	defer an.Close()
	embed := func(name string, img *raster.Image) face.Embedding {
		t.Helper()
		faces, err := an.Faces(img)
		if err != nil || len(faces) == 0 {
			t.Fatalf("%s: no face (%v)", name, err)
		}
		var e [1]face.Embedding
		if err := rec.Embed([]adapters.FaceRef{{Frame: img, Five: rec.Points(&faces[0])}}, e[:]); err != nil {
			t.Fatal(err)
		}
		return e[0]
	}
	load := func(name string) *raster.Image {
		img, err := raster.Load(testenv.Sample(t, name))
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	astro, grace := load("astronaut.png"), load("grace_hopper.png")
	// astronaut.png at 0.8×, moved 40 px right and 25 down, on a larger canvas.
	moved := raster.New(480, 460)
	align.WarpCrop(moved, astro, geom.Affine{A: 0.8, C: 40, E: 0.8, F: 25})
	mirror := raster.New(grace.W, grace.H)
	for y := range grace.H {
		for x := range grace.W {
			r, g, b := grace.At(grace.W-1-x, y)
			mirror.Set(x, y, r, g, b)
		}
	}
	ea, em, eg, er := embed("astronaut", astro), embed("astronaut moved", moved), embed("grace_hopper", grace), embed("grace_hopper mirrored", mirror)
	same1, same2 := facemodel.Cosine(&ea, &em), facemodel.Cosine(&eg, &er)
	diff1, diff2 := facemodel.Cosine(&ea, &eg), facemodel.Cosine(&em, &er)
	t.Logf("same person: astronaut %.3f, grace_hopper mirrored %.3f; different: %.3f, %.3f", same1, same2, diff1, diff2)
	if self := facemodel.Cosine(&ea, &ea); self < 0.9999 {
		t.Errorf("a face against itself: %.4f", self)
	}
	const sameMin, diffMax = 0.8, 0.3
	if gap := min(same1, same2) - max(diff1, diff2); gap < 0.6 {
		t.Errorf("one person and two people are %.3f apart, want ≥ 0.6", gap)
	}
	for _, s := range []float64{same1, same2} {
		if s < sameMin {
			t.Errorf("one person scores %.3f, want ≥ %.2f", s, sameMin)
		}
	}
	for _, d := range []float64{diff1, diff2} {
		if d > diffMax {
			t.Errorf("two people score %.3f, want ≤ %.2f", d, diffMax)
		}
	}
	// The package's normalisation: RGB planes, (v − 127)/128, black outside the frame.
	flat := raster.New(400, 400)
	for i := 0; i < len(flat.Pix); i += 3 {
		flat.Pix[i], flat.Pix[i+1], flat.Pix[i+2] = 255, 127, 0
	}
	in := make([]float32, 3*112*112)
	facemodel.PrepareFRFeature(in, flat, [5]geom.Pt{{X: 10, Y: 10}, {X: 30, Y: 10}, {X: 20, Y: 20}})
	if c := 56*112 + 56; in[c] != 1 || in[112*112+c] != 0 || in[2*112*112+c] != -127.0/128 {
		t.Errorf("centre of a (255, 127, 0) frame: %v %v %v", in[c], in[112*112+c], in[2*112*112+c])
	}
	if in[0] != -127.0/128 {
		t.Errorf("outside the frame: %v, want black", in[0])
	}
	// The package's own alignment: its five points and an exact affine map of the first three.
	faces, _ := an.Faces(astro)
	five := facemodel.FRFeatureFive(&faces[0].Landmarks)
	m, ok := facemodel.FRFeatureMatrix(five)
	tp := align.ArcFace112V2.Scaled(112)
	for i := range 3 {
		if p := m.Apply(five[i]); !ok || p.Dist(tp[i]) > 1e-6 {
			t.Errorf("point %d lands at %v, want %v", i, p, tp[i])
		}
	}
}
