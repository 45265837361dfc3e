package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Glasses frames are told by the shape of glasses, whatever their colour: around each eye a
// closed ring of one colour, distinct from what lies inside and outside it all round, at a
// radius that changes smoothly with the angle, the same colour round both eyes. The face's
// own marks near the eyes are not so: crow's feet run along the rays from the eye (no ridge
// across them), a brow, a lid's crease or an under-eye bag is an arc over part of the turn,
// and their colours differ from each other. On a grainy, wrinkled face, where a frame of the
// skin's own hue is no stronger a ridge than the creases (see occRidgeGrain), the whole ring
// of one colour is what tells it.

const (
	// ringLevel is the skin's mean level (grey levels) the tolerances below are written for:
	// each frame's samples are scaled to it first (see glasses).
	ringLevel = 170
	// ringAngles is how many rays are cast from each eye's centre.
	ringAngles = 72
	// ringInner and ringOuter bound a rim's radius (share of the face size) from the eye's
	// centre: past the eye's corners, short of the brow's top and the cheek.
	ringInner, ringOuter = 0.085, 0.24
	// ringStep is the radial step (share of the face size) of the samples along a ray.
	ringStep = 0.005
	// ringSideThin and ringSideThick are the offsets (share of the face size) at which a
	// rim's two sides are sampled: a thin rim's and a thick one's (up to about 0.05 wide).
	ringSideThin, ringSideThick = 0.015, 0.032
	// ringBox is the half-width (share of the face size) of the box each sample is the mean
	// of, or of the stretch along the ring (see glasses): the skin's grain and a striped
	// rim's stripes average out.
	ringBox = 0.008
	// ringJump is how many radial steps the rim may move from one ray to the next (5°): a
	// rectangular frame's corner moves about three.
	ringJump = 3
	// ringJumpCost is what a step costs in the path's score (a ray that counts scores 1).
	ringJumpCost = 0.3
	// ringContrast is the least contrast (grey levels, RGB distance) between the rim and each
	// of its sides on a ray for the ray to count.
	ringContrast = 15
	// ringChroma and ringLuma are how far (grey levels) a sample's colour may lie from the
	// rim's, across the grey axis and along it (shading moves a rim along it).
	ringChroma, ringLuma = 9, 28
	// ringSkinChroma is the least log-chromaticity step from the skin's median, across its
	// axis or to less of its colour, that tells a rim from the skin's own shades; ringSkinDarker
	// the least log-brightness step down (e^0.5 ≈ 1.6× darker) that does.
	ringSkinChroma, ringSkinDarker = 0.05, 0.5
	// ringSeen is the least share of the rays on each eye on which a colour must be a ridge to
	// be tried as the rim's.
	ringSeen = 0.4
	// ringBin is the colour histogram's bin (grey levels) the rim's colour is sought in.
	ringBin = 16
	// ringBinOverlap is how far (grey levels) a colour counts into the bins beside its own.
	ringBinOverlap = 4
	// ringCandidates is how many of the commonest colours are tried as the rim's.
	ringCandidates = 5
	// ringStepColour is the most the rim's colour (grey levels) may change from a ray to the next.
	ringStepColour = 16
	// ringCover is the share of the rays on each eye that must count, and ringCoverBoth on
	// the two eyes together.
	ringCover, ringCoverBoth = 0.75, 0.8
	// ringCoverSkin and ringCoverSkinBoth are those for a rim of a shade of the skin's own
	// colour (see rimLikeSkin).
	ringCoverSkin, ringCoverSkinBoth = 0.85, 0.9
	// ringLeastLevel is the darkest skin (mean channel level) the glasses test looks at.
	ringLeastLevel = 16
)

// skinLevel is the mean channel level of skin model m's median brightness.
func skinLevel(m skinModel) float64 { return (math.Exp(float64(m.med[0])) - 3) / 3 }

// ringBins is the number of histogram bins a channel.
const ringBins = 256 / ringBin

// ringScratch holds the glasses test's buffers.
type ringScratch struct {
	pol   [2][3][]float32 // each eye's colour samples, ray by ray, radial step by step
	ridge [2][]float32    // the squared contrast to both sides at each sample
	hist  [2][]float32    // each eye's histogram of the colours of samples that are ridges
	seen  []int16         // the last ray counted in each bin
	gain  []float32       // 1 on the samples of the rim's colour that count
	score []float32       // the best path's score to each sample (two turns)
	from  []int8          // the step that path took into each sample
	path  [2][ringAngles]int
	ok    [2][ringAngles]bool
	rims  raster.Mask // 1 on the rims found (over the face's rectangle), if found
	found bool
}

// glasses adds to s.occ (over fr, 1 on occluders) the rims of glasses around both eyes (see
// above).
func (s *Swapper) glasses(frame *raster.Image, target *face.Landmarks68, size float64, m skinModel) {
	rs := &s.rings
	rs.found = false
	// The tolerances are in grey levels of a face whose skin is at ringLevel. Light scales
	// every level and every difference between them: a stop darker, the face's own marks
	// (brows, lids, sockets' shadows) crowd into one rim colour's tolerance and ring the eyes,
	// and a rim's contrast to its sides halves. So the samples are scaled to the skin's level
	// first, and the test judges the same face alike however it is exposed.
	level := skinLevel(m)
	if level < ringLeastLevel {
		return // too dark: scaled up, the tolerances would judge the codec's noise
	}
	gain := ringLevel / level
	var centres [2]geom.Pt
	for e := range 2 {
		centres[e] = geom.Mean(target[36+6*e : 42+6*e])
	}
	// Each sample is a mean along the ring first: a thin rim's colour undiluted by its
	// sides', however thin; then over a box across it too, where the skin's grain or a
	// thick rim's shading splits the colour along the ring. Along the ring the face's own
	// marks (a brow, a lid, a socket's shadow) also keep their colours apart, and ring the
	// eyes more often: that look must be surer, of every colour.
	for _, box := range [2]bool{false, true} {
		for e := range 2 {
			s.ringSamples(frame, centres[e], size, e, float32(gain), box)
		}
		if s.ringFind(centres, size, float32(gain), m, !box) {
			return
		}
	}
}

// ringFind tries the commonest colours of the ridges round both eyes (in rs.hist) as the
// rim's, and marks the rims round the centres in s.occ when one makes a ring round both; sure
// asks of every colour the cover asked of the skin's own shades.
func (s *Swapper) ringFind(centres [2]geom.Pt, size float64, gain float32, m skinModel, sure bool) bool {
	rs := &s.rings
	var tried [ringCandidates]int
	for c := range ringCandidates {
		best, bv := -1, float32(0)
		for b := range rs.hist[0] {
			if v := min(rs.hist[0][b], rs.hist[1][b]); v > bv && !slices.Contains(tried[:c], b) {
				best, bv = b, v
			}
		}
		if best < 0 || bv < ringSeen*ringAngles {
			return false
		}
		tried[c] = best
		col := s.ringColour(best)
		// Where the colour cannot tell a rim from the skin's own shades, the shape must be
		// surer.
		least, both := ringCover, ringCoverBoth
		if sure || rimLikeSkin([3]float32{col[0] / gain, col[1] / gain, col[2] / gain}, m) { // as the frame has it
			least, both = ringCoverSkin, ringCoverSkinBoth
		}
		c0 := s.ringPath(0, col, least)
		if c0 < least {
			continue
		}
		if c1 := s.ringPath(1, col, least); c1 >= least && c0+c1 >= 2*both {
			rs.found = true
			rs.rims.Reset(s.occ.Rect)
			for e := range 2 {
				s.markRing(centres[e], size, e)
			}
			for i, v := range rs.rims.Pix {
				s.occ.Pix[i] = max(s.occ.Pix[i], v)
			}
			return true
		}
	}
	return false
}

// keepRims puts back in s.occ the rims glasses found, which a test after it (dropSmall) may
// have taken out: a rim alone may cover less of the face than a blemish may.
func (s *Swapper) keepRims() {
	if !s.rings.found {
		return
	}
	for i, v := range s.rings.rims.Pix {
		s.occ.Pix[i] = max(s.occ.Pix[i], v)
	}
}

// rimLikeSkin reports whether colour col could be the skin's own (m): its shadow, fold or shine,
// which differ from the skin's median in brightness and along the skin's own chromaticity
// axis to more of its colour, but little across it or to less; a skin-coloured band between
// a face's darker marks (below a brow, above a cheek's shadow) would otherwise make a ring.
// A rim much darker than the skin's shadows (a brown frame) is not.
func rimLikeSkin(col [3]float32, m skinModel) bool {
	f := features(uint8(col[0]+0.5), uint8(col[1]+0.5), uint8(col[2]+0.5))
	a, b := f[1]*m.ux+f[2]*m.uy, f[2]*m.ux-f[1]*m.uy
	ds, dh := min(a-m.med[1], 0), b-m.med[2]
	return ds*ds+dh*dh < ringSkinChroma*ringSkinChroma && f[0]-m.med[0] > -ringSkinDarker
}

// ringRange is the radial steps sampled along a ray (the rim's range and its sides) and
// the rim's range among them.
func ringRange() (lo, n, k0, k1 int) {
	lo = int(math.Round((ringInner - ringSideThick) / ringStep))
	hi := int(math.Round((ringOuter + ringSideThick) / ringStep))
	k0 = int(math.Round(ringInner/ringStep)) - lo
	k1 = int(math.Round(ringOuter/ringStep)) - lo
	return lo, hi - lo + 1, k0, k1
}

// ringSamples samples the colour along each ray from c, eye e's centre (each sample a mean
// along the ring, see arcMean, or with box over a box, see boxMean), into rs.pol[e], the
// squared contrast of each sample to both its sides into rs.ridge[e] (the least of its distances to
// the samples a thin and a thick rim's width out and in, the larger of the two widths'; a
// step edge, a brow's lower side or a cheek's shadow, differs from one side only and scores
// 0), and the histogram of the colours of the rim's range whose contrast counts into
// rs.hist[e].
func (s *Swapper) ringSamples(frame *raster.Image, c geom.Pt, size float64, e int, gain float32, box bool) {
	rs := &s.rings
	lo, nr, k0, k1 := ringRange()
	n := ringAngles * nr
	pol := &rs.pol[e]
	for ch := range 3 {
		pol[ch] = slices.Grow(pol[ch][:0], n)[:n]
	}
	h := max(1, int(math.Round(ringBox*size)))
	for a := range ringAngles {
		sin, cos := math.Sincos(2 * math.Pi * float64(a) / ringAngles)
		for k := range nr {
			r := float64(lo+k) * ringStep * size
			x, y := c.X+r*cos, c.Y+r*sin
			var col [3]float32
			if box {
				col = boxMean(frame, int(math.Round(x)), int(math.Round(y)), h)
			} else {
				col = arcMean(frame, x, y, -sin, cos, h)
			}
			for ch := range 3 {
				pol[ch][a*nr+k] = min(255, gain*col[ch])
			}
		}
	}
	rs.ridge[e] = slices.Grow(rs.ridge[e][:0], n)[:n]
	ridge := rs.ridge[e]
	clear(ridge)
	dist := func(i, j int) float32 { // squared
		d0, d1, d2 := pol[0][i]-pol[0][j], pol[1][i]-pol[1][j], pol[2][i]-pol[2][j]
		return d0*d0 + d1*d1 + d2*d2
	}
	for _, side := range [...]float64{ringSideThin, ringSideThick} {
		d := int(math.Round(side / ringStep))
		for a := range ringAngles {
			for k := d; k < nr-d; k++ {
				i := a*nr + k
				ridge[i] = max(ridge[i], min(dist(i, i-d), dist(i, i+d)))
			}
		}
	}
	// Each ray counts once in a bin, however many of its samples are of that colour: a rim
	// crosses each ray once, the skin beside a mark may span much of it.
	const nb = ringBins * ringBins * ringBins
	rs.hist[e] = slices.Grow(rs.hist[e][:0], nb)[:nb]
	clear(rs.hist[e])
	rs.seen = slices.Grow(rs.seen[:0], nb)[:nb]
	for b := range rs.seen {
		rs.seen[b] = -1
	}
	for a := range ringAngles {
		for k := k0; k <= k1; k++ {
			if i := a*nr + k; ridge[i] >= ringContrast*ringContrast {
				for _, b := range ringBinsOf(pol[0][i], pol[1][i], pol[2][i]) {
					if b >= 0 && rs.seen[b] != int16(a) {
						rs.seen[b] = int16(a)
						rs.hist[e][b]++
					}
				}
			}
		}
	}
}

// ringBinsOf are the histogram bins a colour counts in, −1 for none: those of each channel's
// level less and more ringBinOverlap, so that a rim's colour near a bin's edge is not split
// between two.
func ringBinsOf(r, g, b float32) (bins [8]int) {
	var lo, hi [3]int
	for ch, v := range [3]float32{r, g, b} {
		lo[ch] = max(0, int(v)-ringBinOverlap) / ringBin
		hi[ch] = min(255, int(v)+ringBinOverlap) / ringBin
	}
	for k := range bins {
		var idx [3]int
		for ch := range 3 {
			idx[ch] = lo[ch]
			if k>>ch&1 == 1 {
				if hi[ch] == lo[ch] {
					idx[ch] = -1
					break
				}
				idx[ch] = hi[ch]
			}
		}
		bins[k] = -1
		if idx[0] >= 0 && idx[1] >= 0 && idx[2] >= 0 {
			bins[k] = (idx[0]*ringBins+idx[1])*ringBins + idx[2]
		}
	}
	return bins
}

// inBin reports whether level v counts in a channel's bin i (see ringBinsOf).
func inBin(v float32, i int) bool {
	return max(0, int(v)-ringBinOverlap)/ringBin <= i && i <= min(255, int(v)+ringBinOverlap)/ringBin
}

// ringColour is the mean colour of both eyes' ridge samples in bin b.
func (s *Swapper) ringColour(b int) [3]float32 {
	rs := &s.rings
	_, nr, k0, k1 := ringRange()
	idx := [3]int{b / (ringBins * ringBins), b / ringBins % ringBins, b % ringBins}
	var sum [3]float32
	var n float32
	for e := range 2 {
		pol := &rs.pol[e]
		for a := range ringAngles {
			for k := k0; k <= k1; k++ {
				i := a*nr + k
				if rs.ridge[e][i] >= ringContrast*ringContrast && inBin(pol[0][i], idx[0]) && inBin(pol[1][i], idx[1]) && inBin(pol[2][i], idx[2]) {
					sum[0], sum[1], sum[2], n = sum[0]+pol[0][i], sum[1]+pol[1][i], sum[2]+pol[2][i], n+1
				}
			}
		}
	}
	return [3]float32{sum[0] / n, sum[1] / n, sum[2] / n}
}

// ringPath puts in rs.path[e] the closed path round eye e, one radial step a ray within the
// rim's range, through the most samples of colour col whose contrast counts, less
// ringJumpCost a step moved (a path over two turns, of which the second is kept, so that its
// start does not matter), marks in rs.ok[e] the rays where it is on one (see ringStepColour),
// and returns their share (0 when fewer than least of the rays hold such a sample at all).
func (s *Swapper) ringPath(e int, col [3]float32, least float64) float64 {
	rs := &s.rings
	_, nr, k0, k1 := ringRange()
	pol := &rs.pol[e]
	n := 2 * ringAngles * nr
	rs.score = slices.Grow(rs.score[:0], n)[:n]
	rs.from = slices.Grow(rs.from[:0], n)[:n]
	// gain is 1 on the samples of the rim's colour whose contrast counts, 0 elsewhere.
	rs.gain = slices.Grow(rs.gain[:0], ringAngles*nr)[:ringAngles*nr]
	clear(rs.gain)
	rays := 0
	for a := range ringAngles {
		any := false
		for k := k0; k <= k1; k++ {
			if i := a*nr + k; rs.ridge[e][i] >= ringContrast*ringContrast && sameColour([3]float32{pol[0][i], pol[1][i], pol[2][i]}, col) {
				rs.gain[i], any = 1, true
			}
		}
		if any {
			rays++
		}
	}
	if float64(rays) < least*ringAngles { // no path can be on enough rays
		return 0
	}
	gain := func(a, k int) float32 { return rs.gain[a%ringAngles*nr+k] }
	for k := k0; k <= k1; k++ {
		rs.score[k] = gain(0, k)
	}
	for a := 1; a < 2*ringAngles; a++ {
		for k := k0; k <= k1; k++ {
			best, from := float32(math.Inf(-1)), 0
			for d := -ringJump; d <= ringJump; d++ {
				if j := k + d; j >= k0 && j <= k1 {
					if v := rs.score[(a-1)*nr+j] - ringJumpCost*float32(max(d, -d)); v > best {
						best, from = v, d
					}
				}
			}
			rs.score[a*nr+k], rs.from[a*nr+k] = best+gain(a, k), int8(from)
		}
	}
	k := k0
	last := (2*ringAngles - 1) * nr
	for j := k0; j <= k1; j++ {
		if rs.score[last+j] > rs.score[last+k] {
			k = j
		}
	}
	for a := 2*ringAngles - 1; a >= ringAngles; a-- {
		rs.path[e][a-ringAngles] = k
		rs.ok[e][a-ringAngles] = gain(a, k) > 0
		k += int(rs.from[a*nr+k])
	}
	// A rim's colour changes little from one ray to the next; a path hopping between the
	// skin's own marks changes it at each hop.
	count := 0
	var cont [ringAngles]bool
	for a := range ringAngles {
		i, j := a*nr+rs.path[e][a], (a+1)%ringAngles*nr+rs.path[e][(a+1)%ringAngles]
		d0, d1, d2 := pol[0][i]-pol[0][j], pol[1][i]-pol[1][j], pol[2][i]-pol[2][j]
		cont[a] = d0*d0+d1*d1+d2*d2 <= ringStepColour*ringStepColour
	}
	for a := range ringAngles {
		rs.ok[e][a] = rs.ok[e][a] && (cont[a] || cont[(a+ringAngles-1)%ringAngles])
		if rs.ok[e][a] {
			count++
		}
	}
	return float64(count) / ringAngles
}

// sameColour reports whether colours p and q lie within ringChroma across the grey axis and
// ringLuma along it.
func sameColour(p, q [3]float32) bool {
	d0, d1, d2 := p[0]-q[0], p[1]-q[1], p[2]-q[2]
	m := (d0 + d1 + d2) / 3
	d0, d1, d2 = d0-m, d1-m, d2-m
	return d0*d0+d1*d1+d2*d2 <= ringChroma*ringChroma && abs32(m) <= ringLuma
}

// markRing sets rs.rims to 1 on the pixels of eye e's rim about c: on the rays that count (and
// between two that do), from the path in and out by the rim's half-widths there, the median
// over those rays of how far the samples stay nearer the path's colour than either side's.
func (s *Swapper) markRing(c geom.Pt, size float64, e int) {
	rs := &s.rings
	lo, nr, _, _ := ringRange()
	pol := &rs.pol[e]
	side := int(math.Round(ringSideThick / ringStep))
	// Each ray's rim colour is the mean of the path's over five rays: a striped or grainy
	// rim's own pattern averages out.
	var rim [ringAngles][3]float32
	for a := range ringAngles {
		for d := -2; d <= 2; d++ {
			b := (a + d + ringAngles) % ringAngles
			i := b*nr + rs.path[e][b]
			for ch := range 3 {
				rim[a][ch] += pol[ch][i] / 5
			}
		}
	}
	dist := func(p [3]float32, j int) float32 {
		d0, d1, d2 := p[0]-pol[0][j], p[1]-pol[1][j], p[2]-pol[2][j]
		return d0*d0 + d1*d1 + d2*d2
	}
	var widths [2][ringAngles]float32
	n := 0
	for a := range ringAngles {
		if !rs.ok[e][a] {
			continue
		}
		i := a*nr + rs.path[e][a]
		in := [3]float32{pol[0][i-side], pol[1][i-side], pol[2][i-side]}
		out := [3]float32{pol[0][i+side], pol[1][i+side], pol[2][i+side]}
		for w, dir := range [2]int{-1, 1} {
			j := 0
			for j < side {
				// Is the sample past j nearer the rim's colour than either side's?
				q := i + dir*(j+1)
				if dc := dist(rim[a], q); dc >= dist(in, q) || dc >= dist(out, q) {
					break
				}
				j++
			}
			widths[w][n] = float32(j) + 0.5
		}
		n++
	}
	if n == 0 {
		return
	}
	slices.Sort(widths[0][:n])
	slices.Sort(widths[1][:n])
	win, wout := float64(widths[0][n/2]), float64(widths[1][n/2])
	fr := s.occ.Rect
	reach := (ringOuter + ringSideThick) * size
	box := image.Rect(int(c.X-reach), int(c.Y-reach), int(c.X+reach)+1, int(c.Y+reach)+1).Intersect(fr)
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for x := box.Min.X; x < box.Max.X; x++ {
			dx, dy := float64(x)-c.X, float64(y)-c.Y
			t := math.Atan2(dy, dx) / (2 * math.Pi) * ringAngles
			if t < 0 {
				t += ringAngles
			}
			a0 := int(t) % ringAngles
			a1 := (a0 + 1) % ringAngles
			if !rs.ok[e][a0] && !rs.ok[e][a1] {
				continue
			}
			f := t - math.Floor(t)
			k := (1-f)*float64(rs.path[e][a0]) + f*float64(rs.path[e][a1])
			if d := math.Hypot(dx, dy)/(ringStep*size) - float64(lo) - k; d >= -win && d <= wout {
				rs.rims.Pix[(y-fr.Min.Y)*rs.rims.Stride+x-fr.Min.X] = 1
			}
		}
	}
}

// arcMean is the mean colour of the pixels nearest (x, y) and 1 and 2 times h from it along
// (tx, ty) each way, clipped to the frame: the mean along a rim, which averages the skin's
// grain and a striped rim's stripes out but not the rim's own colour with its sides', however
// thin it is.
func arcMean(frame *raster.Image, x, y, tx, ty float64, h int) [3]float32 {
	var sum [3]int
	n := 0
	for k := -2; k <= 2; k++ {
		u, v := int(math.Round(x+float64(k*h)*tx)), int(math.Round(y+float64(k*h)*ty))
		if u < 0 || v < 0 || u >= frame.W || v >= frame.H {
			continue
		}
		p := frame.Pix[v*frame.Stride+3*u:]
		sum[0], sum[1], sum[2] = sum[0]+int(p[0]), sum[1]+int(p[1]), sum[2]+int(p[2])
		n++
	}
	if n == 0 {
		return [3]float32{}
	}
	return [3]float32{float32(sum[0]) / float32(n), float32(sum[1]) / float32(n), float32(sum[2]) / float32(n)}
}

// boxMean is the mean colour of the 3×3 pixels h apart about (x, y), clipped to the frame:
// a box's mean at the cost of nine pixels.
func boxMean(frame *raster.Image, x, y, h int) [3]float32 {
	var sum [3]int
	n := 0
	for v := y - h; v <= y+h; v += h {
		if v < 0 || v >= frame.H {
			continue
		}
		row := frame.Pix[v*frame.Stride:][:3*frame.W]
		for u := x - h; u <= x+h; u += h {
			if u < 0 || u >= frame.W {
				continue
			}
			sum[0], sum[1], sum[2] = sum[0]+int(row[3*u]), sum[1]+int(row[3*u+1]), sum[2]+int(row[3*u+2])
			n++
		}
	}
	if n == 0 {
		return [3]float32{}
	}
	return [3]float32{float32(sum[0]) / float32(n), float32(sum[1]) / float32(n), float32(sum[2]) / float32(n)}
}
