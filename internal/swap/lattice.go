package swap

import (
	"image"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A knit, a weave or a printed pattern repeats: its high-passed luma matches itself shifted by
// a stitch's width and by its height, two shifts of different orientation. The skin's grain
// and pores do not repeat, and its creases, edges and strands (lines) match themselves along
// their own orientation only. So how well the luma about a pixel matches itself along two
// shifts at least 45° apart tells a regular texture from the skin whatever its contrast,
// measured against the skin's own (the best of many shifts of random grain matches a little).

const (
	// latLeast and latLag bound the shifts tried, in half steps of latticeMap's grid (px on
	// a face under 250 px): under latLeast the high-passed luma matches itself by its own
	// smoothness; latLag is a knit's stitch (a coarser pattern is not looked for: each
	// shift costs a pass over the face).
	latLeast = 3
	latLag   = 8
	// latBins is how many orientations the shifts are told in; the two shifts' bins must lie
	// latApart bins apart, so 45° or more between the shifts themselves: a shift a pixel or
	// two off an edge's or a crease's line still matches it.
	latBins  = 8
	latApart = 3
	// latFaint (levels²) is added to a window's energy before the correlation is divided by
	// its root: a flat patch's faint noise does not repeat.
	latFaint = 1
	// latCell is the grid's step as a share of the face size (at least 2 px): on a face under
	// 250 px the shifts are 3–8 px, a fine weave's threads to a knit's stitch.
	latCell = 0.01
	// latSeed and latWeak are how regular a pixel must be to seed a regular region and to
	// join one, as shares of the way from the skin's regularity (random grain's best match)
	// to a perfect repeat.
	latSeed = 0.7
	latWeak = 0.5
	// latGrain is the least the skin's regularity is taken to be, about random grain's best
	// match over a window's 7×7 grid samples: a flat cover over the sample discs (a bar over
	// the cheeks) matches nothing and would make the bare skin seem regular.
	latGrain = 0.3
)

// latticeFinds adds to s.occ (over fr, after s.features) the regions of the skin (outside the
// features) whose texture repeats (see above).
func (s *Swapper) latticeFinds(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle) {
	s.latticeMap(frame, fr, size)
	ref := max(latGrain, s.discMedian(&s.latS, target, size, fr))
	if !(ref < 1) {
		return
	}
	w, h := fr.Dx(), fr.Dy()
	s.clip.Reset(fr)
	for y := range h {
		frow := fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		for x, v := range frow {
			i := y*w + x
			if !(v > 0.5) || s.excl.Pix[i] > 0 {
				continue
			}
			switch n := (s.latS.Pix[i] - ref) / (1 - ref); {
			case n > latSeed:
				s.clip.Pix[i] = 3
			case n > latWeak:
				s.clip.Pix[i] = 1
			}
		}
	}
	s.addSeededFinds(frame, target, fm, size, fr, occMinArea)
}

// latticeMap puts in s.latS (over fr) how regular the frame's luma less its box mean three
// half grid steps a side (7×7 on a face under 250 px: the detail of a stitch's scale
// and finer, unsmoothed, for a fine weave's threads are a pixel or two wide) is about each
// pixel: the lesser of its best correlations with itself shifted along two orientations at
// least 45° apart, over a window of about texWindow·size. It works on a grid of every st-th
// pixel (st ≈ latCell·size, at least 2; sums over the window's grid pixels), which the
// correlations over a window of a few stitches hardly miss, at a fixed cost per face; the
// shifts and the band scale with st, as a knit's stitches do with the face.
func (s *Swapper) latticeMap(frame *raster.Image, fr image.Rectangle, size float64) {
	w, h := fr.Dx(), fr.Dy()
	st := max(2, int(math.Round(latCell*size)))
	k := float64(st) / 2
	rb := 3 * max(1, int(math.Round(k)))
	frameLuma(&s.latB, frame, fr)
	s.texB3.Reuse(fr)
	copy(s.texB3.Pix, s.latB.Pix)
	s.boxSmooth(&s.texB3, rb)
	b := s.latB.Pix
	for i := range b {
		b[i] -= s.texB3.Pix[i]
	}
	// The grid, and its windows' energy for each offset of the grid within a step (the
	// shifted samples lie on one of them), as 1/√(E + latFaint), in s.latE[offset]; the
	// samples themselves in s.latE[st² + offset], for the products to read in a row.
	gw, gh := (w+st-1)/st, (h+st-1)/st
	gr := image.Rect(0, 0, gw, gh)
	rad := max(3, int(math.Round(texWindow*size/float64(st))))
	if len(s.latE) < 2*st*st {
		s.latE = make([]raster.Mask, 2*st*st)
	}
	for o := range st * st {
		ox, oy := o%st, o/st
		e, g := &s.latE[o], &s.latE[st*st+o]
		e.Reset(gr)
		g.Reset(gr)
		for j := range gh {
			if st*j+oy >= h {
				break
			}
			for i := range gw {
				if st*i+ox < w {
					v := b[(st*j+oy)*w+st*i+ox]
					g.Pix[j*gw+i] = v
					e.Pix[j*gw+i] = v * v
				}
			}
		}
		s.boxSmooth(e, rad)
		for i, v := range e.Pix {
			e.Pix[i] = float32(1 / math.Sqrt(float64(v)+latFaint))
		}
	}
	for o := range s.latBin {
		s.latBin[o].Reset(gr)
	}
	// The shifts two at a time, their window sums in one pass (s.texJ is free after
	// textureMaps, for the row sums).
	lags := s.latticeLags(k)
	for t := range s.texJ {
		s.texJ[t].Reuse(fr)
	}
	for n := 0; n < len(lags); n += 2 {
		s.latPairBest(gr, st, rad, lags[n], lags[min(n+1, len(lags)-1)])
	}
	s.latticeBest(fr, st)
}

// latPairBest raises s.latBin, over the grid gr of every st-th pixel of s.latB, by the
// correlations at the shifts a and b (see latBestRow), their products' window sums (half-width
// r) taken as boxSmooth2 takes them, bit for bit, a row at a time: the products go straight
// into the row sums, and each row of window sums to the correlations, without whole grids
// of products and sums between the passes.
func (s *Swapper) latPairBest(gr image.Rectangle, st, r int, a, b [3]int) {
	gw, gh := gr.Dx(), gr.Dy()
	ta, tb := s.texJ[0].Pix[:gw*gh], s.texJ[1].Pix[:gw*gh]
	if cap(s.texSum) < 9*gw {
		s.texSum = make([]float32, 9*gw)
	}
	scr := s.texSum[:9*gw]
	colA, colB, zero, va, vb := scr[:gw], scr[gw:2*gw], scr[2*gw:3*gw], scr[3*gw:4*gw], scr[4*gw:5*gw]
	var p [4][]float32
	for k := range p {
		p[k] = scr[(5+k)*gw:][:gw]
	}
	// Two rows of each shift at a time: four running sums, independent chains the processor
	// overlaps. Past the last row the spare pair sums a row of zeros into the zero row.
	for j := 0; j < gh; j += 2 {
		s.latProductRow(p[0], st, j, a)
		s.latProductRow(p[1], st, j, b)
		o := [4][]float32{ta[j*gw:][:gw], tb[j*gw:][:gw], zero, zero}
		if j+1 < gh {
			s.latProductRow(p[2], st, j+1, a)
			s.latProductRow(p[3], st, j+1, b)
			o[2], o[3] = ta[(j+1)*gw:][:gw], tb[(j+1)*gw:][:gw]
		} else {
			clear(p[2])
			clear(p[3])
		}
		rowMeans4(&p, &o, r)
	}
	// Down the columns, as boxSmooth2 does; zero stands for a row off the grid.
	clear(colA)
	clear(colB)
	clear(zero)
	row := func(t []float32, y int) []float32 {
		if y < 0 || y >= gh {
			return zero
		}
		return t[y*gw:][:gw]
	}
	for y := range min(r, gh) {
		for x, v := range row(ta, y) {
			colA[x] += v
		}
		for x, v := range row(tb, y) {
			colB[x] += v
		}
	}
	for y := range gh {
		addA, subA := row(ta, y+r)[:gw], row(ta, y-r-1)[:gw]
		addB, subB := row(tb, y+r)[:gw], row(tb, y-r-1)[:gw]
		inv := 1 / float32(min(gh, y+r+1)-max(0, y-r))
		for x := range gw {
			cA := colA[x] + addA[x] - subA[x]
			cB := colB[x] + addB[x] - subB[x]
			colA[x], colB[x] = cA, cB
			va[x], vb[x] = cA*inv, cB*inv
		}
		s.latBestRow(va, y, st, a)
		s.latBestRow(vb, y, st, b)
	}
}

// rowMeans4 puts in o the means of the rows p over the 2r+1 about each pixel, clipped to the
// row, as boxSmooth2 takes them, bit for bit.
func rowMeans4(p, o *[4][]float32, r int) {
	w := len(p[0])
	p0, p1, p2, p3 := p[0][:w], p[1][:w], p[2][:w], p[3][:w]
	o0, o1, o2, o3 := o[0][:w], o[1][:w], o[2][:w], o[3][:w]
	inner := 1 / float32(2*r+1)
	// Between x0 and x1 the sums are clear of the row's ends.
	x0 := min(w, r+1)
	x1 := max(x0, w-r)
	var r0, r1, r2, r3 float32
	for x := range min(r, w) {
		r0 += p0[x]
		r1 += p1[x]
		r2 += p2[x]
		r3 += p3[x]
	}
	for x := range x0 {
		r0, o0[x] = rowStep(p0, r0, x, r, inner)
		r1, o1[x] = rowStep(p1, r1, x, r, inner)
		r2, o2[x] = rowStep(p2, r2, x, r, inner)
		r3, o3[x] = rowStep(p3, r3, x, r, inner)
	}
	if n := x1 - x0; n > 0 {
		// What enters and what leaves the sums, as slices the loop indexes unchecked.
		in0, in1, in2, in3 := p0[x0+r:][:n], p1[x0+r:][:n], p2[x0+r:][:n], p3[x0+r:][:n]
		out0, out1, out2, out3 := p0[x0-r-1:][:n], p1[x0-r-1:][:n], p2[x0-r-1:][:n], p3[x0-r-1:][:n]
		m0, m1, m2, m3 := o0[x0:][:n], o1[x0:][:n], o2[x0:][:n], o3[x0:][:n]
		for i := range n {
			r0 += in0[i] - out0[i]
			r1 += in1[i] - out1[i]
			r2 += in2[i] - out2[i]
			r3 += in3[i] - out3[i]
			m0[i], m1[i], m2[i], m3[i] = r0*inner, r1*inner, r2*inner, r3*inner
		}
	}
	for x := x1; x < w; x++ {
		r0, o0[x] = rowStep(p0, r0, x, r, inner)
		r1, o1[x] = rowStep(p1, r1, x, r, inner)
		r2, o2[x] = rowStep(p2, r2, x, r, inner)
		r3, o3[x] = rowStep(p3, r3, x, r, inner)
	}
}

// latProductRow puts in p the grid's row j of the high-passed luma times itself shifted by
// lag (dx, dy), 0 where the shift leaves the face's rectangle.
func (s *Swapper) latProductRow(p []float32, st, j int, lag [3]int) {
	w, h := s.latB.Rect.Dx(), s.latB.Rect.Dy()
	gw := len(p)
	dx, dy := lag[0], lag[1]
	if st*j+dy >= h {
		clear(p)
		return
	}
	// Between lo and hi the shifted sample lies within the row; it is the sample of the grid
	// at its offset (ox, oy) a whole number of steps (qx, qy) on.
	lo := min(gw, max(0, (st-1-dx)/st))
	hi := max(lo, min(gw, (w-dx+st-1)/st))
	qx, qy := floorDiv(dx, st), floorDiv(dy, st)
	ox, oy := dx-qx*st, dy-qy*st
	brow := s.latE[st*st].Pix[j*gw:][:gw]
	srow := s.latE[st*st+oy*st+ox].Pix[(j+qy)*gw:][:gw]
	clear(p[:lo])
	if hi > lo {
		pm, bm, sm := p[lo:hi], brow[lo:hi], srow[lo+qx:hi+qx]
		for i, v := range bm {
			pm[i] = v * sm[i]
		}
	}
	clear(p[hi:])
}

// latBestRow raises the grid's row j of s.latBin[lag's bin] to the correlation of the window
// sums in prow at the shift lag (dx, dy, bin): divided by the root of the window's energy
// and of the shifted samples' (s.latE, by the offset they lie on, holds 1/√(E + latFaint)).
func (s *Swapper) latBestRow(prow []float32, j, st int, lag [3]int) {
	gw, gh := s.latBin[0].Rect.Dx(), s.latBin[0].Rect.Dy()
	dx, dy := lag[0], lag[1]
	// The shift in whole steps (rounded down) and the offset it leaves.
	qx, qy := floorDiv(dx, st), floorDiv(dy, st)
	inv, shifted := s.latE[0].Pix, s.latE[(dy-qy*st)*st+dx-qx*st].Pix
	// Between lo and hi the shifted cell lies on the grid; beyond, the edge's cell stands in.
	lo, hi := min(gw, max(0, -qx)), max(0, min(gw, gw-qx))
	orow, prow := s.latBin[lag[2]].Pix[j*gw:][:gw], prow[:gw]
	irow, srow := inv[j*gw:][:gw], shifted[min(gh-1, j+qy)*gw:][:gw]
	for i := range lo {
		if c := prow[i] * irow[i] * srow[0]; c > orow[i] {
			orow[i] = c
		}
	}
	if hi > lo {
		o, pm, im, sm := orow[lo:hi], prow[lo:hi], irow[lo:hi], srow[lo+qx:hi+qx]
		for i, v := range pm {
			o[i] = maxFromZero(o[i], v*im[i]*sm[i])
		}
	}
	for i := hi; i < gw; i++ {
		if c := prow[i] * irow[i] * srow[gw-1]; c > orow[i] {
			orow[i] = c
		}
	}
}

// maxFromZero is max(o, c) for an o of +0 or more and a c not NaN (a bin, raised from 0 by
// correlations): such floats order as their bits do as signed integers, whose max costs no
// branch and fewer instructions than max's care for NaN and −0.
func maxFromZero(o, c float32) float32 {
	return math.Float32frombits(uint32(max(int32(math.Float32bits(o)), int32(math.Float32bits(c)))))
}

// floorDiv is a/b rounded down (b > 0).
func floorDiv(a, b int) int {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// latticeBest puts in s.latS (over fr) the lesser of two orientations' best correlations (in
// s.latBin, over the grid of every st-th pixel), at least two bins apart, the best such pair.
func (s *Swapper) latticeBest(fr image.Rectangle, st int) {
	w, h := fr.Dx(), fr.Dy()
	gw, gh := s.latBin[0].Rect.Dx(), s.latBin[0].Rect.Dy()
	s.latS.Reuse(fr)
	var bins [latBins][]float32
	for j := range gh {
		for a := range latBins {
			bins[a] = s.latBin[a].Pix[j*gw:][:gw]
		}
		// The bins are +0 or more (see maxFromZero), so they order as their bits do.
		y := st * j
		row := s.latS.Pix[y*w:][:w]
		for i := range gw {
			var best [latBins]int32
			for a := range latBins {
				best[a] = int32(math.Float32bits(bins[a][i]))
			}
			var v int32
			// The lesser of a pair is at most best[a], so a's best pair is its best partner's.
			for a := range latBins - latApart {
				m := best[a+latApart]
				for c := a + latApart + 1; c <= a+latBins-latApart && c < latBins; c++ {
					m = max(m, best[c])
				}
				v = max(v, min(best[a], m))
			}
			f := math.Float32frombits(uint32(v))
			for x := st * i; x < min(w, st*i+st); x++ {
				row[x] = f
			}
		}
		for y2 := y + 1; y2 < min(h, y+st); y2++ {
			copy(s.latS.Pix[y2*w:][:w], row)
		}
	}
}

// latticeLags are the shifts tried, (dx, dy, orientation bin), in pixels of a grid half-step k:
// those from latLeast to latLag half-steps long, one of each opposite pair.
func (s *Swapper) latticeLags(k float64) [][3]int {
	lags := s.latLags[:0]
	for ly := 0; ly <= latLag; ly++ {
		for lx := -latLag; lx <= latLag; lx++ {
			if d2 := lx*lx + ly*ly; !(ly == 0 && lx <= 0 || d2 < latLeast*latLeast || d2 > latLag*latLag) {
				bin := int(math.Atan2(float64(ly), float64(lx))/math.Pi*latBins+0.5) % latBins
				lags = append(lags, [3]int{int(math.Round(float64(lx) * k)), int(math.Round(float64(ly) * k)), bin})
			}
		}
	}
	s.latLags = lags
	return lags
}
