package swap

import (
	"image"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The nostrils' zone and the brows' (see features) are left out of the colour tests, or
// tested there only where very far, and out of the spots, and a cover there or beside them is
// small, under occMinArea: a nose clip, a ring, a cannula's prongs or a hair clip over a
// brow's end was swapped over in every colour. What the face's own parts there cannot be is
// a colour unlike the skin's but for its darkness: the nostrils, the wings' creases and the
// shade under the tip are the skin's hue, darker (redder, as blood makes it, or their noise's
// grey where nearly black), a shine is paler only where brighter, and a brow's hair is dark
// or grey, brown, blond or red, along the skin's axis on its side of grey. So a piece there
// of a hue far across the skin's axis, far more saturated than skin grows or past grey from
// it (a blue by an orange skin) is a cover, and so, on the nose, is one much paler than the
// skin without being brighter, or paler and much darker (grey, black: a nostril is not
// paler); with it what was found of it beside the zones (s.held) in such a colour. A black
// cover over a brow, or on a pale face's nostrils, is as dark as they are, and swapped. The
// mouth's zone is so too, by the colours no mouth takes (see markForeignAtMouth): a thin bar
// over a small face's upper lip lies within it, under occMinArea.

const (
	// foreignAcross and foreignMore are how far (log-chromaticity, beyond the dark pixels'
	// slack) a pixel's colour must lie from the skin's across its axis, or along it the more
	// saturated way, to be no part of the face there.
	foreignAcross = 0.45
	foreignMore   = 0.8
	// foreignAcrossDark is how much farther across a pixel's colour must lie, on the
	// magenta side of the skin's axis, per unit of log-brightness past foreignDark below the
	// skin's: a codec's subsampled chroma (and a sensor's colour noise) turns the nostrils and
	// the creases, much darker than the skin and redder, crimson or magenta, their green and
	// blue so low that a small step in chroma is a large one in log-chromaticity. A cover on
	// the other side (teal, green) is not so discounted.
	foreignAcrossDark = 1.5
	// foreignPastGrey is how far past grey, away from the skin's colour along its axis (a
	// blue or teal by an orange skin), a pixel's colour must lie: no hair is.
	foreignPastGrey = 0.25
	// On the nose, foreignLess the paler way where the pixel is no brighter than the skin,
	// and foreignLessDark where it is foreignDark darker (log-brightness).
	foreignLess     = 0.3
	foreignLessDark = 0.05
	foreignDark     = 0.6
	// foreignBandK is how much larger than the features' (see featureZones) the zones'
	// hulls with their bands are.
	foreignBandK = 1.3
	// foreignLeast is the least share of the face a piece must cover: fewer pixels are a
	// codec's or a sensor's noise.
	foreignLeast = 0.002
	// foreignElsewhere is the most of the rest of the face, outside the zones and what the
	// other tests found, that may be of a foreign colour too: more, and the skin's model
	// does not describe this face (a cover of the skin's hue over its samples under a
	// tinted light), so the zones' colours tell nothing.
	foreignElsewhere = 0.15
	// foreignReach is how far out (a share of the face's size, beyond the piece's own
	// blurred edge) keepForeign looks at what surrounds a piece, and foreignNear how near
	// foreign (foreignScore) a colour there is when a light, not a cover, tints the piece:
	// a coloured light fades into the skin, so much of what surrounds the piece it tints is
	// near its colour or beyond, and some of it is on the way (near, not foreign), where a
	// cover's edge is a step from its own colour to the skin's.
	foreignReach = 0.02
	foreignNear  = 0.6
)

// Marks in s.clip for keepForeign.
const (
	foreignBand    = 1 // in a brow's zone or the band about the zones
	foreignNose    = 2 // in the nostrils' zone
	foreignMouth   = 3 // in the mouth's zone
	foreignCovered = 4 // of a colour the face has not there
	// foreignSeen is added to a mark while litPieces has reached its pixel.
	foreignSeen = foreignCovered + 1
)

// keepForeign adds to s.occ (over fr) the covers of a foreign colour over the nostrils', the
// brows' and the mouth's zones (see above) and the finds dropSmall took out (s.held) that
// continue them in such a colour. It reports how many pixels it added.
func (s *Swapper) keepForeign(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, fr image.Rectangle, m skinModel) int {
	w, h := fr.Dx(), fr.Dy()
	s.foreignZones(target, fr)
	n := 0
	for y := range h {
		frow := fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		prow := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:][:3*w]
		crow := s.clip.Pix[y*w:][:w]
		orow := s.occ.Pix[y*w:][:w]
		for x, v := range crow {
			if v != 0 && frow[x] > 0.5 && orow[x] == 0 && zoneForeign(prow[3*x:], m, v) {
				crow[x] = foreignCovered
				n++
			}
		}
	}
	if n == 0 || s.foreignElsewhere(frame, fm, fr, m) > foreignElsewhere {
		return 0
	}
	return s.keepForeignPieces(frame, fm, fr, m)
}

// foreignElsewhere is the share of the face's pixels outside keepForeign's zones and s.occ
// whose colour foreignColour (away from the nose) calls foreign, on every second row and
// column.
func (s *Swapper) foreignElsewhere(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, m skinModel) float64 {
	w, h := fr.Dx(), fr.Dy()
	var face, foreign int
	for y := 0; y < h; y += 2 {
		frow := fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		prow := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:][:3*w]
		for x := 0; x < w; x += 2 {
			if i := y*w + x; frow[x] > 0.5 && s.clip.Pix[i] == 0 && s.occ.Pix[i] == 0 {
				face++
				if foreignColour(prow[3*x:], m, false) {
					foreign++
				}
			}
		}
	}
	if face == 0 {
		return 0
	}
	return float64(foreign) / float64(face)
}

// foreignZones marks in s.clip (over fr) where keepForeign looks: foreignNose on the
// nostrils' zone, foreignMouth on the mouth's, foreignBand on the brows' zones and on a band
// about them and the nose's (what lies beside the zones and was found is dropped for its size
// as a cover inside them is), the eyes left out.
func (s *Swapper) foreignZones(target *face.Landmarks68, fr image.Rectangle) {
	s.clip.Reset(fr)
	nose := featureZones[5]
	for _, z := range featureZones[2:4] {
		s.fillZoneIn(&s.clip, target, z, z.k*foreignBandK, foreignBand)
	}
	s.fillZoneIn(&s.clip, target, nose, nose.k*foreignBandK, foreignBand)
	s.fillZoneIn(&s.clip, target, nose, nose.k, foreignNose)
	for _, z := range featureZones[:2] {
		s.fillZoneIn(&s.clip, target, z, z.k, 0)
	}
	s.fillZoneIn(&s.clip, target, featureZones[4], featureZones[4].k, foreignMouth)
}

// zoneForeign is foreignColour, or in the mouth's zone (mark, as foreignZones marks s.clip)
// whether the colour is one no mouth takes (see mouthForeignScore).
func zoneForeign(p []uint8, m skinModel, mark float32) bool {
	if mark == foreignMouth {
		return mouthForeignScore(p, m) > 1
	}
	return foreignColour(p, m, mark == foreignNose)
}

// foreignColour reports whether the pixel p (RGB) is of a colour the face whose skin is m has
// not in a brow's zone, or, nose, on the nose (see above).
func foreignColour(p []uint8, m skinModel, nose bool) bool {
	return foreignScore(p, m, nose, foreignAcrossDark) > 1
}

// foreignScore is how far the pixel p's colour lies from the skin's m in the directions
// foreignColour tests, in shares of their limits: above 1 where it is foreign. acrossDark is
// foreignAcrossDark or, where what is measured is how near a colour is (litPieces: a light's
// tint fading into the skin), 0.
func foreignScore(p []uint8, m skinModel, nose bool, acrossDark float32) float32 {
	f := features(p[0], p[1], p[2])
	grey := f[1]*m.ux + f[2]*m.uy // 0 on grey, the skin's side positive
	along, across := grey-m.med[1], f[2]*m.ux-f[1]*m.uy-m.med[2]
	slack := 8 / (float32(min(p[0], p[1], p[2])) + 1)
	d := f[0] - m.med[0]
	if across > 0 {
		across /= foreignAcross + slack + acrossDark*max(0, -d-foreignDark)
	} else {
		across = -across / (foreignAcross + slack)
	}
	q := max(across, along/(foreignMore+slack), -grey/(foreignPastGrey+slack))
	if nose && d < 0 {
		q = max(q, -along/(foreignLess+slack))
		if d < -foreignDark {
			q = max(q, -along/(foreignLessDark+slack))
		}
	}
	return q
}

// keepForeignPieces adds to s.occ the pieces of s.clip's foreign pixels that cover at least
// foreignLeast of the face, with the pixels dropSmall took out (s.held) connected to them
// whose colour no part of the face has (grey and black are the brows' and the hair's); it
// returns how many pixels it added.
func (s *Swapper) keepForeignPieces(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, m skinModel) int {
	w, h := fr.Dx(), fr.Dy()
	s.labelRegions(s.clip.Pix, foreignCovered, fr)
	least := max(8, int(foreignLeast*float64(faceArea(fm, fr))))
	lit := s.litPieces(frame, fm, fr, m, least)
	s.stack = s.stack[:0]
	for i, l := range s.label {
		if l > 0 && int(s.area[l]) >= least && !lit[l] {
			s.occ.Pix[i] = 1
			s.stack = append(s.stack, int32(i))
		}
	}
	added := len(s.stack)
	for len(s.stack) > 0 {
		i := int(s.stack[len(s.stack)-1])
		s.stack = s.stack[:len(s.stack)-1]
		for _, j := range neighbours4(i, w, h) {
			if j >= 0 && s.held.Pix[j] > 0.5 && s.occ.Pix[j] == 0 &&
				foreignColour(frame.Pix[(fr.Min.Y+j/w)*frame.Stride+3*(fr.Min.X+j%w):], m, false) {
				s.occ.Pix[j] = 1
				s.stack = append(s.stack, int32(j))
				added++
			}
		}
	}
	return added
}

// litPieces reports, by s.label's label, which pieces of at least least pixels a light tints
// rather than a cover (see foreignNear): of the face's pixels 3 to 2 plus foreignReach times
// the face's size (the root of its area) 4-connected steps out of them, outside s.occ and
// s.held, more than a third lie near a foreign colour or beyond, and more than a fifth near
// without being foreign. It uses s.stack, s.clip's values above foreignCovered and
// s.foreignLit (what it returns).
func (s *Swapper) litPieces(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, m skinModel, least int) []bool {
	w, h := fr.Dx(), fr.Dy()
	if cap(s.foreignLit) < len(s.area) {
		s.foreignLit = make([]bool, len(s.area))
	}
	lit := s.foreignLit[:len(s.area)]
	clear(lit)
	reach := 2 + max(1, int(foreignReach*math.Sqrt(float64(faceArea(fm, fr)))))
	for l := range s.area {
		if l == 0 || int(s.area[l]) < least {
			continue
		}
		s.stack = s.stack[:0]
		for i, v := range s.label {
			if v == int32(l) {
				s.stack = append(s.stack, int32(i))
			}
		}
		var ring, near, fading int
		for step, start := 1, 0; step <= reach; step++ {
			end := len(s.stack)
			for _, i := range s.stack[start:end] {
				for _, j := range neighbours4(int(i), w, h) {
					if j < 0 || s.label[j] == int32(l) || s.clip.Pix[j] > foreignCovered {
						continue
					}
					s.clip.Pix[j] += foreignSeen
					s.stack = append(s.stack, int32(j))
					x, y := fr.Min.X+j%w, fr.Min.Y+j/w
					if step < 3 || s.occ.Pix[j] > 0.5 || s.held.Pix[j] > 0.5 || !(fm.Pix[(y-fm.Rect.Min.Y)*fm.Stride+x-fm.Rect.Min.X] > 0.5) {
						continue
					}
					ring++
					// The face's test, in the mouth's zone too: the mouth's is blind on red's
					// side, along which a light's tint of the lips fades.
					if q := foreignScore(frame.Pix[y*frame.Stride+3*x:], m, s.clip.Pix[j]-foreignSeen == foreignNose, 0); q > foreignNear {
						near++
						if q <= 1 {
							fading++
						}
					}
				}
			}
			start = end
		}
		for _, i := range s.stack {
			if s.clip.Pix[i] > foreignCovered {
				s.clip.Pix[i] -= foreignSeen
			}
		}
		lit[l] = 3*near > ring && 5*fading > ring
	}
	return lit
}
