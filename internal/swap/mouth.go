package swap

import (
	"image"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The colour and structure tests leave the mouth out (the lips are red and dark, the teeth
// bright, the gap between them dark, by nature), and growIntoFeatures carries a cover found
// beside it over it only when the cover's colour, fitted over the whole find, is unlike the
// skin's. A spoon's bowl, a bottle's neck or a forearm of the skin's own hue, or a find whose
// piece took in skin beside it, stops at the mouth's outline, and the swap paints a mouth over
// it. What lies at the outline where a find meets it says what the cover looks like there: it
// goes on over the mouth through the pixels connected to it that look like it and more like it
// than like the lips (the mouth's pixels that do not look like it: lips, teeth and the gap
// where the cover leaves them bare). Lips and teeth the cover does not hide stop it, so a
// cover beside the mouth, or skin around the lips, does not cross them; and a growth that
// takes little of the lips is the skin ring around them, which stays swapped. Only a find
// large enough to be kept on its own goes on, and only where it meets the mouth's zone along
// a cover's width: a lossy frame's blocks beside a smile are found as small pieces of the
// skin's hue, and a mark on the cheek grazes the zone at a corner; grown over pale lips
// either takes back the mouth on the frames where it is found. And what a growth takes of the
// lips must look like its find: a cover goes on over the mouth as it is beside it, while a
// find of bare skin grows into the pale lips' own shading at the edge of its tolerance.

const (
	// mouthRim is how far (share of the face size) beyond the mouth's zone a find's pixels
	// are taken to fit what the cover looks like where it meets the mouth.
	mouthRim = 0.04
	// mouthLeast is the least share of the lips' hull a cover's growth must take: less is
	// the skin ring around the lips, or a lip's soft edge.
	mouthLeast = 0.1
	// mouthRingReach is how far (share of the face size, in 4-connected steps) a cover of the
	// skin's hue grows over the skin ring around the lips from its find: the ring looks like it.
	mouthRingReach = 0.06
	// mouthMeet is the least width (share of the face size, in pixels of the find touching
	// the mouth's zone) along which a find must meet the zone: a spoon's handle is about
	// twice as wide; a mark beside the mouth's corner that grazes the zone is not a cover
	// reaching onto the mouth.
	mouthMeet = 0.015
	// mouthBeyondFind is how much farther (in multiples of the cover's tolerances) the median
	// pixel a growth takes of the lips may lie from the find's colour than the find's own
	// upper quartile does.
	mouthBeyondFind = 0.25
	// mouthClipped is the level at which a channel is taken as blown out.
	mouthClipped = 250
)

// mouthCovers adds to s.occ (over fr, 1 on occluders) the continuation over the mouth of each
// find that meets its zone (see above). It uses s.zone, s.clip, s.label and s.stack.
func (s *Swapper) mouthCovers(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle, m skinModel) {
	if !slices.Contains(s.occ.Pix, 1) {
		return
	}
	w, h := fr.Dx(), fr.Dy()
	// s.zone: 2 on the lips' hull, 1 on the rest of the mouth's zone (as features fills it).
	s.zone.Reset(fr)
	s.hullOf(target[48:60], 1.25)
	raster.FillConvex(&s.zone, s.partHull, 1)
	s.hullOf(target[48:60], 1)
	raster.FillConvex(&s.zone, s.partHull, 2)
	lips := 0
	for _, v := range s.zone.Pix {
		if v == 2 {
			lips++
		}
	}
	if lips == 0 {
		return
	}
	// s.clip: 1 on the finds that dropSmall keeps on their own. A smaller one (a lossy
	// frame's block beside a smile, a blemish) is no cover, and what it grew over the mouth
	// would make it large enough to keep.
	s.keptOnTheirOwn(fm, fr)
	// The finds outside the zone within mouthRim of it, each piece on its own.
	rim := max(1, int(mouthRim*size))
	zb := boxOf(s.zone.Pix, w, h)
	near := image.Rect(zb.Min.X-rim, zb.Min.Y-rim, zb.Max.X+rim, zb.Max.Y+rim).Intersect(image.Rect(0, 0, w, h))
	s.sizeLabels(w * h)
	for i, v := range s.clip.Pix {
		s.label[i] = -1
		if v == 1 && s.zone.Pix[i] == 0 && (image.Point{i % w, i / w}).In(near) {
			s.label[i] = 0
		}
	}
	n := s.components(w, h)
	s.regionBoxes(n, w, h)
	least := max(8, int(growSeedLeast*size*size))
	meet := max(1, int(mouthMeet*size))
	skin := [3]float32{m.med[0], m.med[1]*m.ux - m.med[2]*m.uy, m.med[1]*m.uy + m.med[2]*m.ux}
	s.clip.Reset(fr)
	for k := int32(1); k <= int32(n); k++ {
		if s.area[k] < least/2 || s.meetsZone(k, w, h) < meet {
			continue
		}
		var c coverLook
		if !s.fitRim(frame, fr, k, &c) {
			continue
		}
		c.skin = skin
		s.floodMouth(frame, fm, size, fr, k, &c, lips)
	}
	for i, v := range s.clip.Pix {
		if v > 0 {
			s.occ.Pix[i] = 1
		}
	}
}

// hullOf sets s.partHull to the hull of pts scaled about their centre by k.
func (s *Swapper) hullOf(pts []geom.Pt, k float64) {
	s.part = append(s.part[:0], pts...)
	c := geom.Mean(s.part)
	for i, p := range s.part {
		s.part[i] = c.Add(p.Sub(c).Scale(k))
	}
	s.sorted, s.partHull = convexHull(s.part, s.sorted, s.partHull)
}

// boxOf is the bounding box of v's non-zero pixels on a w×h grid.
func boxOf(v []float32, w, h int) image.Rectangle {
	b := image.Rectangle{Min: image.Point{w, h}}
	for i, p := range v {
		if p > 0 {
			x, y := i%w, i/w
			b.Min.X, b.Min.Y, b.Max.X, b.Max.Y = min(b.Min.X, x), min(b.Min.Y, y), max(b.Max.X, x+1), max(b.Max.Y, y+1)
		}
	}
	return b
}

// keptOnTheirOwn sets s.clip (over fr) to 1 on the finds of s.occ that cover at least
// occMinArea of the face (fm), as dropSmall keeps them, and 0 elsewhere.
func (s *Swapper) keptOnTheirOwn(fm *raster.Mask, fr image.Rectangle) {
	s.clip.Reset(fr)
	s.labelRegions(s.occ.Pix, 1, fr)
	least := int(occMinArea * float64(faceArea(fm, fr)))
	for i, l := range s.label {
		if l > 0 && s.area[l] >= least {
			s.clip.Pix[i] = 1
		}
	}
}

// meetsZone is how many pixels of s.label's region k (on a w×h grid) touch the mouth's zone
// where nothing was found: how wide the cover is where it reaches the mouth.
func (s *Swapper) meetsZone(k int32, w, h int) int {
	pb := s.boxes[k]
	n := 0
	for y := pb.Min.Y; y < pb.Max.Y; y++ {
		for x := pb.Min.X; x < pb.Max.X; x++ {
			if i := y*w + x; s.label[i] == k {
				for _, nb := range neighbours4(i, w, h) {
					if nb >= 0 && s.zone.Pix[nb] > 0 && s.occ.Pix[nb] != 1 {
						n++
						break
					}
				}
			}
		}
	}
	return n
}

// fitRim sets c's median and tolerances from s.label's region k (its pixels lie within
// mouthRim of the mouth): what the cover looks like where it meets the mouth. It is false
// when their spread is too wide for one cover, or when most of them are blown out (their
// colour is the light's: a blown cheek and a smile's blown teeth look alike).
func (s *Swapper) fitRim(frame *raster.Image, fr image.Rectangle, k int32, c *coverLook) bool {
	w := fr.Dx()
	pb := s.boxes[k]
	for i := range 3 {
		s.feat[i] = s.feat[i][:0]
	}
	clipped := 0
	for y := pb.Min.Y; y < pb.Max.Y; y++ {
		for x := pb.Min.X; x < pb.Max.X; x++ {
			if i := y*w + x; s.label[i] == k {
				p := frame.Pix[(fr.Min.Y+y)*frame.Stride+3*(fr.Min.X+x):]
				if max(p[0], p[1], p[2]) >= mouthClipped {
					clipped++
				}
				f := features(p[0], p[1], p[2])
				for j := range 3 {
					s.feat[j] = append(s.feat[j], f[j])
				}
			}
		}
	}
	if 2*clipped > len(s.feat[0]) {
		return false
	}
	tol := s.lookSpread(c)
	if tol[0] > 2*growBrightMost || max(tol[1], tol[2]) > 2*growChromaMost {
		return false
	}
	c.tolerate(tol)
	return true
}

// floodMouth marks in s.clip, breadth first from s.label's region k, the pixels of the mouth's
// zone (s.zone > 0, fm > 0, not found but for bands) that look like c and more like it than like the mouth's
// own pixels, and (for a cover unlike the skin) than like the skin; unless it takes less than
// mouthLeast of the lips' hull (lips pixels) not found before, when it marks nothing.
func (s *Swapper) floodMouth(frame *raster.Image, fm *raster.Mask, size float64, fr image.Rectangle, k int32, c *coverLook, lips int) {
	w, h := fr.Dx(), fr.Dy()
	// What the mouth looks like where the cover leaves it: the median of the zone's pixels
	// (every other one each way) that do not look like the cover.
	for i := range 3 {
		s.feat[i] = s.feat[i][:0]
	}
	for i, v := range s.zone.Pix {
		if x, y := i%w, i/w; v == 2 && x%2 == 0 && y%2 == 0 && s.occ.Pix[i] != 1 {
			if f := pixelFeatures(frame, fr, w, i); c.dist(f, c.med) > 1 {
				for j := range 3 {
					s.feat[j] = append(s.feat[j], f[j])
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
	skinLike := c.dist(c.skin, c.med) <= 1
	if skinLike && !c.haveFeat { // no lips, teeth or gap to tell it from: a mouth of flat skin
		return
	}
	reach := float32(max(1, int(mouthRingReach*size)))
	s.stackRegion(k, w)
	from := len(s.stack)
	for head := 0; head < len(s.stack); head++ {
		d := s.clip.Pix[s.stack[head]] + 1
		for _, nb := range neighbours4(int(s.stack[head]), w, h) {
			// Through a band found by its shape (a spoon's handle from the lips), which it takes
			// again, so that the band does not wall the growth off the rest of the mouth; not
			// through other finds, which a lossy bare mouth's blocks would lead it past.
			if nb < 0 || s.zone.Pix[nb] == 0 || skinLike && s.zone.Pix[nb] == 1 && d > reach || s.occ.Pix[nb] == 1 && s.bands.Pix[nb] == 0 || s.clip.Pix[nb] > 0 {
				continue
			}
			if !(fm.Pix[(nb/w+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+nb%w+fr.Min.X-fm.Rect.Min.X] > 0) {
				continue
			}
			f := pixelFeatures(frame, fr, w, nb)
			if dc := c.dist(f, c.med); dc > 1 || !skinLike && c.dist(f, c.skin) <= dc || c.haveFeat && c.dist(f, c.feat) <= dc {
				continue
			}
			s.clip.Pix[nb] = d
			s.stack = append(s.stack, int32(nb))
		}
	}
	took := 0
	for _, i := range s.stack[from:] {
		if s.zone.Pix[i] == 2 && s.occ.Pix[i] != 1 {
			took++
		}
	}
	if float64(took) < mouthLeast*float64(lips) || s.tooUnlikeFind(frame, fr, c, from) {
		for _, i := range s.stack[from:] {
			s.clip.Pix[i] = 0
		}
	}
}

// tooUnlikeFind reports whether the median pixel that the growth s.stack[from:] takes of the
// lips lies more than mouthBeyondFind farther from c's colour than the upper quartile of the
// find's own pixels, s.stack[:from]: the lips' shading, not the cover going on over them.
func (s *Swapper) tooUnlikeFind(frame *raster.Image, fr image.Rectangle, c *coverLook, from int) bool {
	w := fr.Dx()
	find, took := s.feat[0][:0], s.feat[1][:0]
	for _, i := range s.stack[:from] {
		find = append(find, c.dist(pixelFeatures(frame, fr, w, int(i)), c.med))
	}
	for _, i := range s.stack[from:] {
		if s.zone.Pix[i] == 2 && s.occ.Pix[i] != 1 {
			took = append(took, c.dist(pixelFeatures(frame, fr, w, int(i)), c.med))
		}
	}
	s.feat[0], s.feat[1] = find, took
	if len(find) == 0 || len(took) == 0 {
		return false
	}
	slices.Sort(find)
	slices.Sort(took)
	return took[len(took)/2] > find[3*len(find)/4]+mouthBeyondFind
}
