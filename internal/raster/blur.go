package raster

import "math"

// Blur is a separable Gaussian blur of masks; it owns its kernel and scratch row buffer so
// that feathering a face's mask every frame does not allocate. The zero value is ready.
type Blur struct {
	sigma  float64
	kernel []float32 // taps −r…r
	tmp    []float32
	ext    []int // per row of tmp: first and last column that may be nonzero
}

// Radius is the kernel half-width used for sigma: ⌈3σ⌉ (the tail beyond holds 0.3% of the
// weight), 0 for sigma ≤ 0.
func Radius(sigma float64) int {
	if !(sigma > 0) {
		return 0
	}
	return int(math.Ceil(3 * math.Min(sigma, 1e4)))
}

// Apply blurs m in place with a Gaussian of standard deviation sigma pixels, taking the
// mask as 0 outside its Rect. sigma ≤ 0 leaves m unchanged.
func (b *Blur) Apply(m *Mask, sigma float64) {
	r := Radius(sigma)
	if r == 0 || len(m.Pix) == 0 {
		return
	}
	if sigma != b.sigma || len(b.kernel) != 2*r+1 {
		b.sigma = sigma
		b.kernel = gaussianKernel(b.kernel[:0], sigma, r)
	}
	w, h := m.Rect.Dx(), m.Rect.Dy()
	if cap(b.tmp) < w*h {
		b.tmp = make([]float32, w*h)
	}
	if cap(b.ext) < 2*h {
		b.ext = make([]int, 2*h)
	}
	tmp, ext := b.tmp[:w*h], b.ext[:2*h]
	k := b.kernel
	// Horizontal pass m → tmp. A face mask is zero around the face, so each row only
	// computes the columns within r of its nonzero run; ext keeps that span for the
	// vertical pass (lo > hi for a zero row).
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
			clear(out)
			ext[2*y], ext[2*y+1] = 0, -1
			continue
		}
		lo, hi := max(0, a-r), min(w-1, z+r)
		clear(out[:lo])
		clear(out[hi+1:])
		for x := lo; x <= hi; x++ {
			s0, s1 := max(a, x-r), min(z, x+r)
			src := in[s0 : s1+1]
			kk := k[s0-x+r:][:len(src)]
			out[x] = dot(src, kk)
		}
		ext[2*y], ext[2*y+1] = lo, hi
	}
	// Vertical pass tmp → m, a whole row at a time so the inner loop runs along memory.
	for y := range h {
		out := m.Pix[y*m.Stride:][:w]
		clear(out)
		for yy := max(0, y-r); yy <= min(h-1, y+r); yy++ {
			lo, hi := ext[2*yy], ext[2*yy+1]
			if lo > hi {
				continue
			}
			wt := k[yy-y+r]
			in := tmp[yy*w+lo : yy*w+hi+1]
			o := out[lo:][:len(in)]
			for x, v := range in {
				o[x] += wt * v
			}
		}
	}
}

// dot is Σ a[i]·b[i] with four running sums, so the additions do not wait on each other.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func gaussianKernel(k []float32, sigma float64, r int) []float32 {
	var sum float64
	for i := -r; i <= r; i++ {
		sum += math.Exp(-float64(i*i) / (2 * sigma * sigma))
	}
	for i := -r; i <= r; i++ {
		k = append(k, float32(math.Exp(-float64(i*i)/(2*sigma*sigma))/sum))
	}
	return k
}
