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
// (coveredFeatures, bridgeFeatures, bridgeThick) would take the lips back with the hair. Its
// colour cannot tell them apart (stubble is the skin darkened in dots, a beard's strands range
// from dark to light), but its texture can: hair is busy from pixel to pixel, bare lips are
// smooth but for their outline. A cover that crosses the mouth is as smooth over it as around
// it (a hand, an apple, a bar), or as busy (a scarf's weave). So where the ring about the mouth
// is much busier than most of the lips, those rules leave the smooth pixels of the mouth's
// zone to the swap; the other rules (growIntoFeatures' growth, mouthCovers) still carry a cover
// over them by its colour.

const (
	// mouthBusyLeast is the least busyness (see busyAt; the median over the ring) of hair:
	// a grainy or lossy face's skin, and a textured cover's edges, stay under it.
	mouthBusyLeast = 0.1
	// mouthBusyHair is how many times busier than the lips' lower quartile the ring must be:
	// the lips' own busyness lies at their outline and their parting.
	mouthBusyHair = 3
)

// mouthOpen marks in s.lipsOpen (over fr) the pixels of the mouth's feature zone that a ring or
// a bridge leaves to the swap: where the ring about the mouth is hair (see above), the zone's
// pixels smoother than halfway (geometrically) between the ring and the lips. It uses s.busy
// and s.part.
func (s *Swapper) mouthOpen(frame *raster.Image, target *face.Landmarks68, fr image.Rectangle) {
	// The ring about the mouth (2), its zone (1) and the lips' hull (3), until they are told.
	z := featureZones[4]
	s.zone, s.lipsOpen = s.lipsOpen, s.zone
	s.zone.Reset(fr)
	s.fillZone(target, z, z.k*1.4, 2)
	s.fillZone(target, z, z.k, 1)
	s.fillZone(target, z, 1, 3)
	s.zone, s.lipsOpen = s.lipsOpen, s.zone
	zone := s.lipsOpen.Pix
	w, h := fr.Dx(), fr.Dy()
	ring, lips := s.busyOf(frame, fr, zone, 2, 0), s.busyOf(frame, fr, zone, 3, 1)
	if len(ring) < 8 || len(lips) < 8 {
		clear(zone)
		return
	}
	rb := median(ring)
	slices.Sort(lips)
	lb := lips[len(lips)/4]
	if rb < mouthBusyLeast || rb < mouthBusyHair*lb {
		clear(zone)
		return
	}
	smooth := float32(math.Sqrt(float64(rb * lips[len(lips)/2])))
	for i, v := range zone {
		zone[i] = 0
		if v == 3 || v == 1 && busyAround(frame, fr, w, h, i) < smooth {
			zone[i] = 1
		}
	}
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
