// Package audio is FaceFusion 3.8.1's audio features (facefusion/audio.py) in Go: the source
// track made mono, normalised and pre-emphasised, resampled as scipy.signal.resample does, its
// mel spectrogram, and the window of it that belongs to each output frame. It is arithmetic
// only: reading the track (ffmpeg) and the voice extractor's model are the callers'.
package audio

import (
	"math"
	"math/cmplx"
)

// FaceFusion's constants (audio.py).
const (
	SampleRate   = 48000 // the rate ffmpeg decodes the track at
	Channels     = 2
	VoiceRate    = 16000 // the voice's rate after prepare_voice
	MelFilters   = 80    // mel_filter_total
	WindowLength = 16    // audio_step_size: spectrogram columns per frame
	melBins      = 800   // mel_bin_total: the STFT's segment and FFT length
	melOverlap   = 600   // mel_bin_overlap
)

// Mono is prepare_audio's first step on interleaved stereo: the mean of the two channels.
func Mono(interleaved []float64, channels int) []float64 {
	out := make([]float64, len(interleaved)/channels)
	for i := range out {
		var s float64
		for c := 0; c < channels; c++ {
			s += interleaved[i*channels+c]
		}
		out[i] = s / float64(channels)
	}
	return out
}

// Prepare is prepare_audio on a mono track: divided by its largest magnitude, then
// pre-emphasised (scipy.signal.lfilter([1, -0.97], [1], x)). A silent track divides by zero as
// numpy does (NaN): Silent says so before.
func Prepare(x []float64) []float64 {
	out := append([]float64(nil), x...)
	prepareInPlace(out)
	return out
}

// prepareInPlace is Prepare in x itself: a long track's voice is not copied.
func prepareInPlace(x []float64) {
	peak := Peak(x)
	prev := 0.0
	for i, v := range x {
		v /= peak
		x[i] = v - 0.97*prev
		prev = v
	}
}

// Peak is the largest magnitude of x.
func Peak(x []float64) float64 {
	peak := 0.0
	for _, v := range x {
		peak = max(peak, math.Abs(v))
	}
	return peak
}

// VoiceSamples is prepare_voice's resampled length of a track of n samples at SampleRate:
// round(n · 16000 / 48000), halves to even as Python rounds.
func VoiceSamples(n int) int {
	return int(math.RoundToEven(float64(n) * VoiceRate / SampleRate))
}

// Resample is scipy.signal.resample(x, num) on a real signal: the spectrum cut (or padded) to
// num's, the Nyquist bin of an even cut doubled when shrinking and halved when growing, back
// through the inverse transform, times num/len(x).
func Resample(x []float64, num int) []float64 {
	return resampleBack(nil, resampleCut(nil, x, num), len(x), num)
}

// resampleCut is Resample's spectrum of x cut (or padded) to num's bins.
func resampleCut(t *trackPlans, x []float64, num int) []complex128 {
	nx := len(x)
	spec := rfftWith(t, x)
	half := make([]complex128, num/2+1) // rfft's bins of the output
	n := min(num, nx)
	copy(half, spec[:min(n/2+1, len(half))])
	cutNyquist(half, nx, num)
	return half
}

// cutNyquist is scipy.signal.resample's Nyquist bin of an even cut, half's bin n/2 (n the
// shorter of nx and num): doubled when shrinking, halved when growing.
func cutNyquist(half []complex128, nx, num int) {
	n := min(num, nx)
	if n%2 == 0 && n/2 < len(half) {
		switch {
		case num < nx:
			half[n/2] *= 2
		case nx < num:
			half[n/2] *= 0.5
		}
	}
}

// resampleBack is Resample's inverse of the cut spectrum half of a signal of nx samples.
func resampleBack(t *trackPlans, half []complex128, nx, num int) []float64 {
	out := irfftWith(t, half, num)
	scale := float64(num) / float64(nx)
	for i := range out {
		out[i] *= scale
	}
	return out
}

// irfft is numpy's irfft(half, n): the Hermitian spectrum's inverse, divided by n, the
// imaginary parts of the DC bin and (n even) the Nyquist bin ignored as pocketfft ignores them.
func irfft(half []complex128, n int) []float64 { return irfftWith(nil, half, n) }

// hermitian is the full spectrum's bin k of n, from its bins 0..n/2 in half (missing ones
// zero), the imaginary parts of the DC bin and (n even) the Nyquist bin ignored.
func hermitian(half []complex128, n int) func(int) complex128 {
	return func(k int) complex128 {
		var v complex128
		switch {
		case k < len(half) && k <= n/2:
			v = half[k]
		case n-k < len(half) && n-k <= n/2:
			v = cmplx.Conj(half[n-k])
		}
		if k == 0 || 2*k == n {
			v = complex(real(v), 0)
		}
		return v
	}
}

func irfftWith(t *trackPlans, half []complex128, n int) []float64 {
	bin := hermitian(half, n)
	if !smooth(n) {
		// The inverse as conj(FFT(conj(·))), whose real part alone is kept: no complex copy of
		// the track.
		out := make([]float64, n)
		b := t.plan(n).blue
		b.apply(t.buffer(b.m), func(k int) complex128 { return cmplx.Conj(bin(k)) }, func(k int, v complex128) { out[k] = real(v) / float64(n) }, n)
		return out
	}
	full := make([]complex128, n)
	for k := 0; k <= n/2 && k < len(half); k++ {
		full[k] = half[k]
		if k > 0 && n-k != k {
			full[n-k] = complex(real(half[k]), -imag(half[k]))
		}
	}
	full[0] = complex(real(full[0]), 0)
	if n%2 == 0 {
		full[n/2] = complex(real(full[n/2]), 0)
	}
	fftWith(t, full, true)
	out := make([]float64, n)
	for i, v := range full {
		out[i] = real(v) / float64(n)
	}
	return out
}

// hzToMel and melToHz are convert_hertz_to_mel and convert_mel_to_hertz.
func hzToMel(hz float64) float64  { return 2595 * math.Log10(1+hz/700) }
func melToHz(mel float64) float64 { return 700 * (math.Pow(10, mel/2595) - 1) }

// MelFilterBank is create_mel_filter_bank: 80 triangular filters over the 401 bins of an
// 800-point transform at 16 kHz, 55 Hz to 7600 Hz, rows of MelFilters × (melBins/2+1).
func MelFilterBank() [][]float64 {
	const rate, fmin, fmax = 16000.0, 55.0, 7600.0
	lo, hi := hzToMel(fmin), hzToMel(fmax)
	points := linspace(lo, hi, MelFilters+2)
	idx := make([]int, len(points))
	for i, m := range points {
		idx[i] = int(math.Floor((melBins + 1) * melToHz(m) / rate))
	}
	bank := make([][]float64, MelFilters)
	for i := range bank {
		bank[i] = make([]float64, melBins/2+1)
		copy(bank[i][idx[i]:idx[i+1]], triang(idx[i+1]-idx[i]))
	}
	return bank
}

// linspace is numpy.linspace(a, b, n): a + i·step, the last point exactly b.
func linspace(a, b float64, n int) []float64 {
	out := make([]float64, n)
	step := (b - a) / float64(n-1)
	for i := range out {
		out[i] = float64(float64(i)*step) + a
	}
	out[n-1] = b
	return out
}

// triang is scipy.signal.windows.triang(m).
func triang(m int) []float64 {
	if m <= 0 {
		return nil
	}
	if m == 1 {
		return []float64{1}
	}
	half := (m + 1) / 2
	w := make([]float64, m)
	for i := 1; i <= half; i++ {
		var v float64
		if m%2 == 0 {
			v = (2*float64(i) - 1) / float64(m)
		} else {
			v = 2 * float64(i) / float64(m+1)
		}
		w[i-1] = v
		w[m-i] = v
	}
	return w
}

// Spectrogram is create_spectrogram: the magnitudes of scipy.signal.stft(x, nperseg=800,
// noverlap=600) (a periodic Hann window, zeros half a segment either side, padded to whole
// hops, scaled by the window's sum) through the mel filter bank. It is column-major:
// Spectrogram[t] is the 80 filters' values at column t.
func Spectrogram(x []float64) [][MelFilters]float64 {
	bank := MelFilterBank()
	win := hann(melBins, false)
	out := make([][MelFilters]float64, 0, stftLen(len(x), melBins, melOverlap))
	mag := make([]float64, melBins/2+1)
	stftColumns(x, win, melOverlap, func(_ int, col []complex128) {
		for k := range mag {
			mag[k] = math.Hypot(real(col[k]), imag(col[k]))
		}
		var column [MelFilters]float64
		for f := range bank {
			var s float64
			for k, w := range bank[f] {
				s += w * mag[k]
			}
			column[f] = s
		}
		out = append(out, column)
	})
	return out
}

// Frames is extract_audio_frames: frame i's window is the 16 columns before column
// ⌊j·80/fps⌋, the j-th of numpy.arange(0, columns, 80/fps) from the first that is at least 16
// (so frame 0 ends at column 16, whatever the rate). It returns each frame's end column; the
// window is [end-16, end).
//
// Departure: FaceFusion casts the columns to int16, which wraps past column 32767 (6 min 49 s
// of audio) and scrambles the frames after it; here they keep counting.
func Frames(columns int, fps float64) []int {
	step := float64(MelFilters) / fps
	n := int(math.Ceil(float64(columns) / step)) // numpy.arange's length
	var ends []int
	for j := 0; j < n; j++ {
		c := int(float64(j) * step)
		if c >= WindowLength && c < columns {
			ends = append(ends, c)
		}
	}
	return ends
}

// hann is scipy's Hann window of m points, computed as scipy's general_cosine computes it:
// periodic (get_window('hann', m): the symmetric window of m+1 points, truncated) or symmetric
// (scipy.signal.windows.hann(m)).
func hann(m int, symmetric bool) []float64 {
	full := m
	if !symmetric {
		full = m + 1
	}
	step := 2 * math.Pi / float64(full-1)
	w := make([]float64, m)
	for i := range w {
		fac := float64(float64(i)*step) - math.Pi
		if i == full-1 {
			fac = math.Pi
		}
		w[i] = 0.5 + 0.5*math.Cos(fac)
	}
	return w
}
