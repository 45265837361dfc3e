package audio

import (
	"math"
	"math/bits"
	"math/cmplx"
	"sync"
)

// FFT of any length, as numpy's and scipy's pocketfft computes it (to rounding): mixed radix
// over the factors 2, 3, 4 and 5, and Bluestein's chirp transform through a power of two where
// a larger prime is left. FaceFusion's transforms have lengths that are whatever the audio is
// (scipy.signal.resample transforms the whole track), so a prime length must stay O(n log n).

// fftPlan holds what a transform of one length needs, made once per length.
type fftPlan struct {
	n       int
	factors []int        // radices, product n; nil when n uses blue
	twiddle []complex128 // exp(-2πik/n), k < n
	blue    *bluestein
}

var plans sync.Map // int → *fftPlan

// cachedPlanMax bounds the lengths whose plans are kept: the STFTs' few short lengths are
// made once, a whole track's (scipy.signal.resample's) is made for its one transform and let go.
const cachedPlanMax = 1 << 16

func planFor(n int) *fftPlan {
	if p, ok := plans.Load(n); ok {
		return p.(*fftPlan)
	}
	p := newPlan(n)
	if n <= cachedPlanMax {
		plans.Store(n, p)
	}
	return p
}

func newPlan(n int) *fftPlan {
	p := &fftPlan{n: n}
	rest, factors := n, []int(nil)
	for _, r := range []int{4, 2, 3, 5} {
		for rest%r == 0 {
			factors = append(factors, r)
			rest /= r
		}
	}
	if rest != 1 {
		p.blue = newBluestein(n)
		return p
	}
	p.factors = factors
	p.twiddle = roots(n)
	return p
}

// roots is exp(-2πik/n) for k < n, each from its own angle (no accumulated rotation error).
func roots(n int) []complex128 {
	w := make([]complex128, n)
	for k := range w {
		s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
		w[k] = complex(c, s)
	}
	return w
}

// fft transforms x in place: X[k] = Σ x[j]·exp(∓2πijk/n), the minus sign forward; the inverse
// is not divided by n.
func fft(x []complex128, inverse bool) {
	n := len(x)
	if n <= 1 {
		return
	}
	if inverse {
		for i, v := range x {
			x[i] = cmplx.Conj(v)
		}
	}
	p := planFor(n)
	if p.blue != nil {
		p.blue.transform(x)
	} else {
		p.forward(x)
	}
	if inverse {
		for i, v := range x {
			x[i] = cmplx.Conj(v)
		}
	}
}

// forward is the Stockham (self-sorting) transform over p.factors: at each stage of length
// len = n/(product so far), x[q + s(k + jm)] for the radix r's j becomes y[q + s(rk + t)]
// (m = len/r, s the product of the radices before), the small DFT of the r values times the
// stage's twiddle; the buffers swap each stage, and the answer is in natural order.
func (p *fftPlan) forward(x []complex128) {
	y := make([]complex128, p.n)
	src, dst := x, y
	s, length := 1, p.n
	for _, r := range p.factors {
		m := length / r
		step := p.n / length // the stage's roots are the table's every step-th
		switch r {
		case 2:
			radix2(src, dst, s, m, step, p.twiddle)
		case 4:
			radix4(src, dst, s, m, step, p.twiddle)
		default:
			radixN(src, dst, r, s, m, step, p.twiddle)
		}
		src, dst = dst, src
		s *= r
		length = m
	}
	if &src[0] != &x[0] {
		copy(x, src)
	}
}

func radix2(x, y []complex128, s, m, step int, w []complex128) {
	for k := 0; k < m; k++ {
		wk := w[k*step]
		for q := 0; q < s; q++ {
			a, b := x[q+s*k], x[q+s*(k+m)]
			y[q+s*(2*k)] = a + b
			y[q+s*(2*k+1)] = (a - b) * wk
		}
	}
}

func radix4(x, y []complex128, s, m, step int, w []complex128) {
	for k := 0; k < m; k++ {
		w1, w2, w3 := w[k*step], w[2*k*step], w[3*k*step]
		for q := 0; q < s; q++ {
			a, b, c, d := x[q+s*k], x[q+s*(k+m)], x[q+s*(k+2*m)], x[q+s*(k+3*m)]
			apc, amc := a+c, a-c
			bpd, bmd := b+d, b-d
			jbmd := complex(imag(bmd), -real(bmd)) // −i·(b − d)
			o := q + s*4*k
			y[o] = apc + bpd
			y[o+s] = (amc + jbmd) * w1
			y[o+2*s] = (apc - bpd) * w2
			y[o+3*s] = (amc - jbmd) * w3
		}
	}
}

// radixN is a stage of radix 3 or 5: the small DFT by its definition, exp(−2πijt/r) read from
// the table.
func radixN(x, y []complex128, r, s, m, step int, w []complex128) {
	var a, dft [5]complex128
	var coef [25]complex128
	n := m * r * step // the table's length
	for j := 0; j < r; j++ {
		for t := 0; t < r; t++ {
			coef[j*r+t] = w[(j*t%r)*(n/r)]
		}
	}
	for k := 0; k < m; k++ {
		for q := 0; q < s; q++ {
			for j := 0; j < r; j++ {
				a[j] = x[q+s*(k+j*m)]
			}
			for t := 0; t < r; t++ {
				var sum complex128
				for j := 0; j < r; j++ {
					sum += a[j] * coef[j*r+t]
				}
				dft[t] = sum
			}
			for t := 0; t < r; t++ {
				y[q+s*(r*k+t)] = dft[t] * w[t*k*step]
			}
		}
	}
}

// bluestein is the chirp-z transform of length n through a power-of-two convolution.
type bluestein struct {
	n, m  int
	chirp []complex128 // exp(-πik²/n), k < n
	kern  []complex128 // the transform of the conjugate chirp, wrapped to length m
	pow2  *fftPlan
}

func newBluestein(n int) *bluestein {
	m := 1 << bits.Len(uint(2*n-2))
	b := &bluestein{n: n, m: m, chirp: make([]complex128, n), kern: make([]complex128, m)}
	for k := 0; k < n; k++ {
		// k² mod 2n in integers keeps the angle exact for long tracks.
		e := (uint64(k) * uint64(k)) % uint64(2*n)
		s, c := math.Sincos(-math.Pi * float64(e) / float64(n))
		b.chirp[k] = complex(c, s)
	}
	b.kern[0] = cmplx.Conj(b.chirp[0])
	for k := 1; k < n; k++ {
		b.kern[k] = cmplx.Conj(b.chirp[k])
		b.kern[m-k] = cmplx.Conj(b.chirp[k])
	}
	b.pow2 = planFor(m)
	b.pow2.forward(b.kern)
	return b
}

func (b *bluestein) transform(x []complex128) {
	a := make([]complex128, b.m)
	for k := 0; k < b.n; k++ {
		a[k] = x[k] * b.chirp[k]
	}
	b.pow2.forward(a)
	for i := range a {
		a[i] = cmplx.Conj(a[i] * b.kern[i])
	}
	b.pow2.forward(a) // conj(FFT(conj(·))) is m times the inverse
	scale := 1 / float64(b.m)
	for k := 0; k < b.n; k++ {
		x[k] = cmplx.Conj(a[k]) * complex(scale, 0) * b.chirp[k]
	}
}

// dft is the transform by its definition, O(n²): the reference the fast one is tested against.
func dft(x []complex128, inverse bool) []complex128 {
	n := len(x)
	sign := -1.0
	if inverse {
		sign = 1
	}
	out := make([]complex128, n)
	for k := range out {
		var s complex128
		for j, v := range x {
			e := (j * k) % n
			sn, c := math.Sincos(sign * 2 * math.Pi * float64(e) / float64(n))
			s += v * complex(c, sn)
		}
		out[k] = s
	}
	return out
}

// rfft is the transform of a real signal's bins 0..n/2 (numpy's rfft). An even length is done
// as a complex transform of half the length (even samples real, odd imaginary), which halves
// the memory a whole track's transform takes.
func rfft(x []float64) []complex128 {
	n := len(x)
	if n%2 != 0 || n < 4 {
		full := make([]complex128, n)
		for i, v := range x {
			full[i] = complex(v, 0)
		}
		fft(full, false)
		return full[:n/2+1]
	}
	h := n / 2
	z := make([]complex128, h+1)
	for i := 0; i < h; i++ {
		z[i] = complex(x[2*i], x[2*i+1])
	}
	fft(z[:h], false)
	z[h] = z[0]
	// X[k] = E[k] + W^k O[k], E and O the even and odd samples' transforms, read from Z[k]
	// and conj(Z[h−k]); bins k and h−k are made together, in place.
	for k := 0; k <= h/2; k++ {
		a, b := z[k], cmplx.Conj(z[h-k])
		ek, ok := (a+b)/2, (a-b)*complex(0, -0.5)
		c, d := z[h-k], cmplx.Conj(z[k])
		eh, oh := (c+d)/2, (c-d)*complex(0, -0.5)
		z[k] = ek + root(k, n)*ok
		z[h-k] = eh + root(h-k, n)*oh
	}
	return z
}

// root is exp(−2πik/n).
func root(k, n int) complex128 {
	s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
	return complex(c, s)
}
