package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// An eye is the darkest thing about its landmarks: open, its pupil, iris and lashes; squinting
// or closed, the lash line its landmarks' hull then narrows onto. Where the brightest of the
// hull is little brighter than its darkest, the landmarks lie on no eye but on what covers it
// (a shield, a hand rubbing it, a pad), whatever its colour and grain; where the other eye is
// there and looks unlike it, what looks as the hull does and is joined to it is that cover.
// The other tests judge the zone about an eye by outline and colour (see eyeZones), which do
// not tell a cover near the skin's colour with a grain of its own from the lids and the fold.

const (
	// eyeBareContrast is the least ratio of the hull's brightest to its darkest brightness
	// (their 95th and 5th percentiles; r+g+b) of an eye that is there: a bare eye's is 4 or
	// more, 2 squinting or on a frame a codec smeared. eyeCoverContrast is the ratio under
	// which the hull holds a cover: a cover's, flat or grained, is under 1.35. Between them
	// lies an eye seen through a veil (a glare on a lens, a haze) or a blur, which may take
	// one eye's darks before the other's: neither is told.
	eyeBareContrast  = 2
	eyeCoverContrast = 1.4
	// eyeShadowBright is the least brightness (r+g+b) of the hull's brightest (95th percentile)
	// an eye or a cover is told in: in a shadow as deep as the frame's black the whites and
	// lids are as black as the pupil, whatever lies there.
	eyeShadowBright = 60
	// eyeLeastPixels is the fewest pixels an eye's hull must hold to be told: a closed eye's
	// or a small face's hull is a few pixels' line, its darks blurred away.
	eyeLeastPixels = 40
	// eyeCoverReach is how far from the eye's centre its cover is followed, in eye widths;
	// eyeCoverLuma (ln) how far past the hull's brightness range, and eyeCoverChroma the
	// least tolerance of its chromaticity (ln, the hull's spread's 3 sigmas if more).
	eyeCoverReach  = 1.5
	eyeCoverLuma   = 0.08
	eyeCoverChroma = 0.04
	// eyeCoverAlike is the largest share of the face about the other eye that may look as a
	// cover does: past it the cover looks as the skin does, or spans both eyes (a visor of
	// the skin's colour its landmarks slid off on one side), and cannot be followed apart
	// from the skin.
	eyeCoverAlike = 0.1
)

// eyeState is what an eye's landmarks hold (see above).
type eyeState int

const (
	eyeUntold eyeState = iota // too few pixels, or too faint, to tell
	eyeThere
	eyeCovered
)

// coveredEyes marks in s.occ (over fr) the cover over an eye of target that is not there
// while the other one is (see above): the pixels of the face (fm > 0) within eyeCoverReach
// of the eye joined to its hull through pixels that look as the hull does. Both eyes gone is
// rather a face whose landmarks went astray, or one behind dark glasses (the glasses'
// tests'), than two covers. It returns the eyes' states.
func (s *Swapper) coveredEyes(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, fr image.Rectangle) [2]eyeState {
	var state [2]eyeState
	var lo, hi [2][3]float32
	for k := range 2 {
		if s.eyeHull(target, k, fr) {
			state[k], lo[k], hi[k] = s.eyeLook(frame, fr)
		}
	}
	for k := range 2 {
		eye, other := target[36+6*k:42+6*k], target[42-6*k:48-6*k]
		if state[k] != eyeCovered || state[1-k] != eyeThere ||
			s.alikeAbout(frame, fm, fr, geom.Mean(other), eyeCoverReach*other[0].Dist(other[3]), lo[k], hi[k]) > eyeCoverAlike {
			continue
		}
		s.eyeHull(target, k, fr)
		s.followCover(frame, fm, fr, geom.Mean(eye), eyeCoverReach*eye[0].Dist(eye[3]), lo[k], hi[k])
	}
	return state
}

// alikeAbout is the share of the face's pixels (fm > 0) of fr within reach of c whose colour
// features lie within lo..hi.
func (s *Swapper) alikeAbout(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, c geom.Pt, reach float64, lo, hi [3]float32) float64 {
	n, alike := 0, 0
	for y := max(fr.Min.Y, int(c.Y-reach)); y <= min(fr.Max.Y-1, int(c.Y+reach)); y++ {
		for x := max(fr.Min.X, int(c.X-reach)); x <= min(fr.Max.X-1, int(c.X+reach)); x++ {
			if math.Hypot(float64(x)-c.X, float64(y)-c.Y) > reach || !(fm.Pix[(y-fm.Rect.Min.Y)*fm.Stride+x-fm.Rect.Min.X] > 0) {
				continue
			}
			n++
			if within(pixelFeatures(frame, fr, fr.Dx(), (y-fr.Min.Y)*fr.Dx()+x-fr.Min.X), lo, hi) {
				alike++
			}
		}
	}
	if n == 0 {
		return 1
	}
	return float64(alike) / float64(n)
}

// within reports whether each of f's features lies within lo..hi.
func within(f, lo, hi [3]float32) bool {
	for j := range 3 {
		if f[j] < lo[j] || f[j] > hi[j] {
			return false
		}
	}
	return true
}

// eyeHull puts in s.stack the pixels of fr's grid within the hull of target's eye k (0: the
// image's left), reporting whether they are enough to tell (eyeLeastPixels).
func (s *Swapper) eyeHull(target *face.Landmarks68, k int, fr image.Rectangle) bool {
	return s.hullPixels(target[36+6*k:42+6*k], 1, fr) >= eyeLeastPixels
}

// hullPixels puts in s.stack the pixels of fr's grid within the hull of pts scaled about
// their centre by k, and returns how many they are.
func (s *Swapper) hullPixels(pts []geom.Pt, k float64, fr image.Rectangle) int {
	s.hullOf(pts, k)
	s.stack = s.stack[:0]
	b := geom.Bounds(s.partHull)
	for y := max(fr.Min.Y, int(b.Y0)); y <= min(fr.Max.Y-1, int(b.Y1)+1); y++ {
		for x := max(fr.Min.X, int(b.X0)); x <= min(fr.Max.X-1, int(b.X1)+1); x++ {
			if insideConvex(s.partHull, geom.Pt{X: float64(x), Y: float64(y)}) {
				s.stack = append(s.stack, int32((y-fr.Min.Y)*fr.Dx()+x-fr.Min.X))
			}
		}
	}
	return len(s.stack)
}

// eyeLook tells whether the eye hull's pixels in s.stack hold an eye (see above), and where
// not, the range of colour features a pixel of its cover may have.
func (s *Swapper) eyeLook(frame *raster.Image, fr image.Rectangle) (st eyeState, lo, hi [3]float32) {
	st, _, lo, hi = s.hullLook(frame, fr, eyeShadowBright, eyeBareContrast, eyeCoverContrast)
	return st, lo, hi
}

// hullLook tells whether the pixels in s.stack, the hull of a feature that is the darkest
// thing about it, hold that feature: its contrast (ln, the 95th over the 5th percentile of
// brightness) bare or more, cover or less, untold between or where their brightest is under
// least (r+g+b). Where covered, lo..hi is the range of colour features a pixel of the cover
// may have.
func (s *Swapper) hullLook(frame *raster.Image, fr image.Rectangle, least, bare, cover float64) (st eyeState, contrast float64, lo, hi [3]float32) {
	w := fr.Dx()
	for j := range 3 {
		s.feat[j] = s.feat[j][:0]
	}
	for _, i := range s.stack {
		f := pixelFeatures(frame, fr, w, int(i))
		for j := range 3 {
			s.feat[j] = append(s.feat[j], f[j])
		}
	}
	n := len(s.stack)
	slices.Sort(s.feat[0])
	dark, bright := s.feat[0][n/20], s.feat[0][n-1-n/20]
	contrast = float64(bright - dark)
	if !(float64(bright) >= math.Log(least+2)) { // features' brightness is ln(r+g+b+2)
		return eyeUntold, contrast, lo, hi
	}
	if contrast >= math.Log(bare) {
		return eyeThere, contrast, lo, hi
	}
	if !(contrast < math.Log(cover)) {
		return eyeUntold, contrast, lo, hi
	}
	lo[0], hi[0] = dark-eyeCoverLuma, bright+eyeCoverLuma
	for j := 1; j < 3; j++ {
		med, mad := medianMAD(s.feat[j], &s.dev)
		tol := max(eyeCoverChroma, 3*1.4826*mad)
		lo[j], hi[j] = med-tol, med+tol
	}
	return eyeCovered, contrast, lo, hi
}

// followCover marks in s.occ the pixels of the face (fm > 0) within reach of c joined to
// the hull pixels in s.stack through pixels whose colour features lie within lo..hi.
func (s *Swapper) followCover(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, c geom.Pt, reach float64, lo, hi [3]float32) {
	w, h := fr.Dx(), fr.Dy()
	s.clip.Reset(fr)
	looks := func(i int) bool {
		x, y := i%w+fr.Min.X, i/w+fr.Min.Y
		if math.Hypot(float64(x)-c.X, float64(y)-c.Y) > reach || !(fm.Pix[(y-fm.Rect.Min.Y)*fm.Stride+x-fm.Rect.Min.X] > 0) {
			return false
		}
		return within(pixelFeatures(frame, fr, w, i), lo, hi)
	}
	seeds := s.stack[:0]
	for _, i := range s.stack {
		if looks(int(i)) {
			s.clip.Pix[i] = 1
			seeds = append(seeds, i)
		}
	}
	s.stack = seeds
	for head := 0; head < len(s.stack); head++ {
		for _, nb := range neighbours4(int(s.stack[head]), w, h) {
			if nb < 0 || s.clip.Pix[nb] > 0 || !looks(nb) {
				continue
			}
			s.clip.Pix[nb] = 1
			s.stack = append(s.stack, int32(nb))
		}
	}
	for _, i := range s.stack {
		s.occ.Pix[(int(i)/w)*s.occ.Stride+int(i)%w] = 1
	}
}
