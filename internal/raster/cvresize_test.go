package raster

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestResizeAreaMatchesOpenCV holds ResizeArea to cv2.resize INTER_AREA (testdata/cv2area,
// gen.py): bit for bit, at whole-number ratios and others.
func TestResizeAreaMatchesOpenCV(t *testing.T) {
	src, err := Load("testdata/cv2area/src.png")
	if err != nil {
		t.Fatal(err)
	}
	outs, _ := filepath.Glob("testdata/cv2area/area-*.png")
	if len(outs) < 8 {
		t.Fatalf("testdata/cv2area: %d goldens: run gen.py there", len(outs))
	}
	for _, path := range outs {
		want, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		got := New(want.W, want.H)
		ResizeArea(got, src)
		if i := firstDiff(got, want, got.Bounds()); i >= 0 {
			t.Errorf("%s: byte %d: ours %d, cv2 %d", filepath.Base(path), i, got.Pix[i], want.Pix[i])
		}
	}
}

func readF32(t *testing.T, path string, n int) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) != 4*n {
		t.Fatalf("%s: %d bytes, %v: run gen.py in testdata/cv2area", path, len(b), err)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// TestResizeCubicMatchesOpenCV holds ResizeCubic to cv2.resize INTER_CUBIC on float32 RGB
// (testdata/cv2area, gen.py): bit for bit.
func TestResizeCubicMatchesOpenCV(t *testing.T) {
	for _, s := range []int{4, 11, 33} {
		src := readF32(t, fmt.Sprintf("testdata/cv2area/diff-%d.f32", s), 3*s*s)
		want := readF32(t, fmt.Sprintf("testdata/cv2area/cubic-%d-96.f32", s), 3*96*96)
		got := make([]float32, len(want))
		ResizeCubic(got, 96, 96, src, s, s)
		worst := 0.0
		for i := range got {
			worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
		}
		if worst != 0 {
			t.Errorf("%d→96: max difference %g from cv2", s, worst)
		}
	}
}

func BenchmarkResizeArea(b *testing.B) {
	src, dst := New(1536, 1536), New(1024, 1024)
	for i := range src.Pix {
		src.Pix[i] = uint8(i * 7)
	}
	for b.Loop() {
		ResizeArea(dst, src)
	}
}

func BenchmarkResizeCubic(b *testing.B) {
	src, dst := make([]float32, 3*352*352), make([]float32, 3*1024*1024)
	for b.Loop() {
		ResizeCubic(dst, 1024, 1024, src, 352, 352)
	}
}

// TestGaussianBlur8MatchesOpenCV holds GaussianBlur8 to cv2.GaussianBlur on 8 bits
// (testdata/cv2area, gen.py): bit for bit.
func TestGaussianBlur8MatchesOpenCV(t *testing.T) {
	src, err := Load("testdata/cv2area/src.png")
	if err != nil {
		t.Fatal(err)
	}
	for _, sigma := range []float64{2, 0.8} {
		want, err := Load(fmt.Sprintf("testdata/cv2area/gauss-%g.png", sigma))
		if err != nil {
			t.Fatalf("%v: run gen.py in testdata/cv2area", err)
		}
		got := New(src.W, src.H)
		GaussianBlur8(got, src, sigma)
		if i := firstDiff(got, want, got.Bounds()); i >= 0 {
			t.Errorf("sigma %g: byte %d: ours %d, cv2 %d", sigma, i, got.Pix[i], want.Pix[i])
		}
	}
}

// TestResizeCubic8MatchesOpenCV holds ResizeCubic8 to cv2.resize INTER_CUBIC on 8 bits
// (testdata/cv2area, gen.py): bit for bit, at twice the size and at an odd size.
func TestResizeCubic8MatchesOpenCV(t *testing.T) {
	src, err := Load("testdata/cv2area/src.png")
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []string{"192x192", "101x77"} {
		want, err := Load("testdata/cv2area/cubic8-" + size + ".png")
		if err != nil {
			t.Fatalf("%v: run gen.py in testdata/cv2area", err)
		}
		got := New(want.W, want.H)
		ResizeCubic8(got, src)
		if i := firstDiff(got, want, got.Bounds()); i >= 0 {
			t.Errorf("%s: byte %d: ours %d, cv2 %d", size, i, got.Pix[i], want.Pix[i])
		}
	}
}

// TestCVScratchDoesNotAllocate: a worker's CVScratch, once grown, resizes and blurs frame after
// frame without allocating.
func TestCVScratchDoesNotAllocate(t *testing.T) {
	var z CVScratch
	src, small, blur, big := New(96, 96), New(33, 33), New(96, 96), New(192, 192)
	diff, grown := make([]float32, 3*11*11), make([]float32, 3*96*96)
	run := func() {
		z.ResizeArea(small, src)
		z.ResizeCubic(grown, 96, 96, diff, 11, 11)
		z.GaussianBlur8(blur, src, 2)
		z.ResizeCubic8(big, src)
	}
	run()
	if n := testing.AllocsPerRun(5, run); n != 0 {
		t.Errorf("%v allocations a run", n)
	}
}

func BenchmarkResizeCubic8(b *testing.B) {
	var z CVScratch
	src, dst := New(256, 256), New(512, 512)
	for i := 0; i < b.N; i++ {
		z.ResizeCubic8(dst, src)
	}
}
