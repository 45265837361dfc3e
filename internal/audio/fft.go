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

// smooth reports whether n has no prime factor above 5: the mixed-radix transform's lengths.
func smooth(n int) bool {
	for _, r := range []int{2, 3, 5} {
		for n > 1 && n%r == 0 {
			n /= r
		}
	}
	return n == 1
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
func fft(x []complex128, inverse bool) { fftWith(nil, x, inverse) }

// trackPlans keeps the transforms of one track's lengths, and one work buffer for their chirp
// transforms, while the track's channels need them: a whole track's plans are not cached
// (cachedPlanMax), and a plan built again for each channel, or a work buffer for each
// transform, left hundreds of MB to the collector at every step (17 GB for 30 minutes). A nil
// *trackPlans is the shared cache, and buffers of each transform's own.
type trackPlans struct {
	plans map[int]*fftPlan
	work  []complex128
}

func (t *trackPlans) plan(n int) *fftPlan {
	if t == nil {
		return planFor(n)
	}
	p, ok := t.plans[n]
	if !ok {
		p = planFor(n)
		if t.plans == nil {
			t.plans = map[int]*fftPlan{}
		}
		t.plans[n] = p
	}
	return p
}

// buffer is m zeros: the work buffer when t keeps one.
func (t *trackPlans) buffer(m int) []complex128 {
	if t == nil {
		return make([]complex128, m)
	}
	if cap(t.work) < m {
		t.work = nil // let the smaller one go first
		t.work = make([]complex128, m)
	}
	w := t.work[:m]
	clear(w)
	return w
}

func fftWith(t *trackPlans, x []complex128, inverse bool) {
	n := len(x)
	if n <= 1 {
		return
	}
	if inverse {
		for i, v := range x {
			x[i] = cmplx.Conj(v)
		}
	}
	p := t.plan(n)
	if p.blue != nil {
		p.blue.apply(t.buffer(p.blue.m), func(k int) complex128 { return x[k] }, func(k int, v complex128) { x[k] = v }, n)
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
func (p *fftPlan) forward(x []complex128) { p.forwardWith(x, make([]complex128, p.n)) }

// forwardWith is forward with y, p.n values, as its work buffer.
func (p *fftPlan) forwardWith(x, y []complex128) {
	src, dst := x, y[:p.n]
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

// bluestein is the chirp-z transform of length n through a power-of-two convolution of length
// m ≥ 2n−1. What it holds is kern alone, m values; the chirp is recomputed where it is used
// (an exact angle from k² mod 2n, one Sincos), and the power-of-two transforms run in place
// (pow2), so that a whole track's transform costs two buffers of m, its input and output
// taken and given one value at a time.
type bluestein struct {
	n, m int
	// kern is the transform of the conjugate chirp wrapped to length m, bins 0..m/2: the
	// chirp is even (its k and m−k alike), so its transform is too, and half of it is kept.
	kern []complex128
	pow2 *pow2Plan
}

// chirp is exp(−πik²/n); k² mod 2n in integers keeps the angle exact for long tracks.
func chirp(k, n int) complex128 {
	e := (uint64(k) * uint64(k)) % uint64(2*n)
	s, c := math.Sincos(-math.Pi * float64(e) / float64(n))
	return complex(c, s)
}

func newBluestein(n int) *bluestein {
	m := 1 << bits.Len(uint(2*n-2))
	b := &bluestein{n: n, m: m, pow2: newPow2Plan(m)}
	kern := make([]complex128, m)
	kern[0] = 1
	for k := 1; k < n; k++ {
		c := cmplx.Conj(chirp(k, n))
		kern[k] = c
		kern[m-k] = c
	}
	b.pow2.forward(kern)
	b.kern = append([]complex128(nil), kern[:m/2+1]...)
	return b
}

// apply is the transform of the n values get gives, its first count bins handed to put, in
// a, m zeros: the caller need not hold its input or output as complex values of its own.
func (b *bluestein) apply(a []complex128, get func(int) complex128, put func(int, complex128), count int) {
	for k := 0; k < b.n; k++ {
		a[k] = get(k) * chirp(k, b.n)
	}
	b.pow2.forward(a)
	for i := range a {
		a[i] = cmplx.Conj(a[i] * b.kern[min(i, b.m-i)])
	}
	b.pow2.forward(a) // conj(FFT(conj(·))) is m times the inverse
	scale := 1 / float64(b.m)
	for k := 0; k < count; k++ {
		put(k, cmplx.Conj(a[k])*complex(scale, 0)*chirp(k, b.n))
	}
}

// pow2Plan is an in-place radix-2 transform of a power-of-two length m: no buffer beside the
// data and no table of m roots; root k is coarse[k>>shift]·fine[k&mask], each of the two
// tables √m long, each root within an ulp or two of its own angle's.
type pow2Plan struct {
	m            int
	shift        uint
	coarse, fine []complex128
}

func newPow2Plan(m int) *pow2Plan {
	logm := bits.Len(uint(m)) - 1
	shift := uint((logm + 1) / 2)
	p := &pow2Plan{m: m, shift: shift, fine: make([]complex128, 1<<shift), coarse: make([]complex128, (m>>shift)+1)}
	for k := range p.fine {
		p.fine[k] = root(k, m)
	}
	for k := range p.coarse {
		p.coarse[k] = root(k<<shift, m)
	}
	return p
}

// root is exp(−2πik/m) from the tables.
func (p *pow2Plan) root(k int) complex128 {
	return p.coarse[k>>p.shift] * p.fine[k&(1<<p.shift-1)]
}

// stageTable is how long a stage's roots may be to be laid out before it (a small buffer);
// a longer stage computes each root from the tables as it goes. Either way the butterflies walk
// the data in order, block by block: a stride of the block's length over a track's buffer of
// hundreds of MB misses the cache at every step.
const stageTable = 1 << 12

// forward transforms x (length p.m) in place: the input in bit-reversed order, then the
// butterflies of each stage, decimation in time.
func (p *pow2Plan) forward(x []complex128) {
	m := p.m
	if m <= 1 {
		return
	}
	logm := uint(bits.Len(uint(m)) - 1)
	for i := 0; i < m; i++ {
		if j := int(bits.Reverse64(uint64(i)) >> (64 - logm)); i < j {
			x[i], x[j] = x[j], x[i]
		}
	}
	w := make([]complex128, min(m/2, stageTable))
	for size := 2; size <= m; size <<= 1 {
		half, step := size/2, m/size
		if half <= stageTable {
			for k := 0; k < half; k++ {
				w[k] = p.root(k * step)
			}
			for j := 0; j < m; j += size {
				lo, hi := x[j:j+half], x[j+half:j+size]
				for k, wk := range w[:half] {
					u, v := lo[k], hi[k]*wk
					lo[k], hi[k] = u+v, u-v
				}
			}
			continue
		}
		for j := 0; j < m; j += size {
			lo, hi := x[j:j+half], x[j+half:j+size]
			for k := range lo {
				u, v := lo[k], hi[k]*p.root(k*step)
				lo[k], hi[k] = u+v, u-v
			}
		}
	}
}

// dft is the transform by its definition, O(n²): the reference the fast one is tested against.
func dft(x []complex128, inverse bool) []complex128 {
	n := len(x)
	sign := -1.0
	if inverse {
		sign = 1
	}
	// The n roots of unity, each computed once as the sum below would compute it: the same
	// numbers, without n² calls of Sincos.
	root := make([]complex128, n)
	for e := range root {
		sn, c := math.Sincos(sign * 2 * math.Pi * float64(e) / float64(n))
		root[e] = complex(c, sn)
	}
	out := make([]complex128, n)
	for k := range out {
		var s complex128
		for j, v := range x {
			s += v * root[(j*k)%n]
		}
		out[k] = s
	}
	return out
}

// rfft is the transform of a real signal's bins 0..n/2 (numpy's rfft). An even length is done
// as a complex transform of half the length (even samples real, odd imaginary), which halves
// the memory a whole track's transform takes.
func rfft(x []float64) []complex128 { return rfftWith(nil, x) }

func rfftWith(t *trackPlans, x []float64) []complex128 {
	n := len(x)
	if n%2 != 0 && !smooth(n) {
		// The real samples go into the chirp transform as they are, and only the bins kept
		// come out: no complex copy of the track.
		bins := make([]complex128, n/2+1)
		b := t.plan(n).blue
		b.apply(t.buffer(b.m), func(k int) complex128 { return complex(x[k], 0) }, func(k int, v complex128) { bins[k] = v }, len(bins))
		return bins
	}
	if n%2 != 0 || n < 4 {
		full := make([]complex128, n)
		for i, v := range x {
			full[i] = complex(v, 0)
		}
		fftWith(t, full, false)
		return full[:n/2+1]
	}
	h := n / 2
	z := make([]complex128, h+1)
	for i := 0; i < h; i++ {
		z[i] = complex(x[2*i], x[2*i+1])
	}
	fftWith(t, z[:h], false)
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
