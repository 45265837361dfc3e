package swap

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// textureMapsRef is textureMaps written plainly, one boxSmooth per plane: the reference its
// fused passes (chromaDetail, boxSmooth2) must match bit for bit.
func (s *Swapper) textureMapsRef(frame *raster.Image, fr image.Rectangle, r int) {
	w, h := fr.Dx(), fr.Dy()
	for k := range s.texE {
		s.texE[k].Reset(fr)
	}
	s.texL.Reset(fr)
	for y := range h {
		row := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:][:3*w]
		l := s.texL.Pix[y*w:][:w]
		for x := range l {
			l[x] = luma(float32(row[3*x]), float32(row[3*x+1]), float32(row[3*x+2]))
		}
	}
	s.texB1.Reset(fr)
	copy(s.texB1.Pix, s.texL.Pix)
	s.boxSmooth(&s.texB1, 1)
	s.texB3.Reset(fr)
	copy(s.texB3.Pix, s.texL.Pix)
	s.boxSmooth(&s.texB3, 3)
	fine, band, coh := s.texE[0].Pix, s.texE[1].Pix, s.texE[2].Pix
	l, b1, b3 := s.texL.Pix, s.texB1.Pix, s.texB3.Pix
	for i := range l {
		fine[i] = float32(math.Abs(float64(l[i] - b1[i])))
		band[i] = b1[i] - b3[i]
	}
	for k := range s.texJ {
		s.texJ[k].Reset(fr)
	}
	jc, js := s.texJ[0].Pix, s.texJ[1].Pix
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			i := y*w + x
			gx, gy := (band[i+1]-band[i-1])/2, (band[i+w]-band[i-w])/2
			g2 := gx*gx + gy*gy
			k := 1 / (g2 + texFaint)
			jc[i], js[i] = (gx*gx-gy*gy)*k, 2*gx*gy*k
		}
	}
	for i, v := range band {
		band[i] = float32(math.Abs(float64(v)))
	}
	s.texC[0].Reset(fr)
	s.texC[1].Reset(fr)
	cfine, cband := s.texC[0].Pix, s.texC[1].Pix
	for c := range 2 {
		d := s.texB3.Pix
		for y := range h {
			row := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:][:3*w]
			for x := range w {
				d[y*w+x] = float32(row[3*x+2*c]) - float32(row[3*x+1])
			}
		}
		copy(s.texB1.Pix, d)
		s.boxSmooth(&s.texB1, 1)
		copy(s.texE[2].Pix, d)
		s.boxSmooth(&s.texE[2], 3)
		for i, m1 := range s.texB1.Pix {
			cfine[i] += abs32(d[i] - m1)
			cband[i] += abs32(m1 - s.texE[2].Pix[i])
		}
	}
	for _, m := range []*raster.Mask{&s.texC[0], &s.texC[1], &s.texE[0], &s.texE[1], &s.texJ[0], &s.texJ[1]} {
		s.boxSmooth(m, r)
	}
	for i := range coh {
		coh[i] = float32(math.Sqrt(float64(jc[i]*jc[i] + js[i]*js[i])))
	}
}

// textureFrame is a w×h frame of one of several kinds of content: grain about a skin tone,
// channels varying apart, saturated noise (the sums' extremes), flat, and stripes.
func textureFrame(w, h, kind int, rng *rand.Rand) *raster.Image {
	img := raster.New(w, h)
	base := [3]float64{180 + 40*rng.Float64(), 120 + 40*rng.Float64(), 90 + 40*rng.Float64()}
	for y := range h {
		for x := range w {
			var c [3]float64
			switch kind % 5 {
			case 0:
				g := 8 * rng.NormFloat64()
				c = [3]float64{base[0] + g, base[1] + g, base[2] + g}
			case 1:
				c = [3]float64{base[0] + 6*rng.NormFloat64(), base[1] + 6*rng.NormFloat64(), base[2] + 6*rng.NormFloat64()}
			case 2:
				c = [3]float64{255 * float64(rng.IntN(2)), 255 * float64(rng.IntN(2)), 255 * float64(rng.IntN(2))}
			case 3:
				c = base
			case 4:
				v := 30 * math.Sin(float64(x+2*y)/2.3)
				c = [3]float64{base[0] + v, base[1] + 0.8*v, base[2] + 0.5*v + 3*rng.NormFloat64()}
			}
			img.Pix[y*img.Stride+3*x] = clampU8(c[0])
			img.Pix[y*img.Stride+3*x+1] = clampU8(c[1])
			img.Pix[y*img.Stride+3*x+2] = clampU8(c[2])
		}
	}
	return img
}

// The fused texture maps equal the plain ones bit for bit, over rectangles of every shape
// (thinner than the boxes too), window radii and kinds of content.
func TestTextureMapsMatchReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	fast, ref := NewSwapper(nil, DefaultOptions()), NewSwapper(nil, DefaultOptions())
	for n := range 1000 {
		w, h := 1+rng.IntN(60), 1+rng.IntN(60)
		if n%10 == 0 {
			w, h = 150+rng.IntN(150), 150+rng.IntN(150)
		}
		frame := textureFrame(w+7, h+5, n, rng)
		x0, y0 := rng.IntN(8), rng.IntN(6)
		fr := image.Rect(x0, y0, x0+w, y0+h)
		r := texWindowLeast + rng.IntN(8)
		fast.textureMaps(frame, fr, r)
		ref.textureMapsRef(frame, fr, r)
		for _, c := range []struct {
			name string
			a, b *raster.Mask
		}{
			{"fine", &fast.texE[0], &ref.texE[0]}, {"band", &fast.texE[1], &ref.texE[1]}, {"coherence", &fast.texE[2], &ref.texE[2]},
			{"orientation cos", &fast.texJ[0], &ref.texJ[0]}, {"orientation sin", &fast.texJ[1], &ref.texJ[1]},
			{"chroma fine", &fast.texC[0], &ref.texC[0]}, {"chroma band", &fast.texC[1], &ref.texC[1]},
		} {
			if c.a.Rect != c.b.Rect {
				t.Fatalf("case %d (%dx%d, r %d, kind %d): %s over %v, want %v", n, w, h, r, n%5, c.name, c.a.Rect, c.b.Rect)
			}
			for i := range c.b.Pix {
				if math.Float32bits(c.a.Pix[i]) != math.Float32bits(c.b.Pix[i]) {
					t.Fatalf("case %d (%dx%d, r %d, kind %d): %s at pixel %d is %g, want %g", n, w, h, r, n%5, c.name, i, c.a.Pix[i], c.b.Pix[i])
				}
			}
		}
	}
}

// BenchmarkTextureMaps is the texture maps over a 200 px face's rectangle of BenchmarkApply's
// grain, fused and plain.
func BenchmarkTextureMaps(b *testing.B) {
	frame := skin(240, 280, 6)
	fr := image.Rect(5, 5, 235, 275)
	for _, c := range []struct {
		name string
		maps func(*Swapper, *raster.Image, image.Rectangle, int)
	}{{"fused", (*Swapper).textureMaps}, {"reference", (*Swapper).textureMapsRef}} {
		b.Run(fmt.Sprint(c.name), func(b *testing.B) {
			s := NewSwapper(nil, DefaultOptions())
			for b.Loop() {
				c.maps(s, frame, fr, 6)
			}
		})
	}
}

// median picks sortedMedian's value, over lengths odd and even, few distinct values and many.
func TestMedianMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for n := range 2000 {
		v := make([]float32, 1+rng.IntN(400))
		levels := 1 + rng.IntN(50)
		if n%2 == 0 {
			levels = 1 << 20
		}
		for i := range v {
			v[i] = float32(rng.IntN(levels)) / 7
		}
		w := slices.Clone(v)
		if got, want := median(v), sortedMedian(w); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("case %d (%d values, %d levels): median %g, want %g", n, len(v), levels, got, want)
		}
	}
}

// BenchmarkMedian is the median of a skin sample disc's ~300 values, by selection and by sort.
func BenchmarkMedian(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	v := make([]float32, 317)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	w := make([]float32, len(v))
	for _, c := range []struct {
		name string
		med  func([]float32) float32
	}{{"select", median}, {"sort", sortedMedian}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				copy(w, v)
				c.med(w)
			}
		})
	}
}

// boxSmooth2 equals two boxSmooth calls bit for bit on any values (signed, zeros of both
// signs, 0/1 sets as spread gives it), over rectangles of every shape and unequal radii.
func TestBoxSmooth2MatchesBoxSmooth(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	fast, ref := NewSwapper(nil, DefaultOptions()), NewSwapper(nil, DefaultOptions())
	for n := range 1500 {
		w, h := 1+rng.IntN(60), 1+rng.IntN(60)
		if n%10 == 0 {
			w, h = 100+rng.IntN(200), 100+rng.IntN(200)
		}
		fr := image.Rect(3, 2, 3+w, 2+h)
		ra, rb := 1+rng.IntN(14), 1+rng.IntN(40)
		var a, b, wantA, wantB raster.Mask
		for _, m := range []*raster.Mask{&a, &b, &wantA, &wantB} {
			m.Reset(fr)
		}
		for i := range a.Pix {
			switch n % 3 {
			case 0:
				a.Pix[i], b.Pix[i] = float32(rng.NormFloat64()), float32(3*rng.NormFloat64()-1)
			case 1:
				a.Pix[i], b.Pix[i] = float32(rng.IntN(2)), float32(rng.IntN(5)/4)
			default:
				a.Pix[i], b.Pix[i] = float32(math.Copysign(0, rng.NormFloat64())), float32(rng.IntN(3)-1)
			}
		}
		copy(wantA.Pix, a.Pix)
		copy(wantB.Pix, b.Pix)
		ref.boxSmooth(&wantA, ra)
		ref.boxSmooth(&wantB, rb)
		ta, tb := make([]float32, w*h), make([]float32, w*h)
		fast.boxSmooth2(&a, &b, ra, rb, ta, tb)
		for i := range a.Pix {
			if math.Float32bits(a.Pix[i]) != math.Float32bits(wantA.Pix[i]) || math.Float32bits(b.Pix[i]) != math.Float32bits(wantB.Pix[i]) {
				t.Fatalf("case %d (%d×%d, r %d and %d), pixel %d: %g %g, want %g %g", n, w, h, ra, rb, i, a.Pix[i], b.Pix[i], wantA.Pix[i], wantB.Pix[i])
			}
		}
	}
}

// BenchmarkBoxSmoothPair is two planes of a face's rectangle smoothed, fused and one by one.
func BenchmarkBoxSmoothPair(b *testing.B) {
	fr := image.Rect(0, 0, 240, 280)
	rng := rand.New(rand.NewPCG(15, 16))
	s := NewSwapper(nil, DefaultOptions())
	var p, q raster.Mask
	p.Reset(fr)
	q.Reset(fr)
	for i := range p.Pix {
		p.Pix[i], q.Pix[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	ta, tb := make([]float32, len(p.Pix)), make([]float32, len(p.Pix))
	b.Run("fused", func(b *testing.B) {
		for b.Loop() {
			s.boxSmooth2(&p, &q, 6, 24, ta, tb)
		}
	})
	b.Run("apart", func(b *testing.B) {
		for b.Loop() {
			s.boxSmooth(&p, 6)
			s.boxSmooth(&q, 24)
		}
	})
}
