package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Thin covers (glasses frames, strands of hair, a cable or a microphone's stem) are told by
// their shape, whatever their colour: a long band of even width with an edge on each side,
// a ridge of the colour at the band's own scale. The face's own ridges (brows, lids, lips,
// creases) are short, lie along a feature the warped source has there too, or are faint
// against the skin's own ridges; a band that is none of these, and reaches onto the face, is
// in front of it. A face's own lines also end inside it or follow its outline, and lie along
// its features; a strand of hair or a stem runs across the outline, across a brow or an eye
// and across the source's features, so a band that crosses the outline counts from a shorter
// length, and its run across a brow, an eye or a feature of the source counts too.

const (
	// occRidgeScale is the σ (share of the face size) the colour is smoothed by before its
	// second derivatives are taken: about a frame's half-thickness over √3, where a band of
	// that width answers most.
	occRidgeScale = 0.012
	// A ridge counts from half of occRidgeK times the skin's own median curvature, and of
	// occRidgeFloor in any case (levels per pixel², times σ²): a frame's centre line fades in
	// places, so its strength only rules out the skin's pores and fine wrinkles, and its
	// length decides.
	occRidgeK     = 2.5
	occRidgeFloor = 1.5
	// occRidgeGrain is the skin's median fine detail (grey levels, see lumaDetail) past which
	// the skin counts as grainy or wrinkled (an old face, a noisy frame): its creases are long
	// and strong, so a ridge must reach occRidgeKGrainy times the skin's and span
	// occRidgeLengthGrainy of the face; a faint frame there is not told from them. A codec
	// smooths fine detail by a tenth to a third, so the mark sits low between a young face's
	// (2.3 at most) and an old one's (3.5–7 uncompressed), where a lossy old face mostly stays
	// grainy; and the length sits between an old face's own glasses and creases (0.34–0.38 of
	// the face on the lossy clips measured) and a frame drawn over it (0.44 and more).
	occRidgeGrain        = 2.6
	occRidgeKGrainy      = 5
	occRidgeLengthGrainy = 0.4
	// occRidgeElong is how much stronger across the band than along it the curvature must
	// be; occRidgeStep how much stronger the curvature (times σ) than the slope, so the flank
	// of a step edge (one side of a bar, a hand) is no ridge.
	occRidgeElong = 2
	occRidgeStep  = 2
	// occRidgeLength is the least extent (share of the face size) of a connected ridge: a
	// brow, a lid or a crease is shorter than a frame, a strand or a stem.
	occRidgeLength = 0.25
	// occRidgeBand is the half-width (share of the face size) of the band along each brow and
	// the jaw where a ridge is the face's own.
	occRidgeBand = 0.04
	// occRidgeNose is how much the nose's hull below the eyes is widened across, about its
	// centre line, where a ridge is the face's own: the nose's sides and their shadows.
	occRidgeNose = 2.0
	// occRidgeAcross is the least |cos| of the angle between a ridge's normal and a line of
	// the face's (a brow's chord, an eye's corners, the warped source's feature) for the
	// ridge to cross the line (at more than 45° to it) rather than lie along it.
	occRidgeAcross = 0.7
	// occRidgeCoarse is about the face size (px) the test works at: a larger face is seen on
	// a grid of every f-th pixel, f = size/occRidgeCoarse rounded (67–133 px across).
	occRidgeCoarse = 100
	// occRidgeWiden is the half-width (share of the face size) a found ridge's centre line
	// is grown by to cover its band.
	occRidgeWiden = 0.015
	// occRidgeOnFace is the face mask a band must reach somewhere to count: one wholly off
	// the face (hair above the forehead, the background in the face's box) covers none of
	// it, yet its hole, grown and feathered, would eat into the face's edge, and in a lossy
	// clip such a band comes and goes from keyframe to keyframe.
	occRidgeOnFace = 0.5
	// occRidgeCross is the least extent (share of the face size) of a ridge that crosses the
	// face's outline, from the face (see occRidgeOnFace) to off it (the face mask under
	// occRidgeOffFace): the face's own lines end inside it (a brow, a crease, a lid), or
	// follow its outline (the jaw, the hairline), so a line that runs across the outline
	// is in front of the face, however short its part on a wrinkled face.
	occRidgeCross   = 0.2
	occRidgeOffFace = 0.1
	// occRidgeGap is how far (share of the face size) a band's line is followed past a break
	// to meet the rest of it, where a brow, an eye or the outline it crosses hides a stretch
	// of it (see bridgeGaps).
	occRidgeGap = 0.05
)

// thinCovers adds to s.occ (over fr, 1 on occluders; after s.detail, whose s.detS holds the
// warped source's detail, s.detMed the medians) the long thin bands in front of the face (see above). A large face
// is seen on a grid of every f-th pixel (each the mean of its f×f block), where a frame is
// still a few pixels wide, at a fraction of the cost.
func (s *Swapper) thinCovers(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle, m skinModel) {
	k, long := float32(occRidgeK), occRidgeLength
	if s.detMed[0] > occRidgeGrain {
		k, long = occRidgeKGrainy, occRidgeLengthGrainy
	}
	f := max(1, int(math.Round(size/occRidgeCoarse)))
	w, h := fr.Dx(), fr.Dy()
	cw, ch := (w+f-1)/f, (h+f-1)/f
	cr := image.Rect(0, 0, cw, ch)
	csize := size / float64(f)
	sigma := math.Max(0.8, occRidgeScale*csize)
	s.coarseChannels(frame, fr, f, cr)
	for c := range 3 {
		s.chanBlur.Apply(&s.chan3[c], sigma)
	}
	s.sourceLuma(fr, f, cr, sigma)
	level := s.ridgeLevel(fm, fr, f, cr, sigma)
	least := max(occRidgeFloor, k*level) / 2
	ms := s.detMed[1]
	s.outlineBands(target, size, fr)
	s.dev = slices.Grow(s.dev[:0], cw*ch)[:cw*ch] // the face mask at each grid pixel
	for y := range ch {
		fy := min(h-1, y*f+f/2)
		frow := fm.Pix[(fy+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		for x := range cw {
			s.dev[y*cw+x] = frow[min(w-1, x*f+f/2)]
		}
	}
	s.markRidges(fr, f, cr, sigma, least, ms, bandValue(target[16].Sub(target[0])))
	s.hueBands(target, fr, f, cr, m)
	s.bridgeGaps(fr, f, cr, occRidgeGap*csize)
	s.clip.Dilate(1, &s.zone) // a ridge's centre line breaks where it bends
	s.longOnly(&s.clip, cr, long*csize, min(long, occRidgeCross)*csize, 0)
	s.longOnly(&s.hueBand, cr, long*csize, min(long, occRidgeCross)*csize, occHueBandWide*csize)
	s.deepOnly(target, fr, f, cr, occHueBandDeep*size)
	for i, v := range s.hueBand.Pix {
		s.hueBand.Pix[i] = min(v, 1)
	}
	widen := int(math.Round(occRidgeWiden * csize))
	s.clip.Dilate(widen, &s.zone)
	s.hueBand.Dilate(widen, &s.zone)
	s.bands.Reset(fr)
	for y := range h {
		crow := s.clip.Pix[min(ch-1, y/f)*cw:][:cw]
		hrow := s.hueBand.Pix[min(ch-1, y/f)*cw:][:cw]
		orow := s.occ.Pix[y*w:][:w]
		brow := s.bands.Pix[y*w:][:w]
		for x := range orow {
			switch {
			case crow[x/f] > 0.5:
				orow[x], brow[x] = 1, 1
			case hrow[x/f] > 0.5: // kept as found, the rules between leave it be
				brow[x] = 1
			}
		}
	}
}

// bridgeGaps joins in s.clip (0/1 over cr, the grid of every f-th pixel of fr) the pieces of
// a band broken by up to 2·reach pixels: from each piece's pixels the band's line (across the
// smoothed s.chan3's strongest ridge there) is followed reach pixels each way, and a gap is
// filled where the lines of two pieces meet, so two pieces of one curve join and a piece's
// loose end does not grow (only its own line reaches past it; telling the two ways apart by
// the ridge's direction fails on a near-vertical line, whose direction flips sign with a
// tenth of a pixel's wobble). Gaps are filled only in a brow's or an eye's band or the
// outline's (see outlineBands), and only by a line crossing the band's own (see
// hidesAcross): there the face's own lines hide a stretch of a band crossing them, a strand
// over a brow and an eye, a rim over an eye's corner. On the skin, and along a brow, a lid or
// the jaw, the face's own lines come in pieces that would join into a long one (a fold beside
// the mouth, the nose's sides, the cheek's edge). A line is followed from the pieces off the
// eyes only: on an eye its own ridges would join a rim passing its corner.
func (s *Swapper) bridgeGaps(fr image.Rectangle, f int, cr image.Rectangle, reach float64) {
	cw, ch := cr.Dx(), cr.Dy()
	n := int(math.Round(reach))
	if n < 1 {
		return
	}
	s.gapPieces(cw, ch)
	s.gapFrom = slices.Grow(s.gapFrom[:0], cw*ch)[:cw*ch]
	clear(s.gapFrom)
	w, h := fr.Dx(), fr.Dy()
	for y := 1; y < ch-1; y++ {
		for x := 1; x < cw-1; x++ {
			i := y*cw + x
			if s.clip.Pix[i] < 0.5 || s.excl.Pix[min(h-1, y*f+f/2)*w+min(w-1, x*f+f/2)] >= 1 {
				continue // an eye's, the mouth's or a nostril's own lines (a lid, the iris's edge) join none
			}
			var best, ex, ey float32
			for c := range 3 {
				if l, vx, vy := hessAcross(s.chan3[c].Pix, i, cw); abs32(l) > best {
					best, ex, ey = abs32(l), vx, vy
				}
			}
			el := float32(math.Hypot(float64(ex), float64(ey)))
			if el == 0 {
				continue
			}
			p := s.gapPiece[i]
			tx, ty := -ey/el, ex/el
			for k := -n; k <= n; k++ {
				u, v := x+int(math.Round(float64(float32(k)*tx))), y+int(math.Round(float64(float32(k)*ty)))
				if k == 0 || u < 0 || v < 0 || u >= cw || v >= ch || !hidesAcross(s.zone.Pix[min(h-1, v*f+f/2)*w+min(w-1, u*f+f/2)], tx, ty) {
					continue
				}
				switch j := v*cw + u; s.gapFrom[j] {
				case 0:
					s.gapFrom[j] = p
				case p, -1:
				default:
					s.gapFrom[j] = -1
				}
			}
		}
	}
	for i, g := range s.gapFrom {
		if g == -1 {
			s.clip.Pix[i] = 1
		}
	}
}

// gapPieces labels in s.gapPiece (from 1; 0 off the bands) the 8-connected pieces of s.clip
// (cw×ch): a ridge's centre line steps diagonally, so a 4-connected label would cut one line
// in many.
func (s *Swapper) gapPieces(cw, ch int) {
	s.gapPiece = slices.Grow(s.gapPiece[:0], cw*ch)[:cw*ch]
	clear(s.gapPiece)
	n := int32(0)
	for start, v := range s.clip.Pix {
		if v < 0.5 || s.gapPiece[start] != 0 {
			continue
		}
		n++
		s.gapPiece[start] = n
		s.gapStack = append(s.gapStack[:0], int32(start))
		for len(s.gapStack) > 0 {
			i := int(s.gapStack[len(s.gapStack)-1])
			s.gapStack = s.gapStack[:len(s.gapStack)-1]
			x, y := i%cw, i/cw
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					u, v := x+dx, y+dy
					if u < 0 || v < 0 || u >= cw || v >= ch {
						continue
					}
					if j := v*cw + u; s.clip.Pix[j] >= 0.5 && s.gapPiece[j] == 0 {
						s.gapPiece[j] = n
						s.gapStack = append(s.gapStack, int32(j))
					}
				}
			}
		}
	}
}

// hidesAcross reports whether a line along (tx, ty) (a unit vector) crosses, at more than 45°,
// the face's own line of a brow's or an eye's band or the outline whose s.zone value is z
// (see zoneOwn): where such a line hides a stretch of a band crossing it.
func hidesAcross(z, tx, ty float32) bool {
	switch {
	case z >= zoneOutline:
		z -= zoneOutline - 1
	case z <= 0 || z >= 2:
		return false
	}
	dy, dx := math.Sincos(math.Pi * float64(z-1))
	return abs32(tx*float32(dy)-ty*float32(dx)) > occRidgeAcross
}

// keepBands puts back in s.occ the thin covers found, which dropSmall may have taken out: a
// pen or a strand is long but covers less of the face than a blemish may.
func (s *Swapper) keepBands() {
	for i, v := range s.bands.Pix {
		s.occ.Pix[i] = max(s.occ.Pix[i], v)
	}
}

// markRidges marks in s.clip (over cr, the grid of every f-th pixel of fr) the centre lines
// of the bands in front of the face whose ridge is past least (see ridgeAt); ms is the warped
// source's skin detail, chord the band value (see bandValue) of the jaw's chord, 0 to 16.
func (s *Swapper) markRidges(fr image.Rectangle, f int, cr image.Rectangle, sigma float64, least, ms, chord float32) {
	w, h := fr.Dx(), fr.Dy()
	cw, ch := cr.Dx(), cr.Dy()
	s.clip.Reset(cr)
	fits := s.landmarksFit(fr, f, cr)
	for y := 1; y < ch-1; y++ {
		fy := min(h-1, y*f+f/2)
		for x := 1; x < cw-1; x++ {
			// Over the face's whole box, so that a strand or a stem reaching past the face
			// counts its whole length; outside the mouth and the nostrils (whose own ridges
			// are many), the nose and the lips' outline; along the outline only across it
			// (the segment there or the jaw's chord). Where the warped source has
			// a feature the target has one too, and in a brow's band or on an eye (whose own
			// ridges are many) the brow or the eye is there: a ridge counts there only across
			// its line, and on a brow or an eye only where the landmarks fit (a crease of a
			// face they fit badly crossed the place they put a brow, joining a long line).
			j := fy*w + min(w-1, x*f+f/2)
			z, i := s.zone.Pix[j], y*cw+x
			lit := least * s.light.Pix[j] // the skin's ridges at the light there (see lightField)
			if s.excl.Pix[j] >= 1 && z == 0 || z == zoneOwn || !(s.ridgeAt(i, cw, sigma, lit) > lit) {
				continue
			}
			switch {
			case z >= zoneOutline:
				if s.crossing(i, cw, z-zoneOutline+1) > occRidgeAcross || s.crossing(i, cw, chord) > occRidgeAcross {
					s.clip.Pix[i] = 1
				}
			case z > 0:
				if fits && s.crossing(i, cw, z) > occRidgeAcross {
					s.clip.Pix[i] = 1
				}
			case ms > 0.1 && s.detS.Pix[j]/ms > occDetailFeature:
				if s.crossing(i, cw, 0) > occRidgeAcross {
					s.clip.Pix[i] = 1
				}
			default:
				s.clip.Pix[i] = 1
			}
		}
	}
}

// outlineBands marks in s.zone (over fr) where a ridge is the face's own: a band of half-width
// occRidgeBand·size along each brow (landmarks 17–21 and 22–26), the jaw (0–16) and the lips'
// outline (48–59 and back), and the nose below the eyes (the hull of 28–35, widened across
// by occRidgeNose): a brow's dark band, the shadow under the jaw, the line of a smile's lips, the
// light along the nose and the shadow beside it, each as long as a frame's rim on a close-up.
// The nose and the lips are zoneOwn; a brow's band holds its chord's direction, each eye (as
// s.excl has it) the direction of its corners (see bandValue), and the jaw's band each
// segment's own (from zoneOutline), since only a ridge along them is the brow's, the eye's or
// the outline's own: a strand of hair or a pen held across a cheek crosses them.
func (s *Swapper) outlineBands(target *face.Landmarks68, size float64, fr image.Rectangle) {
	s.zone.Reset(fr)
	for _, e := range [2][2]int{{36, 39}, {42, 45}} {
		s.part = append(s.part[:0], target[e[0]:e[0]+6]...)
		c := geom.Mean(s.part)
		for i, p := range s.part {
			s.part[i] = c.Add(p.Sub(c).Scale(1.5))
		}
		s.sorted, s.partHull = convexHull(s.part, s.sorted, s.partHull)
		raster.FillConvex(&s.zone, s.partHull, bandValue(target[e[1]].Sub(target[e[0]])))
	}
	r := occRidgeBand * size
	for _, b := range [...][2]int{{17, 21}, {22, 26}, {0, 16}, {48, 60}} {
		for k := b[0]; k < b[1]; k++ {
			a, c := target[k], target[k+1]
			if k == 59 {
				c = target[48] // the lips' outline closes
			}
			d := c.Sub(a)
			l := math.Hypot(d.X, d.Y)
			if l == 0 {
				continue
			}
			v := float32(zoneOwn)
			switch {
			case k < 16: // the outline's own direction
				v = zoneOutline - 1 + bandValue(d)
			case k < 26: // the brow's chord: its outer end bends down, a frame's rim too
				v = bandValue(target[b[1]].Sub(target[b[0]]))
			}
			n := geom.Pt{X: -d.Y / l * r, Y: d.X / l * r}
			e := geom.Pt{X: d.X / l * r, Y: d.Y / l * r} // reach past the ends too
			s.part = append(s.part[:0], a.Add(n).Sub(e), c.Add(n).Add(e), c.Sub(n).Add(e), a.Sub(n).Sub(e))
			raster.FillConvex(&s.zone, s.part, v)
		}
	}
	// Widened across the nose only, so that it stays below a frame's bridge.
	s.part = append(s.part[:0], target[28:36]...)
	c := geom.Mean(s.part)
	ax := target[33].Sub(target[27])
	if l := math.Hypot(ax.X, ax.Y); l > 0 {
		ax = ax.Scale(1 / l)
		for i, p := range s.part {
			d := p.Sub(c)
			along := ax.X*d.X + ax.Y*d.Y
			s.part[i] = c.Add(ax.Scale(along)).Add(d.Sub(ax.Scale(along)).Scale(occRidgeNose))
		}
	}
	s.sorted, s.partHull = convexHull(s.part, s.sorted, s.partHull)
	raster.FillConvex(&s.zone, s.partHull, zoneOwn)
}

// zoneOwn marks in s.zone where every ridge is the face's own; a value in [1, 2) is a
// brow's or an eye's band whose direction makes the angle π·(v − 1) with the x axis, one in
// [zoneOutline, zoneOutline+1) the outline's, whose direction makes π·(v − zoneOutline).
const (
	zoneOwn     = 3
	zoneOutline = 4
)

// bandValue is s.zone's value for a band along d.
func bandValue(d geom.Pt) float32 {
	a := math.Atan2(d.Y, d.X)
	if a < 0 {
		a += math.Pi
	}
	return float32(min(1+a/math.Pi, math.Nextafter(2, 0)))
}

// crossing is how squarely the ridge at pixel i of the smoothed s.chan3 (row length cw)
// crosses the face's own line there: |cos| of the angle between the ridge's normal and the
// line, 1 straight across, 0 along it or where either has no direction (a blob, a corner).
// The line is a brow's, in a band of s.zone value z > 0, or else the warped source's
// feature's (in s.srcLuma), where the target has its own too.
func (s *Swapper) crossing(i, cw int, z float32) float32 {
	var best, ex, ey float32
	for c := range 3 {
		if l, vx, vy := hessAcross(s.chan3[c].Pix, i, cw); abs32(l) > best {
			best, ex, ey = abs32(l), vx, vy
		}
	}
	var dx, dy float32
	if z > 0 {
		a := math.Pi * float64(z-1)
		dx, dy = float32(math.Cos(a)), float32(math.Sin(a))
	} else {
		l, vx, vy := hessAcross(s.srcLuma.Pix, i, cw)
		if l == 0 {
			return 0
		}
		dx, dy = vy, -vx // along the source's line
	}
	n := float32(math.Hypot(float64(ex), float64(ey))) * float32(math.Hypot(float64(dx), float64(dy)))
	if n == 0 {
		return 0
	}
	return abs32(ex*dx+ey*dy) / n
}

// landmarksFit says whether the brows' bands and the eyes in s.zone (over fr, seen on cr, the
// grid of every f-th pixel) hold brows and eyes: on average darker along their lines than
// beside them, in the smoothed green of s.chan3. Where the landmarks fit badly (a lossy
// frame's smaller face), a band lies on the nose's side or a cheek, and the face's own lines
// there run across it.
func (s *Swapper) landmarksFit(fr image.Rectangle, f int, cr image.Rectangle) bool {
	w, h := fr.Dx(), fr.Dy()
	cw, ch := cr.Dx(), cr.Dy()
	p := s.chan3[1].Pix
	var sum float64
	for y := 1; y < ch-1; y++ {
		fy := min(h-1, y*f+f/2)
		for x := 1; x < cw-1; x++ {
			z := s.zone.Pix[fy*w+min(w-1, x*f+f/2)]
			if !(z >= 1 && z < 2) {
				continue
			}
			i := y*cw + x
			a := math.Pi * float64(z-1)
			nx, ny := -math.Sin(a), math.Cos(a)
			hxx, hyy := float64(p[i+1]-2*p[i]+p[i-1]), float64(p[i+cw]-2*p[i]+p[i-cw])
			hxy := float64(p[i+cw+1]-p[i+cw-1]-p[i-cw+1]+p[i-cw-1]) / 4
			sum += nx*nx*hxx + 2*nx*ny*hxy + ny*ny*hyy
		}
	}
	return sum > 0
}

// hessAcross is the Hessian of p at pixel i (row length cw): its eigenvalue of the larger
// magnitude and that one's eigenvector (not normalised), across a ridge or a valley; l is 0
// where the other eigenvalue is more than half as large (no direction).
func hessAcross(p []float32, i, cw int) (l, ex, ey float32) {
	hxx, hyy := p[i+1]-2*p[i]+p[i-1], p[i+cw]-2*p[i]+p[i-cw]
	hxy := (p[i+cw+1] - p[i+cw-1] - p[i-cw+1] + p[i-cw-1]) / 4
	m, d := (hxx+hyy)/2, float32(math.Sqrt(float64((hxx-hyy)*(hxx-hyy)/4+hxy*hxy)))
	l, l2 := m+d, m-d
	if abs32(l2) > abs32(l) {
		l, l2 = l2, l
	}
	if abs32(l) < occRidgeElong*abs32(l2) {
		return 0, 0, 0
	}
	// The eigenvector of l: (hxy, l − hxx) or (l − hyy, hxy), whichever is the longer.
	if abs32(hxx-l) < abs32(hyy-l) {
		return l, l - hyy, hxy
	}
	return l, hxy, l - hxx
}

// sourceLuma puts in s.srcLuma (over cr) the warped source's luma, the mean of each f×f
// block of fr, smoothed by σ like s.chan3.
func (s *Swapper) sourceLuma(fr image.Rectangle, f int, cr image.Rectangle, sigma float64) {
	w, h := fr.Dx(), fr.Dy()
	cw := cr.Dx()
	s.srcLuma.Reset(cr)
	for y := range h {
		row := s.warped.Pix[y*s.warped.Stride:][:3*w]
		off := y / f * cw
		for x := range w {
			s.srcLuma.Pix[off+x/f] += luma(row[3*x], row[3*x+1], row[3*x+2])
		}
	}
	s.chanBlur.Apply(&s.srcLuma, sigma) // the blocks' sums: only directions are read
}

// coarseChannels puts in s.chan3 (over cr) the mean of each colour channel over each f×f
// block of the frame's fr.
func (s *Swapper) coarseChannels(frame *raster.Image, fr image.Rectangle, f int, cr image.Rectangle) {
	w, h := fr.Dx(), fr.Dy()
	cw := cr.Dx()
	for c := range 3 {
		s.chan3[c].Reset(cr)
	}
	for y := range h {
		row := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:][:3*w]
		off := y / f * cw
		for x := range w {
			k := off + x/f
			s.chan3[0].Pix[k] += float32(row[3*x])
			s.chan3[1].Pix[k] += float32(row[3*x+1])
			s.chan3[2].Pix[k] += float32(row[3*x+2])
		}
	}
	if f == 1 {
		return
	}
	for i := range s.chan3[0].Pix {
		bx, by := i%cw*f, i/cw*f
		n := float32((min(w, bx+f) - bx) * (min(h, by+f) - by))
		for c := range 3 {
			s.chan3[c].Pix[i] /= n
		}
	}
}

// ridgeAt is the strongest channel's curvature across a ridge at pixel i of the smoothed
// s.chan3 (row length cw), times σ²: positive where it is a ridge (see occRidgeElong,
// occRidgeStep), negated where it is not, 0 for a channel that cannot reach least.
func (s *Swapper) ridgeAt(i, cw int, sigma float64, least float32) float32 {
	s2, sg := float32(sigma*sigma), float32(sigma)
	var best float32
	for c := range 3 {
		p := s.chan3[c].Pix
		hxx, hyy := p[i+1]-2*p[i]+p[i-1], p[i+cw]-2*p[i]+p[i-cw]
		hxy := (p[i+cw+1] - p[i+cw-1] - p[i-cw+1] + p[i-cw-1]) / 4
		m := (hxx + hyy) / 2
		if (abs32(m)+abs32(hxx-hyy)/2+abs32(hxy))*s2 <= least { // a bound on |λ1|σ²
			continue
		}
		d := float32(math.Sqrt(float64((hxx-hyy)*(hxx-hyy)/4 + hxy*hxy)))
		l1, l2 := m+d, m-d
		if abs32(l2) > abs32(l1) {
			l1, l2 = l2, l1
		}
		gx, gy := (p[i+1]-p[i-1])/2, (p[i+cw]-p[i-cw])/2
		a := abs32(l1) * s2
		if abs32(l1) < occRidgeElong*abs32(l2) || (sg*l1)*(sg*l1) < occRidgeStep*occRidgeStep*(gx*gx+gy*gy) {
			a = -a // no ridge here, but the skin's level counts it
		}
		if abs32(a) > abs32(best) {
			best = a
		}
	}
	return best
}

// ridgeLevel is the median curvature magnitude (ridge or not) of the smoothed s.chan3 (over
// cr, a grid of every f-th pixel of fr) on the face's skin (fm > 0.5, outside the features),
// every other pixel: how much the skin's own pores, grain and wrinkles answer. The whole skin
// rather than the skin samples, so a cover over a few of them does not sway it.
func (s *Swapper) ridgeLevel(fm *raster.Mask, fr image.Rectangle, f int, cr image.Rectangle, sigma float64) float32 {
	w, h := fr.Dx(), fr.Dy()
	cw, ch := cr.Dx(), cr.Dy()
	s.dev = s.dev[:0]
	for y := 1; y < ch-1; y += 2 {
		fy := min(h-1, y*f+f/2)
		frow := fm.Pix[(fy+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		for x := 1; x < cw-1; x += 2 {
			if fx := min(w-1, x*f+f/2); frow[fx] > 0.5 && s.excl.Pix[fy*w+fx] == 0 && s.occ.Pix[fy*w+fx] == 0 {
				s.dev = append(s.dev, abs32(s.ridgeAt(y*cw+x, cw, sigma, 0))/s.light.Pix[fy*w+fx])
			}
		}
	}
	if len(s.dev) < 16 {
		return math.MaxFloat32
	}
	slices.Sort(s.dev)
	return s.dev[len(s.dev)/2]
}

// longOnly keeps in c (0/1 over fr) the 8-connected sets that reach onto the face (s.dev, the
// face mask over fr, above occRidgeOnFace somewhere) and whose bounding box's larger side is
// at least least pixels, or cross pixels where they also reach off it (under
// occRidgeOffFace); and, where wide > 0 (c holds hueBands's angles), whose mean width (their
// area over that side) is at most wide pixels, each set joining only pixels that depart alike.
func (s *Swapper) longOnly(c *raster.Mask, fr image.Rectangle, least, cross, wide float64) {
	w, h := fr.Dx(), fr.Dy()
	if cap(s.label) < w*h {
		s.label = make([]int32, w*h)
	}
	s.label = s.label[:w*h]
	for i, v := range c.Pix {
		s.label[i] = -1
		if v > 0.5 {
			s.label[i] = 0
		}
	}
	s.keep = s.keep[:0]
	n := int32(0)
	for start, v := range s.label {
		if v != 0 {
			continue
		}
		n++
		x0, y0, x1, y1 := w, h, -1, -1
		on, off := float32(0), float32(1)
		area := 0
		s.label[start] = n
		s.stack = append(s.stack[:0], int32(start))
		for len(s.stack) > 0 {
			i := int(s.stack[len(s.stack)-1])
			s.stack = s.stack[:len(s.stack)-1]
			x, y := i%w, i/w
			area++
			on, off = max(on, s.dev[i]), min(off, s.dev[i])
			x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					u, v := x+dx, y+dy
					if u < 0 || v < 0 || u >= w || v >= h {
						continue
					}
					if nb := v*w + u; s.label[nb] == 0 && (wide <= 0 || alike(c.Pix[i], c.Pix[nb])) {
						s.label[nb] = n
						s.stack = append(s.stack, int32(nb))
					}
				}
			}
		}
		ext := float64(max(x1-x0, y1-y0) + 1)
		s.keep = append(s.keep, on > occRidgeOnFace && (ext >= least || off < occRidgeOffFace && ext >= cross) && (wide <= 0 || float64(area) <= wide*ext))
	}
	for i, l := range s.label {
		if l > 0 && !s.keep[l-1] {
			c.Pix[i] = 0
		}
	}
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}

// A thin cover of a saturated colour near the skin's (a red-orange or an orange cord, a pink
// lanyard) is missed by both tests above: its ridge is faint on a grainy face, and the colour
// test, pixel by pixel, allows a dark channel's noise (a saturated colour always has one) and
// ignores any step further along the skin's own axis. Smoothed over the band's width its
// colour is steady, so there the departure counts both ways along the axis and with a
// fraction of the noise's slack; a long thin set of such grid pixels departing alike that
// crosses the outline (or is long, see longOnly) and reaches well into the face is a cover:
// the skin's own redder places (cheeks, a fold's shadow) are blotches, and the shadow under
// the jaw runs along the outline. Such a band is kept as found (s.bands only): the rules
// that grow and weigh the other finds were tuned without it.
const (
	// occHueBandTol is how many times the skin model's chromaticity tolerances the smoothed
	// colour must depart, and occHueBandSlack the dark channel's slack there (see
	// markOccluders's): smoothed over a few pixels, a saturated colour's noise is a fraction
	// of one pixel's.
	occHueBandTol   = 1.2
	occHueBandSlack = 0.5
	// occHueBandWide is the most mean width (share of the face size) of such a band, and
	// occHueBandDeep how far in from the jaw's line (0–16) it must reach on the face: the
	// shadow under a jaw, redder than the skin, runs along the outline.
	occHueBandWide = 0.1
	occHueBandDeep = 0.12
	// occHueBandTurn is how far (radians) the departures of two neighbours in a band may
	// differ in direction: one cover's colour is one, a cover and a shadow beside it are two.
	occHueBandTurn = math.Pi / 4
)

// hueBands marks in s.hueBand (over cr, the grid of every f-th pixel of fr) the grid pixels
// below the line through landmarks 0 and 16 (above it a glasses frame's rims and arms, found
// by the rings, and the brows) and off the features (s.excl: the mouth, the nostrils, each eye
// with its brow) whose smoothed colour (s.chan3) lies past the skin model m's chromaticity
// tolerances, either way along its axis: each such pixel holds 4 plus the departure's angle
// (radians, from along the axis towards across), so a band's set joins only pixels that depart
// alike (see longOnly). A cord towards the mouth or the nose runs on over the nose's side and
// the lips' outline, so those count.
func (s *Swapper) hueBands(target *face.Landmarks68, fr image.Rectangle, f int, cr image.Rectangle, m skinModel) {
	w, h := fr.Dx(), fr.Dy()
	cw, ch := cr.Dx(), cr.Dy()
	s.hueBand.Reset(cr)
	r, g, b := s.chan3[0].Pix, s.chan3[1].Pix, s.chan3[2].Pix
	o, d := target[0], target[16].Sub(target[0])
	for y := range ch {
		fy := min(h-1, y*f+f/2)
		for x := range cw {
			fx := min(w-1, x*f+f/2)
			if j := fy*w + fx; s.excl.Pix[j] > 0 {
				continue
			}
			if d.X*(float64(fy+fr.Min.Y)-o.Y)-d.Y*(float64(fx+fr.Min.X)-o.X) < 0 {
				continue // above the cheeks
			}
			i := y*cw + x
			pr, pg, pb := uint8(min(255, r[i]+0.5)), uint8(min(255, g[i]+0.5)), uint8(min(255, b[i]+0.5))
			lg := logTable[pg]
			a, bb := logTable[pr]-lg, logTable[pb]-lg
			slack := occHueBandSlack / (float32(min(pr, pg, pb)) + 1)
			ds := (a*m.ux + bb*m.uy - m.med[1]) / (m.less + slack)
			dh := (bb*m.ux - a*m.uy - m.med[2]) / (m.hue + slack)
			if ds*ds+dh*dh > occHueBandTol*occHueBandTol {
				s.hueBand.Pix[i] = 4 + float32(math.Atan2(float64(dh), float64(ds)))
			}
		}
	}
}

// deepOnly clears in s.hueBand (over cr, after longOnly, whose labels and verdicts it reads)
// the kept sets none of whose pixels on the face (s.dev over occRidgeOnFace) lies deep pixels
// or more from the jaw's line.
func (s *Swapper) deepOnly(target *face.Landmarks68, fr image.Rectangle, f int, cr image.Rectangle, deep float64) {
	cw := cr.Dx()
	w, h := fr.Dx(), fr.Dy()
	s.gapFrom = slices.Grow(s.gapFrom[:0], len(s.keep))[:len(s.keep)] // 1 where a set reaches in
	clear(s.gapFrom)
	for i, l := range s.label {
		if l <= 0 || !s.keep[l-1] || s.gapFrom[l-1] == 1 || !(s.dev[i] > occRidgeOnFace) {
			continue
		}
		p := geom.Pt{X: float64(fr.Min.X + min(w-1, i%cw*f+f/2)), Y: float64(fr.Min.Y + min(h-1, i/cw*f+f/2))}
		near := math.Inf(1)
		for k := range 16 {
			near = min(near, segmentDist(p, target[k], target[k+1]))
		}
		if near >= deep {
			s.gapFrom[l-1] = 1
		}
	}
	for i, l := range s.label {
		if l > 0 && s.gapFrom[l-1] == 0 {
			s.hueBand.Pix[i] = 0
		}
	}
}

// segmentDist is the distance from p to the segment a–b.
func segmentDist(p, a, b geom.Pt) float64 {
	ab, ap := b.Sub(a), p.Sub(a)
	l := ab.X*ab.X + ab.Y*ab.Y
	t := 0.0
	if l > 0 {
		t = min(1, max(0, (ap.X*ab.X+ap.Y*ab.Y)/l))
	}
	return math.Hypot(ap.X-t*ab.X, ap.Y-t*ab.Y)
}

// alike reports whether two of hueBands's departures (4 plus an angle) lie within
// occHueBandTurn of each other.
func alike(a, b float32) bool {
	d := abs32(a - b)
	return min(d, 2*math.Pi-d) <= occHueBandTurn
}
