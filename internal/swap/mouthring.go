package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Facial hair rings the mouth without crossing it: a beard, stubble, a moustache or a chin
// beard around bare lips. The rules that count a feature ringed or bridged by a find as covered
// (coveredFeatures, bridgeFeatures, bridgeThick) would take the lips back with the hair.
//
// Texture tells hair from the covers that cross the mouth: hair is busy from pixel to pixel,
// bare lips are smooth but for their outline, and a cover over the mouth is as smooth over it
// as around it (a hand, an apple, a bar) or as busy (a scarf's weave). So once per frame, at
// full resolution, mouthHair asks whether the ring about the mouth is much busier than most of
// the lips; only then may those rules leave any of the mouth to the swap, and they leave it
// the lips' smooth pixels (stubble's dots are the skin darkened: colour cannot tell them from
// lips) and the pixels that do not look like the hair found about the mouth (its colour fitted
// as growIntoFeatures fits a cover's). Elsewhere they cover the mouth as before.

const (
	// mouthBusyLeast is the least busyness (see busyAt; the upper quartile over the ring, which
	// a chin beard or a moustache alone fills) of hair:
	// a grainy or lossy face's skin, and a textured cover's edges, stay under it.
	mouthBusyLeast = 0.1
	// mouthBusyHair is how many times busier than the lips' lower quartile the ring must be:
	// the lips' own busyness lies at their outline and their parting. mouthBusyCover is how
	// many times busier than the lips' median: a grainy or noisy cover over the mouth is about
	// as busy over the lips as about them.
	mouthBusyHair  = 3
	mouthBusyCover = 2
	// mouthCrossed is the least share of the lips' pixels that must look like the hair about
	// the mouth for its colour to leave none of them open.
	mouthCrossed = 0.5
	// mouthLipsGrow scales the lips' hull about its centre for the pixels left open: dlib
	// places the mouth a few pixels off under a beard.
	mouthLipsGrow = 1.1
)

// mouthZones fills s.zone (over fr) with the ring about the mouth (2), its zone (1) and the
// lips' hull grown by k (3).
func (s *Swapper) mouthZones(target *face.Landmarks68, fr image.Rectangle, k float64) {
	z := featureZones[4]
	s.zone.Reset(fr)
	s.fillZone(target, z, z.k*1.4, 2)
	s.fillZone(target, z, z.k, 1)
	s.fillZone(target, z, k, 3)
}

// mouthHair sets s.hairMouth, whether the ring about the mouth is hair (see above), and marks
// in s.mouthSmooth (over fr) the lips' pixels smoother than halfway (geometrically) between
// the ring and the lips; none where it is not hair.
func (s *Swapper) mouthHair(frame *raster.Image, target *face.Landmarks68, fr image.Rectangle) {
	s.zone, s.mouthSmooth = s.mouthSmooth, s.zone
	s.mouthZones(target, fr, 1)
	s.zone, s.mouthSmooth = s.mouthSmooth, s.zone
	zone := s.mouthSmooth.Pix
	w, h := fr.Dx(), fr.Dy()
	ring, lips := s.busyOf(frame, fr, zone, 2, 0), s.busyOf(frame, fr, zone, 3, 1)
	s.hairMouth = false
	var smooth float32
	if len(ring) >= 8 && len(lips) >= 8 {
		slices.Sort(ring)
		rb := ring[3*len(ring)/4]
		slices.Sort(lips)
		s.hairMouth = rb >= mouthBusyLeast && rb >= mouthBusyHair*lips[len(lips)/4] && rb >= mouthBusyCover*lips[len(lips)/2]
		smooth = float32(math.Sqrt(float64(rb * max(lips[len(lips)/2], mouthBusyLeast/mouthBusyHair))))
	}
	if !s.hairMouth {
		clear(zone)
		return
	}
	s.zone, s.mouthSmooth = s.mouthSmooth, s.zone
	s.mouthZones(target, fr, mouthLipsGrow)
	s.zone, s.mouthSmooth = s.mouthSmooth, s.zone
	for i, v := range zone {
		zone[i] = 0
		if v == 3 && busyAround(frame, fr, w, h, i) < smooth {
			zone[i] = 1
		}
	}
}

// mouthOpen marks in s.lipsOpen (over fr) the pixels of the mouth's zone that a ring or a bridge
// of the covers in cover (> ½, over fr) leaves to the swap: none unless the ring about the
// mouth is hair (s.hairMouth); then the lips' smooth pixels (s.mouthSmooth) and those of the
// mouth's zone that do not look like the covers in the ring, or look more like the lips,
// unless at least mouthCrossed of the lips look like them. It uses s.feat and s.dev.
func (s *Swapper) mouthOpen(frame *raster.Image, target *face.Landmarks68, fr image.Rectangle, cover []float32) {
	s.zone, s.lipsOpen = s.lipsOpen, s.zone
	s.mouthZones(target, fr, mouthLipsGrow)
	s.zone, s.lipsOpen = s.lipsOpen, s.zone
	zone := s.lipsOpen.Pix
	if !s.hairMouth {
		clear(zone)
		return
	}
	var c coverLook
	if s.ringLook(frame, fr, zone, cover, &c) {
		c.haveFeat = s.lipsLook(frame, fr, zone, &c)
	}
	w := fr.Dx()
	for i, v := range zone {
		open := s.mouthSmooth.Pix[i] > 0
		if !open && c.haveFeat && (v == 1 || v == 3) {
			f := pixelFeatures(frame, fr, w, i)
			open = c.dist(f, c.med) > 1 || c.dist(f, c.feat) <= c.dist(f, c.med)
		}
		zone[i] = 0
		if open {
			zone[i] = 1
		}
	}
}

// ringLook fits c's colour (median, capped spread) to the covers (cover > ½) on the ring about
// the mouth (zone 2); false when they are too few to ring or bridge the mouth.
func (s *Swapper) ringLook(frame *raster.Image, fr image.Rectangle, zone, cover []float32, c *coverLook) bool {
	w := fr.Dx()
	for k := range s.feat {
		s.feat[k] = s.feat[k][:0]
	}
	for i, v := range zone {
		if v == 2 && cover[i] > 0.5 {
			f := pixelFeatures(frame, fr, w, i)
			for k := range 3 {
				s.feat[k] = append(s.feat[k], f[k])
			}
		}
	}
	if len(s.feat[0]) < 8 {
		return false
	}
	c.tolerate(s.lookSpread(c))
	return true
}

// lipsLook puts in c.feat the median colour of the lips' pixels (zone 3) unlike c's cover, and
// says whether c may open any of them: fewer than mouthCrossed of the lips, and not their
// median, look like the cover.
func (s *Swapper) lipsLook(frame *raster.Image, fr image.Rectangle, zone []float32, c *coverLook) bool {
	w := fr.Dx()
	for k := range s.feat {
		s.feat[k] = s.feat[k][:0]
	}
	lips := 0
	for i, v := range zone {
		if v == 3 {
			lips++
			if f := pixelFeatures(frame, fr, w, i); c.dist(f, c.med) > 1 {
				for k := range 3 {
					s.feat[k] = append(s.feat[k], f[k])
				}
			}
		}
	}
	if unlike := len(s.feat[0]); unlike == 0 || float64(lips-unlike) >= mouthCrossed*float64(lips) {
		return false
	}
	for k := range 3 {
		c.feat[k] = median(s.feat[k])
	}
	return true
}

// coverFeatures adds to s.clip (over fr) the features its finds ring or cross (coveredFeatures,
// bridgeFeatures) but for the mouth's pixels that they only ring (see mouthOpen).
func (s *Swapper) coverFeatures(frame *raster.Image, target *face.Landmarks68, fr image.Rectangle, size float64) {
	s.mouthOpen(frame, target, fr, s.clip.Pix)
	s.coveredFeatures(target, fr)
	s.bridgeFeatures(fr, size)
}

// busyOf returns busyAt over the pixels of fr's grid where zone is v, in s.busy[k].
func (s *Swapper) busyOf(frame *raster.Image, fr image.Rectangle, zone []float32, v float32, k int) []float32 {
	w, h := fr.Dx(), fr.Dy()
	b := s.busy[k][:0]
	for i, z := range zone {
		if z == v {
			b = append(b, busyAt(frame, fr, w, h, i))
		}
	}
	s.busy[k] = b
	return b
}

// busyAt is how far pixel i of fr's grid (w×h) stands out of its four neighbours: its log
// brightness (see features) less their mean, in magnitude (a neighbour off the grid counts as
// the pixel).
func busyAt(frame *raster.Image, fr image.Rectangle, w, h, i int) float32 {
	b := func(j int) float32 {
		p := frame.Pix[(fr.Min.Y+j/w)*frame.Stride+3*(fr.Min.X+j%w):]
		return logTable[int(p[0])+int(p[1])+int(p[2])+2]
	}
	c := b(i)
	var sum float32
	for _, nb := range neighbours4(i, w, h) {
		if nb < 0 {
			sum += c
		} else {
			sum += b(nb)
		}
	}
	return abs32(c - sum/4)
}

// busyAround is the mean of busyAt over pixel i's 3×3 neighbourhood on fr's grid (w×h).
func busyAround(frame *raster.Image, fr image.Rectangle, w, h, i int) float32 {
	x, y := i%w, i/w
	var sum float32
	n := 0
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			if xx, yy := x+dx, y+dy; xx >= 0 && xx < w && yy >= 0 && yy < h {
				sum += busyAt(frame, fr, w, h, yy*w+xx)
				n++
			}
		}
	}
	return sum / float32(n)
}
