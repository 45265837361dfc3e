package swap

import (
	"image"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A cover is one object with an outline, and the rules often find only pieces of it: the
// parts of a textured or shaded cover farthest from the skin's colour, a finger's tip and
// knuckle but not the finger between, the half of an apple in the light. A piece found says
// what the cover looks like and where it is: each piece large enough to have a colour of its
// own (see fitCover) continues, over the face outside the features, through the connected
// pixels that look like it and more like it than like the skin, within its box grown by
// completeReach. A small piece so completed may reach the size that dropSmall keeps; skin
// beside a piece found on a bare face (a frame's rim, hair at the temple) does not look like
// it, so a bare face takes back nothing more.

// completeReach is how far (share of the face size) beyond its piece's box a cover is
// completed: a finger or a hand's edge is a few times its found tip, not the face beyond.
const completeReach = 0.15

// completeOutline is the least share of a completion's stops that must be a step (see
// outlined).
const completeOutline = 0.5

// completeCovers adds to s.occ (over fr, 1 on occluders) the rest of each cover of which a
// piece was found (see above).
func (s *Swapper) completeCovers(frame *raster.Image, fm *raster.Mask, size float64, fr image.Rectangle, m skinModel) {
	if !slices.Contains(s.occ.Pix, 1) { // the common case, a bare face
		return
	}
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
	s.clip.Reset(fr)
	skin := [3]float32{m.med[0], m.med[1]*m.ux - m.med[2]*m.uy, m.med[1]*m.uy + m.med[2]*m.ux}
	reach := int(completeReach * size)
	small := int(occMinArea * float64(faceArea(fm, fr)))
	for k := 1; k <= n; k++ {
		if s.area[k] < least {
			continue
		}
		var c coverLook
		if !s.fitCover(frame, fr, int32(k), &c, m, least) {
			continue
		}
		c.skin = skin
		if c.dist(c.skin, c.med) <= 1 || s.area[k] < small && m.far(c.med) <= 1 || s.clipped(frame, fr, int32(k)) {
			continue
		}
		pb := s.boxes[k]
		c.box = image.Rect(max(0, pb.Min.X-reach), max(0, pb.Min.Y-reach), min(w, pb.Max.X+reach), min(h, pb.Max.Y+reach))
		if start := s.floodLook(frame, fm, fr, int32(k), &c); !s.outlined(frame, fm, fr, &c, start) {
			for _, i := range s.stack[start:] {
				s.clip.Pix[i] = 0
			}
		}
	}
	if zzDebug != nil {
		zzDebug.Reset(fr)
		copy(zzDebug.Pix, s.clip.Pix)
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
func (s *Swapper) floodLook(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, k int32, c *coverLook) int {
	w, h := fr.Dx(), fr.Dy()
	pb := s.boxes[k]
	s.stack = s.stack[:0]
	for y := pb.Min.Y; y < pb.Max.Y; y++ {
		for x := pb.Min.X; x < pb.Max.X; x++ {
			if i := y*w + x; s.label[i] == k {
				s.stack = append(s.stack, int32(i))
			}
		}
	}
	start := len(s.stack)
	for head := 0; head < len(s.stack); head++ {
		for _, nb := range neighbours4(int(s.stack[head]), w, h) {
			if !s.completable(fm, fr, nb, c) || s.label[nb] >= 0 || s.clip.Pix[nb] > 0 {
				continue
			}
			f := pixelFeatures(frame, fr, w, nb)
			if dc := c.dist(f, c.med); dc > 1 || c.dist(f, c.skin) <= dc {
				continue
			}
			s.clip.Pix[nb] = 1
			s.stack = append(s.stack, int32(nb))
		}
	}
	return start
}

// completable reports whether pixel i of fr's grid (-1: none) is one a cover may be completed
// over: on the face (fm > 0), outside the features and within c's box.
func (s *Swapper) completable(fm *raster.Mask, fr image.Rectangle, i int, c *coverLook) bool {
	w := fr.Dx()
	if i < 0 || s.excl.Pix[i] >= 1 || !(image.Point{i % w, i / w}).In(c.box) {
		return false
	}
	return fm.Pix[(i/w+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+i%w+fr.Min.X-fm.Rect.Min.X] > 0
}

// outlined reports whether the pixels s.stack[start:] (a piece's completion, in s.clip) end at
// an outline: where the completion stops at a pixel it might have taken, the pixel a step
// beyond unlike the one within on at least completeOutline of the stops. A cover's edge is such
// a step; skin shading smoothly away from a highlight or a shadow taken for a cover is not.
func (s *Swapper) outlined(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, c *coverLook, start int) bool {
	if start == len(s.stack) {
		return true
	}
	w, h := fr.Dx(), fr.Dy()
	stops, steps := 0, 0
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
		}
	}
	return float64(steps) >= completeOutline*float64(stops)
}

var zzDebug *raster.Mask

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
