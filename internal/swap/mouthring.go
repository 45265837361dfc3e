package swap

import (
	"image"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Facial hair rings the mouth without crossing it: a beard, stubble, a moustache or a chin
// beard around bare lips. The rules that count a feature ringed or bridged by a find as covered
// (coveredFeatures, bridgeFeatures, bridgeThick) would take the lips back with the hair. A
// cover crosses the mouth where the mouth looks like it: a hand or a scarf over the lips, a
// bar's or a finger's band across them. So over the mouth those rules fill only the pixels
// that look like the cover found in the ring about it (its median and spread of colour, as
// growIntoFeatures fits a cover), unless most of the lips do: then the cover lies over the
// mouth, which shows through it here and there (a hand's shading, a scarf's weave).

// mouthCrossed is the least share of the lips' pixels that must look like the cover about the
// mouth for a ring or a bridge to cover the whole mouth.
const mouthCrossed = 0.5

// mouthOpen marks in s.lipsOpen (over fr) the pixels of the mouth's feature zone that a ring or
// a bridge of the covers in cover (> ½, over fr) leaves to the swap: those that do not look
// like the covers in the ring about the mouth, unless at least mouthCrossed of the lips (their
// outline's hull) do. It uses s.feat.
func (s *Swapper) mouthOpen(frame *raster.Image, target *face.Landmarks68, fr image.Rectangle, cover []float32) {
	// The ring about the mouth (2), its zone (1) and the lips' hull (3), until they are told.
	z := featureZones[4]
	s.zone, s.lipsOpen = s.lipsOpen, s.zone
	s.zone.Reset(fr)
	s.fillZone(target, z, z.k*1.4, 2)
	s.fillZone(target, z, z.k, 1)
	s.fillZone(target, z, 1, 3)
	s.zone, s.lipsOpen = s.lipsOpen, s.zone
	zone := s.lipsOpen.Pix
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
	if len(s.feat[0]) < 8 { // nothing about the mouth to ring or bridge it
		clear(zone)
		return
	}
	var c coverLook
	var tol [3]float32
	for k := range 3 {
		var mad float32
		c.med[k], mad = medianMAD(s.feat[k], &s.dev)
		tol[k] = growSigmas * 1.4826 * mad
	}
	c.tb, c.tc = max(growBright, min(tol[0], growBrightMost)), max(growChroma, min(max(tol[1], tol[2]), growChromaMost))
	lips, like := 0, 0
	for k := range s.feat {
		s.feat[k] = s.feat[k][:0]
	}
	for i, v := range zone {
		if v == 3 {
			f := pixelFeatures(frame, fr, w, i)
			for k := range 3 {
				s.feat[k] = append(s.feat[k], f[k])
			}
			lips++
			if c.dist(f, c.med) <= 1 {
				like++
			}
		}
	}
	var mouth [3]float32
	for k := range 3 {
		if len(s.feat[k]) > 0 {
			mouth[k] = median(s.feat[k])
		}
	}
	// A textured cover's pixels stray past a tolerance fitted to one cover (see fitCover):
	// over the mouth its median is the cover's still.
	if lips == 0 || float64(like) >= mouthCrossed*float64(lips) || c.dist(mouth, c.med) <= 1 {
		clear(zone)
		return
	}
	// What the lips look like: the median of their pixels unlike the cover.
	for k := range s.feat {
		s.feat[k] = s.feat[k][:0]
	}
	for i, v := range zone {
		if f := pixelFeatures(frame, fr, w, i); v == 3 && c.dist(f, c.med) > 1 {
			for k := range 3 {
				s.feat[k] = append(s.feat[k], f[k])
			}
		}
	}
	for k := range 3 {
		c.feat[k] = median(s.feat[k])
	}
	for i, v := range zone {
		zone[i] = 0
		if v != 1 && v != 3 {
			continue
		}
		if f := pixelFeatures(frame, fr, w, i); c.dist(f, c.med) > 1 || c.dist(f, c.feat) <= c.dist(f, c.med) {
			zone[i] = 1
		}
	}
}

// coverFeatures adds to s.clip (over fr) the features its finds ring or cross (coveredFeatures,
// bridgeFeatures) but for the mouth's pixels that they only ring (see mouthOpen).
func (s *Swapper) coverFeatures(frame *raster.Image, target *face.Landmarks68, fr image.Rectangle, size float64) {
	s.mouthOpen(frame, target, fr, s.clip.Pix)
	s.coveredFeatures(target, fr)
	s.bridgeFeatures(fr, size)
}
