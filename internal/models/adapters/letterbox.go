package adapters

import (
	"encoding/binary"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// letterbox places a W×H frame inside a square model input of Size pixels: the long side fills
// the input, the short side is centred between black bars. The content occupies whole pixels
// [OX, OX+CW) × [OY, OY+CH), so the forward resample and the inverse mapping agree exactly.
type letterbox struct {
	W, H, Size     int
	OX, OY, CW, CH int
}

func newLetterbox(w, h, size int) letterbox {
	scale := float64(size) / float64(max(w, h))
	cw := min(size, max(1, int(math.Round(float64(w)*scale))))
	ch := min(size, max(1, int(math.Round(float64(h)*scale))))
	return letterbox{W: w, H: h, Size: size, OX: (size - cw) / 2, OY: (size - ch) / 2, CW: cw, CH: ch}
}

// toFrame maps a point in model-input pixels (edges at integers) to frame pixels.
func (l letterbox) toFrame(p geom.Pt) geom.Pt {
	return geom.Pt{
		X: (p.X - float64(l.OX)) * float64(l.W) / float64(l.CW),
		Y: (p.Y - float64(l.OY)) * float64(l.H) / float64(l.CH),
	}
}

// toInput is the inverse of toFrame.
func (l letterbox) toInput(p geom.Pt) geom.Pt {
	return geom.Pt{
		X: p.X*float64(l.CW)/float64(l.W) + float64(l.OX),
		Y: p.Y*float64(l.CH)/float64(l.H) + float64(l.OY),
	}
}

// areaTaps are the source pixels and weights that make each output pixel along one axis the
// mean of the source interval it covers: output i covers [i·n/m, (i+1)·n/m) of n source
// pixels, and each source pixel contributes its overlap with that interval. Area averaging
// rather than bilinear sampling because frames shrink ~10× into the detector, where bilinear
// sampling would skip most pixels and alias.
type areaTaps struct {
	first  []int32   // first source index of output i
	off    []int32   // weights of output i are w[off[i]:off[i+1]]
	weight []float32 // normalised: each output's weights sum to 1
	// Source pixels [fullLo[i], fullHi[i]) lie wholly inside output i's interval and all
	// weigh fullW: they can be summed as integers and weighted once.
	fullLo, fullHi []int32
	fullW          float32
}

func newAreaTaps(n, m int) areaTaps {
	t := areaTaps{first: make([]int32, m), off: make([]int32, m+1), fullLo: make([]int32, m), fullHi: make([]int32, m)}
	scale := float64(n) / float64(m)
	t.fullW = float32(1 / scale)
	for i := 0; i < m; i++ {
		lo, hi := float64(i)*scale, float64(i+1)*scale
		j0 := int(math.Floor(lo))
		j1 := min(n, int(math.Ceil(hi)))
		t.first[i] = int32(j0)
		t.fullLo[i], t.fullHi[i] = int32(j1), int32(j1)
		for j := j0; j < j1; j++ {
			w := math.Min(float64(j+1), hi) - math.Max(float64(j), lo)
			if w == 1 { // whole pixels form one contiguous run
				t.fullLo[i] = min(t.fullLo[i], int32(j))
				t.fullHi[i] = int32(j + 1)
			}
			t.weight = append(t.weight, float32(w/scale))
		}
		t.off[i+1] = int32(len(t.weight))
	}
	return t
}

// letterboxResampler fills a model input tensor from frames of one size; the taps and the
// column accumulator are built when the frame size changes and reused otherwise.
type letterboxResampler struct {
	size   int // model input side
	box    letterbox
	xs, ys areaTaps
	cols   []float32 // one output row before the horizontal pass: W×3 vertical sums
	// Integer column sums of the whole rows, four 16-bit lanes per word: even holds bytes
	// 0,2,4,6 of each 8-byte group of a row, odd bytes 1,3,5,7.
	even, odd []uint64
}

// prepare readies the resampler for w×h frames.
func (r *letterboxResampler) prepare(w, h int) {
	if r.box.W == w && r.box.H == h && r.box.Size == r.size {
		return
	}
	r.box = newLetterbox(w, h, r.size)
	r.xs = newAreaTaps(w, r.box.CW)
	r.ys = newAreaTaps(h, r.box.CH)
	r.cols = make([]float32, w*3)
	r.even = make([]uint64, w*3/8)
	r.odd = make([]uint64, w*3/8)
}

// padValue is black after the model's v/127.5−1 normalisation.
const padValue = -1

// fill writes img, letterboxed and normalised to v/127.5−1, into dst (NHWC, Size×Size×3).
// Every element of dst is written, so a reused tensor needs no clearing.
func (r *letterboxResampler) fill(dst []float32, img *raster.Image) {
	r.prepare(img.W, img.H)
	b := r.box
	rowLen := b.Size * 3
	for v := 0; v < b.Size; v++ {
		row := dst[v*rowLen : (v+1)*rowLen]
		if v < b.OY || v >= b.OY+b.CH {
			for i := range row {
				row[i] = padValue
			}
			continue
		}
		for i := 0; i < b.OX*3; i++ {
			row[i] = padValue
		}
		for i := (b.OX + b.CW) * 3; i < rowLen; i++ {
			row[i] = padValue
		}
		r.contentRow(row[b.OX*3:(b.OX+b.CW)*3], img, v-b.OY)
	}
}

// contentRow computes output content row v. The vertical pass comes first because it is a
// straight run over whole source rows (no per-pixel tap lookups), and it shrinks the data the
// tap-driven horizontal pass touches by the vertical scale factor. Rows lying wholly inside the
// output row (all but the two edge rows when shrinking) are summed eight bytes at a time in
// 16-bit integer lanes and weighted once; only the edge rows are weighted per sample.
func (r *letterboxResampler) contentRow(out []float32, img *raster.Image, v int) {
	n := img.W * 3
	cols := r.cols[:n]
	clear(cols)
	ys := r.ys
	y0 := int(ys.first[v])
	lo, hi := int(ys.fullLo[v]), int(ys.fullHi[v])
	for k, wy := range ys.weight[ys.off[v]:ys.off[v+1]] {
		if y := y0 + k; y < lo || y >= hi {
			addRow(cols, img.Pix[y*img.Stride:y*img.Stride+n], wy)
		}
	}
	// A 16-bit lane holds the sum of up to 257 bytes; flush before it could overflow.
	const maxRows = 257
	for a := lo; a < hi; a += maxRows {
		r.addWholeRows(cols, img, a, min(hi, a+maxRows), ys.fullW)
	}

	const norm = 1 / 127.5
	xs := r.xs
	for u := range xs.first {
		c := cols[int(xs.first[u])*3:]
		var sr, sg, sb float32
		for k, w := range xs.weight[xs.off[u]:xs.off[u+1]] {
			sr += w * c[3*k]
			sg += w * c[3*k+1]
			sb += w * c[3*k+2]
		}
		out[3*u], out[3*u+1], out[3*u+2] = sr*norm-1, sg*norm-1, sb*norm-1
	}
}

// addRow adds w·src to cols.
func addRow(cols []float32, src []uint8, w float32) {
	cols = cols[:len(src)]
	for i, p := range src {
		cols[i] += w * float32(p)
	}
}

// addWholeRows adds w·(rows y0..y1−1 summed) to cols; at most 257 rows.
func (r *letterboxResampler) addWholeRows(cols []float32, img *raster.Image, y0, y1 int, w float32) {
	const lanes = 0x00ff00ff00ff00ff
	n := img.W * 3
	words := n / 8
	even, odd := r.even[:words], r.odd[:words]
	clear(even)
	clear(odd)
	for y := y0; y < y1; y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+words*8]
		for i := range even {
			x := binary.LittleEndian.Uint64(row[8*i:])
			even[i] += x & lanes
			odd[i] += (x >> 8) & lanes
		}
		if tail := n - words*8; tail > 0 {
			addRow(cols[words*8:n], img.Pix[y*img.Stride+words*8:y*img.Stride+n], w)
		}
	}
	for i := range even {
		e, o := even[i], odd[i]
		c := cols[8*i : 8*i+8]
		c[0] += w * float32(e&0xffff)
		c[1] += w * float32(o&0xffff)
		c[2] += w * float32(e>>16&0xffff)
		c[3] += w * float32(o>>16&0xffff)
		c[4] += w * float32(e>>32&0xffff)
		c[5] += w * float32(o>>32&0xffff)
		c[6] += w * float32(e>>48)
		c[7] += w * float32(o>>48)
	}
}

// letterboxReference is the slow, obviously correct twin of letterboxResampler.fill: every
// output pixel integrates the frame over the rectangle it covers, pixel by pixel, in float64.
func letterboxReference(img *raster.Image, size int) []float32 {
	b := newLetterbox(img.W, img.H, size)
	dst := make([]float32, size*size*3)
	sx := float64(img.W) / float64(b.CW)
	sy := float64(img.H) / float64(b.CH)
	overlap := func(a0, a1, b0, b1 float64) float64 { return math.Max(0, math.Min(a1, b1)-math.Max(a0, b0)) }
	for v := 0; v < size; v++ {
		for u := 0; u < size; u++ {
			o := (v*size + u) * 3
			cu, cv := u-b.OX, v-b.OY
			if cu < 0 || cu >= b.CW || cv < 0 || cv >= b.CH {
				dst[o], dst[o+1], dst[o+2] = -1, -1, -1
				continue
			}
			x0, x1 := float64(cu)*sx, float64(cu+1)*sx
			y0, y1 := float64(cv)*sy, float64(cv+1)*sy
			var sum [3]float64
			var area float64
			// Only the pixels touching the rectangle can overlap it; the overlap test decides.
			for y := max(0, int(y0)-1); y < min(img.H, int(y1)+2); y++ {
				wy := overlap(y0, y1, float64(y), float64(y+1))
				if wy == 0 {
					continue
				}
				for x := max(0, int(x0)-1); x < min(img.W, int(x1)+2); x++ {
					w := wy * overlap(x0, x1, float64(x), float64(x+1))
					if w == 0 {
						continue
					}
					r, g, bl := img.At(x, y)
					sum[0] += w * float64(r)
					sum[1] += w * float64(g)
					sum[2] += w * float64(bl)
					area += w
				}
			}
			for c := range sum {
				dst[o+c] = float32(sum[c]/area/127.5 - 1)
			}
		}
	}
	return dst
}
