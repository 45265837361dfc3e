package adapters

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

func TestLetterboxGeometry(t *testing.T) {
	for _, c := range [][3]int{{512, 512, 128}, {1280, 720, 128}, {720, 1280, 128}, {600, 400, 128}, {1, 1000, 128}, {3, 2, 128}, {1920, 1080, 256}} {
		w, h, size := c[0], c[1], c[2]
		l := newLetterbox(w, h, size)
		if max(l.CW, l.CH) != size {
			t.Errorf("%v: content %d×%d: the long side must fill %d", c, l.CW, l.CH, size)
		}
		if d := (size - l.CW) - 2*l.OX; d != 0 && d != 1 {
			t.Errorf("%v: content x [%d,%d) not centred in %d", c, l.OX, l.OX+l.CW, size)
		}
		if d := (size - l.CH) - 2*l.OY; d != 0 && d != 1 {
			t.Errorf("%v: content y [%d,%d) not centred in %d", c, l.OY, l.OY+l.CH, size)
		}
		// The content's corners are the frame's corners.
		if p := l.toFrame(geom.Pt{X: float64(l.OX), Y: float64(l.OY)}); p.Dist(geom.Pt{}) > 1e-9 {
			t.Errorf("%v: content origin maps to %v, want (0,0)", c, p)
		}
		if p := l.toFrame(geom.Pt{X: float64(l.OX + l.CW), Y: float64(l.OY + l.CH)}); p.Dist(geom.Pt{X: float64(w), Y: float64(h)}) > 1e-9 {
			t.Errorf("%v: content end maps to %v, want (%d,%d)", c, p, w, h)
		}
		for _, p := range []geom.Pt{{X: 0.3, Y: 0.7}, {X: float64(w) / 3, Y: float64(h) * 0.9}, {X: -5, Y: float64(h) + 5}} {
			if q := l.toFrame(l.toInput(p)); q.Dist(p) > 1e-9 {
				t.Errorf("%v: round trip of %v gives %v", c, p, q)
			}
		}
	}
}

func randomImage(rng *rand.Rand, w, h int) *raster.Image {
	img := raster.New(w, h)
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.IntN(256))
	}
	return img
}

func TestLetterboxFillMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := [][2]int{{512, 512}, {1280, 720}, {37, 301}, {128, 128}, {64, 48}, {1, 1}, {1, 77}, {300, 2}, {3, 40000}}
	// 3×40000 shrinks more than 257 rows into one: the integer lanes must be flushed.
	for i := 0; i < 60; i++ {
		sizes = append(sizes, [2]int{1 + rng.IntN(400), 1 + rng.IntN(400)})
	}
	var r letterboxResampler
	for _, s := range sizes {
		for _, size := range []int{128, 48} {
			img := randomImage(rng, s[0], s[1])
			r.size = size
			got := make([]float32, size*size*3)
			for i := range got {
				got[i] = float32(math.NaN()) // fill must write every element
			}
			r.fill(got, img)
			want := letterboxReference(img, size)
			for i := range want {
				if !(math.Abs(float64(got[i]-want[i])) <= 1e-4) {
					t.Fatalf("%dx%d into %d: element %d (pixel %d,%d): got %v, want %v",
						s[0], s[1], size, i, (i/3)%size, i/3/size, got[i], want[i])
				}
			}
		}
	}
}

func TestLetterboxFillValues(t *testing.T) {
	// A white 200×100 frame in a 128 input: content rows 32–95 are +1, the bars −1.
	img := raster.New(200, 100)
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	r := letterboxResampler{size: 128}
	dst := make([]float32, 128*128*3)
	r.fill(dst, img)
	for _, c := range []struct {
		x, y int
		want float32
	}{{0, 0, -1}, {64, 31, -1}, {64, 32, 1}, {0, 64, 1}, {127, 95, 1}, {64, 96, -1}, {127, 127, -1}} {
		if v := dst[(c.y*128+c.x)*3+1]; math.Abs(float64(v-c.want)) > 1e-5 {
			t.Errorf("input pixel (%d,%d): got %v, want %v", c.x, c.y, v, c.want)
		}
	}
}

func TestLetterboxFillAllocatesNothing(t *testing.T) {
	img := randomImage(rand.New(rand.NewPCG(5, 6)), 640, 360)
	r := letterboxResampler{size: 128}
	dst := make([]float32, 128*128*3)
	r.fill(dst, img) // builds the taps for this frame size
	if allocs := testing.AllocsPerRun(20, func() { r.fill(dst, img) }); allocs != 0 {
		t.Errorf("fill allocates %v times per frame, want 0", allocs)
	}
}

func BenchmarkLetterboxFill(b *testing.B) {
	for _, s := range [][2]int{{512, 512}, {1280, 720}, {1920, 1080}} {
		b.Run(fmt.Sprintf("%dx%d", s[0], s[1]), func(b *testing.B) {
			img := randomImage(rand.New(rand.NewPCG(7, 8)), s[0], s[1])
			r := letterboxResampler{size: 128}
			dst := make([]float32, 128*128*3)
			for b.Loop() {
				r.fill(dst, img)
			}
		})
	}
}

func BenchmarkLetterboxReference(b *testing.B) {
	img := randomImage(rand.New(rand.NewPCG(7, 8)), 1280, 720)
	for b.Loop() {
		letterboxReference(img, 128)
	}
}
