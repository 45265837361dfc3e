package raster

// Binary morphology on masks read as sets (value > 0.5 is in). Both take a scratch mask so
// that cleaning a face's occluder map every frame does not allocate.

// Majority sets each pixel of m to 1 where at least need of the 3×3 pixels around it
// (itself included; outside the Rect counts as out) are in, else 0: isolated specks go,
// lines two pixels wide stay for need ≤ 5.
func (m *Mask) Majority(need int, tmp *Mask) {
	tmp.Reset(m.Rect)
	w, h := m.Rect.Dx(), m.Rect.Dy()
	// Horizontal 3-sums into tmp, then vertical 3-sums of those back into m.
	for y := range h {
		in, out := m.Pix[y*m.Stride:][:w], tmp.Pix[y*tmp.Stride:][:w]
		for x := range w {
			var n float32
			for xx := max(0, x-1); xx <= min(w-1, x+1); xx++ {
				if in[xx] > 0.5 {
					n++
				}
			}
			out[x] = n
		}
	}
	for y := range h {
		out := m.Pix[y*m.Stride:][:w]
		for x := range w {
			var n float32
			for yy := max(0, y-1); yy <= min(h-1, y+1); yy++ {
				n += tmp.Pix[yy*tmp.Stride+x]
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
		for x, v := range in {
			if v > 0.5 {
				for xx := max(0, x-r); xx <= min(w-1, x+r); xx++ {
					out[xx] = 1
				}
			}
		}
	}
	clear(m.Pix)
	for y := range h {
		in := tmp.Pix[y*tmp.Stride:][:w]
		for yy := max(0, y-r); yy <= min(h-1, y+r); yy++ {
			out := m.Pix[yy*m.Stride:][:w]
			for x, v := range in {
				if v > 0 {
					out[x] = 1
				}
			}
		}
	}
}
