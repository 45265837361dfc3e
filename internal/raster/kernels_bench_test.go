package raster

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// The benchmarks use the size the swapper sees: a ~200 px face in a 1280×720 frame.
var faceRect = image.Rect(540, 260, 760, 480)

// faceMesh is a fan of 24 triangles around (650, 370), radius 100.
func faceMesh() ([]geom.Pt, [][3]int) {
	pts := []geom.Pt{{X: 650, Y: 370}}
	var tris [][3]int
	for i := range 24 {
		a := float64(i) * 2 * math.Pi / 24
		pts = append(pts, geom.Pt{X: 650 + 100*math.Cos(a), Y: 370 + 100*math.Sin(a)})
		tris = append(tris, [3]int{0, 1 + i, 1 + (i+1)%24})
	}
	return pts, tris
}

func BenchmarkWarpTriangles(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	src := randImage(rng, 1280, 720)
	dp, tris := faceMesh()
	sp := make([]geom.Pt, len(dp))
	for i, p := range dp { // a mildly scaled and shifted source
		sp[i] = geom.Pt{X: 0.9*p.X - 30, Y: 0.95*p.Y + 12}
	}
	var dst FloatImage
	var cov Mask
	for b.Loop() {
		dst.Reset(faceRect)
		cov.Reset(faceRect)
		WarpTriangles(&dst, &cov, src, sp, dp, tris)
	}
}

func BenchmarkFillConvex(b *testing.B) {
	pts, _ := faceMesh()
	var m Mask
	for b.Loop() {
		m.Reset(faceRect)
		FillConvex(&m, pts[1:], 1)
	}
}

func BenchmarkBlur(b *testing.B) {
	pts, _ := faceMesh()
	var m Mask
	var bl Blur
	for b.Loop() {
		m.Reset(faceRect)
		FillConvex(&m, pts[1:], 1)
		bl.Apply(&m, 5)
	}
}

func benchFace() (*Image, *FloatImage, *Mask) {
	rng := rand.New(rand.NewPCG(2, 2))
	frame := randImage(rng, 1280, 720)
	f := &FloatImage{}
	f.Reset(faceRect)
	for i := range f.Pix {
		f.Pix[i] = rng.Float32() * 255
	}
	pts, _ := faceMesh()
	m := &Mask{}
	m.Reset(faceRect)
	FillConvex(m, pts[1:], 1)
	var bl Blur
	bl.Apply(m, 5)
	return frame, f, m
}

func BenchmarkColourStats(b *testing.B) {
	frame, f, m := benchFace()
	for b.Loop() {
		StatsImage(frame, m)
		StatsFloat(f, m)
	}
}

func BenchmarkTransferColour(b *testing.B) {
	_, f, m := benchFace()
	from := ColourStats{Mean: [3]float64{120, 3, 8}, Std: [3]float64{30, 5, 6}, Weight: 1}
	to := ColourStats{Mean: [3]float64{130, -2, 12}, Std: [3]float64{25, 4, 7}, Weight: 1}
	for b.Loop() {
		TransferColour(f, m, from, to)
	}
}

func BenchmarkBlend(b *testing.B) {
	frame, f, m := benchFace()
	for b.Loop() {
		Blend(frame, f, m)
	}
}

// BenchmarkResizeLetterbox is the detector's input: a 1280×720 frame into 128×72 centred in
// 128×128.
func BenchmarkResizeLetterbox(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	frame := randImage(rng, 1280, 720)
	dst := New(128, 128)
	var z Resizer
	for b.Loop() {
		z.Resize(dst, image.Rect(0, 28, 128, 100), frame)
	}
}

// BenchmarkMembrane fits and adds the seam membrane of a 200 px face on a 32-cell grid,
// its band the feathered mask's edge.
func BenchmarkMembrane(b *testing.B) {
	frame, f, m := benchFace()
	var band Mask
	band.Reset(m.Rect)
	for i, v := range m.Pix {
		band.Pix[i] = 4 * v * (1 - v)
	}
	var mb Membrane
	for b.Loop() {
		if mb.Fit(m.Rect, faceRect.Dx()/32, frame, f, &band) {
			mb.Add(f, m, 1)
		}
	}
}

// BenchmarkMorphology cleans a 200 px face's occluder map: a 3×3 majority and a dilation.
func BenchmarkMorphology(b *testing.B) {
	_, _, m := benchFace()
	var occ, tmp Mask
	occ.Reset(m.Rect)
	rng := rand.New(rand.NewPCG(4, 4))
	for b.Loop() {
		b.StopTimer()
		for i := range occ.Pix {
			occ.Pix[i] = float32(rng.IntN(2))
		}
		b.StartTimer()
		occ.Majority(5, &tmp)
		occ.Dilate(3, &tmp)
	}
}

// BenchmarkResizeDetector is FaceFusion's detector shrink (restrict_frame): a 1920×1080 frame
// to 640×360.
func BenchmarkResizeDetector(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	frame := randImage(rng, 1920, 1080)
	dst := New(640, 360)
	var z Resizer
	for b.Loop() {
		z.Resize(dst, dst.Bounds(), frame)
	}
}
