package adapters

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

func newDetector(t testing.TB, model string) *BlazeFace {
	t.Helper()
	d, err := NewBlazeFace(testenv.Model(t, model), infer.SessionConfig{Library: testenv.ORTLibrary(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d
}

func load(t testing.TB, sample string) *raster.Image {
	t.Helper()
	img, err := raster.Load(testenv.Sample(t, sample))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// paste copies src into dst with its top-left corner at (ox, oy).
func paste(dst, src *raster.Image, ox, oy int) {
	for y := 0; y < src.H; y++ {
		copy(dst.Pix[(oy+y)*dst.Stride+3*ox:], src.Pix[y*src.Stride:y*src.Stride+3*src.W])
	}
}

func checkBox(t *testing.T, what string, got, want geom.Rect, tol float64) {
	t.Helper()
	if math.Abs(got.X0-want.X0) > tol || math.Abs(got.Y0-want.Y0) > tol ||
		math.Abs(got.X1-want.X1) > tol || math.Abs(got.Y1-want.Y1) > tol {
		t.Errorf("%s: box x %.1f–%.1f y %.1f–%.1f, want x %.0f–%.0f y %.0f–%.0f (±%.0f px)",
			what, got.X0, got.X1, got.Y0, got.Y1, want.X0, want.X1, want.Y0, want.Y1, tol)
	}
}

// checkKeypoints asserts the facial layout of an upright frontal face: eyes above the nose above
// the mouth, the subject's right eye on the image left, every point inside the box.
func checkKeypoints(t *testing.T, what string, d face.Detection) {
	t.Helper()
	rEye, lEye, nose, mouth := d.Keypoints[0], d.Keypoints[1], d.Keypoints[2], d.Keypoints[3]
	rEar, lEar := d.Keypoints[4], d.Keypoints[5]
	if !(rEye.X < lEye.X) {
		t.Errorf("%s: right eye x %.1f should be left of left eye x %.1f", what, rEye.X, lEye.X)
	}
	if !(math.Max(rEye.Y, lEye.Y) < nose.Y && nose.Y < mouth.Y) {
		t.Errorf("%s: want eyes (y %.1f, %.1f) above nose (%.1f) above mouth (%.1f)", what, rEye.Y, lEye.Y, nose.Y, mouth.Y)
	}
	if !(rEar.X < rEye.X && lEye.X < lEar.X) {
		t.Errorf("%s: ears (x %.1f, %.1f) should flank the eyes (x %.1f, %.1f)", what, rEar.X, lEar.X, rEye.X, lEye.X)
	}
	if !(rEye.X < nose.X && nose.X < lEye.X) {
		t.Errorf("%s: nose x %.1f should lie between the eyes (x %.1f, %.1f)", what, nose.X, rEye.X, lEye.X)
	}
	// Ears sit on the box edge; allow a couple of pixels.
	in := geom.Rect{X0: d.Box.X0 - 3, Y0: d.Box.Y0 - 3, X1: d.Box.X1 + 3, Y1: d.Box.Y1 + 3}
	for k, p := range d.Keypoints {
		if p.X < in.X0 || p.X > in.X1 || p.Y < in.Y0 || p.Y > in.Y1 {
			t.Errorf("%s: keypoint %d %v outside box %+v", what, k, p, d.Box)
		}
	}
}

func TestDetectFaces(t *testing.T) {
	d := newDetector(t, "blazeface_front_128.onnx")
	for _, c := range []struct {
		sample string
		box    geom.Rect
		score  float64
	}{
		{"astronaut.png", geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}, 0.92},
		{"grace_hopper.png", geom.Rect{X0: 168, Y0: 145, X1: 364, Y1: 342}, 0.95},
	} {
		dets, err := d.Detect(load(t, c.sample), 0.5)
		if err != nil {
			t.Fatal(err)
		}
		if len(dets) != 1 {
			t.Fatalf("%s: got %d faces, want 1: %+v", c.sample, len(dets), dets)
		}
		checkBox(t, c.sample, dets[0].Box, c.box, 4)
		if math.Abs(dets[0].Score-c.score) > 0.03 {
			t.Errorf("%s: score %.3f, want ≈%.2f", c.sample, dets[0].Score, c.score)
		}
		checkKeypoints(t, c.sample, dets[0])
	}
}

func TestDetectNoFaces(t *testing.T) {
	d := newDetector(t, "blazeface_front_128.onnx")
	for _, s := range []string{"coffee.png", "brick.png"} {
		dets, err := d.Detect(load(t, s), 0.5)
		if err != nil {
			t.Fatal(err)
		}
		if len(dets) != 0 {
			t.Errorf("%s: got %d faces, want none: %+v", s, len(dets), dets)
		}
	}
}

// TestDetectLetterboxed moves the astronaut inside larger black canvases, padded along either
// axis: the box must move with it, which checks the inverse of the letterbox mapping. The pad
// offsets (tens of pixels) are far above the tolerance, which only absorbs the network seeing
// the face at a slightly different scale.
func TestDetectLetterboxed(t *testing.T) {
	d := newDetector(t, "blazeface_front_128.onnx")
	src := load(t, "astronaut.png")
	ref := geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}
	for _, c := range [][4]int{{640, 560, 100, 40}, {560, 640, 30, 100}, {700, 600, 150, 50}} {
		canvas := raster.New(c[0], c[1])
		paste(canvas, src, c[2], c[3])
		dets, err := d.Detect(canvas, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("astronaut at (%d,%d) in %dx%d", c[2], c[3], c[0], c[1])
		if len(dets) != 1 {
			t.Errorf("%s: got %d faces, want 1", what, len(dets))
			continue
		}
		ox, oy := float64(c[2]), float64(c[3])
		checkBox(t, what, dets[0].Box, geom.Rect{X0: ref.X0 + ox, Y0: ref.Y0 + oy, X1: ref.X1 + ox, Y1: ref.Y1 + oy}, 8)
		checkKeypoints(t, what, dets[0])
	}
}

func TestDetectBackModel(t *testing.T) {
	d := newDetector(t, "blazeface_back_256.onnx")
	if d.InputSize() != 256 {
		t.Fatalf("back model input size %d, want 256", d.InputSize())
	}
	dets, err := d.Detect(load(t, "astronaut.png"), 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if len(dets) != 1 {
		t.Fatalf("got %d faces, want 1: %+v", len(dets), dets)
	}
	// The back model draws a slightly larger box around the same face.
	checkBox(t, "back model, astronaut", dets[0].Box, geom.Rect{X0: 177, Y0: 81, X1: 272, Y1: 175}, 10)
	checkKeypoints(t, "back model, astronaut", dets[0])
}

// TestDetectThreads checks that a multi-threaded session is accepted and computes the same
// detection as the default single thread.
func TestDetectThreads(t *testing.T) {
	img := load(t, "astronaut.png")
	one := newDetector(t, "blazeface_front_128.onnx")
	d1, err := one.Detect(img, 0.5)
	if err != nil || len(d1) != 1 {
		t.Fatalf("one thread: %d faces, %v", len(d1), err)
	}
	two, err := NewBlazeFace(testenv.Model(t, "blazeface_front_128.onnx"), infer.SessionConfig{Library: testenv.ORTLibrary(t), Execution: infer.Execution{Threads: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	d2, err := two.Detect(img, 0.5)
	if err != nil || len(d2) != 1 {
		t.Fatalf("two threads: %d faces, %v", len(d2), err)
	}
	checkBox(t, "two threads", d2[0].Box, d1[0].Box, 0.01)
}

func TestDetectAllocatesNothing(t *testing.T) {
	d := newDetector(t, "blazeface_front_128.onnx")
	img := load(t, "astronaut.png")
	var n int
	detect := func() {
		dets, err := d.Detect(img, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		n = len(dets)
	}
	detect() // sizes the letterbox taps for this frame size
	if allocs := testing.AllocsPerRun(20, detect); allocs != 0 || n != 1 {
		t.Errorf("Detect: %v allocations per frame and %d faces; want 0 and 1", allocs, n)
	}
}

func TestDetectMisuse(t *testing.T) {
	d, err := NewBlazeFace(testenv.Model(t, "blazeface_front_128.onnx"), infer.SessionConfig{Library: testenv.ORTLibrary(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Detect(&raster.Image{}, 0.5); err == nil {
		t.Error("Detect on an empty image: no error")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := d.Detect(raster.New(8, 8), 0.5); err == nil || !strings.Contains(err.Error(), "after Close") {
		t.Errorf("Detect after Close: got %v, want an error saying so", err)
	}
}

func TestNewBlazeFaceErrors(t *testing.T) {
	lib := testenv.ORTLibrary(t)
	opts := infer.SessionConfig{Library: lib}
	dir := t.TempDir()

	missing := filepath.Join(dir, "nope.onnx")
	_, err := NewBlazeFace(missing, opts)
	testenv.CheckError(t, "missing model", err, missing, "not found", "make fetch")

	junk := filepath.Join(dir, "junk.onnx")
	if err := os.WriteFile(junk, []byte("this is not a protobuf"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = NewBlazeFace(junk, opts)
	testenv.CheckError(t, "non-ONNX file", err, junk, "not a loadable ONNX model")

	back := testenv.Model(t, "blazeface_back_256.onnx")
	_, err = newBlazeFace(back, opts, blazeFront128)
	testenv.CheckError(t, "back model against the front contract", err, back, "unexpected signature",
		"want BlazeFace front 128: in(input:0[1,128,128,3]float32)", "found in(input:0[1,256,256,3]float32)")
}

// benchFrame is a 1280×720 frame with the astronaut, enlarged 1.4× by pixel repetition, in its
// middle: a typical video frame size with one face the front model finds.
func benchFrame(t testing.TB) *raster.Image {
	src := load(t, "astronaut.png")
	const s = 716
	big := raster.New(s, s)
	for y := 0; y < s; y++ {
		for x := 0; x < s; x++ {
			r, g, b := src.At(x*src.W/s, y*src.H/s)
			big.Set(x, y, r, g, b)
		}
	}
	frame := raster.New(1280, 720)
	paste(frame, big, (1280-s)/2, 2)
	return frame
}

func TestBenchFrameHasFace(t *testing.T) {
	d := newDetector(t, "blazeface_front_128.onnx")
	dets, err := d.Detect(benchFrame(t), 0.5)
	if err != nil || len(dets) != 1 {
		t.Fatalf("1280x720 benchmark frame: %d faces, %v; want 1", len(dets), err)
	}
}

func BenchmarkDetect(b *testing.B) {
	for _, c := range []struct{ name, model string }{
		{"front128", "blazeface_front_128.onnx"},
		{"back256", "blazeface_back_256.onnx"},
	} {
		d := newDetector(b, c.model)
		for _, f := range []struct {
			name string
			img  *raster.Image
		}{
			{"astronaut512", load(b, "astronaut.png")},
			{"frame1280x720", benchFrame(b)},
		} {
			b.Run(c.name+"/"+f.name, func(b *testing.B) {
				for b.Loop() {
					if _, err := d.Detect(f.img, 0.5); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
