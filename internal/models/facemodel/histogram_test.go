package facemodel

import (
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// TestHistogramDifferenceMatchesOpenCV holds hsv8 to cv2.cvtColor BGR2HSV bit for bit and
// HistogramDifference to FaceFusion's calculate_histogram_difference (testdata/cvhist, gen.py).
func TestHistogramDifferenceMatchesOpenCV(t *testing.T) {
	a, errA := raster.Load("testdata/cvhist/a.png")
	b, errB := raster.Load("testdata/cvhist/b.png")
	hsv, errH := os.ReadFile("testdata/cvhist/a-hsv.u8")
	text, errF := os.ReadFile("testdata/cvhist/factor.txt")
	if errA != nil || errB != nil || errH != nil || errF != nil {
		t.Fatalf("testdata/cvhist: %v %v %v %v: run gen.py there", errA, errB, errH, errF)
	}
	for y := range a.H {
		for x := range a.W {
			r, g, bl := a.At(x, y)
			h, s := hsv8(r, g, bl)
			if i := 3 * (y*a.W + x); h != int(hsv[i]) || s != int(hsv[i+1]) {
				t.Fatalf("(%d, %d) rgb %d %d %d: hue %d sat %d, cv2 %d %d", x, y, r, g, bl, h, s, hsv[i], hsv[i+1])
			}
		}
	}
	want, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		t.Fatal(err)
	}
	if got := HistogramDifference(a, b); math.Abs(got-want) > 1e-12 {
		t.Errorf("HistogramDifference = %v, FaceFusion's %v", got, want)
	}
	if got := HistogramDifference(a, a); got != 1 {
		t.Errorf("an image against itself: %v, want 1", got)
	}
}
