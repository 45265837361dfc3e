package facemodel

import (
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// TestRotationIsOpenCVs holds Rotation to cv2.getRotationMatrix2D plus FaceFusion's shift, as
// OpenCV 4.6 printed them for a 512×600 frame at 90° and a 7×5 frame at 270°.
func TestRotationIsOpenCVs(t *testing.T) {
	for _, c := range []struct {
		angle  float64
		w, h   int
		want   geom.Affine
		rw, rh int
	}{
		{90, 512, 600, geom.Affine{A: 6.12323400e-17, B: 1, C: -2.84217094e-14, D: -1, E: 6.12323400e-17, F: 512}, 600, 512},
		{270, 7, 5, geom.Affine{A: -1.8369702e-16, B: -1, C: 5, D: 1, E: -1.8369702e-16, F: 8.8817842e-16}, 5, 7},
		{0, 7, 5, geom.Identity, 7, 5},
	} {
		m, rw, rh := Rotation(c.angle, c.w, c.h)
		for i, v := range [6]float64{m.A, m.B, m.C, m.D, m.E, m.F} {
			w := [6]float64{c.want.A, c.want.B, c.want.C, c.want.D, c.want.E, c.want.F}[i]
			if math.Abs(v-w) > 1e-9 {
				t.Errorf("%v° %dx%d: matrix %+v, want %+v", c.angle, c.w, c.h, m, c.want)
				break
			}
		}
		if rw != c.rw || rh != c.rh {
			t.Errorf("%v° %dx%d: turned size %dx%d, want %dx%d", c.angle, c.w, c.h, rw, rh, c.rw, c.rh)
		}
	}
}

// TestWarpBlackTurns: FaceFusion's 90° turn of a w×h frame is the pixel turn shifted by one:
// turned (x', y') is source (w − y', x'), so the first row is black and the source's first
// column falls off.
func TestWarpBlackTurns(t *testing.T) {
	const w, h = 7, 5
	src := raster.New(w, h)
	for i := range src.Pix {
		src.Pix[i] = uint8(1 + i%251)
	}
	m, rw, rh := Rotation(90, w, h)
	dst := raster.New(rw, rh)
	WarpBlack(dst, src, m)
	for y := range rh {
		for x := range rw {
			for c := range 3 {
				var want uint8
				if sx, sy := w-y, x; sx < w {
					want = src.Pix[sy*src.Stride+3*sx+c]
				}
				if got := dst.Pix[y*dst.Stride+3*x+c]; got != want {
					t.Fatalf("turned (%d,%d)[%d] = %d, want %d", x, y, c, got, want)
				}
			}
		}
	}
	// Half a pixel to the right: each value the mean of two neighbours, rounded half to even.
	WarpBlack(dst, src, geom.Affine{A: 1, C: 0.5, E: 1})
	a, b := float64(src.Pix[3]), float64(src.Pix[6])
	if got, want := dst.Pix[6], uint8(math.RoundToEven((a+b)/2)); got != want {
		t.Errorf("half-pixel shift: %d, want %d", got, want)
	}
	if got, want := dst.Pix[0], uint8(math.RoundToEven(float64(src.Pix[0])/2)); got != want {
		t.Errorf("half-pixel shift at the black border: %d, want %d", got, want)
	}
}

// TestMarginPixels is prepare_margin: 0..100 percent onto 0..0.5 of the side, truncated.
func TestMarginPixels(t *testing.T) {
	top, right, bottom, left := MarginPixels(600, 512, [4]int{10, 25, 100, 7})
	if top != 25 || right != 75 || bottom != 256 || left != 21 {
		t.Errorf("margin of 600×512 at 10 25 100 7 = %d %d %d %d, want 25 75 256 21", top, right, bottom, left)
	}
	src := raster.New(2, 1)
	copy(src.Pix, []uint8{1, 2, 3, 4, 5, 6})
	p := PadFrame(nil, src, 1, 2, 0, 1)
	if p.W != 5 || p.H != 2 || p.Pix[p.Stride+3] != 1 || p.Pix[p.Stride+8] != 6 || p.Pix[0] != 0 || p.Pix[p.Stride+9] != 0 {
		t.Errorf("padded %dx%d %v", p.W, p.H, p.Pix)
	}
}

// TestNMSThreshold is get_nms_threshold: many 0.1, else by the count of angles.
func TestNMSThreshold(t *testing.T) {
	for _, c := range []struct {
		model  string
		angles int
		want   float64
	}{{"many", 1, 0.1}, {"scrfd", 1, 0.4}, {"scrfd", 2, 0.3}, {"yunet", 3, 0.2}, {"retinaface", 4, 0.1}, {"scrfd", 5, 0.4}} {
		if got := NMSThreshold(c.model, c.angles); got != c.want {
			t.Errorf("NMSThreshold(%s, %d) = %v, want %v", c.model, c.angles, got, c.want)
		}
	}
}

// TestTransformDetectionUndoesTheTurn: a face turned by Rotation and mapped back by its
// inverse lands where it was; the box is the bounds of the mapped corners.
func TestTransformDetectionUndoesTheTurn(t *testing.T) {
	want := face.Detection{Box: geom.Rect{X0: 10, Y0: 20, X1: 50, Y1: 80}, Five: [5]geom.Pt{{X: 20, Y: 40}, {X: 40, Y: 41}, {X: 30, Y: 55}, {X: 22, Y: 70}, {X: 38, Y: 71}}}
	for _, a := range []float64{90, 180, 270} {
		m, _, _ := Rotation(a, 100, 120)
		d := want
		TransformDetection(&d, m)
		if a == 90 && (math.Abs(d.Box.X0-20) > 1e-9 || math.Abs(d.Box.Y0-50) > 1e-9) {
			t.Errorf("90°: turned box %+v, want it at (20, 50)", d.Box)
		}
		back, _ := InvertAffine(m)
		TransformDetection(&d, back)
		for i := range d.Five {
			if d.Five[i].Dist(want.Five[i]) > 1e-9 {
				t.Errorf("%v°: point %d back at %v, want %v", a, i, d.Five[i], want.Five[i])
			}
		}
		if math.Abs(d.Box.X0-want.Box.X0)+math.Abs(d.Box.Y1-want.Box.Y1) > 1e-9 {
			t.Errorf("%v°: box back at %+v, want %+v", a, d.Box, want.Box)
		}
	}
}
