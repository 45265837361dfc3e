package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A shadow cast across the face (a wall's, a hat brim's, a pole's or a strand's in the sun)
// is the face's own skin, darker: its grain, its chroma and its features go on through it,
// where a cover replaces them. The colour and structure tests take a deep one for a cover
// (darker than the skin, cut off by a sharp edge), and the seamless membrane, fitted along
// the mask's edge and spread smoothly, carries it only in part and blurs its edge. So the
// face's regions darker than its lit skin by a step are judged against the lit skin just
// beyond their edge: a shadow is darker there by a clear step, of about the skin's chroma,
// and as grainy in log-brightness (the grain of light on skin scales with it; paint and
// plastic are flat, a dyed or printed cover's grain its own). What passes is no cover, and
// the swap carries it: the warped source is darkened there as the target is, pixel by
// pixel, with the shadow's own edge.
const (
	// shadeStep is how much darker (log-brightness) than the lit skin a pixel must be to be
	// in a shadow; shadeEdge the least step from the skin beyond a region's edge to the skin
	// just inside it, so the face's own soft shading (a nose's side, a cheek turned from the
	// light) is no shadow, nor a cover of a skin's hue a little darker than the face's (a tan
	// hand, a mask of the skin's own colour) whose grain passes for the skin's; a shallower
	// shadow the tests before mostly leave to the swap. shadeDeepest is the most.
	shadeStep    = 0.2
	shadeEdge    = 0.3
	shadeDeepest = 1.6
	// shadeLit is the percentile of the skin samples' brightness taken for the lit skin: a
	// shadow may darken most of the samples.
	shadeLit = 0.75
	// shadeSmooth is the σ (share of the face size) the brightness is smoothed by before it
	// is compared, so the skin's grain does not break a shadow up.
	shadeSmooth = 0.006
	// shadeLeast is the least share of the face's area a shadow covers.
	shadeLeast = 0.02
	// shadeRing is the width (share of the face size) of the bands either side of a region's
	// edge that are compared.
	shadeRing = 0.03
	// shadeChroma is how far (log-chromaticity) the skin inside may lie from the skin beyond:
	// a sky-lit shadow is bluer than the sunlit skin.
	shadeChroma = 0.26
	// shadeGrainLow and shadeGrainHigh bound the ratio of the inside's grain to the skin's.
	shadeGrainLow  = 0.55
	shadeGrainHigh = 2.3
	// shadeFoundHigh bounds the grain of what the tests found inside: a grainy or striped
	// cover of the skin's hue is grainier than the skin, a shadow's is the skin's, a little
	// more where it is dark enough to be quantised.
	shadeFoundHigh = 1.45
	// shadeTintLow and shadeTintHigh bound the ratio of the chroma detail of what the tests
	// found inside to the lit skin's beyond: a light leaves the skin's chromaticity as it is
	// (quantised a little coarser in the dark), a print's or a dyed weave's colour noise is
	// its own, a painted or plastic cover's chroma flat.
	shadeTintLow  = 0.65
	shadeTintHigh = 1.6
	// shadeScaleLow and shadeScaleHigh bound what the tests found's finest detail against its
	// detail 2 px across: the skin's, blurred by optics and demosaicing, is about half;
	// grain of a pixel's own (noise, a coarse print, a photo's grain pasted on) is larger at
	// the finest, a stripe's or a weave's period puts it at the coarser. A video frame's
	// codec leaves detail a little coarser than the finest (its blocks' noise): where what
	// was found keeps the lit skin's hue (within shadeNeutral; a knit cover of a skin's hue
	// has its own tint) up to shadeScaleCoded is taken.
	shadeScaleLow   = 0.4
	shadeScaleHigh  = 0.62
	shadeScaleCoded = 0.72
	shadeNeutral    = 0.12
	// shadeFill is the half-width (share of the face size) of the closing that takes into a
	// shadow the features within it (eyes, brows, nostrils, mouth), left out of the test.
	shadeFill = 0.06
	// shadeFound is the least share of a shadow the tests before must have taken for a
	// cover: a shadow they swap is left to the membrane, as an evenly lit face is.
	shadeFound = 0.1
	// shadeSoft is the σ (share of the face size) the shadow's map is feathered by.
	shadeSoft = 0.003
	// The carry's (see shadowFactors): the σ (share of the face size) that tells the skin
	// from the features, the σ the target's brightness is smoothed by over the shadow alone
	// (wide, so the target's own features and shading are not printed on the swapped face),
	// and the lit skin's level spread by into the shadow; the share of that smoothed depth
	// the target must be darkened by (at shadeDetail) for the carry to begin and to be
	// whole, so the edge is the target's where the voted area strays; how much
	// the lit skin's mean weighs against the lit skin spread (where it reaches, it wins); the
	// least factor.
	shadeDetail   = 0.012
	shadeCarry    = 0.08
	shadeKneeLow  = 0.5
	shadeKneeHigh = 0.8
	shadeSpread   = 0.12
	shadeFallback = 0.02
	shadeDarkest  = 0.15
	// shadeSeen is how much of the smoothing's weight must fall off the features for the
	// brightness to be the skin's; shadeFeature the σ (share of the face size) a factor is
	// spread by into a feature.
	shadeSeen    = 0.3
	shadeFeature = 0.05
	// shadeLitBright and shadeLitChroma are how far from the lit skin's look beyond a shadow's
	// edge (log-brightness, log-chromaticity) a find beside it may be to be that skin.
	shadeLitBright = 0.25
	shadeLitChroma = 0.14
	// The cast edge's (see castShade): the σ (share of the face size) of the region's map
	// the edge's normal is taken from, how far (share of the face size) each side of the edge
	// the step is measured, the least share of the edge measured, the quantile of its steps
	// taken for the shadow's depth, the share of the median a step may differ by to be like
	// it, the least share of the edge with steps alike, the most RMS distance (share of the
	// face size) of those from one smooth curve, the least length of that edge (share of the
	// face size), the radius (share of the face size) of the opening that parts a rim or a
	// crease from a shadow, and the fewest edge pixels a piece is judged on.
	shadeNormal    = 0.01
	shadeReach     = 0.025
	shadeEdgeLeast = 0.2
	shadeEdgeDeep  = 0.8
	shadeLike      = 0.25
	shadeEven      = 0.4
	shadeLine      = 0.03
	shadeCrossing  = 0.2
	shadeThin      = 0.02
	shadePiece     = 8
	// shadeAcross is how far (share of the face size) a shadow's edge must run across the face.
	shadeAcross = 0.4
	// shadeVoted is the least share of the shaded frames' mean shadow a window's vote must
	// leave for it to be carried (see voteShadows).
	shadeVoted = 0.5
	// shadeVotes is the least number of a window's frames that must find a shadow for the
	// vote to carry it (see voteShadows).
	shadeVotes = 3
)

// shadeScratch is the shadow test's: the smoothed brightness, the shadows found (over the
// face's rectangle; 1 in a shadow) and each channel's factor there, whether there is any,
// and a region's samples.
type shadeScratch struct {
	bright, area, near, tmp, lit, litW, wide, fine raster.Mask
	k                                              [3]float32
	on                                             bool
	in, out                                        [5][]float32
	// The lit skin's look beyond the largest shadow's edge (features) and that shadow's area;
	// each find's sums beside it (see litBeside).
	litLook [3]float32
	litArea int
	sums    [][5]float64
	// The cast edge's (see castShade): the skin inside and beyond each edge pixel edgeSteps
	// measured, the flood's seeds and queue, the region's edge (its insides, beyonds, steps
	// and places) and the pieces' that pass (step, place).
	inside, outside    []int32
	seeds, queue       []int32
	edgeIn, edgeOut    []int32
	edge, edgeX, edgeY []float32
	joint              [][3]float32
	pix                []int32
	pieces             [][4]int
}

// shadowLitLevel is the lit skin's brightness: shadeLit's percentile of the skin samples'
// (s.feat[0], as sampleSkin leaves it).
func (s *Swapper) shadowLitLevel() float32 {
	s.dev = append(s.dev[:0], s.feat[0]...)
	slices.Sort(s.dev)
	return s.dev[int(shadeLit*float64(len(s.dev)-1))]
}

// shadows finds the face's shadows (see the head comment) that the tests before took for
// covers into s.shade, clears them from s.occ, and sets s.shade.on when there is one. lit is
// the lit skin's brightness.
func (s *Swapper) shadows(frame *raster.Image, fm *raster.Mask, size float64, fr image.Rectangle, lit float32) {
	s.shade.on = false
	if !s.darkFinds(frame, fm, fr, lit) {
		return
	}
	w := fr.Dx()
	sh := &s.shade
	sh.bright.Reuse(fr)
	for y := fr.Min.Y; y < fr.Max.Y; y++ {
		row := frame.Pix[y*frame.Stride+3*fr.Min.X:][:3*w]
		out := sh.bright.Pix[(y-fr.Min.Y)*w:][:w]
		for i := range out {
			out[i] = logTable[int(row[3*i])+int(row[3*i+1])+int(row[3*i+2])+2]
		}
	}
	s.chanBlur.Apply(&sh.bright, math.Max(0.7, shadeSmooth*size))
	s.clip.Reset(fr)
	for y := fr.Min.Y; y < fr.Max.Y; y++ {
		off := (y - fr.Min.Y) * w
		frow := fm.Pix[(y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		for i, v := range frow {
			if b := sh.bright.Pix[off+i]; v > 0.5 && s.excl.Pix[off+i] < 1 && b < lit-shadeStep && b > lit-shadeDeepest {
				s.clip.Pix[off+i] = 1
			}
		}
	}
	n := s.labelRegions(s.clip.Pix, 1, fr)
	least := int(shadeLeast * float64(faceArea(fm, fr)))
	sh.area.Reset(fr)
	sh.litArea = 0
	var ksum [3]float64
	var kn float64
	for l := int32(1); l <= int32(n); l++ {
		if s.area[l] < least || s.foundIn(l) < shadeFound*float64(s.area[l]) {
			continue
		}
		k, litLook, ok := s.shadowLike(frame, fm, size, fr, l)
		if !ok || !s.castShade(fm, size, fr, l) {
			continue
		}
		// litBeside judges the finds beside the shadows by the largest one's lit skin; a region
		// castShade turns down is no shadow, and the skin beyond it no measure.
		if s.area[l] > sh.litArea {
			sh.litArea, sh.litLook = s.area[l], litLook
		}
		a := 0.0
		for i, v := range sh.fine.Pix {
			if v > 0 {
				sh.area.Pix[i], a = 1, a+1
			}
		}
		for c := range 3 {
			ksum[c] += a * float64(k[c])
		}
		kn += a
	}
	if kn == 0 {
		return
	}
	for c := range 3 {
		sh.k[c] = float32(ksum[c] / kn)
	}
	sh.on = true
	s.fillShadows(fm, size, fr)
	s.litBeside(frame, fr)
}

// litBeside clears from s.occ what the tests found beside a shadow (touching it) that looks
// like the lit skin beyond the shadow's edge (within shadeLitBright and shadeLitChroma): with
// the shadow among the skin's samples, the lit skin looks too bright to the tests before,
// which cut it off at the shadow's edge, the nose and the lips.
func (s *Swapper) litBeside(frame *raster.Image, fr image.Rectangle) {
	sh := &s.shade
	s.clip.Reset(fr)
	for i, v := range s.occ.Pix {
		if v > 0 {
			s.clip.Pix[i] = 1
		}
	}
	n := s.labelRegions(s.clip.Pix, 1, fr)
	if n == 0 {
		return
	}
	// Each find's brightness and chromaticities summed off the shadow, how many pixels that is,
	// and whether it touches the shadow.
	sums := append(sh.sums[:0], make([][5]float64, n+1)...)
	sh.sums = sums
	w := fr.Dx()
	for i, l := range s.label {
		if l <= 0 {
			continue
		}
		if sh.near.Pix[i] > 0 {
			sums[l][4] = 1
			continue
		}
		sums[l][3]++
		x, y := fr.Min.X+i%w, fr.Min.Y+i/w
		f := features(frame.At(x, y))
		for c := range 3 {
			sums[l][c] += float64(f[c])
		}
	}
	lit := sh.litLook
	for l := 1; l <= n; l++ {
		m := sums[l]
		cnt := m[3]
		if m[4] == 0 || cnt == 0 {
			continue
		}
		if math.Abs(m[0]/cnt-float64(lit[0])) > shadeLitBright || math.Hypot(m[1]/cnt-float64(lit[1]), m[2]/cnt-float64(lit[2])) > shadeLitChroma {
			continue
		}
		for i, v := range s.label {
			if v == int32(l) {
				s.occ.Pix[i] = 0
			}
		}
	}
}

// darkFinds is whether the tests before found enough pixels darker than the lit skin for a
// shadow to hold shadeFound of: a cheap look that spares the shadows' test a bare face or
// one whose finds are all bright. The pixels' own brightness is taken, with half the
// step's margin for the grain the smoothed brightness does not have.
func (s *Swapper) darkFinds(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, lit float32) bool {
	w := fr.Dx()
	dark, area := 0, 0
	for y := fr.Min.Y; y < fr.Max.Y; y++ {
		off := (y - fr.Min.Y) * w
		frow := fm.Pix[(y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		for i, v := range frow {
			if v <= 0.5 {
				continue
			}
			area++
			if s.occ.Pix[off+i] > 0 {
				p := frame.Pix[y*frame.Stride+3*(fr.Min.X+i):]
				if logTable[int(p[0])+int(p[1])+int(p[2])+2] < lit-shadeStep/2 {
					dark++
				}
			}
		}
	}
	return float64(dark) >= shadeFound*shadeLeast*float64(area)
}

// foundIn is how many pixels of region l of s.label the tests before found (s.occ).
func (s *Swapper) foundIn(l int32) float64 {
	n := 0
	for i, v := range s.label {
		if v == l && s.occ.Pix[i] > 0 {
			n++
		}
	}
	return float64(n)
}

// fillShadows closes s.shade.area over the features it holds, clears it from s.occ (and the
// finds along its edge) and feathers it.
func (s *Swapper) fillShadows(fm *raster.Mask, size float64, fr image.Rectangle) {
	sh := &s.shade
	closeSet(&sh.area, max(1, int(shadeFill*size)), &s.zone)
	s.clip.Reset(fr)
	copy(s.clip.Pix, sh.area.Pix)
	s.clip.Dilate(1+int(0.015*size), &s.zone)
	for i, v := range s.clip.Pix {
		if v > 0.5 {
			s.occ.Pix[i] = 0
		}
	}
	s.featherShadows(size)
}

// featherShadows softens s.shade.area's edge and sets what lies near it (nearShadows).
func (s *Swapper) featherShadows(size float64) {
	s.chanBlur.Apply(&s.shade.area, math.Max(0.5, shadeSoft*size))
	s.nearShadows(size)
}

// nearShadows sets s.shade.near: the shadows with the features they reach into, grown by the
// mask's feathered edge, which runs on past the face's pixels they were found on (the
// membrane and the colour match take what is beyond it for the lit skin).
func (s *Swapper) nearShadows(size float64) {
	sh := &s.shade
	// The features a shadow reaches into (lips it crosses), which its test left out.
	sh.lit.Reset(sh.area.Rect)
	copy(sh.lit.Pix, sh.area.Pix)
	sh.lit.Dilate(max(1, int(shadeFill*size)), &sh.tmp)
	sh.near.Reset(sh.area.Rect)
	copy(sh.near.Pix, sh.area.Pix)
	for i, v := range sh.lit.Pix {
		if v > 0 && s.excl.Pix[i] >= 1 {
			sh.near.Pix[i] = 1
		}
	}
	sh.near.Dilate(max(1, int(2*math.Min(s.opts.Feather*size, maxFeather))), &sh.tmp)
}

// shadowLike judges region l of s.label (over fr): whether it is the skin in a shadow, each
// channel's factor in it, and the look (features) of the lit skin beyond its edge.
func (s *Swapper) shadowLike(frame *raster.Image, fm *raster.Mask, size float64, fr image.Rectangle, l int32) (k, lit [3]float32, ok bool) {
	w := fr.Dx()
	ring := max(1, int(shadeRing*size))
	// s.zone: the region grown by the ring; s.cov: the region shrunk by it.
	s.zone.Reset(fr)
	for i, v := range s.label {
		if v == l {
			s.zone.Pix[i] = 1
		}
	}
	s.cov.Reset(fr)
	for i, v := range s.zone.Pix {
		s.cov.Pix[i] = 1 - v
	}
	s.cov.Dilate(ring, &s.shade.tmp)
	s.zone.Dilate(ring, &s.shade.tmp)
	sh := &s.shade
	for c := range sh.in {
		sh.in[c], sh.out[c] = sh.in[c][:0], sh.out[c][:0]
	}
	for y := fr.Min.Y + 2; y < fr.Max.Y-2; y++ {
		frow := fm.Pix[(y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		for x := 2; x < w-2; x++ {
			i := (y-fr.Min.Y)*w + x
			if frow[x] <= 0.5 || s.excl.Pix[i] >= 1 || s.zone.Pix[i] < 0.5 {
				continue
			}
			inside := s.label[i] == l
			if inside && s.cov.Pix[i] < 0.5 || !inside && (s.occ.Pix[i] > 0 || s.clip.Pix[i] > 0) {
				continue // deep inside; beyond, a cover or another dark region
			}
			p := 3 * (fr.Min.X + x)
			row := frame.Pix[y*frame.Stride:]
			d := detailAt(frame, fr.Min.X+x, y)
			vals := [5]float32{float32(row[p]), float32(row[p+1]), float32(row[p+2]), d[0], d[2]}
			for c, v := range vals {
				if inside {
					sh.in[c] = append(sh.in[c], v)
				} else {
					sh.out[c] = append(sh.out[c], v)
				}
			}
		}
	}
	if len(sh.in[0]) < 30 || len(sh.out[0]) < 30 {
		return k, lit, false
	}
	var mi, mo [5]float32
	for c := range 5 {
		mi[c], mo[c] = median(sh.in[c]), median(sh.out[c])
	}
	fi, fo := features(u8(mi[0]), u8(mi[1]), u8(mi[2])), features(u8(mo[0]), u8(mo[1]), u8(mo[2]))
	step := fo[0] - fi[0]
	chroma := math.Hypot(float64(fi[1]-fo[1]), float64(fi[2]-fo[2]))
	grain := float64(mi[3] / max(mo[3], 1e-6))
	fd, fc := s.foundLook(frame, fr, l, fo)
	found := float64(fd[0] / max(mo[3], 1e-6))
	tint := float64(fd[2] / max(mo[4], 1e-6))
	scale := float64(fd[0] / max(fd[1], 1e-6))
	// A codec's noise is the same in levels in a shadow as in the light, so a shadow's
	// darker skin shows up to e^step as much of it in log-brightness and chromaticity.
	noise, scaleHigh := math.Exp(float64(step)), shadeScaleHigh
	if fc < shadeNeutral {
		scaleHigh = shadeScaleCoded
	}
	if step < shadeEdge || chroma > shadeChroma || grain < shadeGrainLow || grain > shadeGrainHigh*noise ||
		found < shadeGrainLow || found > shadeFoundHigh*noise || fc > shadeChroma ||
		tint < shadeTintLow || tint > shadeTintHigh*noise || scale < shadeScaleLow || scale > scaleHigh {
		return k, lit, false
	}
	for c := range 3 {
		k[c] = min(1, (mi[c]+0.5)/(mo[c]+0.5))
	}
	return k, fo, true
}

// foundLook is the median detail (see detailAt) and chroma distance from lit (the lit skin's
// features) of what the tests before found in region l of s.label: a cover they found in a
// shadow's place has its own.
func (s *Swapper) foundLook(frame *raster.Image, fr image.Rectangle, l int32, lit [3]float32) (detail [3]float32, chroma float64) {
	w, h := fr.Dx(), fr.Dy()
	sh := &s.shade
	for c := range sh.in {
		sh.in[c] = sh.in[c][:0]
	}
	for i, v := range s.label {
		x, y := i%w, i/w
		if v != l || s.occ.Pix[i] <= 0 || s.excl.Pix[i] >= 1 || x < 2 || y < 2 || x >= w-2 || y >= h-2 {
			continue
		}
		d := detailAt(frame, fr.Min.X+x, fr.Min.Y+y)
		f := features(frame.At(fr.Min.X+x, fr.Min.Y+y))
		for c, v := range [4]float32{d[0], d[1], d[2], float32(math.Hypot(float64(f[1]-lit[1]), float64(f[2]-lit[2])))} {
			sh.in[c] = append(sh.in[c], v)
		}
	}
	if len(sh.in[0]) == 0 {
		return detail, 0
	}
	for c := range 3 {
		detail[c] = median(sh.in[c])
	}
	return detail, float64(median(sh.in[3]))
}

// detailAt is the fine detail at (x, y), 2 px or more inside the frame: the log-brightness's
// step to the mean of its four neighbours, to that of the four 2 px away, and the
// log-chromaticity's step to its four neighbours'. A light multiplies a pixel's channels,
// so in a shadow all three are the skin's.
func detailAt(frame *raster.Image, x, y int) [3]float32 {
	b := func(x, y int) float32 {
		p := frame.Pix[y*frame.Stride+3*x:]
		return logTable[int(p[0])+int(p[1])+int(p[2])+2]
	}
	ch := func(x, y int) (float32, float32) {
		p := frame.Pix[y*frame.Stride+3*x:]
		g := logTable[p[1]]
		return logTable[p[0]] - g, logTable[p[2]] - g
	}
	v := b(x, y)
	near := (b(x-1, y) + b(x+1, y) + b(x, y-1) + b(x, y+1)) / 4
	far := (b(x-2, y) + b(x+2, y) + b(x, y-2) + b(x, y+2)) / 4
	r0, b0 := ch(x, y)
	var rs, bs float32
	for _, d := range [4][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
		r1, b1 := ch(x+d[0], y+d[1])
		rs, bs = rs+r1, bs+b1
	}
	return [3]float32{
		float32(math.Abs(float64(v - near))),
		float32(math.Abs(float64(v - far))),
		float32(math.Hypot(float64(r0-rs/4), float64(b0-bs/4))),
	}
}

// u8 is v rounded into a byte.
func u8(v float32) uint8 { return uint8(min(255, max(0, v+0.5))) }

// carryShadows darkens the warped source (over fr) in and near the target's shadows (the
// mask's feathered edge beyond them too) as the target is darkened there (see shadowFactors),
// tinted per channel by the shadow's factor. A ratio measured where it is swapped, not one
// figure for the shadow, follows a shadow lighter in places and its soft edge, whichever
// frame's finds voted it.
func (s *Swapper) carryShadows(frame *raster.Image, fr image.Rectangle, size float64) {
	sh := &s.shade
	if !s.shadowFactors(frame, fr, size) {
		return
	}
	w := fr.Dx()
	// Each channel is darkened by f to a power that makes it k[c] where f is the factors'
	// mean: lit skin stays as it is, and a deeper shade keeps the channels' proportions.
	km := (sh.k[0] + sh.k[1] + sh.k[2]) / 3
	e := [3]float64{1, 1, 1}
	if km < 0.999 {
		for c := range e {
			e[c] = math.Log(float64(max(shadeDarkest, sh.k[c]))) / math.Log(float64(km))
		}
	}
	for y := range fr.Dy() {
		row := s.warped.Pix[y*s.warped.Stride:][:3*w]
		for x := range w {
			i := y*w + x
			if sh.near.Pix[i] <= 0 {
				continue
			}
			f := sh.lit.Pix[i]
			if sh.litW.Pix[i] == 0 { // a feature's: its surroundings'
				f = 1
				if sh.tmp.Pix[i] > 1e-3 {
					f = sh.bright.Pix[i] / sh.tmp.Pix[i]
				}
			}
			if f >= 1 {
				continue
			}
			lf := math.Log(float64(f))
			for c := range 3 {
				row[3*x+c] *= min(1, max(shadeDarkest, float32(math.Exp(e[c]*lf))))
			}
		}
	}
}

// shadowFactors puts in s.shade.lit (over fr, near the shadows) how much darker the target
// is than its lit skin: its brightness over the shadow's area alone, smoothed wide and the
// features left out, against the lit skin's spread into the shadow (its mean where none
// reaches), laid on where the target is about that dark (shadeKneeLow..High). A smooth
// field inside the shadow carries its depth and edge, not the target's glasses, wrinkles or
// shading. Where a feature leaves too little to tell (s.shade.litW 0), s.shade.bright over
// s.shade.tmp is its surroundings'. It reports whether there is lit skin to measure against.
func (s *Swapper) shadowFactors(frame *raster.Image, fr image.Rectangle, size float64) bool {
	sh := &s.shade
	w := fr.Dx()
	// sh.bright: the target's brightness in the shadow off the features, sh.wide its weight;
	// sh.tmp where the skin is; sh.lit and sh.litW the brightness on the lit skin alone.
	for _, m := range []*raster.Mask{&sh.bright, &sh.wide, &sh.fine, &sh.tmp, &sh.lit, &sh.litW} {
		m.Reset(fr)
	}
	var litSum, litN float64
	for y := range fr.Dy() {
		row := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:][:3*w]
		mrow := s.mask.Pix[(y+fr.Min.Y-s.mask.Rect.Min.Y)*s.mask.Stride+fr.Min.X-s.mask.Rect.Min.X:][:w]
		for x := range w {
			i := y*w + x
			if s.excl.Pix[i] >= 1 {
				continue
			}
			v := float32(row[3*x]) + float32(row[3*x+1]) + float32(row[3*x+2])
			a := sh.area.Pix[i]
			sh.bright.Pix[i], sh.wide.Pix[i], sh.fine.Pix[i], sh.tmp.Pix[i] = v*a, a, v, 1
			if mrow[x] > 0.5 && sh.near.Pix[i] == 0 {
				sh.lit.Pix[i], sh.litW.Pix[i] = v, 1
				litSum, litN = litSum+float64(v), litN+1
			}
		}
	}
	if litSum == 0 { // no lit skin, or black: nothing to measure the shade against
		return false
	}
	s.chanBlur.Apply(&sh.bright, math.Max(0.7, shadeCarry*size))
	s.chanBlur.Apply(&sh.wide, math.Max(0.7, shadeCarry*size))
	s.chanBlur.Apply(&sh.fine, math.Max(0.7, shadeDetail*size))
	s.chanBlur.Apply(&sh.tmp, math.Max(0.7, shadeDetail*size))
	s.chanBlur.Apply(&sh.lit, shadeSpread*size)
	s.chanBlur.Apply(&sh.litW, shadeSpread*size)
	mean := float32(litSum / litN)
	for i, v := range sh.tmp.Pix {
		f, ok := float32(1), v > shadeSeen
		if ok && sh.wide.Pix[i] > 1e-3 {
			lit := (sh.lit.Pix[i] + shadeFallback*mean) / (sh.litW.Pix[i] + shadeFallback)
			in := min(1, max(shadeDarkest, sh.bright.Pix[i]/sh.wide.Pix[i]/max(lit, 1)))
			dark := float32(0)
			if in < 1 {
				r := (1 - sh.fine.Pix[i]/v/max(lit, 1)) / (1 - in)
				dark = min(1, max(0, (r-shadeKneeLow)/(shadeKneeHigh-shadeKneeLow)))
			}
			f = 1 - dark*(1-in)
		}
		sh.lit.Pix[i], sh.litW.Pix[i] = f, 0
		if ok {
			sh.litW.Pix[i] = 1
		}
		// Spread into the features below: the factor where it is seen, and where.
		sh.bright.Pix[i], sh.tmp.Pix[i] = f*sh.litW.Pix[i], sh.litW.Pix[i]
	}
	s.chanBlur.Apply(&sh.bright, shadeFeature*size)
	s.chanBlur.Apply(&sh.tmp, shadeFeature*size)
	return true
}

// unshaded multiplies m (over any rectangle) by how far each pixel is from the shadows (near
// them: see nearShadows).
func (s *Swapper) unshaded(m *raster.Mask) {
	sh := &s.shade
	r := m.Rect.Intersect(sh.near.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			m.Pix[(y-m.Rect.Min.Y)*m.Stride+x-m.Rect.Min.X] *= 1 - sh.near.Pix[(y-sh.near.Rect.Min.Y)*sh.near.Stride+x-sh.near.Rect.Min.X]
		}
	}
}

// castShade narrows region l of s.label, which shadowLike took for the skin in a shadow, to
// the shade cast across it, into s.shade.fine (over fr, 1 in it), and reports whether that is
// a shade cast across the face. The face's own shading (eye sockets, a cheek turned from the
// light, a nose's side) joins a cast shadow where it is darker than shadeStep, and glasses'
// rims and a lined face's creases join them. A cast shadow's edge is sharp and as deep all
// along (its light's factor): so the region is cut at half the depth (the shadeEdgeDeep
// quantile of the steps along its edge) below the lit skin beyond the edges that deep, and
// of the pieces left that hold those edges' insides, those whose edge is darker than the skin
// beyond by a like step along most of it (shadeEven, within shadeLike of the median) are
// joined along one smooth curve (see joinPieces). A region that is not so is no shadow: it is
// left to the tests before, as a cover.
func (s *Swapper) castShade(fm *raster.Mask, size float64, fr image.Rectangle, l int32) bool {
	sh := &s.shade
	sh.fine.Reset(fr)
	for i, v := range s.label {
		if v == l {
			sh.fine.Pix[i] = 1
		}
	}
	total := s.edgeSteps(fm, size, fr)
	if total == 0 || float64(len(sh.in[0])) < shadeEdgeLeast*float64(total) {
		return false
	}
	steps, outs := sh.in[0], sh.in[1]
	// The edge's steps, places and insides, kept: each piece is judged on them.
	sh.edge = append(sh.edge[:0], steps...)
	sh.edgeX, sh.edgeY = append(sh.edgeX[:0], sh.in[2]...), append(sh.edgeY[:0], sh.in[3]...)
	sh.edgeIn, sh.edgeOut = append(sh.edgeIn[:0], sh.inside...), append(sh.edgeOut[:0], sh.outside...)
	tmp := append(sh.in[4][:0], steps...)
	deep := float64(quantile(tmp, shadeEdgeDeep))
	var lit []float32
	seeds := sh.seeds[:0]
	for j, v := range steps {
		if math.Abs(float64(v)-deep) < shadeLikeStep(deep) {
			lit = append(lit, outs[j])
			seeds = append(seeds, sh.inside[j])
		}
	}
	sh.in[4], sh.seeds = tmp, seeds
	if len(lit) == 0 || deep < shadeEdge {
		return false
	}
	s.cutShade(median(lit)-float32(deep/2), size)
	sh.joint, sh.pix, sh.pieces = sh.joint[:0], sh.pix[:0], sh.pieces[:0]
	best := -1
	for _, seed := range seeds {
		if s.cov.Pix[seed] == 0 {
			continue
		}
		s.floodShade(seed, fr.Dx())
		s.pieceEdge(size, fr)
		even, _, _ := s.edgeLine(size)
		n := float64(len(sh.in[0]))
		if n < shadePiece || even < shadeEven*n {
			continue
		}
		p := [4]int{len(sh.pix), 0, len(sh.joint), 0}
		sh.pix = append(sh.pix, sh.queue...)
		for j, v := range sh.in[0] {
			sh.joint = append(sh.joint, [3]float32{v, sh.in[2][j], sh.in[3][j]})
		}
		p[1], p[3] = len(sh.pix), len(sh.joint)
		if best < 0 || p[3]-p[2] > sh.pieces[best][3]-sh.pieces[best][2] {
			best = len(sh.pieces)
		}
		sh.pieces = append(sh.pieces, p)
	}
	if best < 0 {
		return false
	}
	return s.joinPieces(best, size, fr)
}

// cutShade puts in s.cov what of s.shade.fine (the region) is darker than cut, opened, so a
// glasses' rim or a crease that crosses the shadow's edge does not join the lit side's dark
// places to it.
func (s *Swapper) cutShade(cut float32, size float64) {
	sh := &s.shade
	s.cov.Reset(sh.fine.Rect)
	for i, v := range sh.fine.Pix {
		if v > 0 && sh.bright.Pix[i] >= cut {
			s.cov.Pix[i] = 1 // the complement, for the erosion
		}
		if v == 0 {
			s.cov.Pix[i] = 1
		}
	}
	r := max(1, int(shadeThin*size))
	s.cov.Dilate(r, &sh.lit)
	complement(&s.cov)
	s.cov.Dilate(r, &sh.lit)
	for i, v := range sh.fine.Pix {
		s.cov.Pix[i] *= v
	}
}

// joinPieces sets s.shade.fine to the pieces castShade kept (s.shade.pieces) whose edges run
// along the curve of piece best's, the longest, and reports whether they make a shadow's edge:
// shadeCrossing long or more, shadeEven of it like its median step, within shadeLine of one
// curve.
func (s *Swapper) joinPieces(best int, size float64, fr image.Rectangle) bool {
	sh := &s.shade
	// The longest piece's edge is the shadow's; the others join it where their edges run on
	// along its curve (the same shadow's edge, cut by an eye or the nose).
	sh.setEdge(sh.pieces[best])
	_, _, fit := s.edgeLine(size)
	sh.fine.Reset(fr)
	for c := range 4 {
		sh.in[c] = sh.in[c][:0]
	}
	for _, p := range sh.pieces {
		var rs float64
		for _, q := range sh.joint[p[2]:p[3]] {
			e := fit.off(q[1], q[2])
			rs += e * e
		}
		if math.Sqrt(rs/float64(p[3]-p[2])) > shadeLine {
			continue
		}
		for _, i := range sh.pix[p[0]:p[1]] {
			sh.fine.Pix[i] = 1
		}
		for _, q := range sh.joint[p[2]:p[3]] {
			sh.in[0], sh.in[2], sh.in[3] = append(sh.in[0], q[0]), append(sh.in[2], q[1]), append(sh.in[3], q[2])
		}
	}
	even, resid, all := s.edgeLine(size)
	n := float64(len(sh.in[0]))
	// How far the edge runs along its curve: a shadow's crosses the face, a dark place's
	// border (a brow's, an eye socket's) curls round it.
	lo, hi := math.Inf(1), math.Inf(-1)
	for j := range sh.in[0] {
		u, _ := all.along(sh.in[2][j], sh.in[3][j])
		lo, hi = math.Min(lo, u), math.Max(hi, u)
	}
	return hi-lo >= shadeAcross && n >= shadeCrossing*size && even >= shadeEven*n && resid <= shadeLine
}

// setEdge puts piece p's edge (see castShade) in in[0], [2] and [3].
func (sh *shadeScratch) setEdge(p [4]int) {
	for c := range 4 {
		sh.in[c] = sh.in[c][:0]
	}
	for _, q := range sh.joint[p[2]:p[3]] {
		sh.in[0], sh.in[2], sh.in[3] = append(sh.in[0], q[0]), append(sh.in[2], q[1]), append(sh.in[3], q[2])
	}
}

// pieceEdge puts in s.shade.in[0], [2] and [3] the steps and places of the region's edge
// (castShade's) that bound s.shade.fine, a piece of it, closed over what it holds (as
// fillShadows does): the edge of a crease, a rim or a nostril within it is no shadow's edge.
func (s *Swapper) pieceEdge(size float64, fr image.Rectangle) {
	sh := &s.shade
	for c := range 4 {
		sh.in[c] = sh.in[c][:0]
	}
	// sh.litW: 1 off the closed piece.
	cl := &sh.litW
	cl.Reset(fr)
	copy(cl.Pix, sh.fine.Pix)
	closeSet(cl, max(1, int(shadeFill*size)), &sh.lit)
	complement(cl)
	for j, i := range sh.edgeIn {
		if o := sh.edgeOut[j]; sh.fine.Pix[i] > 0 && cl.Pix[o] > 0 {
			sh.in[0], sh.in[2], sh.in[3] = append(sh.in[0], sh.edge[j]), append(sh.in[2], sh.edgeX[j]), append(sh.in[3], sh.edgeY[j])
		}
	}
}

// closeSet closes m's set (1 in it) by r: dilated, then eroded (its complement dilated), so
// what it holds narrower than 2r joins it.
func closeSet(m *raster.Mask, r int, tmp *raster.Mask) {
	m.Dilate(r, tmp)
	complement(m)
	m.Dilate(r, tmp)
	complement(m)
}

// complement sets m to 1 − m.
func complement(m *raster.Mask) {
	for i, v := range m.Pix {
		m.Pix[i] = 1 - v
	}
}

// floodShade moves into s.shade.fine (w wide; 1 in it) the piece of s.cov that joins
// (4-connected) pixel seed.
func (s *Swapper) floodShade(seed int32, w int) {
	sh := &s.shade
	in := s.cov.Pix
	sh.fine.Reset(s.cov.Rect)
	q := append(sh.queue[:0], seed)
	in[seed], sh.fine.Pix[seed] = 0, 1
	for k := 0; k < len(q); k++ {
		i := int(q[k])
		x := i % w
		for _, j := range [4]int{i - 1, i + 1, i - w, i + w} {
			if j < 0 || j >= len(in) || (j == i-1 && x == 0) || (j == i+1 && x == w-1) {
				continue
			}
			if in[j] > 0 {
				in[j], sh.fine.Pix[j] = 0, 1
				q = append(q, int32(j))
			}
		}
	}
	sh.queue = q
}

// shadeLikeStep is how far from step (log-brightness) a step along a shadow's edge may be to
// be the same light's.
func shadeLikeStep(step float64) float64 { return math.Max(0.1, shadeLike*step) }

// edgeSteps measures s.shade.fine's edge (over fr) where the face's skin lies beyond it: into
// s.shade.in[0..3] each edge pixel's step in smoothed log-brightness (s.shade.bright) from
// the skin shadeReach beyond it to that as far inside along the edge's normal, the
// brightness beyond, and its place. It returns how many edge pixels there are, measured or
// not (a step that runs off the skin or out of the region is not).
func (s *Swapper) edgeSteps(fm *raster.Mask, size float64, fr image.Rectangle) int {
	w, h := fr.Dx(), fr.Dy()
	sh := &s.shade
	in := sh.fine.Pix
	ind := &s.zone
	ind.Reset(fr)
	copy(ind.Pix, in)
	s.chanBlur.Apply(ind, math.Max(1, shadeNormal*size))
	skin := func(i int) bool {
		x, y := fr.Min.X+i%w, fr.Min.Y+i/w
		return fm.Pix[(y-fm.Rect.Min.Y)*fm.Stride+x-fm.Rect.Min.X] > 0.5 && s.excl.Pix[i] < 1
	}
	d := math.Max(2, shadeReach*size)
	for c := range 4 {
		sh.in[c] = sh.in[c][:0]
	}
	sh.inside, sh.outside = sh.inside[:0], sh.outside[:0]
	total := 0
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			i := y*w + x
			if in[i] == 0 {
				continue
			}
			edge := false
			for _, j := range [4]int{i - 1, i + 1, i - w, i + w} {
				if in[j] == 0 && skin(j) {
					edge = true
				}
			}
			if !edge {
				continue
			}
			total++
			gx, gy := float64(ind.Pix[i+1]-ind.Pix[i-1]), float64(ind.Pix[i+w]-ind.Pix[i-w])
			g := math.Hypot(gx, gy)
			if g < 1e-6 {
				continue
			}
			dx, dy := int(math.Round(gx/g*d)), int(math.Round(gy/g*d))
			xi, yi, xo, yo := x+dx, y+dy, x-dx, y-dy
			if min(xi, yi, xo, yo) < 0 || max(xi, xo) >= w || max(yi, yo) >= h {
				continue
			}
			ii, io := yi*w+xi, yo*w+xo
			// Beside something darker than itself (a rim, a crease, an eye's rim of lashes) the
			// region is no shadow's edge, nor evidence against one.
			if !skin(ii) || !skin(io) || in[io] > 0 || in[ii] == 0 || sh.bright.Pix[io] <= sh.bright.Pix[ii] {
				continue
			}
			sh.in[0] = append(sh.in[0], sh.bright.Pix[io]-sh.bright.Pix[ii])
			sh.in[1] = append(sh.in[1], sh.bright.Pix[io])
			sh.in[2], sh.in[3] = append(sh.in[2], float32(x)), append(sh.in[3], float32(y))
			sh.inside, sh.outside = append(sh.inside, int32(ii)), append(sh.outside, int32(io))
		}
	}
	return total
}

// edgeLine is how many of the steps edgeSteps measured are within shadeLikeStep of their
// median, and how far (RMS, share of the face size) those lie from the parabola that fits
// them best along their main axis.
func (s *Swapper) edgeLine(size float64) (even, resid float64, fit edgeCurve) {
	sh := &s.shade
	steps, xs, ys := sh.in[0], sh.in[2], sh.in[3]
	if len(steps) == 0 {
		return 0, math.Inf(1), fit
	}
	tmp := append(sh.in[4][:0], steps...)
	sh.in[4] = tmp
	med := float64(median(tmp))
	like := func(j int) bool { return math.Abs(float64(steps[j])-med) < shadeLikeStep(med) }
	var mx, my float64
	for j := range steps {
		if like(j) {
			mx, my, even = mx+float64(xs[j]), my+float64(ys[j]), even+1
		}
	}
	if even < 3 {
		return even, math.Inf(1), fit
	}
	mx, my = mx/even, my/even
	var sxx, syy, sxy float64
	for j := range steps {
		if like(j) {
			dx, dy := float64(xs[j])-mx, float64(ys[j])-my
			sxx, syy, sxy = sxx+dx*dx, syy+dy*dy, sxy+dx*dy
		}
	}
	th := 0.5 * math.Atan2(2*sxy, sxx-syy)
	fit = edgeCurve{mx: mx, my: my, ux: math.Cos(th), uy: math.Sin(th), size: size}
	along := func(j int) (u, v float64) { return fit.along(xs[j], ys[j]) }
	// The normal equations of v = a + b·u + c·u².
	var m [3][4]float64
	for j := range steps {
		if !like(j) {
			continue
		}
		u, v := along(j)
		p := [3]float64{1, u, u * u}
		for a := range 3 {
			for b := range 3 {
				m[a][b] += p[a] * p[b]
			}
			m[a][3] += p[a] * v
		}
	}
	fit.c = solve3(m)
	for j := range steps {
		if like(j) {
			e := fit.off(xs[j], ys[j])
			resid += e * e
		}
	}
	return even, math.Sqrt(resid / even), fit
}

// edgeCurve is a parabola v = c0 + c1·u + c2·u² along the axis (ux, uy) through (mx, my),
// u and v in shares of the face size.
type edgeCurve struct {
	mx, my, ux, uy, size float64
	c                    [3]float64
}

// along is (x, y) in the curve's axes.
func (f edgeCurve) along(x, y float32) (u, v float64) {
	dx, dy := float64(x)-f.mx, float64(y)-f.my
	return (dx*f.ux + dy*f.uy) / f.size, (dy*f.ux - dx*f.uy) / f.size
}

// off is how far (share of the face size, across the axis) (x, y) lies from the curve.
func (f edgeCurve) off(x, y float32) float64 {
	u, v := f.along(x, y)
	return v - f.c[0] - f.c[1]*u - f.c[2]*u*u
}

// solve3 solves the 3×3 system m (each row's right-hand side last) by elimination, zero
// where it is singular.
func solve3(m [3][4]float64) [3]float64 {
	for i := range 3 {
		p := i
		for r := i + 1; r < 3; r++ {
			if math.Abs(m[r][i]) > math.Abs(m[p][i]) {
				p = r
			}
		}
		m[i], m[p] = m[p], m[i]
		if math.Abs(m[i][i]) < 1e-12 {
			return [3]float64{}
		}
		for r := range 3 {
			if r != i {
				f := m[r][i] / m[i][i]
				for c := i; c < 4; c++ {
					m[r][c] -= f * m[i][c]
				}
			}
		}
	}
	return [3]float64{m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]}
}

// quantile is v's q quantile (v is reordered).
func quantile(v []float32, q float64) float32 {
	slices.Sort(v)
	return v[int(q*float64(len(v)-1))]
}
