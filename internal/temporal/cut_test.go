package temporal

import (
	"math"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Shot, reverse shot: two faces of different shapes take turns in the same place, three frames
// each, with a cut at every change. Every frame keeps its own face's shape exactly: no window
// reaches across a cut. Without the cuts the boxes overlap fully and the shapes mix.
func TestCutsEndTheWindows(t *testing.T) {
	a := shape(geom.Pt{X: 200, Y: 150}, 100)
	b := a
	for k := range b.Landmarks { // the same box, another shape (an open mouth, a longer jaw)
		b.Landmarks[k].Y += 12 * math.Sin(float64(k))
	}
	b.Five = b.Landmarks.Five()
	shot := func(f int) int { return f / 3 % 2 }
	video := make([][]face.Face, 15)
	for f := range video {
		video[f] = []face.Face{[]face.Face{a, b}[shot(f)]}
	}
	cut := func(s int) bool { return shot(s) != shot(s+1) }
	for _, withCuts := range []bool{true, false} {
		sm := Smoother{K: 4}
		if withCuts {
			sm.Cut = cut
		}
		mixed := 0.0
		for f := range video {
			got := sm.Smooth(nil, f, 0, len(video)-1, func(s int) []face.Face { return video[s] })
			want := coords(&video[f][0])
			d := 0.0
			for i, c := range coords(&got[0]) {
				d = max(d, math.Abs(c-want[i]))
			}
			if withCuts && d > 1e-9 {
				t.Fatalf("frame %d: a point moved %.3g px: the window reached across a cut", f, d)
			}
			mixed = max(mixed, d)
		}
		if !withCuts && mixed < 1 {
			t.Fatalf("without cuts the shapes moved at most %.3g px: the test does not test", mixed)
		}
	}
}

// A pan or a moving face is no cut; a change of shot is. Frames are made from one smooth
// pattern (a pan shifts it 20 px) and from a second pattern of other colours.
func TestHistogramCut(t *testing.T) {
	pattern := func(shift int, colour func(x, y int) [3]uint8) *raster.Image {
		img := raster.New(320, 240)
		for y := range img.H {
			for x := range img.W {
				c := colour(x+shift, y)
				copy(img.Pix[y*img.Stride+3*x:], c[:])
			}
		}
		return img
	}
	sky := func(x, y int) [3]uint8 { // bands of colour, a disc
		c := [3]uint8{uint8(40 + y/2), uint8(80 + x%200/2), 200}
		if (x-200)*(x-200)+(y-120)*(y-120) < 60*60 {
			c = [3]uint8{230, 190, 150}
		}
		return c
	}
	grey := func(x, y int) [3]uint8 { v := uint8(60 + (x+y)%100); return [3]uint8{v, v, v} }
	var h0, h1, h2 Histogram
	h0.Of(pattern(0, sky))
	h1.Of(pattern(20, sky))
	h2.Of(pattern(0, grey))
	if d := Distance(&h0, &h0); d != 0 || IsCut(&h0, &h0) {
		t.Fatalf("a frame against itself: distance %g", d)
	}
	if d := Distance(&h0, &h1); IsCut(&h0, &h1) {
		t.Fatalf("a 20 px pan is a cut: distance %.3f", d)
	}
	if d := Distance(&h0, &h2); !IsCut(&h0, &h2) {
		t.Fatalf("a change of shot is no cut: distance %.3f", d)
	}
}

// The histogram of a 1080p frame: its cost beside the frame's detection.
func BenchmarkHistogram(b *testing.B) {
	img := raster.New(1920, 1080)
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	var h, g Histogram
	b.ReportAllocs()
	for b.Loop() {
		h.Of(img)
		_ = IsCut(&h, &g)
	}
}
