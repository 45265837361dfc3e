package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A cover is one object with an outline, and the rules often find only pieces of it: the
// parts of a shaded or textured cover farthest from the skin's colour, or smoothest against a
// grainy skin, a finger's knuckle but not the finger. A piece found says what the cover looks
// like and where it is, so each piece with a look of its own (see fitCover) continues, over
// the face outside the features and within its box grown by completeReach, through the
// connected pixels that look like it:
//   - a piece unlike the skin's colour, through pixels of its colour and more like it than
//     like the skin; the completion stands only where it ends at an outline (a step, see
//     outlined) with something unlike the cover around it, not where skin shades smoothly
//     away from a highlight or a shadow taken for a cover, nor where it stopped within more
//     of the same look. A piece dropSmall would drop (a lit or shaded patch of skin, a lossy
//     frame's block, as often as a cover's piece) stands only if what lies around its
//     completion is unlike it by completeContrast.
//   - a piece of the skin's colour but completeSmooth times smoother than the face's skin
//     (a smooth cover over a grainy, wrinkled face), through pixels of its colour that are
//     smoother than halfway (geometrically) between the two; on a grainy face only.
// A mostly clipped piece (a blown highlight) has the light's colour, not a cover's, and is
// not completed. No completion reaches about the eyes (see eyeZones): the lids, the fold and a
// lens's rim close the skin in there, and under a lens its look is the lens's.

const (
	// completeReach is how far (share of the face size) beyond its piece's box a cover is
	// completed: a finger or a hand is a few times its found knuckle, not the face beyond.
	completeReach = 0.15
	// completeOutline is the least share of a completion's stops that must be a step.
	completeOutline = 0.6
	// completeRing is how far (px) beyond its stops what lies around a completion is taken.
	completeRing = 2
	// completeContrast is how unlike (in the piece's tolerances) what lies around the
	// completion of a piece under occMinArea must be.
	completeContrast = 3
	// completeSmooth is how many times smoother than the face's skin a piece of the skin's
	// colour must be to be completed by its smoothness.
	completeSmooth = 5
	// completeGrainy is the least grain (see grain) of the face's skin for that: a heavily
	// compressed face's blocks are that much smoother than its little grain, and a block so
	// completed would come and go with the keyframes.
	completeGrainy = 20
)

// completeCovers adds to s.occ (over fr, 1 on occluders) the rest of each cover of which a
// piece was found (see above).
func (s *Swapper) completeCovers(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle, m skinModel) {
	if !slices.Contains(s.occ.Pix, 1) { // the common case, a bare face
		return
	}
	s.eyeZones(target)
	w, h := fr.Dx(), fr.Dy()
	s.sizeLabels(w * h)
	for i, v := range s.occ.Pix {
		s.label[i] = -1
		if v == 1 {
			s.label[i] = 0
		}
	}
	n := s.components(w, h)
	s.regionBoxes(n, w, h)
	least := max(8, int(growSeedLeast*size*size))
	small := -1 // occMinArea's share of the face, taken once a piece needs it
	reach := int(completeReach * size)
	skin := [3]float32{m.med[0], m.med[1]*m.ux - m.med[2]*m.uy, m.med[1]*m.uy + m.med[2]*m.ux}
	var skinGrain float32 // the face's, taken once a piece needs it
	s.clip.Reset(fr)
	for k := int32(1); k <= int32(n); k++ {
		var c coverLook
		if s.area[k] < least || !s.fitCover(frame, fr, k, &c, m, least) || s.clipped(frame, fr, k) {
			continue
		}
		c.skin = skin
		pb := s.boxes[k]
		c.box = image.Rect(max(0, pb.Min.X-reach), max(0, pb.Min.Y-reach), min(w, pb.Max.X+reach), min(h, pb.Max.Y+reach))
		if c.dist(c.skin, c.med) <= 1 {
			var piece float32
			if piece, skinGrain = s.grains(frame, fm, fr, k, skinGrain); completeSmooth*piece < skinGrain && skinGrain >= completeGrainy {
				s.floodLook(frame, fm, fr, k, &c, float32(math.Sqrt(float64(piece*skinGrain))))
			}
			continue
		}
		start := s.floodLook(frame, fm, fr, k, &c, 0)
		stepped, contrast := s.outlined(frame, fm, fr, &c, start)
		if contrast < completeContrast && small < 0 {
			small = int(occMinArea * float64(faceArea(fm, fr)))
		}
		if !stepped || contrast < 1 || contrast < completeContrast && s.area[k] < small {
			for _, i := range s.stack[start:] {
				s.clip.Pix[i] = 0
			}
		}
	}
	for i, v := range s.clip.Pix {
		if v > 0 {
			s.occ.Pix[i] = 1
		}
	}
}

// floodLook marks in s.clip, breadth first from s.label's region k, the pixels of the face
// (fm > 0) outside the features (s.excl) and within c's box that c says are more of the cover.
// They are s.stack from the index it returns on.
func (s *Swapper) floodLook(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, k int32, c *coverLook, smooth float32) int {
	w, h := fr.Dx(), fr.Dy()
	s.stackRegion(k, w)
	start := len(s.stack)
	for head := 0; head < len(s.stack); head++ {
		for _, nb := range neighbours4(int(s.stack[head]), w, h) {
			if !s.completable(fm, fr, nb, c) || s.label[nb] >= 0 || s.clip.Pix[nb] > 0 {
				continue
			}
			f := pixelFeatures(frame, fr, w, nb)
			if smooth > 0 {
				if c.dist(f, c.med) > 1 || grain(frame, fr, nb) > smooth {
					continue
				}
			} else if dc := c.dist(f, c.med); dc > 1 || c.dist(f, c.skin) <= dc {
				continue
			}
			s.clip.Pix[nb] = 1
			s.stack = append(s.stack, int32(nb))
		}
	}
	return start
}

// completable reports whether pixel i of fr's grid (-1: none) is one a cover may be completed
// over: on the face (fm > 0), outside the features and their zones about the eyes, and
// within c's box.
func (s *Swapper) completable(fm *raster.Mask, fr image.Rectangle, i int, c *coverLook) bool {
	w := fr.Dx()
	if i < 0 || s.excl.Pix[i] >= 1 || !(image.Point{i % w, i / w}).In(c.box) ||
		s.inEyeZone(geom.Pt{X: float64(fr.Min.X + i%w), Y: float64(fr.Min.Y + i/w)}, false) {
		return false
	}
	return fm.Pix[(i/w+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+i%w+fr.Min.X-fm.Rect.Min.X] > 0
}

// outlined reports whether the pixels s.stack[start:] (a piece's completion, in s.clip) end at
// an outline: where the completion stops at a pixel it might have taken, the pixel a step
// beyond unlike the one within on at least completeOutline of the stops. A cover's edge is such
// a step; skin shading smoothly away from a highlight or a shadow taken for a cover is not.
// It also returns how unlike c the median of what lies completeRing beyond the stops is.
func (s *Swapper) outlined(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, c *coverLook, start int) (bool, float32) {
	if start == len(s.stack) {
		return true, 0
	}
	w, h := fr.Dx(), fr.Dy()
	stops, steps := 0, 0
	for i := range 3 {
		s.feat[i] = s.feat[i][:0]
	}
	for _, p := range s.stack[start:] {
		i := int(p)
		fi := pixelFeatures(frame, fr, w, i)
		for d, nb := range neighbours4(i, w, h) {
			if !s.completable(fm, fr, nb, c) || s.label[nb] >= 0 || s.clip.Pix[nb] > 0 {
				continue
			}
			stops++
			beyond := neighbours4(nb, w, h)[d]
			if beyond < 0 {
				beyond = nb
			}
			if c.dist(pixelFeatures(frame, fr, w, beyond), fi) > 1 {
				steps++
			}
			out := beyond
			for range completeRing {
				if nx := neighbours4(out, w, h)[d]; nx >= 0 {
					out = nx
				}
			}
			if s.label[out] < 0 && s.clip.Pix[out] == 0 {
				f := pixelFeatures(frame, fr, w, out)
				for j := range 3 {
					s.feat[j] = append(s.feat[j], f[j])
				}
			}
		}
	}
	var contrast float32
	if len(s.feat[0]) >= 8 {
		var around [3]float32
		for j := range 3 {
			slices.Sort(s.feat[j])
			around[j] = s.feat[j][len(s.feat[j])/2]
		}
		contrast = c.dist(around, c.med)
	}
	return float64(steps) >= completeOutline*float64(stops), contrast
}

// clipped reports whether most of s.label's region k is clipped (a channel at 255): a blown
// highlight, whose colour is the light's, not a cover's.
func (s *Swapper) clipped(frame *raster.Image, fr image.Rectangle, k int32) bool {
	w := fr.Dx()
	pb := s.boxes[k]
	n := 0
	for y := pb.Min.Y; y < pb.Max.Y; y++ {
		for x := pb.Min.X; x < pb.Max.X; x++ {
			if s.label[y*w+x] == k {
				if p := frame.Pix[(fr.Min.Y+y)*frame.Stride+3*(fr.Min.X+x):]; max(p[0], p[1], p[2]) == 255 {
					n++
				}
			}
		}
	}
	return 2*n > s.area[k]
}

// grain is the mean over the 3×3 pixels about pixel i of fr's grid of their brightness
// (R+G+B) steps to the right and down.
func grain(frame *raster.Image, fr image.Rectangle, i int) float32 {
	w := fr.Dx()
	x0, y0 := fr.Min.X+i%w, fr.Min.Y+i/w
	var sum, n int
	for y := max(0, y0-1); y <= min(frame.H-2, y0+1); y++ {
		for x := max(0, x0-1); x <= min(frame.W-2, x0+1); x++ {
			p := frame.Pix[y*frame.Stride+3*x:]
			q := p[3:]
			r := frame.Pix[(y+1)*frame.Stride+3*x:]
			l := int(p[0]) + int(p[1]) + int(p[2])
			sum += abs(l-int(q[0])-int(q[1])-int(q[2])) + abs(l-int(r[0])-int(r[1])-int(r[2]))
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return float32(sum) / float32(n)
}

// grains are the median grain of s.label's region k and, unless skin is already known (> 0),
// of the unfound face outside the features (every fourth pixel each way).
func (s *Swapper) grains(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, k int32, skin float32) (piece, around float32) {
	w, h := fr.Dx(), fr.Dy()
	s.dev = s.dev[:0]
	pb := s.boxes[k]
	for y := pb.Min.Y; y < pb.Max.Y; y += 2 {
		for x := pb.Min.X; x < pb.Max.X; x += 2 {
			if i := y*w + x; s.label[i] == k {
				s.dev = append(s.dev, grain(frame, fr, i))
			}
		}
	}
	if len(s.dev) < 8 {
		return 1, skin
	}
	slices.Sort(s.dev)
	piece = s.dev[len(s.dev)/2]
	if skin > 0 {
		return piece, skin
	}
	s.dev = s.dev[:0]
	all := coverLook{box: image.Rect(0, 0, w, h)}
	for y := 1; y < h; y += 4 {
		for x := 1; x < w; x += 4 {
			if i := y*w + x; s.label[i] < 0 && s.completable(fm, fr, i, &all) {
				s.dev = append(s.dev, grain(frame, fr, i))
			}
		}
	}
	if len(s.dev) < 8 {
		return piece, 0
	}
	slices.Sort(s.dev)
	return piece, s.dev[len(s.dev)/2]
}
