package adapters

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// realSCRFD is a session config over FaceFusion's own scrfd_2.5g in ../shared/models (linked,
// never copied), checked against its published sha256, one intra-op thread as a worker runs it.
func realSCRFD(t testing.TB, maxBatch int) infer.SessionConfig {
	return infer.SessionConfig{
		ModelsDir: testenv.SharedModelsDir(t, "scrfd_2.5g.onnx"), Library: testenv.ORTLibrary(t),
		MaxBatch: maxBatch, SHA256: catalog.Must("scrfd_2.5g").SHA256, Logf: func(string, ...any) {},
	}
}

// TestSCRFDRealSignature reads the signature of FaceFusion's own scrfd_2.5g and holds it to
// what its catalog entry (internal/models/catalog/table.go) states as confirmed: input "input" float32 [1,3,?,?] (the
// batch axis fixed at 1, the sides dynamic: every size FaceFusion offers loads); outputs "0"–"8"
// float32, scores [?,1], box distances [?,4] and keypoint offsets [?,10], each for strides 8,
// 16 and 32, with no batch axis. So the file cannot batch: a session asked for batch 8 opens at
// batch 1, and its anchor outputs are sized by the detector size.
func TestSCRFDRealSignature(t *testing.T) {
	cfg := realSCRFD(t, 8)
	if err := infer.Init(cfg.Library); err != nil {
		t.Fatal(err)
	}
	m := catalog.Must("scrfd_2.5g")
	if m.Unconfirmed != "" {
		t.Errorf("scrfd_2.5g's catalog entry still has an unconfirmed note: %q", m.Unconfirmed)
	}
	sig, err := infer.ReadSignature(testenv.SharedModel(t, "scrfd_2.5g.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	want := infer.Signature{Inputs: []infer.TensorSpec{{Name: "input", Shape: []int64{1, 3, infer.Dyn, infer.Dyn}, Type: infer.Float32}}}
	for i, w := range []int64{1, 1, 1, 4, 4, 4, 10, 10, 10} {
		want.Outputs = append(want.Outputs, infer.TensorSpec{Name: fmt.Sprint(i), Shape: []int64{infer.Dyn, w}, Type: infer.Float32})
	}
	if sig.String() != want.String() {
		t.Fatalf("FaceFusion's scrfd_2.5g has the signature\n %s\nwant\n %s", sig, want)
	}
	if why := m.Check(sig); why != "" {
		t.Errorf("the catalog refuses FaceFusion's own file: %s", why)
	}
	if m.Batched {
		t.Errorf("the catalog says scrfd_2.5g batches; its outputs have no batch axis")
	}

	for _, size := range []int{640, 320} {
		d, err := NewFaceDetector("scrfd", size, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if d.units[0].eng.MaxBatch() != 1 {
			t.Errorf("size %d: asked for batch 8, the session opened at %d: the file has no batch axis to batch on", size, d.units[0].eng.MaxBatch())
		}
		ins, outs := d.units[0].eng.Shapes()
		if got, want := ins[0].Shape, []int64{1, 3, int64(size), int64(size)}; !slices.Equal(got, want) {
			t.Errorf("size %d: input buffer %v, want %v", size, got, want)
		}
		for i, o := range outs {
			stride := []int64{8, 16, 32}[i%3]
			cells := int64(size) / stride
			if want := []int64{2 * cells * cells, []int64{1, 4, 10}[i/3]}; !slices.Equal(o.Shape, want) {
				t.Errorf("size %d: output %s buffer %v, want %v (two anchors per cell of stride %d)", size, o.Name, o.Shape, want, stride)
			}
		}
		if _, err := d.units[0].eng.Claim(2); err == nil {
			t.Errorf("size %d: a batch of 2 ran on a file that cannot batch", size)
		}
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkSCRFD is the per-frame cost of FaceFusion's own scrfd_2.5g on a 1280×720 frame
// with one face, at FaceFusion's default size and at 320: the frame shrunk and packed into the
// input, one ONNX Runtime run on one intra-op thread (as a worker runs it), decoding and NMS.
func BenchmarkSCRFD(b *testing.B) {
	frame := benchFrame(b)
	for _, size := range []int{640, 320} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			d, err := NewFaceDetector("scrfd", size, realSCRFD(b, 1))
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			for b.Loop() {
				dets, err := d.Detect(frame, 0.5)
				if err != nil || len(dets) != 1 {
					b.Fatalf("%d faces, %v; want 1", len(dets), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/frame")
		})
	}
}

// TestSCRFDRealAnglesAndMargin runs FaceFusion's scrfd_2.5g on astronaut.png turned a quarter
// (the face lying on its side): searched at angle 0 alone it finds a face poorly or not at all;
// with the angle that stands the face up it finds it where the upright frame's face is, mapped
// through the same quarter turn (to the pixel turn's one-pixel shift). A margin moves the frame
// inside the detector's input but not the faces it reports.
func TestSCRFDRealAnglesAndMargin(t *testing.T) {
	testenv.Full(t, "runs the real scrfd at every angle")
	img, err := video.ReadImage(testenv.Sample(t, "astronaut.png"))
	if err != nil {
		t.Fatal(err)
	}
	detect := func(frame *raster.Image, opts FrameOptions) []face.Detection {
		t.Helper()
		d, err := OpenFaceDetector("scrfd", 640, opts, func(string) infer.SessionConfig { return realSCRFD(t, 1) })
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		dets, err := d.Detect(frame, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Clone(dets)
	}
	up := detect(img, FrameOptions{})
	if len(up) != 1 {
		t.Fatalf("upright: %d faces, want 1", len(up))
	}
	// The frame turned clockwise on screen: (x, y) → (h−1−y, x).
	turned := raster.New(img.H, img.W)
	for y := range img.H {
		for x := range img.W {
			copy(turned.Pix[x*turned.Stride+3*(img.H-1-y):][:3], img.Pix[y*img.Stride+3*x:][:3])
		}
	}
	want := up[0]
	facemodel.TransformDetection(&want, geom.Affine{A: 0, B: -1, C: float64(img.H - 1), D: 1, E: 0, F: 0})
	// 90° (counter-clockwise) stands it up again; the other angles add nothing above 0.5.
	got := detect(turned, FrameOptions{Angles: []int{0, 90, 180}})
	if len(got) == 0 {
		t.Fatal("turned, angles 0 90 180: no face")
	}
	best := got[0]
	for _, g := range got {
		if g.Box.IoU(want.Box) > best.Box.IoU(want.Box) {
			best = g
		}
	}
	if best.Box.IoU(want.Box) < 0.95 || best.Five[0].Dist(want.Five[0]) > 1.5 || math.Abs(best.Score-want.Score) > 0.05 {
		t.Errorf("turned, found at angle 90: %+v, want about %+v (the upright face turned)", best, want)
	}
	for _, g := range detect(turned, FrameOptions{}) {
		if g.Box.IoU(want.Box) > 0.9 && g.Score > want.Score-0.05 {
			t.Errorf("turned, angle 0 alone found the face as well as upright (%+v): the test proves nothing", g)
		}
	}
	// A margin of 10% (25 px each side of 512) keeps the frame inside 640: the same face.
	m := detect(img, FrameOptions{Margin: [4]int{10, 10, 10, 10}})
	if len(m) != 1 || m[0].Box.IoU(up[0].Box) < 0.95 || m[0].Box.IoU(up[0].Box) == 1 {
		t.Errorf("margin 10: %+v, want about (but not exactly, the anchors moved) %+v", m, up[0])
	}
}
