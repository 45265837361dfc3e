package audio

// STFT is scipy.signal.stft(x, window=win, nperseg=len(win), noverlap=noverlap) with its
// defaults (boundary='zeros', padded=True, scaling='spectrum', one-sided): x with len(win)/2
// zeros either side and zeros after to a whole number of hops, each segment windowed,
// transformed and divided by the window's sum. It returns the columns (segments), each
// len(win)/2+1 bins.
func STFT(x []float64, win []float64, noverlap int) [][]complex128 {
	n := len(win)
	step := n - noverlap
	ext := make([]float64, len(x)+2*(n/2))
	copy(ext[n/2:], x)
	if add := ((-(len(ext)-n)%step + step) % step) % n; add > 0 {
		ext = append(ext, make([]float64, add)...)
	}
	var sum float64
	for _, w := range win {
		sum += w
	}
	scale := 1 / sum
	cols := make([][]complex128, (len(ext)-noverlap)/step)
	buf := make([]complex128, n)
	for t := range cols {
		seg := ext[t*step : t*step+n]
		for i, v := range seg {
			buf[i] = complex(win[i]*v, 0)
		}
		fft(buf, false)
		col := make([]complex128, n/2+1)
		for k := range col {
			col[k] = buf[k] * complex(scale, 0)
		}
		cols[t] = col
	}
	return cols
}
