package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A cover of the skin's own hue (a finger, a thumb, a skin-hued spoon or rod) is not told
// from the skin by its colour, and over the mouth the colour tests do not look at all (the
// lips are red and dark by nature). It is told there by the structure it hides: the lips run
// unbroken from one corner to the other wherever the landmarks put them, and across them, at
// every place along the mouth, the colour steps from skin to lip to the lips' dark gap (or
// teeth) and back. A cover crossing the mouth hides that over its width: there the colour
// across the lips is flat, while beside it the lips' steps stand. Such a break of the lips,
// as wide as a finger or more but not the whole mouth, is in front of the face, and so is
// its continuation up and down along the band that looks like it (the rest of the finger).
//
// A rod held in the mouth (a cigarette, a straw, a pen) leaves it at a corner, past the
// lips, where the colour tests see skin's hue and the thin bands a ridge too faint against
// a wrinkled face's. It is told by its two edges: along a ray from the corner, every
// cross-section holds a band of a rod's width between two sharp steps of the colour, even
// between them and unlike the skin on both sides, for a fifth of the face or more. The
// face's own bands there (a smile's lit folds, an old face's creases) have soft flanks, run
// up from the corner rather than out or down, or end within a tenth of the face or so.

const (
	// fingerCols is how many places along the mouth the colour across the lips is measured
	// at; fingerEdge of them at each corner are left out (the lips thin out there).
	fingerCols = 24
	fingerEdge = 2
	// fingerSamples is how many points across the lips each place is sampled at, from
	// fingerReach of the lips' height above the upper lip to as far below the lower.
	fingerSamples = 14
	fingerReach   = 0.3
	// fingerFlat is the share of the lips' own steps (the upper quartile over the mouth,
	// in luma and in redness) under which a place counts as broken; fingerLipsLeast is the
	// least luma step of the lips' quartile (grey levels) for the test to be made at all:
	// lips too faint to be told from a cover.
	fingerFlat      = 0.3
	fingerLipsLeast = 30
	// fingerRun is the least number of neighbouring broken places (about 3 % of the face
	// across): one alone is a blotch of the lips, a reflection.
	fingerRun = 2
	// fingerTilt is how far (degrees) from across the mouth the lines across the lips are
	// turned, in steps of fingerTiltStep: a slanted finger is flat along its own slant.
	fingerTilt     = 30
	fingerTiltStep = 15
	// fingerAngle is how far (degrees) from across the mouth the band may run, in steps of
	// fingerAngleStep.
	fingerAngle     = 45
	fingerAngleStep = 5
	// fingerUp and fingerDown are how far (shares of the face size) the band is followed
	// beyond the lips: up to below the nose, down past the chin.
	fingerUp   = 0.12
	fingerDown = 0.4
	// fingerTol is how far (grey levels, in luma and in redness) a section of the band may
	// differ from its part over the lips and still be the same cover.
	fingerTol = 8
)

const (
	// A rod held at a mouth's corner is looked for along rays from the corner, turned from
	// straight outwards by up to rodUp degrees towards the eyes (above, the folds of a smile
	// run up from the corner as lit bands between shadows) and rodDown towards the chin, in
	// steps of rodAngleStep; along each ray at every rodStep (share of the face size) to
	// rodReach, the band must start within rodStart of the corner and run rodLength (a
	// smile's or a wrinkled face's own bands beside the mouth end sooner; a cigarette or a
	// straw runs on past the face's outline).
	rodUp        = 10
	rodDown      = 75
	rodAngleStep = 5
	rodStep      = 0.01
	rodReach     = 0.35
	rodStart     = 0.06
	rodLength    = 0.2
	// rodHalf is how far (share of the face size) each way across the ray the band is looked
	// for; rodAlong how far along it each sample is averaged; rodWidthLeast and rodWidthMost
	// bound the band's width.
	rodHalf       = 0.09
	rodAlong      = 0.01
	rodWidthLeast = 0.015
	rodWidthMost  = 0.07
	// rodEdgeReach is the half-width (share of the face size, 2 px at least) over which an
	// edge's step is measured; of it, rodSharp must fall between the edge's two neighbouring
	// pixels: a cover's edge is sharp, the shading between the face's own folds is not.
	rodEdgeReach = 0.01
	rodSharp     = 0.5
	// rodContrast is the least step (grey levels, in luma or in redness) at each edge, more
	// rodGrainK times the grain across the ray there (see rodGrain; a noisy frame's grain
	// makes a soft fold's flank look sharp); rodEven how far the band's samples may stray
	// from its mean, and each section from the last.
	rodContrast = 8
	rodGrainK   = 0.5
	rodEven     = 12
	// rodInside is how far (share of the face size) behind the corner a rod found is taken
	// to reach, over the lips' corner.
	rodInside = 0.02
)

// lipAt is the point at t ∈ [0, 1] along the upper (lower=false) or lower outer lip contour,
// from the left corner (48) to the right (54).
func lipAt(l *face.Landmarks68, t float64, lower bool) geom.Pt {
	var c [7]geom.Pt
	for k := range 7 {
		i := 48 + k
		if lower && k > 0 && k < 6 {
			i = 60 - k
		}
		c[k] = l[i]
	}
	u := min(6, max(0, t*6))
	k := min(5, int(u))
	return c[k].Add(c[k+1].Sub(c[k]).Scale(u - float64(k)))
}

// patchColour is the mean luma and redness (R − G) of the square of half-width h about p.
func patchColour(frame *raster.Image, p geom.Pt, h int) (col [2]float32, ok bool) {
	x0, y0 := int(math.Round(p.X)), int(math.Round(p.Y))
	var sr, sg, sb, n float32
	for y := max(0, y0-h); y <= min(frame.H-1, y0+h); y++ {
		for x := max(0, x0-h); x <= min(frame.W-1, x0+h); x++ {
			r, g, b := frame.At(x, y)
			sr, sg, sb, n = sr+float32(r), sg+float32(g), sb+float32(b), n+1
		}
	}
	if n == 0 {
		return col, false
	}
	sr, sg, sb = sr/n, sg/n, sb/n
	return [2]float32{luma(sr, sg, sb), sr - sg}, true
}

// lipSteps fills c with each place's range of luma and of redness across the lips, less
// the furthest sample each way (a speck, or the end of a cover the line runs out of): along
// a line through the middle of the lips there, turned by tilt (radians) from across them.
func lipSteps(frame *raster.Image, l *face.Landmarks68, size, tilt float64, c *[fingerCols][2]float32) {
	h := int(0.006 * size)
	a := l[54].Sub(l[48])
	a = a.Scale(1 / math.Hypot(a.X, a.Y))
	sn, cs := math.Sincos(tilt)
	d := geom.Pt{X: -a.Y, Y: a.X}.Scale(cs).Add(a.Scale(sn))
	var v [2][fingerSamples]float32
	for j := range fingerCols {
		t := (float64(j) + 0.5) / fingerCols
		u, lo := lipAt(l, t, false), lipAt(l, t, true)
		mid, half := u.Add(lo).Scale(0.5), (0.5+fingerReach)*u.Dist(lo)
		for k := range fingerSamples {
			col, _ := patchColour(frame, mid.Add(d.Scale(half*(2*float64(k)/(fingerSamples-1)-1))), h)
			v[0][k], v[1][k] = col[0], col[1]
		}
		for i := range 2 {
			slices.Sort(v[i][:])
			c[j][i] = v[i][fingerSamples-2] - v[i][1]
		}
	}
}

// fingers adds to s.occ (over fr, 1 on occluders; fm the face mask) the covers that break
// the lips (see above).
func (s *Swapper) fingers(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle) {
	s.lipBreaks(frame, target, size, func(cols [2]int) { s.markFinger(frame, target, fm, size, fr, cols) })
}

// lipBreaks calls found with each run of places along the mouth, from cols[0] to cols[1]−1,
// where the colour across the lips is flat beside places where it is not (see above).
func (s *Swapper) lipBreaks(frame *raster.Image, target *face.Landmarks68, size float64, found func(cols [2]int)) {
	var c [fingerCols][2]float32
	for tilt := -fingerTilt; tilt <= fingerTilt; tilt += fingerTiltStep {
		lipSteps(frame, target, size, float64(tilt)*math.Pi/180, &c)
		var ref [2]float32
		for i := range 2 {
			s.dev = s.dev[:0]
			for j := fingerEdge; j < fingerCols-fingerEdge; j++ {
				s.dev = append(s.dev, c[j][i])
			}
			slices.Sort(s.dev)
			ref[i] = s.dev[3*len(s.dev)/4]
		}
		if ref[0] < fingerLipsLeast {
			return
		}
		broken := func(j int) bool { return c[j][0] < fingerFlat*ref[0] && c[j][1] < fingerFlat*ref[1] }
		for j := fingerEdge; j < fingerCols-fingerEdge; {
			if !broken(j) {
				j++
				continue
			}
			j1 := j
			for j1+1 < fingerCols-fingerEdge && broken(j1+1) {
				j1++
			}
			if j1-j+1 >= fingerRun {
				found([2]int{j, j1 + 1})
			}
			j = j1 + 1
		}
	}
}

// fingerBand is a cover's band across the mouth: its centre p over the lips, its direction
// d (across the mouth, turned by the band's angle) and e across it, its half-width hw, the
// half-height hv of its part over the lips, and its colour over them and tolerance.
type fingerBand struct {
	p, d, e geom.Pt
	hw, hv  float64
	col     [2]float32
	tol     float32
	h       int
}

// section is how far, in tolerances, the band's cross-section at r along d differs from
// its colour over the lips; ok is false off the frame.
func (b *fingerBand) section(frame *raster.Image, r float64) (dev float32, ok bool) {
	var sum [2]float32
	c := b.p.Add(b.d.Scale(r))
	for k := -2; k <= 2; k++ {
		col, in := patchColour(frame, c.Add(b.e.Scale(0.3*float64(k)*b.hw)), b.h)
		if !in {
			return 0, false
		}
		sum[0], sum[1] = sum[0]+col[0], sum[1]+col[1]
	}
	return max(abs32(sum[0]/5-b.col[0]), abs32(sum[1]/5-b.col[1])) / b.tol, true
}

// markFinger marks in s.occ (over fr, where fm > 0) the cover breaking the lips over the
// places cols[0] to cols[1]−1 and its band beyond them, as far as the band looks like its
// part over the lips: at the angle along which it does most.
func (s *Swapper) markFinger(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle, cols [2]int) {
	t0, t1 := float64(cols[0])/fingerCols, float64(cols[1])/fingerCols
	u0, d0, u1, d1 := lipAt(target, t0, false), lipAt(target, t0, true), lipAt(target, t1, false), lipAt(target, t1, true)
	b := fingerBand{h: int(0.006 * size), tol: fingerTol}
	b.p = u0.Add(d0).Add(u1).Add(d1).Scale(0.25)
	a := target[54].Sub(target[48])
	a = a.Scale(1 / math.Hypot(a.X, a.Y))
	n := geom.Pt{X: -a.Y, Y: a.X}
	width := u1.Add(d1).Sub(u0.Add(d0)).Scale(0.5)
	height := d0.Add(d1).Sub(u0.Add(u1)).Scale(0.5)
	b.hv = (0.5 + fingerReach) * math.Hypot(height.X, height.Y)
	// The band's colour over the lips, from the samples between the places' edges.
	var sum [2]float32
	var cnt float32
	for k := range fingerSamples {
		f := -fingerReach + (1+2*fingerReach)*float64(k)/(fingerSamples-1)
		for _, q := range []float64{0.25, 0.5, 0.75} {
			u := u0.Add(u1.Sub(u0).Scale(q))
			col, ok := patchColour(frame, u.Add(d0.Add(d1.Sub(d0).Scale(q)).Sub(u).Scale(f)), b.h)
			if ok {
				sum[0], sum[1], cnt = sum[0]+col[0], sum[1]+col[1], cnt+1
			}
		}
	}
	if cnt == 0 {
		return
	}
	b.col = [2]float32{sum[0] / cnt, sum[1] / cnt}
	step := max(1, 0.01*size)
	best, bestScore := 0.0, float32(math.Inf(1))
	for deg := -fingerAngle; deg <= fingerAngle; deg += fingerAngleStep {
		sn, cs := math.Sincos(float64(deg) * math.Pi / 180)
		b.d, b.e = n.Scale(cs).Add(a.Scale(sn)), a.Scale(cs).Sub(n.Scale(sn))
		b.hw = 0.5 * math.Abs(width.X*b.e.X+width.Y*b.e.Y)
		var score float32
		for k := 1; k <= 6; k++ {
			for _, r := range []float64{-b.hv - float64(k)*step, b.hv + float64(k)*step} {
				if dev, ok := b.section(frame, r); ok {
					score += min(dev, 3)
				} else {
					score += 3
				}
			}
		}
		if score < bestScore {
			best, bestScore = float64(deg), score
		}
	}
	sn, cs := math.Sincos(best * math.Pi / 180)
	b.d, b.e = n.Scale(cs).Add(a.Scale(sn)), a.Scale(cs).Sub(n.Scale(sn))
	b.hw = 0.5 * math.Abs(width.X*b.e.X+width.Y*b.e.Y)
	up := -s.followBand(frame, fm, &b, -1, fingerUp*size, step)
	down := s.followBand(frame, fm, &b, 1, fingerDown*size, step)
	s.clip.Reset(fr)
	ends := [2]geom.Pt{b.p.Add(b.d.Scale(up)), b.p.Add(b.d.Scale(down))}
	side := b.e.Scale(b.hw)
	raster.FillConvex(&s.clip, []geom.Pt{ends[0].Sub(side), ends[0].Add(side), ends[1].Add(side), ends[1].Sub(side)}, 1)
	w := fr.Dx()
	for i, v := range s.clip.Pix {
		x, y := i%w+fr.Min.X, i/w+fr.Min.Y
		if v > 0 && fm.Pix[(y-fm.Rect.Min.Y)*fm.Stride+x-fm.Rect.Min.X] > 0 {
			s.occ.Pix[i] = 1
		}
	}
}

// followBand is how far (≥ b.hv) along sign·b.d, up to b.hv+limit, the band's sections
// look like its part over the lips on the face (fm > ½): it ends at the second section in
// a row that does not.
func (s *Swapper) followBand(frame *raster.Image, fm *raster.Mask, b *fingerBand, sign, limit, step float64) float64 {
	end, miss := b.hv, 0
	for r := b.hv + step; r <= b.hv+limit; r += step {
		c := b.p.Add(b.d.Scale(sign * r))
		x, y := int(c.X), int(c.Y)
		if !(image.Point{x, y}).In(fm.Rect) || !(fm.Pix[(y-fm.Rect.Min.Y)*fm.Stride+x-fm.Rect.Min.X] > 0.5) {
			break
		}
		dev, ok := b.section(frame, sign*r)
		if !ok || dev > 1 {
			if miss++; miss == 2 {
				break
			}
			continue
		}
		end, miss = r, 0
	}
	return end
}

// mouthRods adds to s.occ (over fr, where fm > 0) the rods held at the mouth's corners: a
// band that leaves a corner outwards or downwards (see rodFrom).
func (s *Swapper) mouthRods(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle) {
	a := target[54].Sub(target[48])
	l := math.Hypot(a.X, a.Y)
	if l == 0 {
		return
	}
	a = a.Scale(1 / l)
	down := geom.Pt{X: -a.Y, Y: a.X}
	s.rodFrom(frame, fm, size, fr, target[48], a.Scale(-1), down)
	s.rodFrom(frame, fm, size, fr, target[54], a, down)
}

// rodSection is a band's cross-section: its edges (pixels across the ray from it, left and
// right) and its colour (luma, redness) between them.
type rodSection struct {
	l, r int
	col  [2]float32
}

// rodFrom marks in s.occ the longest band (see rodCross) that starts near the corner p and
// runs along a ray turned from out by up to rodUp towards the eyes or rodDown towards the
// chin (down), if it runs at least rodLength.
func (s *Swapper) rodFrom(frame *raster.Image, fm *raster.Mask, size float64, fr image.Rectangle, p, out, down geom.Pt) {
	step := max(1, rodStep*size)
	half := int(math.Round(rodHalf * size))
	along := max(1, int(math.Round(rodAlong*size)))
	var best struct {
		len, end    float64
		d           geom.Pt
		first, last rodSection
	}
	for deg := -rodUp; deg <= rodDown; deg += rodAngleStep {
		sn, cs := math.Sincos(float64(deg) * math.Pi / 180)
		d := out.Scale(cs).Add(down.Scale(sn))
		reach := s.rodOffsets(d, along, half)
		start, end, miss := -1.0, 0.0, 0
		var prev, first rodSection
		for r := step; r <= rodReach*size; r += step {
			sec, ok := s.rodCross(frame, p.Add(d.Scale(r)), size, along, half, reach, prev, start >= 0)
			switch {
			case ok:
				if start < 0 {
					start, first = r, sec
				}
				end, miss, prev = r, 0, sec
				continue
			case start < 0 && r > rodStart*size: // no band near the corner
			case start < 0:
				continue
			default: // the band ends at its second break in a row
				if miss++; miss < 2 {
					continue
				}
			}
			break
		}
		if start < 0 || end-start <= best.len {
			continue
		}
		best.len, best.end, best.d, best.first, best.last = end-start, end, d, first, prev
	}
	if best.len < rodLength*size {
		return
	}
	e := geom.Pt{X: -best.d.Y, Y: best.d.X}
	a, b := p.Sub(best.d.Scale(rodInside*size)), p.Add(best.d.Scale(best.end))
	s.clip.Reset(fr)
	raster.FillConvex(&s.clip, []geom.Pt{a.Add(e.Scale(float64(best.first.l))), a.Add(e.Scale(float64(best.first.r))),
		b.Add(e.Scale(float64(best.last.r))), b.Add(e.Scale(float64(best.last.l)))}, 1)
	w := fr.Dx()
	for i, v := range s.clip.Pix {
		x, y := i%w+fr.Min.X, i/w+fr.Min.Y
		if v > 0 && fm.Pix[(y-fm.Rect.Min.Y)*fm.Stride+x-fm.Rect.Min.X] > 0 {
			s.occ.Pix[i] = 1
		}
	}
}

// rodOffsets puts in s.rodOffs the offsets of rodCross's samples from a point of a ray
// along d: for each of the 2·half+1 pixels across it, 2·along+1 along it. It returns how far
// (whole pixels) they reach each way.
func (s *Swapper) rodOffsets(d geom.Pt, along, half int) int {
	s.rodOffs = slices.Grow(s.rodOffs[:0], (2*half+1)*(2*along+1))[:0]
	reach := 0.0
	for j := -half; j <= half; j++ {
		for k := -along; k <= along; k++ {
			o := geom.Pt{X: -d.Y*float64(j) + d.X*float64(k), Y: d.X*float64(j) + d.Y*float64(k)}
			s.rodOffs = append(s.rodOffs, o)
			reach = max(reach, math.Abs(o.X), math.Abs(o.Y))
		}
	}
	return int(math.Ceil(reach))
}

// rodCross finds the band across the ray at c: the colour is sampled at each pixel from
// half before to half after c across the ray, each sample the mean of 2·along+1 pixels
// along it (s.rodOffs holds their offsets, reach pixels at most each way; see rodOffsets).
// The band lies between two sharp edges (each a step of the luma or the redness of at
// least rodContrast and rodGrainK times its grain over 2q pixels, rodSharp of it over the
// middle two), a rod's width apart; it is even between them (within rodEven of its mean)
// and unlike both sides. When follow, its edges lie near prev's and its colour is like
// prev's.
func (s *Swapper) rodCross(frame *raster.Image, c geom.Pt, size float64, along, half, reach int, prev rodSection, follow bool) (rodSection, bool) {
	n := 2*half + 1
	if c.X-float64(reach) < 0 || c.Y-float64(reach) < 0 || c.X+float64(reach)+1 >= float64(frame.W) || c.Y+float64(reach)+1 >= float64(frame.H) {
		return rodSection{}, false
	}
	m := 2*along + 1
	cx, cy := c.X+0.5, c.Y+0.5
	s.rodProf = slices.Grow(s.rodProf[:0], n)[:n]
	for j := range n {
		var sr, sg, sb int
		for _, o := range s.rodOffs[j*m : (j+1)*m] {
			px := frame.Pix[int(cy+o.Y)*frame.Stride+3*int(cx+o.X):][:3]
			sr, sg, sb = sr+int(px[0]), sg+int(px[1]), sb+int(px[2])
		}
		k := float32(m)
		r, g, b := float32(sr)/k, float32(sg)/k, float32(sb)/k
		s.rodProf[j] = [2]float32{luma(r, g, b), r - g}
	}
	pr := s.rodProf
	dist := func(a, b [2]float32) float32 { return max(abs32(a[0]-b[0]), abs32(a[1]-b[1])) }
	// The step at each pixel, where it is sharp (0 elsewhere), in each of the luma and the
	// redness apart: each has its own grain.
	// The grain (never negative) only raises the bar from rodContrast: it is taken only once
	// a step clears that, which on bare skin none does.
	var grain [2]float32
	grained := false
	q := max(2, int(math.Round(rodEdgeReach*size)))
	s.rodStep = slices.Grow(s.rodStep[:0], n)[:n]
	clear(s.rodStep)
	for j := q; j < n-q; j++ {
		for k := range 2 {
			wide, near := abs32(pr[j-q][k]-pr[j+q][k]), abs32(pr[j-1][k]-pr[j+1][k])
			if !(wide >= rodContrast && near >= rodSharp*wide) {
				continue
			}
			if !grained {
				grain, grained = s.rodGrain(pr), true
			}
			if wide >= rodContrast+rodGrainK*grain[k] {
				s.rodStep[j] = max(s.rodStep[j], wide)
			}
		}
	}
	wmin, wmax := max(2*q+1, int(rodWidthLeast*size)), int(rodWidthMost*size)
	l0, l1 := q, n-q-1
	if follow { // the band's edges move little from one section to the next
		l0, l1 = max(l0, prev.l+half-max(2, (prev.r-prev.l)/2)), min(l1, prev.l+half+max(2, (prev.r-prev.l)/2))
	}
	var best rodSection
	bestStep := float32(0)
	for l := l0; l <= l1; l++ {
		sl := s.rodStep[l]
		if sl <= bestStep {
			continue
		}
		for r := l + wmin; r <= min(n-q-1, l+wmax); r++ {
			sr := s.rodStep[r]
			if min(sl, sr) <= bestStep {
				continue
			}
			var in [2]float32
			for j := l + q; j <= r-q; j++ {
				in[0], in[1] = in[0]+pr[j][0], in[1]+pr[j][1]
			}
			k := float32(r - l - 2*q + 1)
			in[0], in[1] = in[0]/k, in[1]/k
			even := dist(pr[l-q], in) >= rodContrast && dist(pr[r+q], in) >= rodContrast
			for j := l + q; j <= r-q && even; j++ {
				even = dist(pr[j], in) <= rodEven
			}
			if !even || follow && (dist(in, prev.col) > rodEven || abs(l-half-prev.l)+abs(r-half-prev.r) > max(2, (r-l)/2)) {
				continue
			}
			best, bestStep = rodSection{l - half, r - half, in}, min(sl, sr)
		}
	}
	return best, bestStep > 0
}

// rodGrain is the grain of the profile pr in the luma and in the redness: the σ of the
// difference of two of its samples, from the median step between neighbours (a band's two
// edges are too few to move it) over each half of the profile, the less of the two (a
// noisy cover is no grainier skin beside it).
func (s *Swapper) rodGrain(pr [][2]float32) (g [2]float32) {
	h := len(pr) / 2
	for k := range 2 {
		g[k] = float32(math.Inf(1))
		for _, half := range [2][][2]float32{pr[:h+1], pr[h:]} {
			s.rodDiff = slices.Grow(s.rodDiff[:0], len(half))[:len(half)-1]
			for j := range s.rodDiff {
				s.rodDiff[j] = abs32(half[j+1][k] - half[j][k])
			}
			// By selection (see median): a zero's sign is lost once rodContrast is added.
			g[k] = min(g[k], median(s.rodDiff)/0.6745)
		}
	}
	return g
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
