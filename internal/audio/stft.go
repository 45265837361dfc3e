package audio

// STFT is scipy.signal.stft(x, window=win, nperseg=len(win), noverlap=noverlap) with its
// defaults (boundary='zeros', padded=True, scaling='spectrum', one-sided): x with len(win)/2
// zeros either side and zeros after to a whole number of hops, each segment windowed,
// transformed and divided by the window's sum. It returns the columns (segments), each
// len(win)/2+1 bins.
func STFT(x []float64, win []float64, noverlap int) [][]complex128 {
	var cols [][]complex128
	stftColumns(x, win, noverlap, func(_ int, col []complex128) {
		cols = append(cols, append([]complex128(nil), col...))
	})
	return cols
}

// stftColumns hands STFT's columns to f one at a time, in order, in one buffer: a whole
// track's columns (16 bytes for each of 401 bins, 80 times a second at 16 kHz: 3.7 GB for two
// hours) are never held together, nor is the padded track copied.
func stftColumns(x []float64, win []float64, noverlap int, f func(t int, col []complex128)) {
	n := len(win)
	step := n - noverlap
	var sum float64
	for _, w := range win {
		sum += w
	}
	scale := 1 / sum
	buf := make([]complex128, n)
	col := make([]complex128, n/2+1)
	for t := range stftLen(len(x), n, noverlap) {
		for i := range buf {
			v := 0.0
			if j := t*step + i - n/2; j >= 0 && j < len(x) {
				v = x[j]
			}
			buf[i] = complex(win[i]*v, 0)
		}
		fft(buf, false)
		for k := range col {
			col[k] = buf[k] * complex(scale, 0)
		}
		f(t, col)
	}
}

// stftLen is how many columns STFT makes of nx samples, segments of n.
func stftLen(nx, n, noverlap int) int {
	step := n - noverlap
	ext := nx + 2*(n/2)
	ext += ((-(ext-n)%step + step) % step) % n
	return (ext - noverlap) / step
}
