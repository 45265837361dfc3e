package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The colour, structure, detail and texture tests leave the eyes, the mouth and the nostrils
// out (dark, red and busy by nature), so a cover found beside one of them (a microphone at the
// mouth's corner, a hand or a bar whose edge reaches an eye) stops at the feature's outline
// and the swap paints the feature's side of it over. What was found there says what the cover
// looks like: it continues into the feature, and over the band around it, through the
// connected pixels that look like it (its own median and spread of colour) and more like it
// than like the skin or the feature there (lips are redder and darker than a tan microphone,
// an eye's white and iris unlike a hand); the eyes' bands meet over the nose's bridge, so a
// plaster or a finger across it, found beside each inner corner, continues over the ridge
// between. And a feature with a thick cover on both sides along a row or a column (a bar
// across the nose) is covered between them; a glasses rim beside an eye is too thin to count.

const (
	// growReach is the half-width (share of the face size) of the band around the features
	// where a found cover is sampled and may grow, besides the features themselves.
	growReach = 0.06
	// growSeedLeast is the least share of the face's size² a cover's pixels in the band must
	// cover for its colour to be fitted: fewer are a find's ragged edge.
	growSeedLeast = 0.002
	// growSamples is about how many of a piece's pixels its colour is fitted to.
	growSamples = 300
	// growSigmas is how many robust standard deviations from the cover's median a pixel may
	// lie and still look like it; growBright and growChroma the least tolerances
	// (log-brightness, log-chromaticity), so a flat cover's zero spread still admits a lossy
	// frame's noise and a little shading.
	growSigmas = 3
	growBright = 0.12
	growChroma = 0.08
	// growBrightMost and growChromaMost are the most they may be: a piece with a wider
	// spread, fitted whole, is partly skin or a feature, not one cover, and would grow over
	// the feature; fitted to its pixels unlike the skin, it is a grainy or textured cover,
	// which grows through its pixels within these of its median.
	growBrightMost = 0.2
	growChromaMost = 0.15
	// growSpread is how far (share of the face size, in 4-connected steps) a cover grows
	// from its found piece over the band: over a microphone's head or a finger's tip, not
	// the face beyond. Over the feature itself it grows as far as it looks like the cover
	// (a smile's mouth is taller than that; a hand or fingers cross all of it), within the
	// piece's box grown by at least as much.
	growSpread = 0.12
	// growBridgeSide is how far (share of the face size) a cover must run on along a row or
	// a column on each side of a feature to cover the feature between; growBridgeGap how far
	// from the feature its side may stop (its outline, smoothed, stays off the feature).
	growBridgeSide = 0.1
	growBridgeGap  = 0.03
	// growBridgeThick is how thick (share of the face size) a side must be near the feature:
	// a bar or a palm is, a glasses frame's rim or arm is not.
	growBridgeThick = 0.07
	// heldLeast is the least share of the face a find under occMinArea must cover for
	// keepHeld to look at it: less is a speck of noise.
	heldLeast = 0.002
	// heldBand is how wide (share of the face's box) the band beyond the face's outline is
	// that keepHeld looks along, and heldAround the share of it that may look like a find
	// for the find to be one thing held in front (see aroundFace): a microphone's handle, a
	// phone or a hand's arm takes 5–30 % of it, skin of the face's hue around it over 55 %.
	heldBand   = 0.1
	heldAround = 0.4
	// heldEdge is the swap's weight (fm) under which a pixel lies beyond the face's outline:
	// the feathered mask fades to it at the landmarks' hull (see Apply); between, the face's
	// own edge.
	heldEdge = 0.02
)

// growIntoFeatures adds to s.occ (over fr, 1 on occluders; after the other tests, s.excl
// marking the features) the continuation of each cover found beside a feature (see above).
func (s *Swapper) growIntoFeatures(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle, m skinModel) {
	if !slices.Contains(s.occ.Pix, 1) { // the common case, a bare face
		return
	}
	w, h := fr.Dx(), fr.Dy()
	s.mouthOpen(frame, target, fr, s.occ.Pix)
	s.growBand(target, size, fr)
	s.featureCentres(target, fr)
	// The found covers' pieces in the band or on a feature (a band's centre line may reach its rim),
	// each fitted and grown on its own.
	s.sizeLabels(w * h)
	for i, v := range s.occ.Pix {
		s.label[i] = -1
		if v == 1 && s.zone.Pix[i] >= 1 {
			s.label[i] = 0
		}
	}
	n := s.components(w, h)
	s.regionBoxes(n, w, h)
	least := max(8, int(growSeedLeast*size*size))
	s.clip.Reset(fr)
	s.cov.Reset(fr)
	for k := 1; k <= n; k++ {
		if s.area[k] >= least {
			s.growCover(frame, fm, size, fr, int32(k), m, least)
		}
	}
	for i, v := range s.clip.Pix {
		if v > 0 {
			s.occ.Pix[i] = 1
		}
	}
	s.bridgeThick(fr, size)
}

// growBand marks in s.zone (over fr) 2 on the features left out of the tests (s.excl ≥ 1)
// and 1 on the band within growReach·size of them (a square's reach): each one's hull (as
// features fills it) with a square of that half-width about each corner, the two eyes' as one
// hull. A cover across the nose's bridge (a plaster, a glasses bridge's pad, a finger) is
// found beside each eye's inner corner, cut there by the eyes' outlines, and is one cover over
// the ridge between them, which lies beyond either eye's own band.
func (s *Swapper) growBand(target *face.Landmarks68, size float64, fr image.Rectangle) {
	s.zone.Reset(fr)
	d := growReach * size
	s.part = s.part[:0]
	for _, z := range featureZones {
		if z.hi2 > z.lo2 { // an eye with its brow, tested where very far
			continue
		}
		from := len(s.part)
		s.part = append(append(s.part, target[z.lo:z.hi]...), target[z.lo2:z.hi2]...)
		c := geom.Mean(s.part[from:])
		n := len(s.part)
		for i := from; i < n; i++ {
			p := c.Add(s.part[i].Sub(c).Scale(z.k))
			s.part[i] = p.Add(geom.Pt{X: -d, Y: -d})
			s.part = append(s.part, p.Add(geom.Pt{X: d, Y: -d}), p.Add(geom.Pt{X: -d, Y: d}), p.Add(geom.Pt{X: d, Y: d}))
		}
		if z.lo == 36 { // the right eye: the left one joins its hull
			continue
		}
		s.sorted, s.partHull = convexHull(s.part, s.sorted, s.partHull)
		raster.FillConvex(&s.zone, s.partHull, 1)
		s.part = s.part[:0]
	}
	for i, v := range s.excl.Pix {
		if v >= 1 {
			s.zone.Pix[i] = 2
		}
	}
}

// coverLook is what a found cover looks like and what lies around it: its median colour
// features and tolerances (log-brightness tb, log-chromaticity tc), the skin's median and the
// features' near it, whether it may grow over the band, and the box (over fr's grid) it
// grows within.
type coverLook struct {
	med, skin, feat [3]float32
	tb, tc          float32
	haveFeat, band  bool
	box             image.Rectangle
	lane            lane // a band's line across the feature, beyond box (see bandLane)
}

// dist is how far the colour features f lie from m, in multiples of the cover's tolerances.
func (c *coverLook) dist(f, m [3]float32) float32 {
	return max(abs32(f[0]-m[0])/c.tb, float32(math.Hypot(float64(f[1]-m[1]), float64(f[2]-m[2])))/c.tc)
}

// pixelFeatures are the colour features of pixel i of fr's grid (w wide) in frame.
func pixelFeatures(frame *raster.Image, fr image.Rectangle, w, i int) [3]float32 {
	p := frame.Pix[(fr.Min.Y+i/w)*frame.Stride+3*(fr.Min.X+i%w):]
	return features(p[0], p[1], p[2])
}

// growCover fits the colour of s.label's region k and marks in s.clip the pixels of the
// features and their band (s.zone > 0, fm > 0) connected to it that look like it and more like
// it than like the skin or the features near it.
func (s *Swapper) growCover(frame *raster.Image, fm *raster.Mask, size float64, fr image.Rectangle, k int32, m skinModel, least int) {
	var c coverLook
	if !s.fitCover(frame, fr, k, &c, m, least) {
		return
	}
	c.skin = [3]float32{m.med[0], m.med[1]*m.ux - m.med[2]*m.uy, m.med[1]*m.uy + m.med[2]*m.ux}
	if c.dist(c.skin, c.med) <= 1 { // the cover looks like the skin: it cannot be told
		return
	}
	w, h := fr.Dx(), fr.Dy()
	// The piece grows within its box grown by its size (at least growSpread·size, so a
	// piece the feature cut thin still reaches over a microphone's head), and what the
	// features look like near it is taken there: the median of their pixels (not found;
	// every other one each way) that do not look like the cover (which hides part of them).
	pb := s.boxes[k]
	gx, gy := max(pb.Dx(), int(growSpread*size)), max(pb.Dy(), int(growSpread*size))
	c.box = image.Rect(max(0, pb.Min.X-gx), max(0, pb.Min.Y-gy), min(w, pb.Max.X+gx), min(h, pb.Max.Y+gy))
	s.bandLane(frame, fr, size, k, &c)
	for i := range 3 {
		s.feat[i] = s.feat[i][:0]
	}
	for y := c.box.Min.Y; y < c.box.Max.Y; y += 2 {
		for x := c.box.Min.X; x < c.box.Max.X; x += 2 {
			if i := y*w + x; s.zone.Pix[i] == 2 && s.occ.Pix[i] == 0 {
				if f := pixelFeatures(frame, fr, w, i); c.dist(f, c.med) > 1 {
					for j := range 3 {
						s.feat[j] = append(s.feat[j], f[j])
					}
				}
			}
		}
	}
	if c.haveFeat = len(s.feat[0]) >= 8; c.haveFeat {
		for i := range 3 {
			slices.Sort(s.feat[i])
			c.feat[i] = s.feat[i][len(s.feat[i])/2]
		}
	}
	// A cover within the skin's own spread of colour grows over the band only where most of
	// the band near it does not look like it: else the band is skin a little lighter or
	// darker than the median there, not more of the cover.
	if c.band = m.far(c.med) > 1; !c.band {
		all, unlike := 0, 0
		for y := c.box.Min.Y; y < c.box.Max.Y; y++ {
			for x := c.box.Min.X; x < c.box.Max.X; x++ {
				if i := y*w + x; s.zone.Pix[i] == 1 && s.occ.Pix[i] == 0 {
					all++
					if c.dist(pixelFeatures(frame, fr, w, i), c.med) > 1 {
						unlike++
					}
				}
			}
		}
		c.band = 2*unlike >= all
	}
	s.floodCover(frame, fm, size, fr, k, &c)
}

// fitCover sets c's median and tolerances from at most about growSamples of the pixels of
// s.label's region k. Where at least least of them lie far from the skin (m), only those are
// fitted: a find's edge or a region test's piece (a microphone's handle below the mouth, a
// straw) takes in the skin beside it, which is not what the cover looks like and whose
// spread would stop it growing. Else it is false when their spread is too wide for one
// cover (see growBrightMost).
func (s *Swapper) fitCover(frame *raster.Image, fr image.Rectangle, k int32, c *coverLook, m skinModel, least int) bool {
	w := fr.Dx()
	pb := s.boxes[k]
	every := 1 + s.area[k]/growSamples
	gather := func(farOnly bool) {
		for i := range 3 {
			s.feat[i] = s.feat[i][:0]
		}
		seen := 0
		for y := pb.Min.Y; y < pb.Max.Y; y++ {
			for x := pb.Min.X; x < pb.Max.X; x++ {
				if i := y*w + x; s.label[i] == k {
					if seen%every == 0 {
						f := pixelFeatures(frame, fr, w, i)
						if !farOnly || m.far(f) > 1 {
							for j := range 3 {
								s.feat[j] = append(s.feat[j], f[j])
							}
						}
					}
					seen++
				}
			}
		}
	}
	gather(true)
	far := every*len(s.feat[0]) >= least
	if !far {
		gather(false)
	}
	tol := s.lookSpread(c)
	if !far && (tol[0] > growBrightMost || max(tol[1], tol[2]) > growChromaMost) {
		return false // a piece partly of skin or of a feature: not one cover's colour
	}
	c.tolerate(tol)
	return true
}

// lookSpread sets c.med to the median of the colour features gathered in s.feat and returns
// their spread as growSigmas robust standard deviations (from the median absolute deviation).
func (s *Swapper) lookSpread(c *coverLook) [3]float32 {
	var tol [3]float32
	for i := range 3 {
		var mad float32
		c.med[i], mad = medianMAD(s.feat[i], &s.dev)
		tol[i] = growSigmas * 1.4826 * mad
	}
	return tol
}

// tolerate sets c's brightness and chroma tolerances from the spread tol, within the bounds a
// cover's colour is given: never tighter than a flat cover's, never looser than a grainy one's.
func (c *coverLook) tolerate(tol [3]float32) {
	c.tb, c.tc = max(growBright, min(tol[0], growBrightMost)), max(growChroma, min(max(tol[1], tol[2]), growChromaMost))
}

// floodCover marks in s.clip, breadth first from s.label's region k, the pixels of the
// features, and of the band within growSpread·size of it (each one's value its 4-connected
// distance), that c says are more of the cover.
func (s *Swapper) floodCover(frame *raster.Image, fm *raster.Mask, size float64, fr image.Rectangle, k int32, c *coverLook) {
	w, h := fr.Dx(), fr.Dy()
	s.stackRegion(k, w)
	reach := float32(max(1, int(growSpread*size)))
	for head := 0; head < len(s.stack); head++ {
		i := int(s.stack[head])
		d := s.clip.Pix[i] + 1
		for _, nb := range neighbours4(i, w, h) {
			if nb < 0 || !(image.Point{nb % w, nb / w}).In(c.box) && !c.lane.holds(nb%w, nb/w) || s.zone.Pix[nb] == 0 || s.zone.Pix[nb] == 1 && (!c.band || d > reach) || s.clip.Pix[nb] > 0 || s.occ.Pix[nb] == 1 {
				continue
			}
			if !(fm.Pix[(nb/w+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+nb%w+fr.Min.X-fm.Rect.Min.X] > 0) {
				continue
			}
			f := pixelFeatures(frame, fr, w, nb)
			if dc := c.dist(f, c.med); dc > 1 || c.dist(f, c.skin) <= dc || c.haveFeat && c.dist(f, c.feat) <= dc {
				continue
			}
			s.clip.Pix[nb] = d
			s.stack = append(s.stack, int32(nb))
		}
	}
}

// stackRegion puts in s.stack the pixels of s.label's region k (on a grid w wide), row by row
// within its box.
func (s *Swapper) stackRegion(k int32, w int) {
	pb := s.boxes[k]
	s.stack = s.stack[:0]
	for y := pb.Min.Y; y < pb.Max.Y; y++ {
		for x := pb.Min.X; x < pb.Max.X; x++ {
			if i := y*w + x; s.label[i] == k {
				s.stack = append(s.stack, int32(i))
			}
		}
	}
}

// far is how far the colour features f lie from the skin, in multiples of its tolerances
// (see markOccluders; no slack for dark pixels).
func (m skinModel) far(f [3]float32) float32 {
	a, b := f[1]*m.ux+f[2]*m.uy, f[2]*m.ux-f[1]*m.uy
	d := f[0] - m.med[0]
	ds, dh := min(a-m.med[1], 0)/m.less, (b-m.med[2])/m.hue
	return max(-d/m.darker, d/m.brighter, float32(math.Sqrt(float64(ds*ds+dh*dh))))
}

// bridgeThick adds to s.occ (over fr) every run of feature pixels (s.excl ≥ 1) along a row or
// a column with a found cover on each side that runs on along it for at least
// growBridgeSide·size: a bar or a hand across the nose or an eye. A thin cover beside a
// feature (a glasses frame around an eye) does not reach that far along the run.
func (s *Swapper) bridgeThick(fr image.Rectangle, size float64) {
	w, h := fr.Dx(), fr.Dy()
	side := max(2, int(growBridgeSide*size))
	gap := max(1, int(growBridgeGap*size))
	s.clip.Reset(fr)
	// First without the thickness, which costs an opening: mostly nothing is found.
	if !s.bridgeRuns(w, h, side, gap, nil) {
		return
	}
	r := max(1, int(growBridgeThick*size/2))
	eroded := s.erodedCovers(fr, r)
	inOpening := func(i int) bool { return squareSum(eroded, w, h, i%w, i/w, r) > 0 }
	s.bridgeRuns(w, h, side, gap, inOpening)
	for i, v := range s.clip.Pix {
		if v > 0 && s.lipsOpen.Pix[i] == 0 {
			s.occ.Pix[i] = 1
		}
	}
}

// bridgeRuns looks along the rows, then the columns, of fr's grid (w×h) for runs of feature
// pixels (s.excl ≥ 1) with a found cover (s.occ) on each side, starting within gap of the run
// and running on for at least side. With inOpening nil it reports whether there is one,
// stopping at the first; else a side counts only if its first half holds a pixel inOpening
// (a thick cover's), and every run so covered is marked in s.clip.
func (s *Swapper) bridgeRuns(w, h, side, gap int, inOpening func(i int) bool) bool {
	thick := inOpening != nil
	// covered reports whether, from index start+from·step on, step by step away from the
	// feature (dir), a found run starts within gap and runs on for at least side.
	covered := func(start, step, n, from, dir int) bool {
		j := from
		for j >= 0 && j < n && (j-from)*dir < gap && s.occ.Pix[start+j*step] != 1 {
			j += dir
		}
		run, core := 0, !thick
		for j >= 0 && j < n && s.occ.Pix[start+j*step] == 1 && run < side {
			core = core || run <= side/2 && inOpening(start+j*step)
			run++
			j += dir
		}
		return run >= side && core
	}
	found := false
	bridge := func(start, step, n int) {
		for k := 0; k < n; k++ {
			if s.excl.Pix[start+k*step] < 1 {
				continue
			}
			e := k
			for e < n && s.excl.Pix[start+e*step] >= 1 {
				e++
			}
			if k > 0 && e < n && covered(start, step, n, k-1, -1) && covered(start, step, n, e, 1) {
				found = true
				if thick {
					for j := k; j < e; j++ {
						s.clip.Pix[start+j*step] = 1
					}
				}
			}
			k = e
		}
	}
	for y := 0; y < h && (thick || !found); y++ {
		bridge(y*w, 1, w)
	}
	for x := 0; x < w && (thick || !found); x++ {
		bridge(x, w, h)
	}
	return found
}

// erodedCovers is the summed-area table (in s.sat, over fr's grid) of the found covers (s.occ)
// eroded by a square of half-width r, for telling whether a pixel lies in their opening (the
// union of the squares that fit in them; thin covers, a frame's rim and arms, vanish): it does
// when a square about it holds an eroded pixel. It uses s.cov and s.zone.
func (s *Swapper) erodedCovers(fr image.Rectangle, r int) []float64 {
	w, h := fr.Dx(), fr.Dy()
	n := (w + 1) * (h + 1)
	if cap(s.sat) < 2*n {
		s.sat = make([]float64, 2*n)
	}
	covers, eroded := s.sat[:n], s.sat[n:2*n]
	s.cov.Reset(fr)
	for i, v := range s.occ.Pix {
		if v == 1 {
			s.cov.Pix[i] = 1
		}
	}
	summedArea(covers, w, h, s.cov.Pix)
	full := float64((2*r + 1) * (2*r + 1))
	s.zone.Reset(fr)
	for y := r; y < h-r; y++ {
		for x := r; x < w-r; x++ {
			if squareSum(covers, w, h, x, y, r) == full {
				s.zone.Pix[y*w+x] = 1
			}
		}
	}
	summedArea(eroded, w, h, s.zone.Pix)
	return eroded
}

// summedArea fills sat ((w+1)×(h+1)) with the summed-area table of v, a w×h grid.
func summedArea(sat []float64, w, h int, v []float32) {
	clear(sat[:w+1])
	for y := range h {
		sat[(y+1)*(w+1)] = 0
		var run float64
		for x := range w {
			run += float64(v[y*w+x])
			sat[(y+1)*(w+1)+x+1] = sat[y*(w+1)+x+1] + run
		}
	}
}

// squareSum is the sum, from the summed-area table sat of a w×h grid, over the square of
// half-width r about (x, y), clipped to the grid.
func squareSum(sat []float64, w, h, x, y, r int) float64 {
	x0, y0, x1, y1 := max(0, x-r), max(0, y-r), min(w, x+r+1), min(h, y+r+1)
	return sat[y1*(w+1)+x1] - sat[y0*(w+1)+x1] - sat[y1*(w+1)+x0] + sat[y0*(w+1)+x0]
}

// keepHeld puts back in s.occ (over fr) each find that dropSmall took out (s.held is what was
// found before it) and that continues, in its own colour, across the face's outline (fm ≤ ½)
// for at least half as many pixels as it covers on the face, below the eyes: the visible
// part of something held in front of it from outside (a microphone's head on a cheek with
// its handle beyond the jaw, a finger's tip), not a blemish or a fold, which lie within the
// skin. Above the eyes the outline is the hairline's or a hat's, which a lossy frame's noise
// cuts into pieces that come and go. Its colour need not be unlike the skin's: a find of
// the skin's hue (a flat or a busy piece) continuing off the face is as much in front, as
// long as what looks like it does not lie around much of the outline (see aroundFace).
func (s *Swapper) keepHeld(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle, m skinModel) {
	w, h := fr.Dx(), fr.Dy()
	s.clip.Reset(fr)
	dropped := false
	for i, v := range s.held.Pix {
		if v == 1 && s.occ.Pix[i] != 1 {
			s.clip.Pix[i], dropped = 1, true
		}
	}
	if !dropped {
		return
	}
	n := s.labelRegions(s.clip.Pix, 1, fr)
	s.regionBoxes(n, w, h)
	least := max(8, int(heldLeast*float64(faceArea(fm, fr))))
	// Below the eyes: above them the outline is the hairline's or a hat's, the face's frame.
	eyes := int(geom.Mean(target[36:48]).Y) - fr.Min.Y
	s.zone.Reset(fr) // the outside pixels each piece's flood has reached
	for k := int32(1); k <= int32(n); k++ {
		var c coverLook
		if s.area[k] < least || s.boxes[k].Min.Y < eyes || !s.fitCover(frame, fr, k, &c, m, least) {
			continue
		}
		if s.floodOutside(frame, fm, fr, k, &c, (s.area[k]+1)/2) && !s.aroundFace(frame, fm, fr, eyes, &c) {
			s.growHeld(frame, fm, size, fr, k, &c, m)
		}
	}
}

// growHeld marks in s.occ s.label's region k and, breadth first from it, the face's pixels
// (fm > 0) within its box grown by growSpread·size that look like c and more like it than
// like the skin (m): what the tests found of a held thing is often a piece of it (its
// shaded side), and the rest of it on the face is as much in front. A cover that looks like
// the skin does not grow.
func (s *Swapper) growHeld(frame *raster.Image, fm *raster.Mask, size float64, fr image.Rectangle, k int32, c *coverLook, m skinModel) {
	w, h := fr.Dx(), fr.Dy()
	b := s.boxes[k]
	s.stack = s.stack[:0]
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if i := y*w + x; s.label[i] == k {
				s.occ.Pix[i] = 1
				s.stack = append(s.stack, int32(i))
			}
		}
	}
	c.skin = [3]float32{m.med[0], m.med[1]*m.ux - m.med[2]*m.uy, m.med[1]*m.uy + m.med[2]*m.ux}
	if c.dist(c.skin, c.med) <= 1 {
		return
	}
	g := int(growSpread * size)
	box := image.Rect(max(0, b.Min.X-g), max(0, b.Min.Y-g), min(w, b.Max.X+g), min(h, b.Max.Y+g))
	for head := 0; head < len(s.stack); head++ {
		for _, nb := range neighbours4(int(s.stack[head]), w, h) {
			if nb < 0 || s.occ.Pix[nb] == 1 || !(image.Point{nb % w, nb / w}).In(box) ||
				!(fm.Pix[(nb/w+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+nb%w+fr.Min.X-fm.Rect.Min.X] > 0) {
				continue
			}
			f := pixelFeatures(frame, fr, w, nb)
			if dc := c.dist(f, c.med); dc > 1 || c.dist(f, c.skin) <= dc {
				continue
			}
			s.occ.Pix[nb] = 1
			s.stack = append(s.stack, int32(nb))
		}
	}
}

// floodOutside reports whether at least want pixels outside the face (fm ≤ ½, over fr) that
// look like c are 4-connected to s.label's region k through each other, or a quarter as many
// reaching fr's edge (the face's box cuts off what lies beyond); s.zone marks them with k.
func (s *Swapper) floodOutside(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, k int32, c *coverLook, want int) bool {
	w, h := fr.Dx(), fr.Dy()
	outside := func(i int) bool {
		return fm.Pix[(i/w+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+i%w+fr.Min.X-fm.Rect.Min.X] <= 0.5
	}
	b := s.boxes[k]
	s.stack = s.stack[:0]
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if i := y*w + x; s.label[i] == k {
				s.stack = append(s.stack, int32(i))
			}
		}
	}
	got, edge := 0, false
	for head := 0; head < len(s.stack) && got < want; head++ {
		for _, nb := range neighbours4(int(s.stack[head]), w, h) {
			if nb < 0 || s.label[nb] == k || s.zone.Pix[nb] == float32(k) || !outside(nb) || c.dist(pixelFeatures(frame, fr, w, nb), c.med) > 1 {
				continue
			}
			s.zone.Pix[nb] = float32(k)
			s.stack = append(s.stack, int32(nb))
			got++
			x, y := nb%w, nb/w
			edge = edge || x == 0 || y == 0 || x == w-1 || y == h-1
		}
	}
	return got >= want || edge && 4*got >= want
}

// aroundFace reports whether what looks like c lies beyond much of the face's outline below
// the eyes (row eyes of fr's grid down): of the pixels beyond the outline (fm ≤ heldEdge)
// within heldBand of each row's face, over a share heldAround. A find that
// continues into a bare neck, shoulders or a skin-toned wall around the face is no more in
// front than the skin is; a held thing's handle, a phone or an arm crosses the outline in one
// place.
func (s *Swapper) aroundFace(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, eyes int, c *coverLook) bool {
	w, h := fr.Dx(), fr.Dy()
	band := max(2, int(heldBand*float64(w)))
	alike, all := 0, 0
	for y := max(0, eyes); y < h; y++ {
		row := fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		x0, x1 := -1, -1 // the row's first and last pixel of the face
		for x, v := range row {
			if v > 0.5 && x0 < 0 {
				x0 = x
			}
			if v > 0.5 {
				x1 = x
			}
		}
		if x0 < 0 {
			continue
		}
		for _, r := range [2][2]int{{max(0, x0-band), x0}, {x1 + 1, min(w, x1+band+1)}} {
			for x := r[0]; x < r[1]; x++ {
				if row[x] > heldEdge {
					continue
				}
				all++
				if c.dist(pixelFeatures(frame, fr, w, y*w+x), c.med) <= 1 {
					alike++
				}
			}
		}
	}
	return float64(alike) > heldAround*float64(all)
}

// regionBoxes sets s.boxes[l] to the bounding box of each of the n regions labelled in s.label
// (over a w×h grid); s.boxes[0] is unused.
func (s *Swapper) regionBoxes(n, w, h int) {
	s.boxes = s.boxes[:0]
	for range n + 1 {
		s.boxes = append(s.boxes, image.Rectangle{Min: image.Point{w, h}})
	}
	for i, l := range s.label {
		if l > 0 {
			x, y, b := i%w, i/w, &s.boxes[l]
			b.Min.X, b.Min.Y, b.Max.X, b.Max.Y = min(b.Min.X, x), min(b.Min.Y, y), max(b.Max.X, x+1), max(b.Max.Y, y+1)
		}
	}
}
