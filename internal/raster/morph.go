package raster

// Binary morphology on masks read as sets (value > 0.5 is in). Both take a scratch mask so
// that cleaning a face's occluder map every frame does not allocate.

// Majority sets each pixel of m to 1 where at least need of the 3×3 pixels around it
// (itself included; outside the Rect counts as out) are in, else 0: isolated specks go,
// lines two pixels wide stay for need ≤ 5.
func (m *Mask) Majority(need int, tmp *Mask) {
	tmp.Reset(m.Rect)
	w, h := m.Rect.Dx(), m.Rect.Dy()
	if w == 0 {
		return
	}
	// Horizontal 3-counts into tmp, then vertical 3-sums of those back into m (small
	// integers: their float sums are exact in any order).
	for y := range h {
		in, out := m.Pix[y*m.Stride:][:w], tmp.Pix[y*tmp.Stride:][:w]
		var left, mid float32 // in(x−1), in(x)
		if in[0] > 0.5 {
			mid = 1
		}
		for x := range w - 1 {
			var right float32
			if in[x+1] > 0.5 {
				right = 1
			}
			out[x] = left + mid + right
			left, mid = mid, right
		}
		out[w-1] = left + mid
	}
	for y := range h {
		out, mid := m.Pix[y*m.Stride:][:w], tmp.Pix[y*tmp.Stride:][:w]
		var up, down []float32
		if y > 0 {
			up = tmp.Pix[(y-1)*tmp.Stride:][:w]
		}
		if y+1 < h {
			down = tmp.Pix[(y+1)*tmp.Stride:][:w]
		}
		for x, n := range mid {
			if up != nil {
				n += up[x]
			}
			if down != nil {
				n += down[x]
			}
			if n >= float32(need) {
				out[x] = 1
			} else {
				out[x] = 0
			}
		}
	}
}

// Dilate grows the set in m by a square of half-width r (the maximum over the square), as
// two separable passes through tmp.
func (m *Mask) Dilate(r int, tmp *Mask) {
	if r <= 0 {
		return
	}
	tmp.Reset(m.Rect)
	w, h := m.Rect.Dx(), m.Rect.Dy()
	for y := range h {
		in, out := m.Pix[y*m.Stride:][:w], tmp.Pix[y*tmp.Stride:][:w]
		done := -1 // out is set up to here
		for x, v := range in {
			if v > 0.5 {
				end := min(w-1, x+r)
				for xx := max(done+1, x-r); xx <= end; xx++ {
					out[xx] = 1
				}
				done = end
			}
		}
	}
	clear(m.Pix)
	for y := range h {
		// Only the span of the row that is set is spread.
		in := tmp.Pix[y*tmp.Stride:][:w]
		lo, hi := 0, w-1
		for lo <= hi && in[lo] == 0 {
			lo++
		}
		for hi >= lo && in[hi] == 0 {
			hi--
		}
		if lo > hi {
			continue
		}
		in = in[lo : hi+1]
		for yy := max(0, y-r); yy <= min(h-1, y+r); yy++ {
			out := m.Pix[yy*m.Stride+lo:][:len(in)]
			for x, v := range in {
				if v > 0 {
					out[x] = 1
				}
			}
		}
	}
}
