package raster

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"
)

// majorityByWindows is Majority as a count over each pixel's clipped 3×3 window.
func majorityByWindows(m *Mask, need int, tmp *Mask) {
	tmp.Reset(m.Rect)
	w, h := m.Rect.Dx(), m.Rect.Dy()
	for y := range h {
		for x := range w {
			var n float32
			for xx := max(0, x-1); xx <= min(w-1, x+1); xx++ {
				if m.Pix[y*m.Stride+xx] > 0.5 {
					n++
				}
			}
			tmp.Pix[y*tmp.Stride+x] = n
		}
	}
	for y := range h {
		for x := range w {
			var n float32
			for yy := max(0, y-1); yy <= min(h-1, y+1); yy++ {
				n += tmp.Pix[yy*tmp.Stride+x]
			}
			m.Pix[y*m.Stride+x] = 0
			if n >= float32(need) {
				m.Pix[y*m.Stride+x] = 1
			}
		}
	}
}

// dilateByWindows is Dilate as each set pixel marking its whole square, by rows then
// columns.
func dilateByWindows(m *Mask, r int, tmp *Mask) {
	tmp.Reset(m.Rect)
	w, h := m.Rect.Dx(), m.Rect.Dy()
	for y := range h {
		for x := range w {
			if m.Pix[y*m.Stride+x] > 0.5 {
				for xx := max(0, x-r); xx <= min(w-1, x+r); xx++ {
					tmp.Pix[y*tmp.Stride+xx] = 1
				}
			}
		}
	}
	clear(m.Pix)
	for y := range h {
		for x := range w {
			if tmp.Pix[y*tmp.Stride+x] > 0 {
				for yy := max(0, y-r); yy <= min(h-1, y+r); yy++ {
					m.Pix[yy*m.Stride+x] = 1
				}
			}
		}
	}
}

// The morphology's output (and its scratch, which callers reuse) must be what the plain
// window loops give, bit for bit.
func TestMorphologyMatchesWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 4))
	var tmp, tmpRef Mask
	for iter := range 300 {
		r := image.Rect(0, 0, rng.IntN(40), rng.IntN(40))
		m := randMask(rng, r)
		for i := range m.Pix {
			switch rng.IntN(4) {
			case 0:
				m.Pix[i] = 0.5
			case 1:
				m.Pix[i] = 0
			}
		}
		ref := &Mask{}
		ref.Reset(r)
		copy(ref.Pix, m.Pix)
		if iter%2 == 0 {
			need := 1 + rng.IntN(9)
			m.Majority(need, &tmp)
			majorityByWindows(ref, need, &tmpRef)
		} else {
			rad := rng.IntN(5)
			m.Dilate(rad, &tmp)
			if rad > 0 {
				dilateByWindows(ref, rad, &tmpRef)
			} else {
				tmpRef.Reset(tmp.Rect)
				copy(tmpRef.Pix, tmp.Pix)
			}
		}
		for _, p := range [][2]*Mask{{m, ref}, {&tmp, &tmpRef}} {
			for i := range p[0].Pix {
				if math.Float32bits(p[0].Pix[i]) != math.Float32bits(p[1].Pix[i]) {
					t.Fatalf("iter %d (%v): pixel %d: %v, by windows %v", iter, r, i, p[0].Pix[i], p[1].Pix[i])
				}
			}
		}
	}
}
