package raster

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"
)

// blurOneAtATime is Blur.Apply as it was before its passes shared loads: one output a dot
// product, one output row a pass. The fast passes must give its bits exactly.
func blurOneAtATime(m *Mask, sigma float64) {
	r := Radius(sigma)
	if r == 0 || len(m.Pix) == 0 {
		return
	}
	k := gaussianKernel(nil, sigma, r)
	w, h := m.Rect.Dx(), m.Rect.Dy()
	tmp, ext := make([]float32, w*h), make([]int, 2*h)
	for y := range h {
		in, out := m.Pix[y*m.Stride:][:w], tmp[y*w:][:w]
		a, z := 0, w-1
		for a < w && in[a] == 0 {
			a++
		}
		for z >= a && in[z] == 0 {
			z--
		}
		if a > z {
			ext[2*y], ext[2*y+1] = 0, -1
			continue
		}
		lo, hi := max(0, a-r), min(w-1, z+r)
		for x := lo; x <= hi; x++ {
			s0, s1 := max(a, x-r), min(z, x+r)
			src := in[s0 : s1+1]
			out[x] = dot(src, k[s0-x+r:][:len(src)])
		}
		ext[2*y], ext[2*y+1] = lo, hi
	}
	for y := range h {
		out := m.Pix[y*m.Stride:][:w]
		clear(out)
		for yy := max(0, y-r); yy <= min(h-1, y+r); yy++ {
			lo, hi := ext[2*yy], ext[2*yy+1]
			wt := k[yy-y+r]
			for x := lo; x <= hi; x++ {
				out[x] += wt * tmp[yy*w+x]
			}
		}
	}
}

// The blur's bits are the occluder rules' inputs: its passes may be reordered for speed
// only so that each output's sums stay as they were.
func TestBlurKeepsOneAtATimeBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 3))
	var b Blur
	for iter := range 400 {
		r := image.Rect(0, 0, 1+rng.IntN(60), 1+rng.IntN(60))
		m := &Mask{}
		m.Reset(r)
		// A blob of signed values inside zero margins, some rows zero, as the masks and
		// channels blurred are.
		x0, x1 := rng.IntN(r.Dx()), rng.IntN(r.Dx())
		y0, y1 := rng.IntN(r.Dy()), rng.IntN(r.Dy())
		for y := min(y0, y1); y <= max(y0, y1); y++ {
			if rng.IntN(8) == 0 {
				continue
			}
			for x := min(x0, x1); x <= max(x0, x1); x++ {
				if rng.IntN(4) > 0 {
					m.Pix[y*m.Stride+x] = rng.Float32()*2 - float32(iter%2)
				}
			}
		}
		want := &Mask{}
		want.Reset(r)
		copy(want.Pix, m.Pix)
		sigma := 0.2 + rng.Float64()*8
		blurOneAtATime(want, sigma)
		b.Apply(m, sigma)
		for i := range m.Pix {
			if math.Float32bits(m.Pix[i]) != math.Float32bits(want.Pix[i]) {
				t.Fatalf("iter %d (σ=%.2f, %v): pixel %d: %v, one at a time %v", iter, sigma, r, i, m.Pix[i], want.Pix[i])
			}
		}
	}
}

// BenchmarkBlurDense blurs a luma-like plane (no zero margins) at the fine detail's scale.
func BenchmarkBlurDense(b *testing.B) {
	rng := rand.New(rand.NewPCG(32, 5))
	var src, m Mask
	src.Reset(image.Rect(0, 0, 260, 300))
	for i := range src.Pix {
		src.Pix[i] = 255 * rng.Float32()
	}
	var bl Blur
	for b.Loop() {
		m.Reuse(src.Rect)
		copy(m.Pix, src.Pix)
		bl.Apply(&m, 2)
	}
}
