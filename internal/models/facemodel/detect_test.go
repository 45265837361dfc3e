package facemodel

import (
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// face planted in a synthetic detector output, in detector-input pixels.
type planted struct {
	stride, row, col, anchor int
	score                    float32
	box                      geom.Rect
	five                     [5]geom.Pt
}

// encodeAnchors builds scrfd/retinaface outputs that hold the planted faces: the inverse of
// FaceFusion's decoding, written from the anchor layout (cell-major, x = column·stride,
// y = row·stride, two anchors per cell) rather than from the decoder's code.
func encodeAnchors(t testing.TB, size int, faces []planted) [][]float32 {
	t.Helper()
	out := make([][]float32, 9)
	for si, s := range []int{8, 16, 32} {
		g := size / s
		n := g * g * 2
		out[si], out[si+3], out[si+6] = make([]float32, n), make([]float32, 4*n), make([]float32, 10*n)
		for k := range out[si] {
			out[si][k] = 0.01 // background
		}
		for _, f := range faces {
			if f.stride != s {
				continue
			}
			k := (f.row*g+f.col)*2 + f.anchor
			ax, ay := float64(f.col*s), float64(f.row*s)
			out[si][k] = f.score
			copy(out[si+3][4*k:], []float32{
				float32((ax - f.box.X0) / float64(s)), float32((ay - f.box.Y0) / float64(s)),
				float32((f.box.X1 - ax) / float64(s)), float32((f.box.Y1 - ay) / float64(s)),
			})
			for j, p := range f.five {
				out[si+6][10*k+2*j] = float32((p.X - ax) / float64(s))
				out[si+6][10*k+2*j+1] = float32((p.Y - ay) / float64(s))
			}
		}
	}
	return out
}

func fiveIn(b geom.Rect) [5]geom.Pt {
	w, h := b.W(), b.H()
	return [5]geom.Pt{
		{X: b.X0 + 0.3*w, Y: b.Y0 + 0.4*h}, {X: b.X0 + 0.7*w, Y: b.Y0 + 0.4*h}, {X: b.X0 + 0.5*w, Y: b.Y0 + 0.6*h},
		{X: b.X0 + 0.35*w, Y: b.Y0 + 0.8*h}, {X: b.X0 + 0.65*w, Y: b.Y0 + 0.8*h},
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func rectNear(a, b geom.Rect, tol float64) bool {
	return near(a.X0, b.X0, tol) && near(a.Y0, b.Y0, tol) && near(a.X1, b.X1, tol) && near(a.Y1, b.Y1, tol)
}

func checkDetected(t *testing.T, got face.Detection, want planted, f Fit) {
	t.Helper()
	rx, ry := float64(f.FrameW)/float64(f.W), float64(f.FrameH)/float64(f.H)
	wb := geom.Rect{X0: want.box.X0 * rx, Y0: want.box.Y0 * ry, X1: want.box.X1 * rx, Y1: want.box.Y1 * ry}
	if !rectNear(got.Box, wb, 1e-3) {
		t.Errorf("box %+v, want %+v", got.Box, wb)
	}
	if !near(got.Score, float64(want.score), 1e-6) {
		t.Errorf("score %v, want %v", got.Score, want.score)
	}
	for j, p := range want.five {
		if w := (geom.Pt{X: p.X * rx, Y: p.Y * ry}); !near(got.Five[j].X, w.X, 1e-3) || !near(got.Five[j].Y, w.Y, 1e-3) {
			t.Errorf("keypoint %d at %v, want %v", j, got.Five[j], w)
		}
	}
}

func TestAnchorDecoding(t *testing.T) {
	for _, model := range []*catalog.Model{scrfd, retinaface} {
		for _, size := range model.Sizes {
			d, err := NewDetector(model, size)
			if err != nil {
				t.Fatal(err)
			}
			// Faces at every stride, both anchors, in corners, off-diagonal cells (row ≠ col
			// catches a transposed grid); a weaker duplicate of the first that NMS must drop,
			// and one under the threshold.
			g8, g32 := size/8, size/32
			a := geom.Rect{X0: 40, Y0: 20, X1: 90, Y1: 85}
			faces := []planted{
				{stride: 8, row: 5, col: 7, anchor: 1, score: 0.9, box: a},
				{stride: 16, row: 1, col: 3, anchor: 0, score: 0.8, box: geom.Rect{X0: 100, Y0: 2, X1: 150, Y1: 60}},
				{stride: 32, row: g32 - 1, col: 0, anchor: 1, score: 0.7, box: geom.Rect{X0: 0, Y0: float64(size) - 70, X1: 60, Y1: float64(size) - 1}},
				{stride: 8, row: g8 - 1, col: g8 - 1, anchor: 0, score: 0.6, box: geom.Rect{X0: float64(size) - 30, Y0: float64(size) - 40, X1: float64(size), Y1: float64(size)}},
				{stride: 8, row: 6, col: 7, anchor: 0, score: 0.85, box: geom.Rect{X0: 42, Y0: 22, X1: 92, Y1: 88}},
				{stride: 16, row: 3, col: 1, anchor: 1, score: 0.4, box: geom.Rect{X0: 300, Y0: 300, X1: 310, Y1: 310}},
			}
			for i := range faces {
				faces[i].five = fiveIn(faces[i].box)
			}
			out := encodeAnchors(t, size, faces)
			fit := FitFrame(size*3, size*2, size) // a 3:2 frame shrunk to size × 2/3·size
			got, err := d.Decode(out, fit, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 4 {
				t.Fatalf("%s %d: %d faces, want 4: %+v", model.Name, size, len(got), got)
			}
			for i, w := range faces[:4] {
				checkDetected(t, got[i], w, fit)
			}
		}
	}
}

func TestYOLODecoding(t *testing.T) {
	d, err := NewDetector(yolo, 640)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8400
	out := make([]float32, 20*n)
	faces := []planted{
		{score: 0.95, box: geom.Rect{X0: 100, Y0: 50, X1: 200, Y1: 180}},
		{score: 0.55, box: geom.Rect{X0: 400, Y0: 300, X1: 460, Y1: 370}},
		{score: 0.9, box: geom.Rect{X0: 104, Y0: 52, X1: 204, Y1: 182}}, // duplicate of the first
		{score: 0.5, box: geom.Rect{X0: 10, Y0: 10, X1: 40, Y1: 40}},    // not above 0.5: dropped
	}
	for i, at := range []int{17, 8399, 4000, 0} {
		f := &faces[i]
		f.five = fiveIn(f.box)
		c := f.box.Center()
		vals := []float32{float32(c.X), float32(c.Y), float32(f.box.W()), float32(f.box.H()), f.score}
		for _, p := range f.five {
			vals = append(vals, float32(p.X), float32(p.Y), 0.9)
		}
		for ch, v := range vals {
			out[ch*n+at] = v
		}
	}
	fit := FitFrame(1280, 1280, 640)
	got, err := d.Decode([][]float32{out}, fit, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d faces, want 2: %+v", len(got), got)
	}
	checkDetected(t, got[0], faces[0], fit)
	checkDetected(t, got[1], faces[1], fit)
}

func TestDecodeRejectsShortOutputs(t *testing.T) {
	d, _ := NewDetector(scrfd, 320)
	out := encodeAnchors(t, 640, nil)[:8]
	if _, err := d.Decode(out, FitFrame(320, 320, 320), nil); err == nil {
		t.Error("8 outputs accepted")
	}
	d2, _ := NewDetector(scrfd, 640)
	if _, err := d2.Decode(encodeAnchors(t, 320, nil), FitFrame(320, 320, 640), nil); err == nil {
		t.Error("320-sized outputs accepted at 640")
	}
	if _, err := NewDetector(yolo, 320); err == nil {
		t.Error("yolo_face at 320 accepted; FaceFusion offers only 640")
	}
}

func TestNMS(t *testing.T) {
	box := func(x float64) geom.Rect { return geom.Rect{X0: x, Y0: 0, X1: x + 10, Y1: 10} }
	// IoU of boxes shifted by s on a 10-wide box: (10−s)/(10+s). s = 30/7 gives exactly 0.4.
	cands := []face.Detection{
		{Box: box(0), Score: 0.6},    // IoU 9/11 with the best: dropped
		{Box: box(200), Score: 0.65}, // ties with the next: input order is kept
		{Box: box(1), Score: 0.9},    // best: kept first
		{Box: box(100), Score: 0.65},
		{Box: box(1 + 30.0/7), Score: 0.7}, // IoU exactly 0.4: kept (only > 0.4 drops)
		{Box: box(1 + 2), Score: 0.8},      // IoU 8/12 > 0.4 with the best: dropped
		{Box: box(300), Score: 0.5},        // not above the score threshold
	}
	got := NMS(nil, cands, 0.5, 0.4)
	want := []float64{1, 1 + 30.0/7, 200, 100}
	if len(got) != len(want) {
		t.Fatalf("kept %+v", got)
	}
	for i, w := range want {
		if got[i].Box.X0 != w {
			t.Errorf("kept[%d] at x %v, want %v", i, got[i].Box.X0, w)
		}
	}
	if iou := box(1).IoU(box(1 + 30.0/7)); !near(iou, 0.4, 1e-12) {
		t.Fatalf("test geometry: IoU %v", iou)
	}
}

func TestFitFrame(t *testing.T) {
	for _, c := range []struct{ w, h, size, fw, fh int }{
		{1920, 1080, 640, 640, 360},
		{1080, 1920, 640, 360, 640},
		{500, 300, 640, 500, 300}, // never enlarged
		{641, 100, 640, 640, 99},  // 100·640/641 = 99.8 truncates
		{333, 777, 160, 68, 160},
	} {
		f := FitFrame(c.w, c.h, c.size)
		if f.W != c.fw || f.H != c.fh {
			t.Errorf("FitFrame(%d, %d, %d) = %d×%d, want %d×%d", c.w, c.h, c.size, f.W, f.H, c.fw, c.fh)
		}
		p := geom.Pt{X: 123.25, Y: 45.5}
		if q := f.ToFrame(f.ToInput(p)); !near(q.X, p.X, 1e-9) || !near(q.Y, p.Y, 1e-9) {
			t.Errorf("round trip %v → %v", p, q)
		}
		if q := f.ToFrame(geom.Pt{X: float64(f.W), Y: float64(f.H)}); q.X != float64(c.w) || q.Y != float64(c.h) {
			t.Errorf("input corner maps to %v, want the frame corner", q)
		}
	}
}

func randomFrame(r *rand.Rand, w, h int) *raster.Image {
	m := raster.New(w, h)
	for i := range m.Pix {
		m.Pix[i] = uint8(r.IntN(256))
	}
	return m
}

func TestDetectorPrepare(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, model := range []*catalog.Model{scrfd, yolo} {
		d, _ := NewDetector(model, 640)
		norm := func(v uint8) float32 {
			if model == yolo {
				return float32(v) / 255
			}
			return (float32(v) - 127.5) / 128
		}
		dst := make([]float32, 3*640*640)
		// A small frame goes in unscaled at the top left, BGR, zeros (normalised) elsewhere.
		small := randomFrame(r, 300, 200)
		f := d.Prepare(small, dst)
		if f.W != 300 || f.H != 200 {
			t.Fatalf("fit %+v", f)
		}
		for _, xy := range [][2]int{{0, 0}, {299, 199}, {150, 7}, {300, 0}, {0, 200}, {639, 639}} {
			x, y := xy[0], xy[1]
			var bgr [3]uint8
			if x < 300 && y < 200 {
				rr, gg, bb := small.At(x, y)
				bgr = [3]uint8{bb, gg, rr}
			}
			for p := range 3 {
				if got := dst[p*640*640+y*640+x]; got != norm(bgr[p]) {
					t.Errorf("%s (%d,%d) plane %d = %v, want %v", model.Name, x, y, p, got, norm(bgr[p]))
				}
			}
		}
		// A large frame is shrunk with the shared bilinear resizer into the top-left W×H.
		big := randomFrame(r, 1280, 960)
		f = d.Prepare(big, dst)
		ref := raster.New(f.W, f.H)
		var z raster.Resizer
		z.Resize(ref, ref.Bounds(), big)
		for _, xy := range [][2]int{{0, 0}, {639, 479}, {321, 100}, {5, 480}, {639, 639}} {
			x, y := xy[0], xy[1]
			var bgr [3]uint8
			if y < f.H {
				rr, gg, bb := ref.At(x, y)
				bgr = [3]uint8{bb, gg, rr}
			}
			for p := range 3 {
				if got := dst[p*640*640+y*640+x]; got != norm(bgr[p]) {
					t.Errorf("%s big (%d,%d) plane %d = %v, want %v", model.Name, x, y, p, got, norm(bgr[p]))
				}
			}
		}
	}
}

// sceneOutputs is a realistic scrfd output: low background scores everywhere and a few faces.
func sceneOutputs(t testing.TB, size int) [][]float32 {
	faces := []planted{
		{stride: 8, row: 20, col: 30, anchor: 0, score: 0.9, box: geom.Rect{X0: 200, Y0: 120, X1: 280, Y1: 220}},
		{stride: 8, row: 20, col: 31, anchor: 1, score: 0.88, box: geom.Rect{X0: 203, Y0: 121, X1: 282, Y1: 221}},
		{stride: 16, row: 10, col: 25, anchor: 0, score: 0.7, box: geom.Rect{X0: 380, Y0: 140, X1: 450, Y1: 230}},
	}
	for i := range faces {
		faces[i].five = fiveIn(faces[i].box)
	}
	return encodeAnchors(t, size, faces)
}

func TestDecodeDoesNotAllocate(t *testing.T) {
	d, _ := NewDetector(scrfd, 640)
	out := sceneOutputs(t, 640)
	fit := FitFrame(1920, 1080, 640)
	dst := make([]face.Detection, 0, 16)
	dst, _ = d.Decode(out, fit, dst[:0]) // grows the candidate buffer once
	if len(dst) != 2 {
		t.Fatalf("%d faces, want 2", len(dst))
	}
	if n := testing.AllocsPerRun(20, func() { dst, _ = d.Decode(out, fit, dst[:0]) }); n != 0 {
		t.Errorf("scrfd Decode: %v allocations per call", n)
	}
	y, _ := NewDetector(yolo, 640)
	yout := [][]float32{make([]float32, 20*8400)}
	if n := testing.AllocsPerRun(20, func() { dst, _ = y.Decode(yout, fit, dst[:0]) }); n != 0 {
		t.Errorf("yolo Decode: %v allocations per call", n)
	}
	frame := randomFrame(rand.New(rand.NewPCG(3, 4)), 1280, 720)
	in := make([]float32, 3*640*640)
	d.Prepare(frame, in)
	if n := testing.AllocsPerRun(5, func() { d.Prepare(frame, in) }); n != 0 {
		t.Errorf("Prepare: %v allocations per call", n)
	}
}

func BenchmarkDecodeSCRFD640(b *testing.B) {
	d, _ := NewDetector(scrfd, 640)
	out := sceneOutputs(b, 640)
	fit := FitFrame(1920, 1080, 640)
	dst := make([]face.Detection, 0, 16)
	for b.Loop() {
		dst, _ = d.Decode(out, fit, dst[:0])
	}
}

func BenchmarkDecodeYOLO640(b *testing.B) {
	d, _ := NewDetector(yolo, 640)
	out := make([]float32, 20*8400)
	for i := range 8400 {
		out[4*8400+i] = 0.01
	}
	out[4*8400+100], out[2*8400+100], out[3*8400+100] = 0.9, 50, 60
	fit := FitFrame(1920, 1080, 640)
	dst := make([]face.Detection, 0, 16)
	for b.Loop() {
		dst, _ = d.Decode([][]float32{out}, fit, dst[:0])
	}
}

func BenchmarkPrepareDetector1080p(b *testing.B) {
	d, _ := NewDetector(scrfd, 640)
	frame := randomFrame(rand.New(rand.NewPCG(5, 6)), 1920, 1080)
	in := make([]float32, 3*640*640)
	for b.Loop() {
		d.Prepare(frame, in)
	}
}

var (
	scrfd      = catalog.Must("scrfd_2.5g")
	retinaface = catalog.Must("retinaface_10g")
	yolo       = catalog.Must("yoloface_8n")
)
