package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Occluders of the skin's own colour are also told by their texture: over a window of a few
// percent of the face, the skin's grain has its detail spread over scales (pores, film grain,
// wrinkles) and no orientation, while
//   - pixel noise (a grainy print, a knitted or sprayed surface) has far more of its detail at
//     the finest scale than in the band just above it, and
//   - stripes (fabric, a pattern, combed hair) have their detail in that band, all of one
//     orientation, and
//   - colour noise (a surface whose channels vary apart: a print's dots, a dyed weave) has
//     pixel-scale detail in its chroma (R − G, B − G), far more than in the band, which the
//     skin lacks: its grain is of the light, alike in every channel, and a codec smooths its
//     chroma; what chroma detail the skin has lies at its creases and edges, in the band.
//
// All are measured against the skin's own (the median over the skin sample discs of each
// disc's median), so a grainy photo and a smooth one compare. A region counts only if part of
// it is far from the skin (a seed of some size) and grows through what is less far; the
// features (eyes, brows, nostrils, mouth), textured by nature, are not tested, but for the
// nose's colour noise (it has none of its own, unlike the lips' and the eyes' colour edges),
// and a feature ringed or crossed by a find counts as covered, as in the other tests.

const (
	// texWindow is the half-width of the window the descriptors are averaged over, as a
	// share of the face size.
	texWindow = 0.03
	// texWindowLeast is the least half-width (px): over fewer pixels the orientation of a
	// small, lossy face's grain comes and goes from one keyframe to the next.
	texWindowLeast = 3
	// texFaint (levels² per px²) weighs a gradient's orientation by g²/(g²+texFaint): a faint
	// gradient's orientation is noise.
	texFaint = 1
	// texOffset (levels) is added to the band detail before the fine detail is divided by
	// it: faint detail (a smooth or lossy face, where both are a level or less and their
	// ratio is noise) has a ratio near 0, never noise; as stripes it is then told by its
	// orientation's coherence alone (and a seed by texSeedSpread).
	texOffset = 2
	// texNoiseSeed and texNoiseWeak are the ratio of fine to band detail, as multiples of the
	// skin's, from which a pixel seeds a noisy region and may join one. The skin's own
	// reaches about 1.6 at its 99th percentile on a grainy print; 10 levels of white noise
	// give 2–2.5.
	texNoiseSeed = 1.6
	texNoiseWeak = 1.3
	// texStripeQ and texStripeC are the most fine-to-band ratio (a multiple of the skin's)
	// and the least orientation coherence of a stripes seed; texStripeQWeak and
	// texStripeCWeak those of a pixel that may join one. Stripes score 0.3 and 0.65–0.9;
	// skin's edges and creases reach 0.7 coherence at its 99th percentile, seldom with
	// its detail all in the band.
	texStripeQ     = 0.8
	texStripeC     = 0.7
	texStripeQWeak = 1.0
	texStripeCWeak = 0.45
	// texSeedArea is the least share of the face a seed region must cover, here and in the
	// detail test (see addSeededFinds): the skin's own far pixels (a crease's end, the lip
	// line, a spot of grain) come in specks, the largest 0.8 % of the face on the lossy still
	// clips of TestTextureFindsNothingOnLossyStillFaces (1 % was just clear of them; 1.5 %
	// leaves a margin, at the cost of about a point of the survey's covers kept).
	texSeedArea = 0.015
	// texSeedSpread is how many times the other scale's detail a seed's own scale must hold,
	// whatever the skin's: noise has 2–3 times as much fine as band detail, stripes the
	// reverse, while the skin of a lossy frame, its grain partly kept and partly smoothed
	// away from one keyframe to the next, holds about as much of each.
	texSeedSpread = 1.5
	// texChromaSeed is the chroma's pixel-scale detail, as a multiple of the skin's, from
	// which a pixel with texSeedSpread times as much of it as of the band's (as noise has)
	// seeds a chroma-noisy region; texChromaWeak the detail from which a pixel with merely
	// more of it than of the band's may join one: over Grace Hopper's glasses and creases
	// the chroma detail reaches 1.5–2 times the skin's, mostly in the band, and a laxer bound
	// grew a fringe's find over them. texChromaOffset (levels) is added to the skin's: a grey
	// face has none.
	texChromaSeed   = 1.75
	texChromaWeak   = 2
	texChromaOffset = 0.5
)

// texture adds to s.occ (over fr, 1 on occluders; after s.features) what the local texture
// says is not the face's skin (see above).
func (s *Swapper) texture(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle) {
	w, h := fr.Dx(), fr.Dy()
	s.textureMaps(frame, fr, max(texWindowLeast, int(math.Round(texWindow*size))))
	fine, band, coh := s.texE[0].Pix, s.texE[1].Pix, s.texE[2].Pix
	// The ratio of pixel-scale to band detail, in s.texL.
	ratio := s.texL.Pix
	for i, v := range fine {
		ratio[i] = v / (band[i] + texOffset)
	}
	refQ := s.discMedianBy(&s.texL, target, size, fr, median)
	if !(refQ > 0) {
		return
	}
	s.clip.Reset(fr)
	for y := range h {
		frow := fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		for x, v := range frow {
			i := y*w + x
			if !(v > 0.5) || s.excl.Pix[i] > 0 {
				continue
			}
			q, c, f, b := ratio[i]/refQ, coh[i], fine[i], band[i]
			switch {
			case q > texNoiseSeed && f > texSeedSpread*b || q < texStripeQ && c > texStripeC && b > texSeedSpread*f:
				s.clip.Pix[i] = 3
			case q > texNoiseWeak || q < texStripeQWeak && c > texStripeCWeak:
				s.clip.Pix[i] = 1
			}
		}
	}
	s.addSeededFinds(frame, target, fm, size, fr, occMinArea)
	s.latticeFinds(frame, target, fm, size, fr)
	// Colour noise apart, over the skin and the nose: its seeds grow only through its own
	// weak pixels (a grainy face's skin is weak in the luma all over).
	refC := s.chromaRef(target, size, fr) + texChromaOffset
	cfine, cband := s.texC[0].Pix, s.texC[1].Pix
	s.zone.Reset(fr)
	s.fillZone(target, featureZones[5], featureZones[5].k, 1)
	s.clip.Reset(fr)
	for y := range h {
		frow := fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		for x, v := range frow {
			i := y*w + x
			if !(v > 0.5) || s.excl.Pix[i] > 0 && s.zone.Pix[i] == 0 {
				continue
			}
			switch a := cfine[i] / refC; {
			case a > texChromaSeed && cfine[i] > texSeedSpread*cband[i]:
				s.clip.Pix[i] = 3
			case a > texChromaWeak && cfine[i] > cband[i]:
				s.clip.Pix[i] = 1
			}
		}
	}
	s.addSeededFinds(frame, target, fm, size, fr, occMinArea)
}

// textureMaps puts in s.texE (over fr) three local texture descriptors of the frame's luma,
// each averaged over a box of half-width r: 0, the pixel-scale detail |L − 3×3 mean|; 1,
// the band detail |3×3 mean − 7×7 mean|; 2, how much the band-passed luma's gradients share
// one orientation (0 to 1); and in s.texC the chroma's pixel-scale and band detail alike.
func (s *Swapper) textureMaps(frame *raster.Image, fr image.Rectangle, r int) {
	w, h := fr.Dx(), fr.Dy()
	// Every value of texE, texL, texB1 and texB3 is written below before it is read, and
	// the first texJ are boxSmooth2's row sums, each written before it is read.
	for k := range s.texE {
		s.texE[k].Reuse(fr)
	}
	frameLuma(&s.texL, frame, fr)
	// b1: 3×3 mean, b3: 7×7 mean; s.texJ is free yet, for their row sums.
	s.texB1.Reuse(fr)
	copy(s.texB1.Pix, s.texL.Pix)
	s.texB3.Reuse(fr)
	copy(s.texB3.Pix, s.texL.Pix)
	for k := range s.texJ {
		s.texJ[k].Reuse(fr)
	}
	s.boxSmooth2(&s.texB1, &s.texB3, 1, 3, s.texJ[0].Pix, s.texJ[1].Pix)
	fine, band, coh := s.texE[0].Pix, s.texE[1].Pix, s.texE[2].Pix
	l, b1, b3 := s.texL.Pix, s.texB1.Pix, s.texB3.Pix
	for i := range l {
		fine[i] = float32(math.Abs(float64(l[i] - b1[i])))
		band[i] = b1[i] - b3[i]
	}
	// The orientation of the band-passed luma's gradient, as the doubled angle's unit
	// vector (cos 2θ, sin 2θ) weighted by how far the gradient is above the faint: the mean
	// over a window is near 0 on isotropic grain, the share of the window covered on a
	// single edge, and near 1 on stripes, whatever their contrast.
	for k := range s.texJ {
		s.texJ[k].Reset(fr)
	}
	jc, js := s.texJ[0].Pix, s.texJ[1].Pix
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			i := y*w + x
			gx, gy := (band[i+1]-band[i-1])/2, (band[i+w]-band[i-w])/2
			g2 := gx*gx + gy*gy
			k := 1 / (g2 + texFaint)
			jc[i], js[i] = (gx*gx-gy*gy)*k, 2*gx*gy*k
		}
	}
	for i, v := range band {
		band[i] = float32(math.Abs(float64(v)))
	}
	// The chroma's pixel-scale and band detail, as the luma's, summed over C = R − G and
	// B − G, in s.texC; s.texB1 and s.texB3 are free again, for the window's row sums.
	s.chromaDetail(frame, fr)
	s.boxSmooth2(&s.texC[0], &s.texC[1], r, r, s.texB1.Pix, s.texB3.Pix)
	s.boxSmooth2(&s.texE[0], &s.texE[1], r, r, s.texB1.Pix, s.texB3.Pix)
	s.boxSmooth2(&s.texJ[0], &s.texJ[1], r, r, s.texB1.Pix, s.texB3.Pix)
	for i := range coh {
		coh[i] = float32(math.Sqrt(float64(jc[i]*jc[i] + js[i]*js[i])))
	}
}

// chromaDetail puts in s.texC[0] and s.texC[1] (over fr) the chroma's pixel-scale and band
// detail, |C − 3×3 mean| and |3×3 mean − 7×7 mean| summed over C = R − G and B − G, before the
// window's smoothing: boxSmooth's values (see textureMapsRef in the tests) in one pass over
// both planes and both boxes. C is whole levels, so its row sums, taken here as differences
// of prefix sums, are exact in float32 (on rows of under 65 000 px) as in boxSmooth; the
// columns sum the rounded row means in boxSmooth's order.
func (s *Swapper) chromaDetail(frame *raster.Image, fr image.Rectangle) {
	w, h := fr.Dx(), fr.Dy()
	s.texC[0].Reuse(fr) // each value written below
	s.texC[1].Reuse(fr)
	if cap(s.texPre) < 2*(w+1) {
		s.texPre = make([]float32, 2*(w+1))
	}
	if n := 38 * w; cap(s.texRows) < n {
		s.texRows = make([]float32, n)
	}
	// ring[k] holds, for k = 0, 1, 2, 3, the 3-wide row means of R − G, of B − G, and the
	// 7-wide ones of each, for the eight rows the columns' step at y reads (y − 4 to y + 3),
	// row y in slot y mod 8; col[k] their column sums; zero stands for a row off the
	// rectangle. A column sum is never −0 (it starts at +0, and only −0 + −0 or −0 − +0
	// make −0), so adding or taking +0 leaves it as boxSmooth's, which skips those rows.
	var ring, col [4][]float32
	for k := range 4 {
		ring[k] = s.texRows[8*w*k:][:8*w]
		col[k] = s.texRows[32*w+w*k:][:w]
	}
	zero := s.texRows[36*w:][:w]
	clear(s.texRows[32*w:][:5*w])
	pre0, pre1 := s.texPre[:w+1], s.texPre[w+1:][:w+1]
	pre0[0], pre1[0] = 0, 0
	row := func(k, y int) []float32 {
		if y < 0 || y >= h {
			return zero
		}
		return ring[k][y%8*w:][:w]
	}
	means := func(y int) {
		px := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:][:3*w]
		var s0, s1 float32
		for x := range w {
			g := int32(px[3*x+1])
			s0 += float32(int32(px[3*x]) - g)
			s1 += float32(int32(px[3*x+2]) - g)
			pre0[x+1], pre1[x+1] = s0, s1
		}
		rowMeans(pre0, pre1, row(0, y), row(1, y), 1)
		rowMeans(pre0, pre1, row(2, y), row(3, y), 3)
	}
	for y := range min(3, h) {
		means(y)
	}
	for k, r := range [4]int{1, 1, 3, 3} {
		for y := range min(r, h) {
			for x, v := range row(k, y) {
				col[k][x] += v
			}
		}
	}
	cfine, cband := s.texC[0].Pix, s.texC[1].Pix
	c10, c11, c30, c31 := col[0], col[1], col[2], col[3]
	for y := range h {
		if y+3 < h {
			means(y + 3)
		}
		a10, a11, a30, a31 := row(0, y+1), row(1, y+1), row(2, y+3), row(3, y+3)
		b10, b11, b30, b31 := row(0, y-2), row(1, y-2), row(2, y-4), row(3, y-4)
		inv1 := 1 / float32(min(h, y+2)-max(0, y-1))
		inv3 := 1 / float32(min(h, y+4)-max(0, y-3))
		px := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:][:3*w]
		fo, bo := cfine[y*w:][:w], cband[y*w:][:w]
		for x := range w {
			s10 := c10[x] + a10[x] - b10[x]
			s11 := c11[x] + a11[x] - b11[x]
			s30 := c30[x] + a30[x] - b30[x]
			s31 := c31[x] + a31[x] - b31[x]
			c10[x], c11[x], c30[x], c31[x] = s10, s11, s30, s31
			m10, m11, m30, m31 := s10*inv1, s11*inv1, s30*inv3, s31*inv3
			g := float32(px[3*x+1])
			d0, d1 := float32(px[3*x])-g, float32(px[3*x+2])-g
			var f, b float32
			f += absBits(d0 - m10)
			b += absBits(m10 - m30)
			f += absBits(d1 - m11)
			b += absBits(m11 - m31)
			fo[x], bo[x] = f, b
		}
	}
}

// absBits is |v| without a branch (noise's signs defeat a predictor); unlike abs32 it makes
// −0 +0, which no sum of it tells apart.
func absBits(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// rowMeans puts in o0 and o1 the means of the rows whose prefix sums are pre0 and pre1 over
// the 2r+1 about each pixel, clipped to the row, rounded as boxSmooth rounds them: divided by
// the count near the row's ends, times the reciprocal of the full count between.
func rowMeans(pre0, pre1, o0, o1 []float32, r int) {
	w := len(pre0) - 1
	pre1, o0, o1 = pre1[:w+1], o0[:w], o1[:w]
	inner := 1 / float32(2*r+1)
	for x := range w {
		if x-r-1 < 0 || x+r >= w {
			lo, hi := max(0, x-r), min(w, x+r+1)
			n := float32(hi - lo)
			o0[x], o1[x] = (pre0[hi]-pre0[lo])/n, (pre1[hi]-pre1[lo])/n
			continue
		}
		o0[x], o1[x] = (pre0[x+r+1]-pre0[x-r])*inner, (pre1[x+r+1]-pre1[x-r])*inner
	}
}

// boxSmooth2 is boxSmooth over a (half-width ra) and b (rb), of one rectangle, at once, bit
// for bit: each row's two running sums are independent chains the processor overlaps, and
// the row means go to ta and tb (each as long as a's Pix) instead of back in place, so the
// columns need no ring.
func (s *Swapper) boxSmooth2(a, b *raster.Mask, ra, rb int, ta, tb []float32) {
	w, h := a.Rect.Dx(), a.Rect.Dy()
	ta, tb = ta[:w*h], tb[:w*h]
	innerA, innerB := 1/float32(2*ra+1), 1/float32(2*rb+1)
	// Between x0 and x1 both sums are clear of the row's ends.
	x0 := min(w, max(ra, rb)+1)
	x1 := max(x0, w-max(ra, rb))
	for y := range h {
		pa, pb := a.Pix[y*w:][:w], b.Pix[y*w:][:w]
		oa, ob := ta[y*w:][:w], tb[y*w:][:w]
		var runA, runB float32
		for x := range min(ra, w) {
			runA += pa[x]
		}
		for x := range min(rb, w) {
			runB += pb[x]
		}
		for x := range x0 {
			runA, oa[x] = rowStep(pa, runA, x, ra, innerA)
			runB, ob[x] = rowStep(pb, runB, x, rb, innerB)
		}
		for x := x0; x < x1; x++ {
			runA += pa[x+ra] - pa[x-ra-1]
			runB += pb[x+rb] - pb[x-rb-1]
			oa[x], ob[x] = runA*innerA, runB*innerB
		}
		for x := x1; x < w; x++ {
			runA, oa[x] = rowStep(pa, runA, x, ra, innerA)
			runB, ob[x] = rowStep(pb, runB, x, rb, innerB)
		}
	}
	// Down the columns: colA and colB are the sums; zero stands for a row off the
	// rectangle. A sum is never −0 (it starts at +0, and only −0 + −0 or −0 − +0 make −0),
	// so adding or taking +0 leaves it as boxSmooth's, which skips those rows.
	if cap(s.texSum) < 3*w {
		s.texSum = make([]float32, 3*w)
	}
	colA, colB, zero := s.texSum[:w], s.texSum[w:2*w], s.texSum[2*w:3*w]
	clear(s.texSum[:3*w])
	row := func(t []float32, y int) []float32 {
		if y < 0 || y >= h {
			return zero
		}
		return t[y*w:][:w]
	}
	for y := range min(ra, h) {
		for x, v := range row(ta, y) {
			colA[x] += v
		}
	}
	for y := range min(rb, h) {
		for x, v := range row(tb, y) {
			colB[x] += v
		}
	}
	for y := range h {
		addA, subA, addB, subB := row(ta, y+ra), row(ta, y-ra-1), row(tb, y+rb), row(tb, y-rb-1)
		invA := 1 / float32(min(h, y+ra+1)-max(0, y-ra))
		invB := 1 / float32(min(h, y+rb+1)-max(0, y-rb))
		pa, pb := a.Pix[y*w:][:w], b.Pix[y*w:][:w]
		for x := range w {
			cA := colA[x] + addA[x] - subA[x]
			cB := colB[x] + addB[x] - subB[x]
			colA[x], colB[x] = cA, cB
			pa[x], pb[x] = cA*invA, cB*invB
		}
	}
}

// rowStep moves the running sum run of row p (half-width r) to x, the step boxSmooth takes
// there, and gives it with the mean it makes: near the row's ends the sum takes what enters
// and drops what leaves apart and is divided by its count; between them it takes the
// difference and is multiplied by inner.
func rowStep(p []float32, run float32, x, r int, inner float32) (float32, float32) {
	w := len(p)
	if x-r-1 >= 0 && x+r < w {
		run += p[x+r] - p[x-r-1]
		return run, run * inner
	}
	if x+r < w {
		run += p[x+r]
	}
	if x-r-1 >= 0 {
		run -= p[x-r-1]
	}
	return run, run / float32(min(w, x+r+1)-max(0, x-r))
}

// addSeededFinds adds to s.occ what s.clip marks (3 on seeds, 1 on weak pixels): the seeds of
// at least texSeedArea of the face, grown through the weak pixels, each find of at least least
// of the face, and the features they ring or cross. Only finds of some size ring or bridge a
// feature: small ones come and go with a lossy frame's noise, and a feature covered in one
// frame and not the next flickers.
func (s *Swapper) addSeededFinds(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle, least float64) {
	s.dropSmallSeeds(fm, fr)
	if len(s.stack) == 0 { // the common case, a bare face
		return
	}
	s.growFromSeeds(&s.clip, fr.Dx(), fr.Dy())
	s.dropSmall(&s.clip, fm, fr, least)
	s.coverFeatures(frame, target, fr, size)
	for i, v := range s.clip.Pix {
		if v > 0.5 {
			s.occ.Pix[i] = 1
		}
	}
}

// dropSmallSeeds turns the seeds (3) in s.clip whose 4-connected regions cover less than
// texSeedArea of the face into weak pixels (1), refilling s.stack with the seeds left.
func (s *Swapper) dropSmallSeeds(fm *raster.Mask, fr image.Rectangle) {
	s.stack = s.stack[:0]
	if !slices.Contains(s.clip.Pix, 3) { // the common case: nothing to label
		return
	}
	s.labelRegions(s.clip.Pix, 3, fr)
	least := int(texSeedArea * float64(faceArea(fm, fr)))
	for i, l := range s.label {
		switch {
		case l <= 0:
		case s.area[l] < least:
			s.clip.Pix[i] = 1
		default:
			s.stack = append(s.stack, int32(i))
		}
	}
}

// growFromSeeds grows the seeds in m (3, listed in s.stack, which it empties) through the
// weak pixels (1) 4-connected to them, leaving m (w×h) 1 on what was reached and 0 elsewhere.
func (s *Swapper) growFromSeeds(m *raster.Mask, w, h int) {
	for len(s.stack) > 0 {
		i := int(s.stack[len(s.stack)-1])
		s.stack = s.stack[:len(s.stack)-1]
		for _, n := range neighbours4(i, w, h) {
			if n >= 0 && m.Pix[n] == 1 {
				m.Pix[n] = 3
				s.stack = append(s.stack, int32(n))
			}
		}
	}
	for i, v := range m.Pix {
		if v == 3 {
			m.Pix[i] = 1
		} else {
			m.Pix[i] = 0
		}
	}
}

// neighbours4 are the indices of pixel i's 4-connected neighbours in a w×h grid (left, right,
// up, down), −1 for those off the grid.
func neighbours4(i, w, h int) [4]int {
	x, y := i%w, i/w
	nb := [4]int{i - 1, i + 1, i - w, i + w}
	if x == 0 {
		nb[0] = -1
	}
	if x == w-1 {
		nb[1] = -1
	}
	if y == 0 {
		nb[2] = -1
	}
	if y == h-1 {
		nb[3] = -1
	}
	return nb
}

// discMedian is the median over the skin sample discs of each disc's median of m: robust
// to a cover over three of the eight.
func (s *Swapper) discMedian(m *raster.Mask, target *face.Landmarks68, size float64, fr image.Rectangle) float32 {
	return s.discMedianBy(m, target, size, fr, sortedMedian)
}

// discMedianBy is discMedian with each disc's median taken by med (see median).
func (s *Swapper) discMedianBy(m *raster.Mask, target *face.Landmarks68, size float64, fr image.Rectangle, med func([]float32) float32) float32 {
	var centres [8]geom.Pt
	skinCentres(target, &centres)
	rad := occSampleRadius * size
	var meds [8]float32
	n := 0
	for d, c := range centres {
		if s.upperSkin && !s.skinDisc[d] { // a cover's (see dropCoveredSamples)
			continue
		}
		s.dev = appendDisc(s.dev[:0], m, c, rad, fr)
		if len(s.dev) > 0 {
			meds[n] = med(s.dev)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	slices.Sort(meds[:n])
	return (meds[(n-1)/2] + meds[n/2]) / 2
}

// sortedMedian is v[len(v)/2] once v (not empty) is sorted, as it leaves v.
func sortedMedian(v []float32) float32 {
	slices.Sort(v)
	return v[len(v)/2]
}

// median is sortedMedian's value found by selection, without the sort; it reorders v. Of values that compare equal it may pick another, which tells only −0 from +0:
// the texture maps it serves hold no −0.
func median(v []float32) float32 {
	k := len(v) / 2
	lo, hi := 0, len(v)-1
	for lo < hi {
		a, b, c := v[lo], v[lo+(hi-lo)/2], v[hi]
		p := max(min(a, b), min(max(a, b), c)) // the middle of the three
		// Three ways: below p in v[lo:lt], equal in v[lt:gt+1], above in v[gt+1:hi+1].
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch x := v[i]; {
			case x < p:
				v[lt], v[i] = x, v[lt]
				lt++
				i++
			case x > p:
				v[gt], v[i] = x, v[gt]
				gt--
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			return v[k]
		}
	}
	return v[k]
}

// chromaRef is the skin's chroma detail (s.texC[0]): the larger of the skin discs' median
// (see discMedian) and the least of the four discs' above the brows and beside the eyes. A
// cover of the skin's own colour and grain over the lower face, flat in its chroma (a grey
// knit, a grained mask), passes for skin in the skin model and takes most skin discs, which
// would make the rest of the face seem noisy; it never reaches above the eyes. The least of
// those four stays on the skin under a noisy cover over the eyes (sunglasses, a fringe), which
// rarely covers all four.
func (s *Swapper) chromaRef(target *face.Landmarks68, size float64, fr image.Rectangle) float32 {
	var upper [occForeheadDiscs + occWitnessDiscs]geom.Pt
	foreheadCentres(target, (*[occForeheadDiscs]geom.Pt)(upper[:occForeheadDiscs]))
	witnessCentres(target, (*[occWitnessDiscs]geom.Pt)(upper[occForeheadDiscs:]))
	rad := occSampleRadius * size
	var meds [len(upper)]float32
	n := 0
	for _, c := range upper {
		s.dev = appendDisc(s.dev[:0], &s.texC[0], c, rad, fr)
		if len(s.dev) > 0 {
			meds[n] = median(s.dev)
			n++
		}
	}
	ref := s.discMedianBy(&s.texC[0], target, size, fr, median)
	if n > 0 {
		ref = max(ref, slices.Min(meds[:n]))
	}
	return ref
}

// boxSmooth replaces each value of m by the mean over the (2r+1)² square about it, clipped to
// m's Rect, as boxMean does, by running sums along the rows and then down the columns: for
// the small squares here, cheaper than a summed-area table.
func (s *Swapper) boxSmooth(m *raster.Mask, r int) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	if cap(s.texSum) < (r+3)*w {
		s.texSum = make([]float32, (r+3)*w)
	}
	row, col := s.texSum[:w], s.texSum[w:2*w]
	inner := 1 / float32(2*r+1)
	for y := range h {
		p := m.Pix[y*m.Stride:][:w]
		var run float32
		for x := range min(r, w) {
			run += p[x]
		}
		// The clipped ends divide by their own counts; the middle by the full square's.
		x := 0
		for ; x < w && (x-r-1 < 0 || x+r >= w); x++ {
			if x+r < w {
				run += p[x+r]
			}
			if x-r-1 >= 0 {
				run -= p[x-r-1]
			}
			row[x] = run / float32(min(w, x+r+1)-max(0, x-r))
		}
		for ; x+r < w; x++ {
			run += p[x+r] - p[x-r-1]
			row[x] = run * inner
		}
		for ; x < w; x++ {
			run -= p[x-r-1]
			row[x] = run / float32(w-max(0, x-r))
		}
		copy(p, row)
	}
	// Down the columns in place: row y's input is saved in a ring of r+1 rows before its
	// output overwrites it, for the sums to drop it r+1 rows later.
	ring := s.texSum[2*w : (r+3)*w]
	clear(col)
	for y := range min(r, h) {
		for x, v := range m.Pix[y*m.Stride:][:w] {
			col[x] += v
		}
	}
	for y := range h {
		if y+r < h {
			for x, v := range m.Pix[(y+r)*m.Stride:][:w] {
				col[x] += v
			}
		}
		slot := ring[y%(r+1)*w:][:w]
		if y-r-1 >= 0 {
			for x, v := range slot {
				col[x] -= v
			}
		}
		p := m.Pix[y*m.Stride:][:w]
		copy(slot, p)
		inv := 1 / float32(min(h, y+r+1)-max(0, y-r))
		for x, v := range col {
			p[x] = v * inv
		}
	}
}
