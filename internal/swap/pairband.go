package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A band of the skin's own hues in front of the face (a pencil between the lips, a finger
// under the nose, a curl of hair over an eye onto the cheek) departs from the skin's colour
// too little for the colour rules, and is too wide for thinCovers' ridges. It is told, as a
// band of any hue is, by its shape: two long edges a steady width apart, both stepping the
// same way out of it (it is unlike both its sides, which are alike across it), and an even
// inside that keeps its colour along its line, while the face under it changes (the lips,
// the skin, a nostril's shadow, the cheek's shading). A face's own bands are short (a crease, a brow, a fold
// beside the mouth, an upper lip) or shaded along their length; the nose's ridge, long and
// even between its sides, is told by where it lies. A band that runs off the face (a straw,
// a spoon's handle) is held from beyond it: its part on the face may be shorter. Below the
// eyes a band as long as a third of the face (a strap, a cord, a pen) is no fold, wherever
// it lies.

const (
	// pairDirs is how many directions (over half a turn) a band's line is tried in.
	pairDirs = 12
	// pairLeast is the weaker edge's least step (levels, over the three channels) at a point
	// of the band where both its edges show; pairShare of the points along its found length
	// must be such, the others need one edge of at least half that.
	pairLeast = 14
	pairShare = 0.5
	// pairSteady (levels) and pairSteadyShare (of the level) are how far each channel of the
	// band's inside may drift along its line from the point it is followed from.
	pairSteady      = 4
	pairSteadyShare = 0.04
	// pairLong is the least length of a band in its widths, pairShortest in shares of the
	// face size.
	pairLong     = 3
	pairShortest = 0.25
	// pairShortestOff is pairShortest for a band that runs off the face from the mouth: held
	// from beyond it (a straw, a spoon's handle, a headset's boom), its length on the face is
	// what the face leaves in view. Below an eye such a short band may be the skin between
	// a lens's lower rim and the lid, blocked flat by a codec, running to the temple.
	pairShortestOff = 0.15
	// pairNoseAngle and pairNoseNear: a band within this angle of the nose's line and this
	// near it (share of the face size) is the nose's ridge.
	pairNoseAngle = 25 * math.Pi / 180
	pairNoseNear  = 0.1
	// pairLongest (share of the face size) is the length of a band below the eyes that is
	// no fold wherever it lies: the folds there (beside the nose and the mouth, under the
	// eyes, the jaw's shading) are shorter or bend with the face, while a strap, a cord or a
	// rod laid along the cheek keeps its width and its colour on across the cheek's shading.
	// Above the eyes a forehead's furrows run as long and as level.
	pairLongest = 0.3
	// pairFaceLeast is the smallest face (px) bands are looked for on: on a smaller one the
	// narrowest band tried (pairHalves) is under 1.3 px either side of its line.
	pairFaceLeast = 80
	// pairFaceFull is the smallest face (px) whose own bands at the mouth and the nose (the
	// upper lip, the nose's base, the shading beside a nostril's wing) a codec's blur leaves
	// short or uneven. On a smaller face they run level and even for a third of the face: a
	// band there within the upper lip's zone (see upperLip) and within pairLipAngle of the
	// mouth's line is taken for them. A cover across the mouth runs on past its corners or
	// crosses its line.
	pairFaceFull = 100
	pairLipAngle = 30 * math.Pi / 180
	// pairLipNear is how far (share of the face size) past the upper lip's zone a run's ends
	// may lie and still be the face's: the landmarks' error on a small face, and the
	// shading beside a nostril's wing, past the nose's base's landmarks.
	pairLipNear = 0.08
)

// pairHalves are the band half-widths tried, in shares of the face size: bands 3 to 10 %
// of the face wide.
var pairHalves = [...]float64{0.016, 0.022, 0.03, 0.04, 0.05}

// pairOffsets are the offsets (in a grid's row-major index) from a band's centre of its
// outsides (either side, one pixel past its edges) and of its inside near each edge.
type pairOffsets [4]int

// offsetsAcross is the pairOffsets of a band of half-width r across the unit normal n on a
// grid with rows of cw.
func offsetsAcross(n geom.Pt, r float64, cw int) pairOffsets {
	at := func(d float64) int { return int(math.Round(d*n.Y))*cw + int(math.Round(d*n.X)) }
	return pairOffsets{at(-r - 1), at(r + 1), at(-max(0, r-1)), at(max(0, r-1))}
}

// pairPix is what skinBands reads of a grid pixel, together: a run's step and a band's edge
// each read one pixel's, from one cache line.
type pairPix struct {
	// col is s.chan3's three values (smoothed), face the face mask.
	col  [3]float32
	face float32
	// pair and side are pairAt's (side under 0: not found in this pass), seen above 0 where
	// a run was followed through the pixel in this pass.
	pair, side, seen float32
	_                float32
}

// pairAt is the band response at grid pixel i of the smoothed s.chan3 (s.pairGrid) across the
// band of o: pair, the weaker of its two edges where they step opposite ways, and side, the
// stronger, each less the variation inside the band; both 0 where a side is off the face (a
// band along the face's outline: the hairline, a hat's brim) or side is under pairLeast/2.
// Grid pixel i must lie within pairMargin of the grid's edges.
func (s *Swapper) pairAt(i int, o *pairOffsets) (pair, side float32) {
	g := s.pairGrid
	p0, p1 := &g[i+o[0]], &g[i+o[1]]
	if p0.face <= 0.5 || p1.face <= 0.5 {
		return 0, 0
	}
	v, out0, out1 := &g[i].col, &p0.col, &p1.col
	d0, d1, d2 := v[0]-out0[0], v[1]-out0[1], v[2]-out0[2]
	f0, f1, f2 := out1[0]-v[0], out1[1]-v[1], out1[2]-v[2]
	e1 := d0 * d0
	e1 += d1 * d1
	e1 += d2 * d2
	e2, dot := f0*f0, d0*f0
	e2, dot = e2+f1*f1, dot+d1*f1
	e2, dot = e2+f2*f2, dot+d2*f2
	if max(e1, e2) < pairLeast*pairLeast/4 {
		return 0, 0
	}
	e1, e2 = float32(math.Sqrt(float64(e1))), float32(math.Sqrt(float64(e2)))
	inner := s.pairInner(i, o, v)
	side = max(e1, e2) - inner
	if dot > -0.5*e1*e2 {
		return 0, side
	}
	return min(e1, e2) - inner, side
}

// pairFrom is pairAt's pair alone, 0 as soon as an edge is under pairLeast or the two step
// the same way: runs are tried from every other pixel in every direction and width, and most
// tries end there, before the inside is read.
func (s *Swapper) pairFrom(i int, o *pairOffsets) float32 {
	g := s.pairGrid
	p0 := &g[i+o[0]]
	v, out0 := &g[i].col, &p0.col
	d0, d1, d2 := v[0]-out0[0], v[1]-out0[1], v[2]-out0[2]
	e1 := d0 * d0
	e1 += d1 * d1
	e1 += d2 * d2
	// Either test alone gives 0: the colours, read anyway, end most tries.
	p1 := &g[i+o[1]]
	if e1 < pairLeast*pairLeast || p0.face <= 0.5 || p1.face <= 0.5 {
		return 0
	}
	out1 := &p1.col
	f0, f1, f2 := out1[0]-v[0], out1[1]-v[1], out1[2]-v[2]
	e2, dot := f0*f0, d0*f0
	e2, dot = e2+f1*f1, dot+d1*f1
	e2, dot = e2+f2*f2, dot+d2*f2
	// Both edges are over pairLeast, so a dot of 0 or more fails the opposite-step test
	// below without the roots.
	if e2 < pairLeast*pairLeast || dot >= 0 {
		return 0
	}
	e1, e2 = float32(math.Sqrt(float64(e1))), float32(math.Sqrt(float64(e2)))
	if dot > -0.5*e1*e2 {
		return 0
	}
	return min(e1, e2) - s.pairInner(i, o, v)
}

// pairInner is how far the band's inside near either edge departs from its centre v (grid
// pixel i's colour), the most over the channels.
func (s *Swapper) pairInner(i int, o *pairOffsets, v *[3]float32) float32 {
	in0, in1 := &s.pairGrid[i+o[2]].col, &s.pairGrid[i+o[3]].col
	// The magnitudes have no sign bit, so their bits order as they do (a NaN's above all):
	// the most is an integer max, without a float max's branches.
	var inner uint32
	for c := range 3 {
		inner = max(inner, math.Float32bits(absBits(in0[c]-v[c])), math.Float32bits(absBits(in1[c]-v[c])))
	}
	return math.Float32frombits(inner)
}

// skinBands marks in s.pairBand (over the grid of thinCovers, whose smoothed s.chan3 it reads)
// the bands of pairAt that run on for pairLong of their widths, and adds them to s.occ.
func (s *Swapper) skinBands(target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle) {
	f := max(1, int(math.Round(size/occRidgeCoarse)))
	w, h := fr.Dx(), fr.Dy()
	cr := s.chan3[0].Rect
	cw, ch := cr.Dx(), cr.Dy()
	csize := size / float64(f)
	s.pairBand.Reset(cr)
	if size < pairFaceLeast {
		return
	}
	m := pairMargin(csize)
	g := s.pairGridOf(fm, fr, f, m)
	n0 := target[27].Sub(geom.Pt{X: float64(fr.Min.X), Y: float64(fr.Min.Y)}).Scale(1 / float64(f))
	na := target[30].Sub(target[27])
	na = na.Scale(1 / math.Max(1e-9, math.Hypot(na.X, na.Y)))
	// The nose's line ends at the upper lip: below it a band along that line (a straw from
	// the lips down over the chin) is not the nose's ridge.
	noseEnd := dot(target[51].Sub(target[27]), na) / float64(f)
	s.featureCentres(target, fr)
	lip := upperLipOf(target, fr, float64(f), pairLipNear*csize)
	for d := range pairDirs {
		th := math.Pi * float64(d) / pairDirs
		a := geom.Pt{X: math.Cos(th), Y: math.Sin(th)}
		alongNose := math.Abs(dot(a, na)) > math.Cos(pairNoseAngle)
		// A run leaves the grid within cw+ch steps along any direction.
		s.pairStepsAlong(a, cw+ch)
		for _, hr := range pairHalves {
			r := hr * csize
			o := offsetsAcross(geom.Pt{X: -a.Y, Y: a.X}, r, cw)
			s.undoPass()
			// Most tries end at pairFrom, which reads only the colours and the mask: the
			// starts' pairs are taken first, in a loop of their own, before any run finds a
			// side. A start under pairLeast there is never followed: a run that finds its
			// side later in the pass either takes it in (seen) or finds a side, and so a
			// pair, under pairLeast/2.
			s.pairCand = s.pairCand[:0]
			for _, i := range s.pairStart {
				p := &g[i]
				if p.pair = s.pairFrom(int(i), &o); p.pair >= pairLeast {
					s.pairCand = append(s.pairCand, i)
				}
			}
			for _, i := range s.pairCand {
				// A side found since by a run in this pass brought its pair (pairAt's).
				if p := &g[i]; p.seen > 0 || p.pair < pairLeast {
					continue
				}
				if alongNose && onNoseRidge(int(i), cw, n0, na, pairNoseNear*csize, noseEnd) {
					continue
				}
				// The points on the run would find about the same run: each is followed once.
				run, off := s.pairRun(cw, ch, int(i), a, &o, m, r+2)
				s.pairTouched = append(s.pairTouched, i)
				near := r + laneAim*csize
				least := pairShortest
				if off && s.runCrosses(cw, a, near, float64(f), s.centres[:1]) {
					least = pairShortestOff
				}
				ok := run >= max(pairLong*2*r, least*csize) &&
					(run >= pairLongest*csize && s.runBelowEyes(cw, float64(f)) || s.runCrosses(cw, a, near, float64(f), s.centres[:])) &&
					!(size < pairFaceFull && lip.holds(s.runEnds(cw, a)))
				for _, j := range s.pairIdx {
					g[j].seen = 1
					if ok && g[j].pair >= pairLeast {
						s.markPair(cw, ch, int(j)%cw, int(j)/cw, a, max(1, r-1))
					}
				}
			}
		}
	}
	// Kept past dropSmall as thinCovers' bands are: a band across a feature is long but may
	// cover less of the face than a blemish.
	for y := range h {
		prow := s.pairBand.Pix[min(ch-1, y/f)*cw:][:cw]
		orow, brow := s.occ.Pix[y*w:][:w], s.bands.Pix[y*w:][:w]
		for x := range orow {
			if prow[min(cw-1, x/f)] > 0 && fm.At(x+fr.Min.X, y+fr.Min.Y) > 0 {
				orow[x], brow[x] = 1, 1
			}
		}
	}
}

// pairGridOf readies s.pairGrid (over the grid of s.chan3, f fr pixels a grid pixel, no
// score found) and s.pairStart, the grid pixels on the face at least m from its edges that
// runs are followed from; it returns the grid.
func (s *Swapper) pairGridOf(fm *raster.Mask, fr image.Rectangle, f, m int) []pairPix {
	w, h := fr.Dx(), fr.Dy()
	cw, ch := s.chan3[0].Rect.Dx(), s.chan3[0].Rect.Dy()
	s.pairStart, s.pairTouched = s.pairStart[:0], s.pairTouched[:0]
	if cap(s.pairGrid) < cw*ch {
		s.pairGrid = make([]pairPix, cw*ch)
	}
	g := s.pairGrid[:cw*ch]
	for y := range ch {
		for x := range cw {
			// Off the face no score is ever found: a previous face's there must not count as
			// a band's.
			p := &g[y*cw+x]
			p.face = fm.At(fr.Min.X+min(w-1, x*f+f/2), fr.Min.Y+min(h-1, y*f+f/2))
			p.pair, p.side, p.seen = -1, -1, 0
			// A band's middle is over a pixel wide: it is followed from every other pixel.
			if p.face > 0.5 && x >= m && y >= m && x < cw-m && y < ch-m && (x+y)%2 == 0 {
				s.pairStart = append(s.pairStart, int32(y*cw+x))
			}
		}
	}
	for c := range 3 {
		for i, v := range s.chan3[c].Pix[:cw*ch] {
			g[i].col[c] = v
		}
	}
	return g
}

// onNoseRidge reports whether grid pixel i (on a grid of rows of cw) lies within near of the
// nose's line from n0 along na, before its end.
func onNoseRidge(i, cw int, n0, na geom.Pt, near, end float64) bool {
	q := (geom.Pt{X: float64(i % cw), Y: float64(i / cw)}).Sub(n0)
	return math.Abs(q.X*na.Y-q.Y*na.X) < near && dot(q, na) < end
}

// undoPass readies s.pairGrid's scores and seen for a pass in another direction or width. A
// pixel's pair is read only once its side is found in the same pass (or, at a start, just
// after pairFrom sets it): only the sides found and the runs followed (s.pairTouched) are
// undone.
func (s *Swapper) undoPass() {
	for _, i := range s.pairTouched {
		s.pairGrid[i].side, s.pairGrid[i].seen = -1, 0
	}
	s.pairTouched = s.pairTouched[:0]
}

// pairRun is the length (grid px) of the band through grid pixel i along a: followed each way
// while its inside keeps i's colour and one of its edges shows (over a gap of a pixel), 0
// where fewer than pairShare of the points show both; s.pairIdx holds the run's points. off
// reports whether the face ends within reach (grid px) past an end of the run. Its steps are
// s.pairSteps' (along a) where they are exact.
func (s *Swapper) pairRun(cw, ch, i int, a geom.Pt, o *pairOffsets, m int, reach float64) (run float64, off bool) {
	x, y := i%cw, i/cw
	run, pairs := 1.0, 1.0
	s.pairIdx = append(s.pairIdx[:0], int32(i))
	onFace := func(t float64) bool {
		px, py := int(math.Round(float64(x)+t*a.X)), int(math.Round(float64(y)+t*a.Y))
		return px >= m && py >= m && px < cw-m && py < ch-m && s.pairGrid[py*cw+px].face > 0.5
	}
	// How far each channel may drift from i's: a point is steady where none drifts further.
	g := s.pairGrid
	vi := &g[i].col
	var far [3]float32
	for c := range 3 {
		far[c] = pairSteady + pairSteadyShare*vi[c]
	}
	n := len(s.pairSteps) / 2
	for k, sg := range [2]float64{-1, 1} {
		steps := s.pairSteps[k*n:][:n]
		miss, last := 0, 0.0
		for t := 1.0; miss < 2; t++ {
			var px, py int
			if st := int(t) - 1; st < n && steps[st].exact {
				px, py = x+int(steps[st].dx), y+int(steps[st].dy)
			} else {
				px, py = int(math.Round(float64(x)+sg*t*a.X)), int(math.Round(float64(y)+sg*t*a.Y))
			}
			if px < 0 || py < 0 || px >= cw || py >= ch {
				break
			}
			j := py*cw + px
			q := &g[j]
			vj := &q.col
			// Steady where each channel lies within far: their most (NaN where one is) within
			// 0, one test and no branch a channel.
			steady := max(absBits(vj[0]-vi[0])-far[0], absBits(vj[1]-vi[1])-far[1], absBits(vj[2]-vi[2])-far[2]) <= 0
			if steady && q.side < 0 && q.face > 0.5 && px >= m && py >= m && px < cw-m && py < ch-m {
				q.pair, q.side = s.pairAt(j, o)
				s.pairTouched = append(s.pairTouched, int32(j))
			}
			if !steady || q.side < pairLeast/2 {
				miss++
				continue
			}
			run, miss, last = run+1+float64(miss), 0, t
			s.pairIdx = append(s.pairIdx, int32(j))
			if q.pair >= pairLeast {
				pairs++
			}
		}
		off = off || !onFace(sg*(last+reach))
	}
	if pairs < pairShare*run {
		return 0, false
	}
	return run, off
}

// pairStep is a step of t grid pixels along a band's line from a grid pixel: the whole
// pixels it rounds to. It is exact where neither coordinate's share of a pixel lies within
// pairHalfNear of ½: there the pixel's coordinate plus the step rounds as the step does.
type pairStep struct {
	dx, dy int32
	exact  bool
}

// pairHalfNear is how near ½ a step's share of a pixel may lie for the step's own rounding
// to stand for its sum's with a grid pixel's coordinate, rounded (1e-13 off at most).
const pairHalfNear = 1e-6

// pairStepsAlong puts in s.pairSteps the steps along a for t from 1 to n: backwards (−a)
// in the first n, forwards in the next n.
func (s *Swapper) pairStepsAlong(a geom.Pt, n int) {
	s.pairSteps = slices.Grow(s.pairSteps[:0], 2*n)[:2*n]
	clearOfHalf := func(v float64) bool { return math.Abs(math.Abs(v-math.Trunc(v))-0.5) > pairHalfNear }
	for k, sg := range [2]float64{-1, 1} {
		for t := 1; t <= n; t++ {
			u, v := sg*float64(t)*a.X, sg*float64(t)*a.Y
			s.pairSteps[k*n+t-1] = pairStep{int32(math.Round(u)), int32(math.Round(v)), clearOfHalf(u) && clearOfHalf(v)}
		}
	}
}

// runEnds are the ends p0, p1 of the run in s.pairIdx along a, on the grid (of rows of cw),
// and a.
func (s *Swapper) runEnds(cw int, a geom.Pt) (p0, p1, along geom.Pt) {
	i0 := int(s.pairIdx[0])
	c := geom.Pt{X: float64(i0 % cw), Y: float64(i0 / cw)}
	lo, hi := 0.0, 0.0
	for _, j := range s.pairIdx {
		t := (float64(int(j)%cw)-c.X)*a.X + (float64(int(j)/cw)-c.Y)*a.Y
		lo, hi = min(lo, t), max(hi, t)
	}
	return c.Add(a.Scale(lo)), c.Add(a.Scale(hi)), a
}

// upperLip is the zone (on a grid) of a face's own level bands at the mouth and the nose:
// from the nose's base down to the lips' parting, as wide as the mouth, in the mouth's frame
// (o at its left corner, u along its line to the right corner, 0..u1, v across it), grown by
// near.
type upperLip struct {
	o, u, v          geom.Pt
	u1, v0, v1, near float64
}

// upperLipOf is target's upperLip on fr's grid of f fr pixels a grid pixel, grown by near
// (grid px).
func upperLipOf(target *face.Landmarks68, fr image.Rectangle, f, near float64) upperLip {
	at := func(k int) geom.Pt {
		return geom.Pt{X: (target[k].X - float64(fr.Min.X)) / f, Y: (target[k].Y - float64(fr.Min.Y)) / f}
	}
	z := upperLip{o: at(48), near: near}
	d := at(54).Sub(z.o)
	n := math.Max(1e-9, math.Hypot(d.X, d.Y))
	z.u, z.u1 = d.Scale(1/n), n
	z.v = geom.Pt{X: -z.u.Y, Y: z.u.X}
	z.v0, z.v1 = math.Inf(1), math.Inf(-1)
	for _, k := range [...]int{31, 32, 33, 34, 35, 48, 54, 60, 61, 62, 63, 64} {
		t := dot(at(k).Sub(z.o), z.v)
		z.v0, z.v1 = min(z.v0, t), max(z.v1, t)
	}
	return z
}

// holds reports whether a run from p0 to p1 along a lies within the zone (ends within near
// of it) and along the mouth's line within pairLipAngle.
func (z *upperLip) holds(p0, p1, a geom.Pt) bool {
	in := func(p geom.Pt) bool {
		q := p.Sub(z.o)
		u, v := dot(q, z.u), dot(q, z.v)
		return u >= -z.near && u <= z.u1+z.near && v >= z.v0-z.near && v <= z.v1+z.near
	}
	return math.Abs(dot(a, z.u)) >= math.Cos(pairLipAngle) && in(p0) && in(p1)
}

// runCrosses reports whether the run in s.pairIdx (along a) crosses one of the features whose
// centres are cs (of s.centres: the mouth, the eyes, the nostrils; on fr's grid, f fr pixels
// a grid pixel): passes within near of one's centre, between its ends or within near past
// one. A face's own long bands lie beside its features (the forehead between a hat's brim or
// a fringe and the brows, a fold beside the mouth).
func (s *Swapper) runCrosses(cw int, a geom.Pt, near, f float64, cs []geom.Pt) bool {
	i0 := int(s.pairIdx[0])
	x0, y0 := float64(i0%cw), float64(i0/cw)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, j := range s.pairIdx {
		t := (float64(int(j)%cw)-x0)*a.X + (float64(int(j)/cw)-y0)*a.Y
		lo, hi = min(lo, t), max(hi, t)
	}
	for _, c := range cs {
		dx, dy := c.X/f-x0, c.Y/f-y0
		if t := dx*a.X + dy*a.Y; t >= lo-near && t <= hi+near && math.Abs(dx*a.Y-dy*a.X) <= near {
			return true
		}
	}
	return false
}

// runBelowEyes reports whether the middle of the run in s.pairIdx lies on the mouth's side of
// the line through the eyes' centres (of s.centres, on fr's grid: f fr pixels a grid pixel).
func (s *Swapper) runBelowEyes(cw int, f float64) bool {
	var mx, my float64
	for _, j := range s.pairIdx {
		mx, my = mx+float64(int(j)%cw), my+float64(int(j)/cw)
	}
	n := float64(len(s.pairIdx))
	e0, e1 := s.centres[1].Scale(1/f), s.centres[2].Scale(1/f)
	side := func(p geom.Pt) float64 { q, e := p.Sub(e0), e1.Sub(e0); return e.X*q.Y - e.Y*q.X }
	return side(geom.Pt{X: mx / n, Y: my / n})*side(s.centres[0].Scale(1/f)) > 0
}

// markPair marks in s.pairBand the band's cross-section at grid pixel (x, y): r either side of
// its line a, a pixel along it.
func (s *Swapper) markPair(cw, ch, x, y int, a geom.Pt, r float64) {
	ir := int(math.Ceil(r))
	for v := -ir; v <= ir; v++ {
		for u := -ir; u <= ir; u++ {
			px, py := x+u, y+v
			if px >= 0 && py >= 0 && px < cw && py < ch && math.Abs(-float64(u)*a.Y+float64(v)*a.X) <= r && math.Abs(float64(u)*a.X+float64(v)*a.Y) <= 1 {
				s.pairBand.Pix[py*cw+px] = 1
			}
		}
	}
}

// pairMargin is how far (grid px) from the grid's edges a band's centre must lie for its
// samples to lie on the grid.
func pairMargin(csize float64) int { return int(math.Ceil(pairHalves[len(pairHalves)-1]*csize)) + 2 }
