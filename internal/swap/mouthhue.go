package swap

import (
	"image"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// The colour test leaves the mouth out: the lips are redder and darker than the skin, the
// teeth paler and the gap between them dark, by nature. But whatever the light, a mouth's
// colours lie on the skin's side of grey and on red's (the lips and the shadows in a smile
// redder than the skin, the teeth between the skin and grey). A cover whose colour lies
// beyond grey, away from the skin's or to green (a blue, teal or green dummy, whistle or
// mouthguard), is no part of the mouth, whatever its shape: its pixels over the mouth are
// scored as markOccluders scores the rest of the face, in those directions alone, so that a
// cover also found beside the mouth grows over it as one find and one that lies within the
// lips' outline is found at all. The gap's colour is too dark to tell, so a dark grey cover is
// not told from it, and a yellow or an orange one lies along the skin's own shading; nor is a
// lime one, far across the skin's axis from red's side, as a light from below tints the lips
// (a monitor's blue glow under a pale face leaves its lips there).

// mouthBeyondGrey is the least log-chromaticity step past grey, away from the skin's colour or
// to green (ln(R/G) below 0, or below the skin's where a green or cyan light leaves even the
// skin so), that no mouth's pixel takes (a smile's teeth lie about on grey).
const mouthBeyondGrey = 0.25

// markForeignAtMouth adds to s.occ (over fr, as markOccluders marks it: 3 on seeds, pushed on
// s.stack, 1 on weak pixels) the pixels of the mouth's zone (as features fills it, fm > 0)
// whose colour no mouth takes (see above). It uses s.zone.
func (s *Swapper) markForeignAtMouth(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, fr image.Rectangle, m skinModel) {
	if m.med[1] == 0 && m.med[2] == 0 {
		return
	}
	s.zone.Reset(fr)
	z := featureZones[4]
	s.hullOf(target[z.lo:z.hi], z.k)
	raster.FillConvex(&s.zone, s.partHull, 1)
	w := fr.Dx()
	for i, v := range s.zone.Pix {
		x, y := fr.Min.X+i%w, fr.Min.Y+i/w
		if v == 0 || s.occ.Pix[i] > 0 || !(fm.Pix[(y-fm.Rect.Min.Y)*fm.Stride+x-fm.Rect.Min.X] > 0) {
			continue
		}
		switch score := mouthForeignScore(frame.Pix[y*frame.Stride+3*x:], m); {
		case score > occStrong:
			s.occ.Pix[i] = 3
			s.stack = append(s.stack, int32(i))
		case score > 1:
			s.occ.Pix[i] = 1
		}
	}
}

// mouthForeignScore is how far the pixel p's (RGB) colour lies from every colour of a mouth on
// the face whose skin is m (see above), in shares of the limits: above 1 where no mouth's
// pixel takes it.
func mouthForeignScore(p []uint8, m skinModel) float32 {
	// The skin's chromaticity (unrotated) and its direction from grey.
	sa, sb := m.med[1]*m.ux-m.med[2]*m.uy, m.med[1]*m.uy+m.med[2]*m.ux
	n := float32(math.Hypot(float64(sa), float64(sb)))
	if n == 0 {
		return 0
	}
	da, db := sa/n, sb/n
	f := features(p[0], p[1], p[2])
	// As markOccluders: chromaticity is noisy in dark pixels.
	slack := 8 / (float32(min(p[0], p[1], p[2])) + 1)
	return max(-(f[1]*da+f[2]*db), min(0, sa)-f[1]) / (mouthBeyondGrey + slack)
}
