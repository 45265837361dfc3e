package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Occluders are told from the target's skin by colour alone: a robust model of its skin
// (median and MAD of cheek, nose and chin samples) in a colour space where shading moves
// one axis only, and every face pixel far from it, outside the eyes, mouth and nostrils
// (dark or red by nature), is something in front of the face. Far is decided with
// hysteresis: a region counts only if part of it is very far (occStrong times the
// thresholds), so the skin's own wrinkles and folds, a little off, do not; around the brows
// only the very far counts (brows are darker than skin, glasses frames over them much more).

const (
	// occSigmas is how many robust standard deviations from the skin's median a pixel must
	// lie to count as an occluder.
	occSigmas = 4
	// occDarker and occBrighter are the least log-brightness steps (e^1 ≈ 2.7× darker,
	// e^0.45 ≈ 1.6× brighter) that count, whatever the spread: shadow and shine on skin stay
	// skin.
	occDarker   = 1.0
	occBrighter = 0.45
	// occLessSaturated and occHue are the least log-chromaticity steps that count, along
	// the skin's own axis (see skinAxis) and across it. A pixel further along it (more of
	// the skin's colour) never counts: skin grows so in its own folds and shadows, and so do
	// tan or red things, which are therefore not told from skin.
	occLessSaturated = 0.2
	occHue           = 0.12
	// occStrong is how much farther than the thresholds a pixel must lie to seed a region.
	occStrong = 1.5
	// occSeedErode is the half-thickness, as a share of the face size, that a seed region
	// must exceed (1 px for a 100 px face, 3 px for 300).
	occSeedErode = 0.01
	// occSampleRadius is the radius of each skin sample disc, as a share of the face size.
	occSampleRadius = 0.05
)

// logTable[v] is ln(v+1) for the colour features: a table, so a pixel costs lookups.
var logTable = func() (t [768]float32) {
	for i := range t {
		t[i] = float32(math.Log(float64(i + 1)))
	}
	return t
}()

// features are a pixel's brightness ln(R+G+B+3) and log-chromaticities a = ln((R+1)/(G+1)),
// b = ln((B+1)/(G+1)): a change of light level moves only the brightness.
func features(r, g, b uint8) [3]float32 {
	lg := logTable[g]
	return [3]float32{logTable[int(r)+int(g)+int(b)+2], logTable[r] - lg, logTable[b] - lg}
}

// skinAxis is the principal axis of the skin samples' chromaticities (a, b), pointing to
// redder: the way this face's skin varies with shading and blood (its shadows and creases
// lie along it, whatever its tone and the light's colour).
func skinAxis(a, b []float32) (ux, uy float32) {
	var ma, mb float64
	for i := range a {
		ma, mb = ma+float64(a[i]), mb+float64(b[i])
	}
	n := float64(len(a))
	ma, mb = ma/n, mb/n
	var saa, sab, sbb float64
	for i := range a {
		da, db := float64(a[i])-ma, float64(b[i])-mb
		saa, sab, sbb = saa+da*da, sab+da*db, sbb+db*db
	}
	x, y := majorAxis(saa, sab, sbb, 1e-12)
	if x < 0 {
		x, y = -x, -y
	}
	return float32(x), float32(y)
}

// majorAxis is the unit eigenvector of the larger eigenvalue of the symmetric matrix
// [[xx xy] [xy yy]]; where |xy| < tiny, too little to tell it from rounding, the axis of the
// larger diagonal value.
func majorAxis(xx, xy, yy, tiny float64) (x, y float64) {
	x, y = xy, (yy-xx)/2+math.Sqrt((xx-yy)*(xx-yy)/4+xy*xy)
	if math.Abs(xy) < tiny {
		x, y = 1, 0
		if yy > xx {
			x, y = 0, 1
		}
	}
	h := math.Hypot(x, y)
	return x / h, y / h
}

// skinCentres are where the skin is sampled: under each eye, each lower cheek, the nose's
// bridge and back, the chin and between the brows. Several regions, so an occluder over a
// few of them leaves the median on skin.
func skinCentres(l *face.Landmarks68, out *[8]geom.Pt) {
	mid := func(a, b geom.Pt) geom.Pt { return a.Add(b).Scale(0.5) }
	out[0] = mid(l[1], l[41])
	out[1] = mid(l[15], l[46])
	out[2] = mid(l[3], l[48])
	out[3] = mid(l[13], l[54])
	out[4] = l[28]
	out[5] = l[29]
	out[6] = mid(l[8], l[57])
	out[7] = mid(mid(l[21], l[22]), l[27])
}

// occluders writes into s.occ (over fr, after s.features) the weight the source keeps where fm > 0: 0 where
// something covers the target's face (its pixels stay), 1 on skin, feathered between. It
// is all 1 when the skin cannot be sampled.
func (s *Swapper) occluders(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle) {
	if !s.findOccluders(frame, target, fm, size, fr) {
		s.nothingCovers()
		return
	}
	s.featherOccluders(size)
}

// nothingCovers sets s.occ to what the source keeps on a face nothing covers: all of it.
func (s *Swapper) nothingCovers() {
	for i := range s.occ.Pix {
		s.occ.Pix[i] = 1
	}
}

// findOccluders marks in s.occ (over fr, after s.features) what covers the target's face where
// fm > 0: above ½ where something does. It reports whether anything does.
func (s *Swapper) findOccluders(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle) bool {
	s.occ.Reset(fr)
	s.foreignKept = 0
	s.sampleSkin(frame, target, size, fr)
	s.shade.on = false
	if len(s.feat[0]) < 16 {
		return false
	}
	lit := s.shadowLitLevel()
	m := s.fitSkin()
	s.lightField(frame, fm, size, fr)
	s.markOccluders(frame, fm, fr, m)
	s.markForeignAtMouth(frame, target, fm, fr, m)
	if len(s.stack) < 5 { // nothing a 3×3 majority would keep
		clear(s.occ.Pix)
	} else {
		s.growSeeds(fr, size)
	}
	s.mouthHair(frame, target, fr)
	s.structureCoarse(frame, target, fm, size, fr, m)
	s.detail(frame, target, fm, size, fr)
	s.texture(frame, target, fm, size, fr)
	s.mirror(frame, target, fm, size, fr, m)
	s.thinCovers(frame, target, fm, size, fr, m)
	s.skinBands(target, fm, size, fr)
	s.glasses(frame, target, size, m)
	s.growIntoFeatures(frame, target, fm, size, fr, m)
	s.mouthCovers(frame, target, fm, size, fr, m)
	s.completeCovers(frame, target, fm, size, fr, m)
	s.held.Reset(fr)
	copy(s.held.Pix, s.occ.Pix)
	s.dropSmall(&s.occ, fm, fr, occMinArea)
	s.keepHeld(frame, target, fm, size, fr, m)
	s.keepSpots(frame, target, fm, size, fr, m)
	s.foreignKept = s.keepForeign(frame, target, fm, fr, m)
	s.shadows(frame, fm, size, fr, lit)
	// A glasses rim alone may cover less of the face than occMinArea.
	s.keepRims()
	s.keepBands()
	s.fingers(frame, target, fm, size, fr)
	s.mouthRods(frame, target, fm, size, fr)
	s.coveredNose(frame, target, fm, fr, s.coveredEyes(frame, target, fm, fr))
	return slices.Contains(s.occ.Pix, 1) // not: the common case, a bare face
}

// featherOccluders turns s.occ's covers (above ½) into the weight the source keeps: 0 on them,
// grown a little and feathered into 1 on the skin.
func (s *Swapper) featherOccluders(size float64) {
	s.occ.Majority(5, &s.clip)
	s.occ.Dilate(1+int(0.01*size), &s.clip)
	sigma := math.Max(1, 0.006*size)
	s.occBlur.Apply(&s.occ, sigma)
	for i, v := range s.occ.Pix {
		s.occ.Pix[i] = 1 - min(1, 2*v)
	}
}

// sampleSkin fills s.feat with the features of the skin samples: every other pixel of the
// discs around the target's skin centres (the forehead's only judge which of them are skin).
func (s *Swapper) sampleSkin(frame *raster.Image, target *face.Landmarks68, size float64, fr image.Rectangle) {
	var centres [occDiscs]geom.Pt
	skinCentres(target, (*[8]geom.Pt)(centres[:8]))
	foreheadCentres(target, (*[occForeheadDiscs]geom.Pt)(centres[8:]))
	witnessCentres(target, (*[occWitnessDiscs]geom.Pt)(centres[8+occForeheadDiscs:]))
	rad := occSampleRadius * size
	for k := range s.feat {
		s.feat[k] = s.feat[k][:0]
	}
	var starts [len(centres) + 1]int
	var grain [len(centres)]float32
	for d, c := range centres {
		starts[d] = len(s.feat[0])
		s.dev = s.dev[:0]
		for y := int(c.Y - rad); y <= int(c.Y+rad); y += 2 {
			for x := int(c.X - rad); x <= int(c.X+rad); x += 2 {
				if !(image.Point{x, y}).In(fr) || math.Hypot(float64(x)-c.X, float64(y)-c.Y) > rad {
					continue
				}
				r, g, b := frame.At(x, y)
				f := features(r, g, b)
				for k := range 3 {
					s.feat[k] = append(s.feat[k], f[k])
				}
				// Grain steps both ways; an edge through the disc (a glasses bridge where
				// the brows' landmarks slid onto the lenses, a hairline) steps one way only.
				if x+1 < fr.Max.X && y+1 < fr.Max.Y {
					_, gx, _ := frame.At(x+1, y)
					_, gy, _ := frame.At(x, y+1)
					s.dev = append(s.dev, float32(2*min(absDiff(g, gx), absDiff(g, gy))))
				}
			}
		}
		grain[d] = float32(math.NaN())
		if len(s.dev) > 0 {
			slices.Sort(s.dev)
			grain[d] = s.dev[len(s.dev)/2]
		}
	}
	starts[len(centres)] = len(s.feat[0])
	s.dropCoveredSamples(&starts, &grain)
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// skinModel is what the skin samples look like: the skin's chromaticity axis (ux, uy), each
// feature's median, and the tolerances past which a pixel is not skin.
type skinModel struct {
	ux, uy                      float32
	med                         [3]float32
	darker, brighter, less, hue float32
}

// fitSkin turns the samples in s.feat into a skinModel, rotating their chromaticity onto
// the skin's axis in place.
func (s *Swapper) fitSkin() skinModel {
	// Chromaticity along the skin's own axis (more or less of its colour) and across it.
	var m skinModel
	m.ux, m.uy = skinAxis(s.feat[1], s.feat[2])
	for i, a := range s.feat[1] {
		b := s.feat[2][i]
		s.feat[1][i], s.feat[2][i] = a*m.ux+b*m.uy, b*m.ux-a*m.uy
	}
	var tol [3]float32
	for k := range 3 {
		m.med[k], tol[k] = medianMAD(s.feat[k], &s.dev)
		tol[k] *= occSigmas * 1.4826
	}
	m.darker, m.brighter = max(tol[0], occDarker), max(tol[0], occBrighter)
	m.less, m.hue = max(tol[1], occLessSaturated), max(tol[2], occHue)
	return m
}

// markOccluders scores each pixel of the face (fm > 0, not excluded) against the skin model
// into s.occ: 1 (weak) past the tolerances, 3 (a seed, also pushed on s.stack) past occStrong
// times them.
func (s *Swapper) markOccluders(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, m skinModel) {
	s.stack = s.stack[:0]
	w := fr.Dx()
	for y := fr.Min.Y; y < fr.Max.Y; y++ {
		off := (y - fr.Min.Y) * s.occ.Stride
		frow := fm.Pix[(y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		erow := s.excl.Pix[off:][:w]
		orow := s.occ.Pix[off:][:w]
		prow := frame.Pix[y*frame.Stride+3*fr.Min.X:][:3*w]
		for i, v := range frow {
			if !(v > 0) || erow[i] >= 1 {
				continue
			}
			f := features(prow[3*i], prow[3*i+1], prow[3*i+2])
			f[1], f[2] = f[1]*m.ux+f[2]*m.uy, f[2]*m.ux-f[1]*m.uy
			d := f[0] - m.med[0]
			// Chromaticity is noisy in dark pixels (a log ratio of small numbers): widen its
			// tolerance by the darkest channel.
			slack := 8 / (float32(min(prow[3*i], prow[3*i+1], prow[3*i+2])) + 1)
			ds := min(f[1]-m.med[1], 0) / (m.less + slack)
			dh := (f[2] - m.med[2]) / (m.hue + slack)
			score := max(-d/m.darker, d/m.brighter, float32(math.Sqrt(float64(ds*ds+dh*dh))))
			switch {
			case score > occStrong:
				orow[i] = 3
				s.stack = append(s.stack, int32(off+i))
			case score > 1 && erow[i] == 0:
				orow[i] = 1
			}
		}
	}
}

// growSeeds keeps the thick seeds in s.occ and grows them through the weak pixels connected
// to them, leaving s.occ 1 on the occluders so found and 0 elsewhere.
func (s *Swapper) growSeeds(fr image.Rectangle, size float64) {
	// A seed must be thick: the skin's own creases can be very dark and red, but they are
	// thin. Seeds are eroded by a square of half-width occSeedErode·size (the complement
	// dilated); the thin ones become weak pixels, which the growth below may still reach
	// from a thick seed.
	if r := int(occSeedErode * size); r > 0 {
		s.clip.Reset(fr)
		for i, v := range s.occ.Pix {
			if v != 3 {
				s.clip.Pix[i] = 1
			}
		}
		s.clip.Dilate(r, &s.cov)
		s.stack = s.stack[:0]
		for i, v := range s.occ.Pix {
			if v == 3 {
				if s.clip.Pix[i] > 0 {
					s.occ.Pix[i] = 1
				} else {
					s.stack = append(s.stack, int32(i))
				}
			}
		}
	}
	// Grow the seeds through the weak pixels 4-connected to them; weak pixels not reached
	// (wrinkles, folds, a shadow) are skin.
	s.growFromSeeds(&s.occ, fr.Dx(), fr.Dy())
}

// features marks in s.excl (over fr) the regions of the target's face that are not skin by
// nature: 1 on the eyes, the mouth and the nostrils (not tested for occluders), ½ on each
// eye with its brow (only the very far counts there).
func (s *Swapper) features(target *face.Landmarks68, fr image.Rectangle) {
	s.excl.Reset(fr)
	s.fillPart(target, 17, 22, 36, 42, 1.15, 0.5)
	s.fillPart(target, 22, 27, 42, 48, 1.15, 0.5)
	s.fillPart(target, 36, 42, 0, 0, 1.5, 1)
	s.fillPart(target, 42, 48, 0, 0, 1.5, 1)
	s.fillPart(target, 48, 60, 0, 0, 1.25, 1)
	s.fillPart(target, 30, 36, 0, 0, 2, 1)
}

// fillPart sets s.excl to v on the hull of points lo..hi−1 and lo2..hi2−1, scaled about its
// centre by k.
func (s *Swapper) fillPart(l *face.Landmarks68, lo, hi, lo2, hi2 int, k float64, v float32) {
	s.part = append(append(s.part[:0], l[lo:hi]...), l[lo2:hi2]...)
	c := geom.Mean(s.part)
	for i, p := range s.part {
		s.part[i] = c.Add(p.Sub(c).Scale(k))
	}
	s.sorted, s.partHull = convexHull(s.part, s.sorted, s.partHull)
	raster.FillConvex(&s.excl, s.partHull, v)
}

// medianMAD returns the median of v and the median absolute deviation from it; v is
// reordered and *dev is scratch.
func medianMAD(v []float32, dev *[]float32) (med, mad float32) {
	slices.Sort(v)
	med = v[len(v)/2]
	d := (*dev)[:0]
	for _, x := range v {
		d = append(d, float32(math.Abs(float64(x-med))))
	}
	*dev = d
	return med, median(d) // magnitudes: no −0
}
