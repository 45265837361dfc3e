package audio

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

func randomSignal(rng *rand.Rand, n int) []complex128 {
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
	}
	return x
}

// The fast transform (mixed radix, and Bluestein's for other primes) agrees with the
// definition at every length up to 130 (every radix stage in every order) and at 800, the
// spectrogram's, and a prime.
func TestFFTMatchesDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lengths := []int{800, 997, 5003, 4 * 4 * 4 * 2 * 3 * 5, 3 * 7 * 11}
	for n := 1; n <= 130; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		for _, inverse := range []bool{false, true} {
			x := randomSignal(rng, n)
			want := dft(x, inverse)
			got := append([]complex128(nil), x...)
			fft(got, inverse)
			var worst, scale float64
			for k := range want {
				worst = max(worst, cmplx.Abs(got[k]-want[k]))
				scale = max(scale, cmplx.Abs(want[k]))
			}
			if worst > 1e-11*max(scale, 1) {
				t.Errorf("n=%d inverse=%v: max error %g (of %g)", n, inverse, worst, scale)
			}
		}
	}
}

// Resample agrees with the same spectrum surgery done on the definition's transform, shrinking
// and growing, odd and even lengths, and keeps a tone that fits both rates.
func TestResampleMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range [][2]int{{300, 100}, {301, 100}, {299, 100}, {100, 300}, {101, 33}, {33, 101}, {3001, 1013}, {602, 202}, {64, 64}, {96, 32}, {7, 5}} {
		nx, num := c[0], c[1]
		x := make([]float64, nx)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		got, want := Resample(x, num), resampleRef(x, num)
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-10 {
				t.Fatalf("%d→%d: sample %d = %v, want %v", nx, num, i, got[i], want[i])
			}
		}
	}
	x := make([]float64, 300)
	for i := range x {
		x[i] = math.Sin(2 * math.Pi * 5 * float64(i) / 300)
	}
	for i, v := range Resample(x, 100) {
		if want := math.Sin(2 * math.Pi * 5 * float64(i) / 100); math.Abs(v-want) > 1e-12 {
			t.Fatalf("tone resampled: sample %d = %v, want %v", i, v, want)
		}
	}
}

// resampleRef is scipy.signal.resample's steps on the full spectrum by the definition: the
// positive bins to Nyquist copied, the negative ones mirrored, Nyquist doubled or halved.
func resampleRef(x []float64, num int) []float64 {
	nx := len(x)
	cx := make([]complex128, nx)
	for i, v := range x {
		cx[i] = complex(v, 0)
	}
	X := dft(cx, false)
	half := make([]complex128, num/2+1)
	n := min(num, nx)
	for k := 0; k <= n/2 && k < len(half); k++ {
		half[k] = X[k]
	}
	if n%2 == 0 && n/2 < len(half) {
		if num < nx {
			half[n/2] *= 2
		} else if nx < num {
			half[n/2] *= 0.5
		}
	}
	full := make([]complex128, num)
	for k := 0; k < num; k++ {
		if k <= num/2 {
			full[k] = half[k]
		} else {
			full[k] = cmplx.Conj(half[num-k])
		}
	}
	full[0] = complex(real(full[0]), 0)
	if num%2 == 0 {
		full[num/2] = complex(real(full[num/2]), 0)
	}
	y := dft(full, true)
	out := make([]float64, num)
	for i := range out {
		out[i] = real(y[i]) / float64(num) * float64(num) / float64(nx)
	}
	return out
}

func BenchmarkFFT800(b *testing.B) {
	x := randomSignal(rand.New(rand.NewPCG(5, 6)), 800)
	b.ReportAllocs()
	for b.Loop() {
		fft(x, false)
	}
}

func BenchmarkFFTPrime(b *testing.B) {
	x := randomSignal(rand.New(rand.NewPCG(5, 6)), 48017)
	b.ReportAllocs()
	for b.Loop() {
		fft(x, false)
	}
}

// rfft is the complex transform's first half, for even lengths (the half-length path) and odd.
func TestRFFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 3, 4, 5, 6, 8, 10, 14, 22, 97, 98, 800, 1000} {
		x := make([]float64, n)
		cx := make([]complex128, n)
		for i := range x {
			x[i] = rng.NormFloat64()
			cx[i] = complex(x[i], 0)
		}
		want := dft(cx, false)
		got := rfft(x)
		if len(got) != n/2+1 {
			t.Fatalf("n=%d: %d bins", n, len(got))
		}
		for k := range got {
			if cmplx.Abs(got[k]-want[k]) > 1e-10*float64(n) {
				t.Fatalf("n=%d: bin %d = %v, want %v", n, k, got[k], want[k])
			}
		}
	}
}

// ResampleVoice, its channels through shared plans and one reused work buffer, gives each
// channel's Resample: lengths whose transforms are chirp ones both ways (3001 → 1000, 1000 =
// 2³·5³ is not; 3007 → 1002, 501 a factor), and smooth ones.
func TestResampleVoiceMatchesChannels(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{3001, 3007, 3000, 2998} {
		voice := make([]float32, n*Channels)
		for i := range voice {
			voice[i] = float32(rng.NormFloat64())
		}
		got := ResampleVoice(voice)
		num := VoiceSamples(n)
		for c := range Channels {
			ch := make([]float64, n)
			for i := range ch {
				ch[i] = float64(voice[i*Channels+c])
			}
			for i, want := range Resample(ch, num) {
				if got[i*Channels+c] != want {
					t.Fatalf("n=%d, channel %d, sample %d: %v, Resample gives %v", n, c, i, got[i*Channels+c], want)
				}
			}
		}
	}
}
