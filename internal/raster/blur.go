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
	for y := range h {
		ext[2*y], ext[2*y+1] = blurRow(m.Pix[y*m.Stride:][:w], tmp[y*w:][:w], b.kernel, r)
	}
	blurColumns(m, tmp, ext, b.kernel, r)
}

// blurRow is the horizontal pass of one row, in → out. A face mask is zero around the
// face, so only the columns within r of the row's nonzero run are computed; it returns
// that span (lo > hi for a zero row) for the vertical pass.
func blurRow(in, out, k []float32, r int) (lo, hi int) {
	w := len(in)
	a, z := 0, w-1
	for a < w && in[a] == 0 {
		a++
	}
	for z >= a && in[z] == 0 {
		z--
	}
	if a > z {
		clear(out)
		return 0, -1
	}
	lo, hi = max(0, a-r), min(w-1, z+r)
	clear(out[:lo])
	clear(out[hi+1:])
	// Between x0 and x1 the whole kernel lies on the run: there outputs go in pairs, which
	// share their loads.
	x0, x1 := max(lo, a+r), min(hi, z-r)
	pairs := 0
	if x0 <= x1 {
		pairs = (x1 - x0 + 1) &^ 1
		convolvePairs(out[x0:x0+pairs], in[x0-r:], k)
	}
	for x := lo; x <= hi; x++ {
		if x == x0 && pairs > 0 {
			x += pairs - 1
			continue
		}
		s0, s1 := max(a, x-r), min(z, x+r)
		src := in[s0 : s1+1]
		out[x] = dot(src, k[s0-x+r:][:len(src)])
	}
	return lo, hi
}

// blurColumns is the vertical pass tmp → m, whole rows at a time so the inner loop runs
// along memory, four output rows a pass so that each input row is read once for them all.
// Each output sums its rows in the same order as one row alone would.
func blurColumns(m *Mask, tmp []float32, ext []int, k []float32, r int) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	var o [4][]float32
	for y := 0; y < h; y += len(o) {
		n := min(len(o), h-y)
		for j := range n {
			o[j] = m.Pix[(y+j)*m.Stride:][:w]
			clear(o[j])
		}
		for yy := max(0, y-r); yy <= min(h-1, y+n-1+r); yy++ {
			lo, hi := ext[2*yy], ext[2*yy+1]
			if lo > hi {
				continue
			}
			in := tmp[yy*w+lo : yy*w+hi+1]
			// Output rows y+jlo … y+jhi lie within r of yy.
			jlo, jhi := max(0, yy-r-y), min(n-1, yy+r-y)
			if jlo == 0 && jhi == len(o)-1 {
				addScaled4(&o, lo, in, k[yy-y+r], k[yy-y-1+r], k[yy-y-2+r], k[yy-y-3+r])
				continue
			}
			for j := jlo; j <= jhi; j++ {
				addScaled(o[j][lo:], in, k[yy-y-j+r])
			}
		}
	}
}

// addScaled4 adds w0·in, w1·in, w2·in and w3·in to o's four rows from column lo.
func addScaled4(o *[4][]float32, lo int, in []float32, w0, w1, w2, w3 float32) {
	a, b, c, d := o[0][lo:][:len(in)], o[1][lo:][:len(in)], o[2][lo:][:len(in)], o[3][lo:][:len(in)]
	for x, v := range in {
		a[x] += w0 * v
		b[x] += w1 * v
		c[x] += w2 * v
		d[x] += w3 * v
	}
}

// addScaled adds wt·in to o (as long as in).
func addScaled(o, in []float32, wt float32) {
	o = o[:len(in)]
	for x, v := range in {
		o[x] += wt * v
	}
}

// convolvePairs sets out[j] to dot(in[j:j+len(k)], k) for each j, two at a time (len(out)
// is even; in holds len(out)+len(k)−1 values): eight running sums, each output keeping
// dot's own four and its order.
func convolvePairs(out, in, k []float32) {
	n := len(k)
	for j := 0; j+2 <= len(out); j += 2 {
		a := in[j : j+n+1]
		var p0, p1, p2, p3, q0, q1, q2, q3 float32
		i := 0
		for ; i+4 <= n; i += 4 {
			kk, aa := k[i:i+4:i+4], a[i:i+5:i+5]
			p0 += aa[0] * kk[0]
			q0 += aa[1] * kk[0]
			p1 += aa[1] * kk[1]
			q1 += aa[2] * kk[1]
			p2 += aa[2] * kk[2]
			q2 += aa[3] * kk[2]
			p3 += aa[3] * kk[3]
			q3 += aa[4] * kk[3]
		}
		for ; i < n; i++ {
			p0 += a[i] * k[i]
			q0 += a[i+1] * k[i]
		}
		out[j], out[j+1] = (p0+p1)+(p2+p3), (q0+q1)+(q2+q3)
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
