package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A small cover (a sticker, a plaster, a pin, a fingertip, an earbud) covers less of the
// face than the skin's own marks may, so dropSmall takes it out with them. What tells it from
// a mole, a freckle, a shine or a shadow is its outline: a sharp edge closed all round a
// compact patch of the face, inside which the colour is not that of the skin around it on
// any side, and too large for a blemish. A shadow's or a shine's edge is soft (no closed
// sharp edge), a crease is thin, a mole or a freckle small, and a pore's or a frame's noise
// makes no patch of that size whose colour differs from the skin all round.

const (
	// spotGridSize is the least face size (px) the test works at: a larger face is seen on a
	// grid of blocks' means, as structureCoarse's, which calms the skin's grain.
	spotGridSize = 64
	// spotEdgeK and spotEdgeFloor set the least gradient (levels per grid pixel, Sobel) of a
	// spot's outline: spotEdgeK times the skin's median, at least spotEdgeFloor; then, for a
	// fainter outline (a cover nearer the skin's colour), spotEdgeKFaint times it.
	spotEdgeK      = 1.5
	spotEdgeKFaint = 1
	spotEdgeFloor  = 5
	// spotMost is the largest share of the face a spot's interior (the pixels within its
	// outline) may cover.
	spotMost = 0.04
	// spotRing is the width of the ring of skin about a spot that its colour is set against,
	// beyond spotGap of its outline, as a share of the face size.
	spotRing = 0.03
	spotGap  = 0.02
	// spotBright and spotChroma are the units of spotStep (log-brightness, log-chromaticity).
	spotBright = 0.15
	spotChroma = 0.08
	// A spot's interior must differ from the skin beside it by spotStepLeast on every side
	// (at least spotSectors of eight sectors about it on the face), be compact (spotCompact
	// of the disc about its centre reaching its farthest pixel) and its body cover
	// spotLeastBody of the face.
	spotStepLeast = 3
	spotSectors   = 6
	spotCompact   = 0.3
	spotLeastBody = 0.005
	// A flat spot (its median gradient at most spotFlat of the skin's: paint, plastic, a
	// plaster) need differ from the skin beside it by spotFlatStep only: the skin's own
	// patches between its folds have its grain.
	spotFlat     = 0.2
	spotFlatStep = 1.5
	// spotLeastInterior is the least share of the face within a spot's outline, and
	// spotLeastPixels the least grid pixels: on a small face a shadow's or a fold's edge is
	// as sharp as a cover's, and a few pixels' colour is the codec's.
	spotLeastInterior = 0.0025
	spotLeastPixels   = 16
	// spotStepSmall is the step a spot of half as many pixels must make.
	spotStepSmall = 6
	// A spot whose colour is a shade of the skin about it (a blemish's: darker, redder or
	// browner, as melanin and blood make it; in log-chromaticity at most spotShadeAcross off
	// the skin's axis, which blood leaves for red, spotShadeAlong along it the paler way, and
	// spotShadeChroma from it in all; in log-brightness at most spotShadeBrighter brighter
	// and spotShadeDarker darker) is a mole, an age spot or a red spot while its interior
	// covers at most spotShadeMost of the face (a blemish of about 1.5 %, its outline's band
	// included); one of a colour skin never has (grey, white, a plaster's beige, teal, a
	// vivid red, black) is a cover from spotLeastInterior.
	spotShadeAcross   = 0.55
	spotShadeAlong    = 0.05
	spotShadeChroma   = 0.75
	spotShadeBrighter = 0.1
	spotShadeDarker   = 1
	spotShadeMost     = 0.015
	// About an eye (see eyeZones) a spot is judged only if every pixel of it lies
	// spotBelowFold eye widths below the lower lid, clear of the under-eye fold and its shade,
	// and its interior fills spotBandFill of the ellipse of its spread. One spotBandLong times
	// as long as wide there is a band, no blemish; one with more than spotBandGrain of the
	// skin's gradient must be darker than the skin.
	spotBelowFold = 0.25
	spotBandFill  = 0.85
	spotBandLong  = 3
	spotBandGrain = 0.3
)

// spotScratch is keepSpots' working memory.
type spotScratch struct {
	img                *raster.Image
	fm, excl, occ      []float32
	grad               []float32
	label, area, stack []int32
	open               []bool
	dist               []int16
	body               []int32
	feat               [3][]float32
	sec                [spotSectors8][3][]float32 // each sector's colour features (see measureSpot)
	w, h, f            int
	// kept is how many spots the last keepSpots kept.
	kept int
}

// spotGrid fills s.spots' grid: fr seen in blocks of f×f pixels, each its block's mean, with
// the face mask, the features and the covers found sampled at its centre.
func (s *Swapper) spotGrid(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, f int) {
	sp := &s.spots
	w, h := fr.Dx(), fr.Dy()
	cw, ch := (w+f-1)/f, (h+f-1)/f
	sp.w, sp.h, sp.f = cw, ch, f
	n := cw * ch
	if sp.img == nil {
		sp.img = &raster.Image{}
	}
	sp.img.Pix = slices.Grow(sp.img.Pix[:0], 3*n)[:3*n]
	sp.img.Stride, sp.img.W, sp.img.H = 3*cw, cw, ch
	sp.fm = slices.Grow(sp.fm[:0], n)[:n]
	sp.excl = slices.Grow(sp.excl[:0], n)[:n]
	sp.occ = slices.Grow(sp.occ[:0], n)[:n]
	for cy := range ch {
		for cx := range cw {
			var sum [3]int
			k := 0
			for y := cy * f; y < min(h, cy*f+f); y++ {
				row := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:]
				for x := cx * f; x < min(w, cx*f+f); x++ {
					sum[0], sum[1], sum[2] = sum[0]+int(row[3*x]), sum[1]+int(row[3*x+1]), sum[2]+int(row[3*x+2])
					k++
				}
			}
			sp.img.Set(cx, cy, uint8((sum[0]+k/2)/k), uint8((sum[1]+k/2)/k), uint8((sum[2]+k/2)/k))
			x, y := min(w-1, cx*f+f/2), min(h-1, cy*f+f/2)
			i := cy*cw + cx
			sp.fm[i] = fm.At(fr.Min.X+x, fr.Min.Y+y)
			sp.excl[i] = s.excl.Pix[y*w+x]
			sp.occ[i] = s.occ.Pix[y*w+x]
		}
	}
}

// onFace reports whether grid pixel i may be part of a spot or the skin about it: on the face
// (its feathered edge included), off its features.
func (sp *spotScratch) onFace(i int) bool { return sp.fm[i] > 0 && sp.excl[i] == 0 }

// keepSpots adds to s.occ (over fr) the small covers (see above) among the face's pixels:
// first those within the sharper outlines, then, of what is left, within the fainter.
func (s *Swapper) keepSpots(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle, m skinModel) {
	sp := &s.spots
	sp.kept = 0
	s.eyeZones(target)
	f := max(1, int(size/spotGridSize))
	s.spotGrid(frame, fm, fr, f)
	skin := s.spotGradients()
	if skin < 0 {
		return
	}
	faceN := 0.0
	for _, v := range sp.fm {
		if v > 0.5 {
			faceN++
		}
	}
	for _, k := range [2]float32{spotEdgeK, spotEdgeKFaint} {
		thr := max(spotEdgeFloor, k*skin)
		n := sp.outlined(thr)
		// No interior under half the least (see certain) is a spot.
		lo, hi := int32(max(spotLeastPixels, spotLeastInterior*faceN)/2), int32(spotMost*faceN)
		for l := int32(1); l <= n; l++ {
			if !sp.open[l] && sp.area[l] >= lo && sp.area[l] <= hi {
				s.judgeSpot(frame, fm, fr, size/float64(f), l, skin, faceN, m)
			}
		}
	}
}

// spotGradients puts in s.spots.grad the Sobel gradient of the grid's colour (its largest
// channel's, levels per grid pixel) and returns its median over the skin, -1 if there is
// too little skin.
func (s *Swapper) spotGradients() float32 {
	sp := &s.spots
	w, h := sp.w, sp.h
	n := w * h
	sp.grad = slices.Grow(sp.grad[:0], n)[:n]
	clear(sp.grad)
	pix, st := sp.img.Pix, sp.img.Stride
	s.dev = s.dev[:0]
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			var g float32
			for c := range 3 {
				p := func(dx, dy int) float32 { return float32(pix[(y+dy)*st+3*(x+dx)+c]) }
				gx := p(1, -1) + 2*p(1, 0) + p(1, 1) - p(-1, -1) - 2*p(-1, 0) - p(-1, 1)
				gy := p(-1, 1) + 2*p(0, 1) + p(1, 1) - p(-1, -1) - 2*p(0, -1) - p(1, -1)
				g = max(g, float32(math.Sqrt(float64(gx*gx+gy*gy)))/8)
			}
			i := y*w + x
			sp.grad[i] = g
			if sp.fm[i] > 0.5 && sp.excl[i] == 0 {
				s.dev = append(s.dev, g)
			}
		}
	}
	if len(s.dev) < 16 {
		return -1
	}
	return median(s.dev)
}

// outlined labels in sp.label the 4-connected regions of the face's pixels (see onFace) under
// the gradient thr, recording each one's area and whether it is open (reaching the grid's
// border, or past a pixel under thr that is off the face, on a feature or on a cover already
// found, rather than an outline); it returns how many there are.
func (sp *spotScratch) outlined(thr float32) int32 {
	w, h := sp.w, sp.h
	sp.label = slices.Grow(sp.label[:0], w*h)[:w*h]
	for i := range sp.label {
		sp.label[i] = -1
		if sp.grad[i] < thr && sp.onFace(i) && sp.occ[i] != 1 {
			sp.label[i] = 0
		}
	}
	sp.area, sp.open = append(sp.area[:0], 0), append(sp.open[:0], false)
	k := int32(0)
	for start, v := range sp.label {
		if v != 0 {
			continue
		}
		k++
		sp.area = append(sp.area, 0)
		sp.open = append(sp.open, false)
		sp.label[start] = k
		sp.stack = append(sp.stack[:0], int32(start))
		for len(sp.stack) > 0 {
			i := int(sp.stack[len(sp.stack)-1])
			sp.stack = sp.stack[:len(sp.stack)-1]
			sp.area[k]++
			x, y := i%w, i/w
			sp.open[k] = sp.open[k] || x == 0 || y == 0 || x == w-1 || y == h-1
			for _, nb := range neighbours4(i, w, h) {
				switch {
				case nb < 0:
				case sp.label[nb] == 0:
					sp.label[nb] = k
					sp.stack = append(sp.stack, int32(nb))
				case sp.label[nb] == -1 && (sp.grad[nb] < thr || sp.occ[nb] == 1):
					sp.open[k] = true
				}
			}
		}
	}
	return k
}

// spotSectors8 is how many sectors about a spot its ring is judged in.
const spotSectors8 = 8

// spotLook is what judgeSpot measures of a spot: its interior's pixel count, centre, median
// colour features and median gradient (a share of the skin's), its compactness, and each
// sector's median colour beyond its outline and step from the interior's (NaN where the
// sector has too little skin), the least of those steps and how many there are.
type spotLook struct {
	inner         int
	cx, cy        float64
	in            [3]float32
	flat, compact float64
	fill, long    float64
	out           [spotSectors8][3]float32
	steps         [spotSectors8]float64
	minStep       float64
	present, gap  int
}

// judgeSpot decides whether component l of s.spots.label is a small cover, marking its body
// in s.occ (and its interior in the grid's covers) if so.
func (s *Swapper) judgeSpot(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, size float64, l int32, skin float32, faceN float64, m skinModel) {
	sp := &s.spots
	var lk spotLook
	lk.gap = max(2, int(spotGap*size))
	lk.inner, lk.cx, lk.cy = sp.spread(l, lk.gap+max(2, int(spotRing*size)))
	s.measureSpot(&lk, skin)
	// About an eye a lens's rim and the under-eye fold close the skin in (see eyeZones):
	// there only a band or a blob wholly below the fold is judged, and as one.
	eye, below := 0, math.Inf(1)
	for _, i := range sp.stack[:lk.inner] {
		p := geom.Pt{X: float64(fr.Min.X + int(i)%sp.w*sp.f + sp.f/2), Y: float64(fr.Min.Y + int(i)/sp.w*sp.f + sp.f/2)}
		if s.inEyeZone(p, true) {
			eye++
			below = math.Min(below, s.belowLid(p))
		}
	}
	// Written to fail when below is NaN (landmarks gone wrong): then nothing about an eye is kept.
	byEye := 2*eye >= lk.inner
	if byEye && (!(below >= spotBelowFold) || !lk.band(faceN)) || !byEye && !lk.certain(faceN) {
		return
	}
	across, along, bright := lk.shade(m)
	// A lens's glare over the skin it and the fold close in brightens and pales that skin,
	// its grain left: a band about an eye with the skin's grain must be darker.
	if byEye && lk.flat > spotBandGrain && bright >= 0 {
		return
	}
	// A long band about an eye is no mole nor age spot.
	if !(byEye && lk.long >= spotBandLong) && math.Abs(across) <= spotShadeAcross && along >= -spotShadeAlong && math.Hypot(along, across) <= spotShadeChroma &&
		bright <= spotShadeBrighter && bright >= -spotShadeDarker && float64(lk.inner) <= spotShadeMost*faceN {
		return
	}
	s.spotBody(frame, fm, fr, &lk)
	if float64(len(sp.body)) < spotLeastBody*faceN*float64(sp.f*sp.f) {
		return
	}
	sp.kept++
	for _, k := range sp.body {
		s.occ.Pix[k] = 1
	}
	for _, i := range sp.stack[:lk.inner] {
		sp.occ[i] = 1
	}
}

// spread puts in sp.stack component l's pixels, then the grid's pixels out to far 4-connected
// steps from it, with each one's steps in sp.dist; it returns how many pixels the component
// has and its centre.
func (sp *spotScratch) spread(l int32, far int) (inner int, cx, cy float64) {
	w, h := sp.w, sp.h
	sp.stack = sp.stack[:0]
	for i, v := range sp.label {
		if v == l {
			sp.stack = append(sp.stack, int32(i))
			cx, cy = cx+float64(i%w), cy+float64(i/w)
		}
	}
	inner = len(sp.stack)
	cx, cy = cx/float64(inner), cy/float64(inner)
	if len(sp.dist) < w*h {
		sp.dist = make([]int16, w*h)
	}
	for i := range sp.dist[:w*h] {
		sp.dist[i] = -1
	}
	for _, i := range sp.stack {
		sp.dist[i] = 0
	}
	for head := 0; head < len(sp.stack); head++ {
		i := int(sp.stack[head])
		d := sp.dist[i]
		if int(d) >= far {
			continue
		}
		for _, nb := range neighbours4(i, w, h) {
			if nb >= 0 && sp.dist[nb] < 0 {
				sp.dist[nb] = d + 1
				sp.stack = append(sp.stack, int32(nb))
			}
		}
	}
	return inner, cx, cy
}

// sector is which of the sectors about the spot's centre grid pixel (x, y) lies in.
func (lk *spotLook) sector(x, y int) int {
	a := math.Atan2(float64(y)-lk.cy, float64(x)-lk.cx)
	return int((a+math.Pi)/(2*math.Pi)*spotSectors8) % spotSectors8
}

// measureSpot fills lk (whose interior and ring s.spots.spread has put in s.spots.stack) from
// the grid; skin is the skin's median gradient.
func (s *Swapper) measureSpot(lk *spotLook, skin float32) {
	sp := &s.spots
	w := sp.w
	feat := func(i int) [3]float32 {
		p := sp.img.Pix[3*i:]
		return features(p[0], p[1], p[2])
	}
	for c := range 3 {
		sp.feat[c] = sp.feat[c][:0]
	}
	s.dev = s.dev[:0]
	var rmax, xx, xy, yy float64
	for _, i := range sp.stack[:lk.inner] {
		f := feat(int(i))
		for c := range 3 {
			sp.feat[c] = append(sp.feat[c], f[c])
		}
		s.dev = append(s.dev, sp.grad[i])
		dx, dy := float64(int(i)%w)-lk.cx, float64(int(i)/w)-lk.cy
		rmax = max(rmax, math.Hypot(dx, dy))
		xx, xy, yy = xx+dx*dx, xy+dx*dy, yy+dy*dy
	}
	// The ellipse of the interior's second moments has semi-axes 2√λ of their eigenvalues λ,
	// so an area of 4π√(det).
	n := float64(lk.inner)
	lk.fill = n / (4*math.Pi*math.Sqrt(max(0, xx*yy-xy*xy))/n + math.Pi/4)
	// How long against how wide: a line one pixel wide spreads 1/12 across.
	lo, hi := eigenvalues(xx, xy, yy)
	lk.long = math.Sqrt(hi / max(lo, n/12))
	for c := range 3 {
		lk.in[c] = median(sp.feat[c])
	}
	lk.flat = float64(median(s.dev) / skin)
	lk.compact = float64(lk.inner) / (math.Pi * (rmax + 0.5) * (rmax + 0.5))
	sec := &sp.sec
	for j := range sec {
		for c := range 3 {
			sec[j][c] = sec[j][c][:0]
		}
	}
	for _, i := range sp.stack[lk.inner:] {
		if int(sp.dist[i]) <= lk.gap || !sp.onFace(int(i)) {
			continue
		}
		j := lk.sector(int(i)%w, int(i)/w)
		f := feat(int(i))
		for c := range 3 {
			sec[j][c] = append(sec[j][c], f[c])
		}
	}
	lk.minStep, lk.present = math.Inf(1), 0
	for j := range spotSectors8 {
		lk.steps[j] = math.NaN()
		if len(sec[j][0]) < 4 {
			continue
		}
		lk.present++
		for c := range 3 {
			lk.out[j][c] = median(sec[j][c])
		}
		lk.steps[j] = spotStep(lk.out[j], lk.in)
		lk.minStep = math.Min(lk.minStep, lk.steps[j])
	}
}

// certain reports whether the spot lk (of a face of faceN grid pixels) is a cover: skin on
// most sides of it, compact, and its colour a step from the skin's on every side, a
// smaller one if it is flat, a larger one if its interior is small (a shadow's or a fold's
// pocket may be as compact and as sharply outlined as a cover).
func (lk *spotLook) certain(faceN float64) bool {
	if lk.present < spotSectors || lk.compact < spotCompact {
		return false
	}
	small := lk.inner < spotLeastPixels || float64(lk.inner) < spotLeastInterior*faceN
	if !small {
		return lk.minStep >= spotStepLeast || lk.minStep >= spotFlatStep && lk.flat <= spotFlat
	}
	return lk.minStep >= spotStepSmall && 2*lk.inner >= spotLeastPixels && 2*float64(lk.inner) >= spotLeastInterior*faceN
}

// band reports whether the spot lk, below an eye's fold, is a cover: skin on most sides of
// it, as large as certain's, a band's or a blob's shape (its interior fills the ellipse of
// its spread by spotBandFill: the skin that a lens's rim and the fold close in between them
// is a crescent) and its colour a step from the skin's on every side as certain's.
func (lk *spotLook) band(faceN float64) bool {
	if lk.present < spotSectors || lk.fill < spotBandFill || lk.inner < spotLeastPixels || float64(lk.inner) < spotLeastInterior*faceN {
		return false
	}
	return lk.minStep >= spotStepLeast || lk.minStep >= spotFlatStep && lk.flat <= spotFlat
}

// shade returns how the spot lk's colour departs from the skin's: its chromaticity from the
// skin model m's, across the skin's axis and along it (the ring about a spot may be a brow's
// or a shadow's), and its log-brightness from the ring's (the median over its sectors), or
// the model's where that is less bright (a brow's hairs darken a ring).
func (lk *spotLook) shade(m skinModel) (across, along, bright float64) {
	ux, uy := float64(m.ux), float64(m.uy)
	a, b := float64(lk.in[1]), float64(lk.in[2])
	along, across = a*ux+b*uy-float64(m.med[1]), b*ux-a*uy-float64(m.med[2])
	bright = float64(lk.in[0] - m.med[0])
	var ring []float64
	for j := range spotSectors8 {
		if !math.IsNaN(lk.steps[j]) {
			ring = append(ring, float64(lk.out[j][0]))
		}
	}
	if len(ring) > 0 {
		slices.Sort(ring)
		k := len(ring)
		if d := float64(lk.in[0]) - (ring[(k-1)/2]+ring[k/2])/2; d < 0 || d < bright {
			bright = d
		}
	}
	return across, along, bright
}

// spotBody puts in s.spots.body the frame's pixels (over fr, fm > 0) of the spot lk: its
// interior's blocks, and those of its outline's band (within lk.gap of it) nearer its
// colour than the skin's beside them.
func (s *Swapper) spotBody(frame *raster.Image, fm *raster.Mask, fr image.Rectangle, lk *spotLook) {
	sp := &s.spots
	f, fw := sp.f, fr.Dx()
	sp.body = sp.body[:0]
	for _, i := range sp.stack {
		if int(sp.dist[i]) > lk.gap {
			continue
		}
		x, y := int(i)%sp.w, int(i)/sp.w
		j := lk.sector(x, y)
		if math.IsNaN(lk.steps[j]) {
			j = (j + 1) % spotSectors8
		}
		for v := y * f; v < min(fr.Dy(), y*f+f); v++ {
			for u := x * f; u < min(fw, x*f+f); u++ {
				k := v*fw + u
				if !(fm.Pix[(v+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+u+fr.Min.X-fm.Rect.Min.X] > 0) {
					continue
				}
				if sp.dist[i] > 0 {
					c := pixelFeatures(frame, fr, fw, k)
					if math.IsNaN(lk.steps[j]) || spotStep(c, lk.in) >= spotStep(c, lk.out[j]) {
						continue
					}
				}
				sp.body = append(sp.body, int32(k))
			}
		}
	}
}

// spotStep is how far colour features a lie from b: the larger of their brightnesses' and
// their chromaticities' distances, each in units of a step no shading of the skin takes
// across a sharp edge.
func spotStep(a, b [3]float32) float64 {
	return math.Max(math.Abs(float64(a[0]-b[0]))/spotBright, math.Hypot(float64(a[1]-b[1]), float64(a[2]-b[2]))/spotChroma)
}

// eigenvalues are the smaller and the larger eigenvalue of the symmetric matrix [[xx xy] [xy yy]].
func eigenvalues(xx, xy, yy float64) (lo, hi float64) {
	m, d := (xx+yy)/2, math.Sqrt((xx-yy)*(xx-yy)/4+xy*xy)
	return m - d, m + d
}
