package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// Occluders are also told from the face by what skin is, not by its colour alone: the skin
// is one surface with a texture of its own, so on the face (outside its eyes, brows, nose and
// mouth, which have edges and detail by nature)
//   - a region cut off from the skin by sharp edges (the outline of a bar, a hand, a frame)
//     whose colour or detail is not the skin's,
//   - a patch whose fine detail is far from the skin's own (paint and plastic are flat, hair
//     and a microphone's mesh busy),
//
// is in front of the face, and so is a feature crossed by such a cover or mostly ringed by
// it. What the classic swap cannot tell apart from skin this way (a cover of skin's own colour
// and grain, whose edges blend in) it swaps.

const (
	// occEdgeFloor and occEdgeK set the least gradient (levels per pixel of the smoothed
	// colour) that is a sharp edge: occEdgeK times the face's median gradient, at least
	// occEdgeFloor, so a grainy frame's noise is no edge.
	occEdgeFloor = 4
	occEdgeK     = 1.5
	// occEdgeSmooth is the σ, as a share of the face size, the colour is smoothed by before
	// its gradient is taken: enough to calm the skin's pores and grain, not its outline.
	occEdgeSmooth = 0.008
	// occTexSmooth is the σ (share of the face size) that the fine detail is averaged over;
	// occTexLow and occTexHigh the least and most of the skin's median detail that is skin.
	occTexSmooth = 0.02
	occTexLow    = 0.4
	occTexHigh   = 3
	// occLikeSkin* are how far a region's median log-brightness, log-chromaticity and detail
	// (a ratio) may lie from the skin's for it to be skin cut off by a crease or a fold
	// rather than something on the face.
	occLikeSkinBright  = 0.35
	occLikeSkinChroma  = 0.3
	occLikeSkinTexture = 0.5
	// occLitStep is how much darker and brighter (log-brightness) than a region the sample
	// discs that say its colour at its light must be (see litSkin): light that falls off
	// spreads the discs' brightness over the face, while a cast shadow's discs lie at its
	// own, where which of them is a little darker is the frame's noise.
	occLitStep = 0.15
	// occMinArea is the least share of the face an occluder must cover: smaller finds are
	// the skin's own blemishes, folds and hairline, which, decided anew in every frame from
	// its noise, would come and go.
	occMinArea = 0.025
	// occCoarseSize is the least face size (px) the structure test works at: a larger face is
	// seen on a grid of every f-th pixel (f = size/occCoarseSize, rounded down), each the mean
	// of its f×f block. Its edges, regions and textures are a few percent of the face, which a
	// 64–127 px grid still sees, at a fraction of the cost.
	occCoarseSize = 64
	// occRegionArea is the least share of the face a smooth region must cover to be judged
	// by its colour and detail (a smaller one is skin): small regions between a frame's
	// creases and grain come and go with its noise.
	occRegionArea = 0.05
	// occZoneCovered is the share of a feature's surroundings that must be covered for the
	// feature to count as covered too.
	occZoneCovered = 0.4
	// occEnclosedWide is how many times wider the tolerances are for an enclosed region (see
	// enclosedRegions) brighter than the skin, and the brightness tolerance for a darker one
	// as saturated as the skin: shine and a clipped highlight brighten and pale skin in
	// patches that its own edges close (the nose's ridge between glasses), shadow darkens it
	// (the cheek beside the nose) but leaves its colour or deepens it, where a grey or a
	// dull cover is darker and paler.
	occEnclosedWide = 2
)

// structure adds to s.occ (over fr, 1 on occluders) what is not the face's skin by structure
// and texture (see above).
func (s *Swapper) structure(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle, m skinModel) {
	w, h := fr.Dx(), fr.Dy()
	s.gradients(frame, fr, size)
	s.atLight(s.tex)
	thr := s.edgeThreshold(fm, fr)
	// Regions: the face's pixels (fm > 0) between sharp edges, features included (a cover
	// over an eye is one region with the cover beside it).
	s.sizeLabels(w * h)
	for y := range h {
		frow := fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		for x, v := range frow {
			i := y*w + x
			s.label[i] = -1
			if v > 0 && s.grad[i] < thr && s.occ.Pix[i] == 0 {
				s.label[i] = 0
			}
		}
	}
	n := s.components(w, h)
	if n == 0 {
		return
	}
	r := max(1, int(2*occSeedErode*size))
	faceArea := 0
	for _, v := range fm.Pix {
		if v > 0.5 {
			faceArea++
		}
	}
	minArea := max((2*r+1)*(2*r+1), int(occRegionArea*float64(faceArea)))
	ref, sampled := s.skinRegions(frame, target, size, fr, n, minArea, m)
	s.eyeZones(target)
	s.enclosedRegions(frame, fm, fr, max((2*r+1)*(2*r+1), int(occMinArea/2*float64(faceArea))), minArea, [2][4]float32{s.regMed[ref], sampled}, m)
	// Every region that is not skin and lies mostly outside the features (those inside are
	// the features themselves) is a candidate; an opening drops the thin ones.
	s.clip.Reset(fr)
	for i, l := range s.label {
		if l > 0 && !s.skin[l] && 2*s.free[l] >= s.area[l] {
			s.clip.Pix[i] = 1
		}
	}
	s.oddTexture(target, fm, fr, size)
	s.open(r)
	s.outlineEnclosed(fm, fr, r+1)
	s.coverFeatures(frame, target, fr, size)
	for i, v := range s.clip.Pix {
		if v > 0.5 {
			s.occ.Pix[i] = 1
		}
	}
}

// gradients smooths the frame's colour over fr and puts in s.grad the largest channel's
// gradient magnitude (levels per pixel); 0 within the smoothing's reach of fr's border.
func (s *Swapper) gradients(frame *raster.Image, fr image.Rectangle, size float64) {
	w, h := fr.Dx(), fr.Dy()
	sigma := math.Max(1, occEdgeSmooth*size)
	for c := range 3 {
		s.chan3[c].Reset(fr)
		for y := range h {
			row := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:][:3*w]
			out := s.chan3[c].Pix[y*w:][:w]
			for x := range out {
				out[x] = float32(row[3*x+c])
			}
		}
		s.chanBlur.Apply(&s.chan3[c], sigma)
	}
	if cap(s.grad) < w*h {
		s.grad = make([]float32, w*h)
	}
	s.grad = s.grad[:w*h]
	clear(s.grad)
	if cap(s.tex) < w*h {
		s.tex = make([]float32, w*h)
	}
	s.tex = s.tex[:w*h]
	clear(s.tex)
	r := raster.Radius(sigma) + 1
	for y := r; y < h-r; y++ {
		for x := r; x < w-r; x++ {
			i := y*w + x
			var g float32
			for c := range 3 {
				p := s.chan3[c].Pix
				gx, gy := (p[i+1]-p[i-1])/2, (p[i+w]-p[i-w])/2
				g = max(g, float32(math.Sqrt(float64(gx*gx+gy*gy))))
			}
			s.grad[i] = g
			var t float32
			for c := range 3 {
				t = max(t, float32(math.Abs(float64(float32(frame.Pix[(y+fr.Min.Y)*frame.Stride+3*(x+fr.Min.X)+c])-s.chan3[c].Pix[i]))))
			}
			s.tex[i] = t
		}
	}
}

// edgeThreshold is the gradient from which a pixel of the face is a sharp edge.
func (s *Swapper) edgeThreshold(fm *raster.Mask, fr image.Rectangle) float32 {
	w, h := fr.Dx(), fr.Dy()
	s.dev = s.dev[:0]
	for y := 0; y < h; y += 2 {
		frow := fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		for x := 0; x < w; x += 2 {
			if i := y*w + x; frow[x] > 0.5 && s.excl.Pix[i] == 0 {
				s.dev = append(s.dev, s.grad[i])
			}
		}
	}
	if len(s.dev) == 0 {
		return occEdgeFloor
	}
	slices.Sort(s.dev)
	return max(occEdgeFloor, occEdgeK*s.dev[len(s.dev)/2])
}

// components labels the 4-connected regions of s.label's 0 pixels 1, 2, …, recording each
// one's area in s.area[label]; it returns how many there are.
func (s *Swapper) components(w, h int) int {
	s.area, s.free = append(s.area[:0], 0), append(s.free[:0], 0)
	n := 0
	for start, v := range s.label {
		if v != 0 {
			continue
		}
		n++
		s.area = append(s.area, 0)
		s.free = append(s.free, 0)
		s.label[start] = int32(n)
		s.stack = append(s.stack[:0], int32(start))
		for len(s.stack) > 0 {
			i := int(s.stack[len(s.stack)-1])
			s.stack = s.stack[:len(s.stack)-1]
			s.area[n]++
			if s.excl.Pix[i] == 0 {
				s.free[n]++
			}
			for _, nb := range neighbours4(i, w, h) {
				if nb >= 0 && s.label[nb] == 0 {
					s.label[nb] = int32(n)
					s.stack = append(s.stack, int32(nb))
				}
			}
		}
	}
	return n
}

// skinRegions decides which of the n regions are skin (s.skin[label]): the reference, and
// every other whose median colour and texture are the reference's. The reference is the
// largest region that looks like the skin as sampled (the skin model's colour, the median
// texture of the sample discs), not the largest one: a flat hand or bar over a cheek is one
// region, often larger than any of the skin that the nose's and the eyes' edges cut apart,
// and with it as the reference the rest of the face would be the cover. Where no region looks
// like the samples, the largest is the reference; it returns the reference and the skin as
// sampled.
func (s *Swapper) skinRegions(frame *raster.Image, target *face.Landmarks68, size float64, fr image.Rectangle, n, minArea int, m skinModel) (int, [4]float32) {
	s.regMed = s.regMed[:0]
	big := 0
	for k := range n + 1 {
		var med [4]float32
		if k > 0 && s.area[k] >= minArea {
			med = s.regionMedian(frame, fr, int32(k), m)
		}
		s.regMed = append(s.regMed, med)
		if k > 0 && (big == 0 || s.free[k] > s.free[big]) {
			big = k
		}
	}
	if s.area[big] < minArea {
		s.regMed[big] = s.regionMedian(frame, fr, int32(big), m)
	}
	tex := raster.Mask{Pix: s.tex, Stride: fr.Dx(), Rect: fr}
	sampled := [4]float32{m.med[0], m.med[1], m.med[2], s.discMedian(&tex, target, size, fr)}
	if !likeSkin(s.regMed[big], sampled) {
		like := 0
		for k := 1; k <= n; k++ {
			if s.area[k] >= minArea && likeSkin(s.regMed[k], sampled) && (like == 0 || s.free[k] > s.free[like]) {
				like = k
			}
		}
		if like > 0 {
			big = like
		}
	}
	s.skin = append(s.skin[:0], make([]bool, n+1)...)
	for k := 1; k <= n; k++ {
		// A region too small for the opening to keep is skin either way.
		s.skin[k] = k == big || s.area[k] < minArea || likeSkin(s.regMed[k], s.regMed[big]) || s.litSkin(s.regMed[k], sampled, m)
	}
	return big, sampled
}

// litSkin reports whether a region darker than the skin as sampled (med: its median colour
// features and detail; sampled: the skin's, see skinRegions) is that skin under the region's
// own light, as the kept sample discs show it: its colour that of the two discs nearest it in
// brightness either side, interpolated, and its detail the skin's. Light that falls off over
// the face (a dim grade, a vignette) moves skin's colour with its brightness (a lowered black
// level and shade both deepen it), so that the same skin, lit and dim, differs by more than
// likeSkin allows; the discs, spread over the face, sample that fall-off. Only darker: such
// light darkens skin, and a pale cover brighter than it stays a cover. Only between discs
// clearly darker and brighter (occLitStep): a uniform shade, its discs at its own light, is
// left to the other tests frame after frame.
func (s *Swapper) litSkin(med, sampled [4]float32, m skinModel) bool {
	if med[0] >= sampled[0] {
		return false
	}
	lo, hi := -1, -1
	for d, c := range s.discLight {
		if math.IsNaN(float64(c[0])) {
			continue
		}
		if c[0] <= med[0]-occLitStep && (lo < 0 || c[0] > s.discLight[lo][0]) {
			lo = d
		}
		if c[0] >= med[0]+occLitStep && (hi < 0 || c[0] < s.discLight[hi][0]) {
			hi = d
		}
	}
	if lo < 0 || hi < 0 {
		return false
	}
	a, b := s.discLight[lo], s.discLight[hi]
	t := float32(0)
	if b[0] > a[0] {
		t = (med[0] - a[0]) / (b[0] - a[0])
	}
	ca, cb := a[1]+t*(b[1]-a[1]), a[2]+t*(b[2]-a[2])
	lit := [4]float32{med[0], ca*m.ux + cb*m.uy, cb*m.ux - ca*m.uy, sampled[3]}
	return likeSkin(med, lit)
}

// enclosedRegions judges the regions between least and minArea pixels (see skinRegions) that
// sharp edges close all round, clear of the face's outline and mostly outside the features:
// a plaster, a sticker or a spoon's bowl is such a region, cut off whole by its own outline,
// and is not skin where its colour or detail is neither the reference region's nor the skin
// as sampled (skin; see enclosedSkin). Small regions that reach the outline (hair, the
// background between strands) come and go with the frame's noise, and those mostly about an
// eye (see eyeZones) are the lids', the fold's and a lens's, and both stay skin. s.enclosed
// is left true on the regions so found.
func (s *Swapper) enclosedRegions(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, least, minArea int, skin [2][4]float32, m skinModel) {
	n := len(s.area) - 1
	s.enclosed = append(s.enclosed[:0], make([]bool, n+1)...)
	if least >= minArea {
		return
	}
	w, h := fr.Dx(), fr.Dy()
	// First true on the regions that reach the outline.
	for i, l := range s.label {
		if l <= 0 || s.area[l] < least || s.area[l] >= minArea || s.enclosed[l] {
			continue
		}
		for _, nb := range neighbours4(i, w, h) {
			if nb < 0 || !(fm.Pix[(nb/w+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+nb%w+fr.Min.X-fm.Rect.Min.X] > 0) {
				s.enclosed[l] = true
				break
			}
		}
	}
	// Then how much of each lies about the eyes (see eyeZones).
	s.eyeArea = append(s.eyeArea[:0], make([]int, n+1)...)
	for i, l := range s.label {
		if l > 0 && s.area[l] >= least && s.area[l] < minArea && !s.enclosed[l] && s.inEyeZone(geom.Pt{X: float64(fr.Min.X + i%w), Y: float64(fr.Min.Y + i/w)}, false) {
			s.eyeArea[l]++
		}
	}
	for k := 1; k <= n; k++ {
		reaches := s.enclosed[k]
		s.enclosed[k] = false
		if s.free[k] < least || s.area[k] >= minArea || reaches || 2*s.free[k] < s.area[k] || 2*s.eyeArea[k] >= s.area[k] {
			continue
		}
		s.regMed[k] = s.regionMedian(frame, fr, int32(k), m)
		s.skin[k] = enclosedSkin(s.regMed[k], skin[0]) || enclosedSkin(s.regMed[k], skin[1])
		s.enclosed[k] = !s.skin[k]
	}
}

// enclosedSkin reports whether an enclosed region's median colour features and detail (med)
// are those of the skin's, ref, shaded: brighter, within occEnclosedWide times every
// tolerance; darker, within occEnclosedWide times the brightness one unless paler too.
// Detail busier than the skin's never tells (the folds and lashes about the eyes are; a busy
// cover is the texture test's).
func enclosedSkin(med, ref [4]float32) bool {
	bright, k := float64(occEnclosedWide), 1.0
	switch {
	case med[0] > ref[0]:
		k = occEnclosedWide
	case med[1] < ref[1]-occLikeSkinChroma/2: // darker and paler: no shadow
		bright = 1
	}
	med[3] = min(med[3], ref[3])
	return likeSkinWithin(med, ref, bright, k)
}

// outlineEnclosed adds to s.clip the outline of each enclosed region found (see
// enclosedRegions): the edge pixels within d of what the opening kept of it, which every
// region leaves out and which are the cover's own rim.
func (s *Swapper) outlineEnclosed(fm *raster.Mask, fr image.Rectangle, d int) {
	if !slices.Contains(s.enclosed, true) {
		return
	}
	w, h := fr.Dx(), fr.Dy()
	for i, l := range s.label {
		if l <= 0 || !s.enclosed[l] || s.clip.Pix[i] != 1 {
			continue
		}
		x0, y0 := i%w, i/w
		for y := max(0, y0-d); y <= min(h-1, y0+d); y++ {
			for x := max(0, x0-d); x <= min(w-1, x0+d); x++ {
				j := y*w + x
				if s.label[j] == -1 && s.clip.Pix[j] == 0 && fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+x+fr.Min.X-fm.Rect.Min.X] > 0 {
					s.clip.Pix[j] = 2
				}
			}
		}
	}
	for i, v := range s.clip.Pix {
		if v == 2 {
			s.clip.Pix[i] = 1
		}
	}
}

// likeSkin reports whether a region's median colour features and texture (see regionMedian)
// lie close enough to the skin's, ref, for it to be skin.
func likeSkin(med, ref [4]float32) bool { return likeSkinWithin(med, ref, 1, 1) }

// likeSkinWithin is likeSkin with its brightness tolerance kb times as wide, its colour and
// detail tolerances k times.
func likeSkinWithin(med, ref [4]float32, kb, k float64) bool {
	tex := float32(math.Pow(occLikeSkinTexture, k))
	return math.Abs(float64(med[0]-ref[0])) <= kb*occLikeSkinBright &&
		math.Hypot(float64(med[1]-ref[1]), float64(med[2]-ref[2])) <= k*occLikeSkinChroma &&
		med[3] >= tex*ref[3] && med[3] <= ref[3]/tex
}

// regionMedian is the median of each colour feature (brightness, then chromaticity along and
// across the skin's axis) and of the texture (s.tex) over region k's pixels.
func (s *Swapper) regionMedian(frame *raster.Image, fr image.Rectangle, k int32, m skinModel) [4]float32 {
	w := fr.Dx()
	var out [4]float32
	for c := range 3 {
		s.feat[c] = s.feat[c][:0]
	}
	s.dev = s.dev[:0]
	for i, l := range s.label {
		if l != k || (i%2 != 0 || i/w%2 != 0) && s.area[k] > 256 { // a quarter of a large region
			continue
		}
		x, y := fr.Min.X+i%w, fr.Min.Y+i/w
		f := features(frame.At(x, y))
		f[1], f[2] = f[1]*m.ux+f[2]*m.uy, f[2]*m.ux-f[1]*m.uy
		for c := range 3 {
			s.feat[c] = append(s.feat[c], f[c])
		}
		s.dev = append(s.dev, s.tex[i])
	}
	for c, v := range [4][]float32{s.feat[0], s.feat[1], s.feat[2], s.dev} {
		if len(v) > 0 {
			out[c] = median(v) // by selection: likeSkin, all that reads it, cannot tell −0 from +0
		}
	}
	return out
}

// open removes from s.clip (a 0/1 set over fr) whatever a square of half-width r does not fit
// in: an erosion, then a dilation kept inside the original set.
func (s *Swapper) open(r int) {
	s.cov.Reset(s.clip.Rect)
	copy(s.cov.Pix, s.clip.Pix)    // the set before
	for i, v := range s.clip.Pix { // erode: dilate the complement
		s.clip.Pix[i] = 1 - v
	}
	s.clip.Dilate(r, &s.zone)
	for i, v := range s.clip.Pix {
		s.clip.Pix[i] = 1 - v
	}
	s.clip.Dilate(r, &s.zone)
	for i, v := range s.cov.Pix {
		s.clip.Pix[i] *= v
	}
}

// oddTexture adds to s.clip the face's pixels outside its features whose local texture (the
// fine detail s.tex, averaged over a few percent of the face) is far from the skin's own:
// flat (paint, plastic, a smooth cover) or busy (hair, a mesh, a pattern).
func (s *Swapper) oddTexture(target *face.Landmarks68, fm *raster.Mask, fr image.Rectangle, size float64) {
	w, h := fr.Dx(), fr.Dy()
	s.zone.Reset(fr)
	copy(s.zone.Pix, s.tex)
	s.chanBlur.Apply(&s.zone, math.Max(1, occTexSmooth*size))
	s.dev = s.dev[:0]
	for y := 0; y < h; y += 2 {
		frow := fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		for x := 0; x < w; x += 2 {
			if i := y*w + x; frow[x] > 0.5 && s.excl.Pix[i] == 0 {
				s.dev = append(s.dev, s.zone.Pix[i])
			}
		}
	}
	if len(s.dev) < 16 {
		return
	}
	slices.Sort(s.dev)
	med := s.dev[len(s.dev)/2]
	// Where the face's median detail would itself be odd beside the skin sample discs', or
	// the forehead chose the discs (see dropCoveredSamples), most of the face is a cover (a
	// scarf, a mask): the discs say what the skin's detail is.
	if dm := s.discMedian(&s.zone, target, size, fr); s.upperSkin || med < occTexLow*dm || med > occTexHigh*dm {
		med = dm
	}
	for y := range h {
		frow := fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		for x, v := range frow {
			i := y*w + x
			if t := s.zone.Pix[i]; v > 0.5 && s.excl.Pix[i] == 0 && (t < occTexLow*med || t > occTexHigh*med) {
				s.clip.Pix[i] = 1
			}
		}
	}
}

// featureZone is a feature left out of the colour and texture tests: points lo..hi−1 (and
// lo2..hi2−1), their hull scaled by k, as features marks it.
type featureZone struct {
	lo, hi, lo2, hi2 int
	k                float64
}

var featureZones = []featureZone{
	{36, 42, 0, 0, 1.5}, {42, 48, 0, 0, 1.5}, {17, 22, 36, 42, 1.15}, {22, 27, 42, 48, 1.15},
	{48, 60, 0, 0, 1.25}, {30, 36, 0, 0, 2},
}

// coveredFeatures adds to s.clip each feature whose surroundings are mostly in it: what
// covers the face around an eye, the nose or the mouth covers them too.
func (s *Swapper) coveredFeatures(target *face.Landmarks68, fr image.Rectangle) {
	for _, z := range featureZones {
		s.zone.Reset(fr)
		s.fillZone(target, z, z.k*1.4, 2)
		s.fillZone(target, z, z.k, 1)
		var ring, covered float32
		for i, v := range s.zone.Pix {
			if v == 2 && s.excl.Pix[i] == 0 {
				ring++
				covered += s.clip.Pix[i]
			}
		}
		if ring > 0 && covered > occZoneCovered*ring {
			for i, v := range s.zone.Pix {
				if v == 1 && s.lipsOpen.Pix[i] == 0 {
					s.clip.Pix[i] = 1
				}
			}
		}
	}
}

// fillZone sets s.zone to v on zone z's hull scaled by k.
func (s *Swapper) fillZone(l *face.Landmarks68, z featureZone, k float64, v float32) {
	s.fillZoneIn(&s.zone, l, z, k, v)
}

// fillZoneIn is fillZone into dst.
func (s *Swapper) fillZoneIn(dst *raster.Mask, l *face.Landmarks68, z featureZone, k float64, v float32) {
	s.part = append(append(s.part[:0], l[z.lo:z.hi]...), l[z.lo2:z.hi2]...)
	c := geom.Mean(s.part)
	for i, p := range s.part {
		s.part[i] = c.Add(p.Sub(c).Scale(k))
	}
	s.sorted, s.partHull = convexHull(s.part, s.sorted, s.partHull)
	raster.FillConvex(dst, s.partHull, v)
}

// bridgeFeatures adds to s.clip every run of feature pixels (s.excl > 0) along a row or a
// column that has s.clip on both its ends: a bar or a hand that crosses an eye, the nose or
// the mouth covers what lies between its two sides.
func (s *Swapper) bridgeFeatures(fr image.Rectangle, size float64) {
	w, h := fr.Dx(), fr.Dy()
	s.zone.Reset(fr)
	// A cover's sides may stop short of the feature by its texture's reach: look d beyond.
	d := max(2, int(0.06*size))
	near := func(start, step, n, from, to int) bool {
		for j := max(0, from); j < min(n, to); j++ {
			if s.clip.Pix[start+j*step] > 0.5 {
				return true
			}
		}
		return false
	}
	bridge := func(start, step, n int) {
		for k := 0; k < n; k++ {
			if s.excl.Pix[start+k*step] == 0 {
				continue
			}
			e := k
			for e < n && s.excl.Pix[start+e*step] > 0 {
				e++
			}
			if k > 0 && e < n && near(start, step, n, k-d, k) && near(start, step, n, e, e+d) {
				for j := max(0, k-d); j < min(n, e+d); j++ {
					s.zone.Pix[start+j*step] = 1
				}
			}
			k = e
		}
	}
	for y := range h {
		bridge(y*w, 1, w)
	}
	for x := range w {
		bridge(x, w, h)
	}
	for i, v := range s.zone.Pix {
		if v > 0 && s.lipsOpen.Pix[i] == 0 {
			s.clip.Pix[i] = 1
		}
	}
}

// dropSmall clears from m (0/1 over fr: s.occ or s.clip) every 4-connected occluder smaller
// than share of the face (fm > 0.5).
func (s *Swapper) dropSmall(m *raster.Mask, fm *raster.Mask, fr image.Rectangle, share float64) {
	s.labelRegions(m.Pix, 1, fr)
	least := int(share * float64(faceArea(fm, fr)))
	for i, l := range s.label {
		if l > 0 && s.area[l] < least {
			m.Pix[i] = 0
		}
	}
}

// labelRegions labels in s.label (see components) the 4-connected regions of the pixels of
// pix (over fr) that equal v, and returns how many there are.
func (s *Swapper) labelRegions(pix []float32, v float32, fr image.Rectangle) int {
	w, h := fr.Dx(), fr.Dy()
	s.sizeLabels(w * h)
	for i, p := range pix {
		s.label[i] = -1
		if p == v {
			s.label[i] = 0
		}
	}
	return s.components(w, h)
}

// sizeLabels makes s.label n long, for a grid of n pixels.
func (s *Swapper) sizeLabels(n int) {
	if cap(s.label) < n {
		s.label = make([]int32, n)
	}
	s.label = s.label[:n]
}

// faceArea is how many pixels of fr the face mask fm covers (fm > 0.5).
func faceArea(fm *raster.Mask, fr image.Rectangle) int {
	n := 0
	for y := range fr.Dy() {
		for _, v := range fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:fr.Dx()] {
			if v > 0.5 {
				n++
			}
		}
	}
	return n
}

// structureCoarse runs structure on the face shrunk to about occCoarseSize px (each grid pixel
// the mean of its block of the frame; the face mask, the features and the colour occluders
// sampled at the block's centre) and adds what it finds to s.occ, block by block.
func (s *Swapper) structureCoarse(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle, m skinModel) {
	f := int(size / occCoarseSize)
	if f <= 1 {
		s.structure(frame, target, fm, size, fr, m)
		return
	}
	w, h := fr.Dx(), fr.Dy()
	cw, ch := (w+f-1)/f, (h+f-1)/f
	cr := image.Rect(0, 0, cw, ch)
	if s.small == nil || len(s.small.Pix) < cw*ch*3 {
		s.small = raster.New(cw, ch)
	}
	img := raster.Wrap(s.small.Pix, cw, ch)
	s.cfm.Reset(cr)
	s.cexcl.Reset(cr)
	s.cocc.Reset(cr)
	s.copen.Reset(cr)
	s.clight.Reset(cr)
	for cy := range ch {
		for cx := range cw {
			var sum [3]int
			n := 0
			for y := cy * f; y < min(h, cy*f+f); y++ {
				row := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:]
				for x := cx * f; x < min(w, cx*f+f); x++ {
					sum[0], sum[1], sum[2] = sum[0]+int(row[3*x]), sum[1]+int(row[3*x+1]), sum[2]+int(row[3*x+2])
					n++
				}
			}
			img.Set(cx, cy, uint8((sum[0]+n/2)/n), uint8((sum[1]+n/2)/n), uint8((sum[2]+n/2)/n))
			x, y := min(w-1, cx*f+f/2), min(h-1, cy*f+f/2)
			i := cy*cw + cx
			s.cfm.Pix[i] = fm.At(fr.Min.X+x, fr.Min.Y+y)
			s.cexcl.Pix[i] = s.excl.Pix[y*w+x]
			s.cocc.Pix[i] = s.occ.Pix[y*w+x]
			s.copen.Pix[i] = s.mouthSmooth.Pix[y*w+x]
			s.clight.Pix[i] = s.light.Pix[y*w+x]
		}
	}
	var lm face.Landmarks68
	for i, p := range target {
		lm[i] = geom.Pt{X: (p.X - float64(fr.Min.X) - float64(f-1)/2) / float64(f), Y: (p.Y - float64(fr.Min.Y) - float64(f-1)/2) / float64(f)}
	}
	s.excl, s.cexcl = s.cexcl, s.excl
	s.occ, s.cocc = s.cocc, s.occ
	s.mouthSmooth, s.copen = s.copen, s.mouthSmooth
	s.light, s.clight = s.clight, s.light
	s.structure(img, &lm, &s.cfm, size/float64(f), cr, m)
	s.excl, s.cexcl = s.cexcl, s.excl
	s.occ, s.cocc = s.cocc, s.occ
	s.mouthSmooth, s.copen = s.copen, s.mouthSmooth
	s.light, s.clight = s.clight, s.light
	for y := range h {
		crow := s.cocc.Pix[min(ch-1, y/f)*cw:][:cw]
		orow := s.occ.Pix[y*w:][:w]
		for x := range orow {
			if crow[x/f] == 1 {
				orow[x] = 1
			}
		}
	}
}
