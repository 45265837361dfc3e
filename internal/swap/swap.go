// Package swap is the classic, model-free face swapper: it warps a source face, keeping its
// proportions, into a target face whose pose and expression it follows, matches its colour
// and light to the target's skin, keeps what covers the target's face, and blends it in
// without a seam.
package swap

import (
	"errors"
	"fmt"
	"image"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

const (
	// minFace is the smallest landmark box side (px) worth swapping; below it the warp has
	// no pixels to work with and the frame is left alone.
	minFace = 8
	// maxFeather caps the feathering σ (px): a softer edge is invisible, and the blur's cost
	// grows with σ for the enormous faces of an extreme close-up.
	maxFeather = 48
)

// Source is a source face prepared once: a private copy of the image around the face and
// the landmarks in that copy's coordinates. It is read-only afterwards, so one Source can
// serve every worker's Swapper.
type Source struct {
	img *raster.Image
	lm  face.Landmarks68
	ext [extPoints]geom.Pt // lm with the forehead points
}

// NewSource crops the face described by lm out of img (with a margin, so bilinear samples at
// the hull's edge see real pixels) and keeps the crop; img may be reused afterwards.
func NewSource(img *raster.Image, lm *face.Landmarks68) (*Source, error) {
	if img == nil || img.W == 0 || img.H == 0 {
		return nil, errors.New("swap: the source image is empty: load a PNG or JPEG with a face in it")
	}
	if !finite(lm) {
		return nil, errors.New("swap: the source landmarks contain NaN or infinite values: the landmark model failed on the source image; try another source image")
	}
	b := geom.Bounds(lm[:])
	if s := math.Max(b.W(), b.H()); s < minFace {
		return nil, fmt.Errorf("swap: the source face is only %.1f px across (need at least %d): use a larger source face", s, minFace)
	}
	margin := 0.1 * math.Max(b.W(), b.H())
	var ext [extPoints]geom.Pt
	extend(lm, &ext)
	b = geom.Bounds(ext[:]) // the crop holds the forehead points too
	r := image.Rect(int(math.Floor(b.X0-margin)), int(math.Floor(b.Y0-margin)),
		int(math.Ceil(b.X1+margin))+1, int(math.Ceil(b.Y1+margin))+1).Intersect(img.Bounds())
	if r.Dx() < minFace || r.Dy() < minFace {
		return nil, fmt.Errorf("swap: the source face (landmarks in %.0f,%.0f–%.0f,%.0f) lies outside the %dx%d source image: check the landmarks belong to this image",
			b.X0, b.Y0, b.X1, b.Y1, img.W, img.H)
	}
	crop := raster.New(r.Dx(), r.Dy())
	for y := range r.Dy() {
		copy(crop.Pix[y*crop.Stride:][:crop.Stride], img.Pix[(r.Min.Y+y)*img.Stride+3*r.Min.X:])
	}
	s := &Source{img: crop}
	for i, p := range lm {
		s.lm[i] = geom.Pt{X: p.X - float64(r.Min.X), Y: p.Y - float64(r.Min.Y)}
	}
	extend(&s.lm, &s.ext)
	return s, nil
}

// Image is the source crop the warp samples from.
func (s *Source) Image() *raster.Image { return s.img }

// Landmarks are the source landmarks in the crop's coordinates.
func (s *Source) Landmarks() face.Landmarks68 { return s.lm }

// Options tune the mask and colour matching. Sizes are fractions of the target face's size
// (the larger side of its landmark box), so one setting suits every face size.
type Options struct {
	// Erode pulls the landmark hull in before feathering, keeping the seam off the jaw line
	// and hair.
	Erode float64
	// Feather is the σ of the Gaussian that softens the mask edge.
	Feather float64
	// ColourTransfer matches the warped source's colour statistics to the target's skin.
	ColourTransfer bool
	// Seamless adds a membrane to the warped source: the difference to the target along the
	// mask's edge, spread smoothly over the face, so the edge shows no colour step or halo
	// and the target's low-frequency light lands on the source's face.
	Seamless bool
	// Occluders keeps the target's pixels where something covers its face (glasses frames,
	// a hand, a bar, hair), told by colour, edges, texture and fine detail.
	Occluders bool
	// Identity keeps the source's facial proportions (see destination); false warps the
	// source onto the target's 68 points, taking the target's geometry.
	Identity bool
}

// DefaultOptions are the settings the pipeline uses unless configured otherwise.
func DefaultOptions() Options {
	return Options{Erode: 0, Feather: 0.025, ColourTransfer: true, Seamless: true, Occluders: true, Identity: true}
}

// membraneCells is about how many membrane cells span a face: enough for the light of a
// cheek, few enough that the edge's texture does not reach the interior.
const membraneCells = 32

// MembraneInner is the share of the membrane kept where the mask is whole (see
// raster.Membrane.Add): the whole membrane in the edge band hides the seam; inside the face
// a quarter of it carries the target's light while the source's own shading (its features'
// relief) keeps the rest. The whole membrane there cost 0.03–0.05 of identity similarity,
// half of it about 0.01–0.02.
const MembraneInner = 0.5

// Swapper swaps one prepared Source into frames. It owns every scratch buffer, so Apply does
// not allocate once it has seen its largest face; it is not safe for concurrent use (give
// each worker goroutine its own; they may share the Source).
type Swapper struct {
	src  *Source
	opts Options

	// The swap (Apply): the source's points in the target's pose, the warp, the mask and
	// the colour match; last is the rectangle Apply last changed (Rect).
	dst                 face.Landmarks68
	dstExt, tgtExt      [extPoints]geom.Pt
	fitA, fitB          []geom.Pt
	sorted, hull, hull2 []geom.Pt // convexHull's
	warped              raster.FloatImage
	cov, mask           raster.Mask // cov: the membrane's band, and scratch for the tests below
	blur                raster.Blur
	membrane            raster.Membrane
	last                image.Rectangle
	// The next Apply's tones (see Steady).
	own, steady face.Tone
	steadyOn    bool
	steadyShare float64 // how much of the steady tone's move is taken
	// Votes' covers and frames, for the next Apply (voteOn)
	votes      []*face.Cover
	voteFrames int
	voteOn     bool
	voteCount  []uint8

	// The occluder tests (see occluders), all over the face's rectangle: occ holds what they
	// found, excl the features they leave out, clip one test's finds before they join occ,
	// zone the places a test treats apart.
	occ, excl, clip, zone raster.Mask
	occBlur               raster.Blur
	// lipsOpen: the mouth's pixels that a cover only ringing it leaves swapped (see mouthOpen);
	// mouthSmooth and hairMouth: the frame's smooth lips and whether hair rings them (see mouthHair).
	lipsOpen, mouthSmooth raster.Mask
	hairMouth             bool
	busy                  [2][]float32  // the ring's and the lips' busyness (see mouthOpen)
	part, partHull        []geom.Pt     // a feature's points and their hull
	feat                  [3][]float32  // colour features: the skin samples, a cover's pixels
	dev                   []float32     // values to sort for a median
	skinDisc              [8]bool       // which skin sample discs the skin model keeps (see dropCoveredSamples)
	discLight             [8][3]float32 // the kept discs' median colour features, NaN for the rest (see litSkin)
	upperSkin             bool          // whether the forehead chose them over their majority
	stack                 []int32       // pixels to visit, or seeds to grow from
	// Regions (see components): each pixel's label, and each region's area, area outside
	// the features (free), whether it is skin and its median (see skinRegions).
	label  []int32
	area   []int
	free   []int
	skin   []bool
	regMed [][4]float32
	// enclosed: whether a region is a cover that its own edges close (see enclosedRegions).
	enclosed []bool
	// The structure test's (see structure): the smoothed channels (the thin covers' too), the
	// colour's gradient and the fine detail, and the coarse grid a large face is seen on
	// (see structureCoarse).
	chan3                   [3]raster.Mask
	chanBlur                raster.Blur
	grad, tex               []float32
	small                   *raster.Image
	cfm, cexcl, cocc, copen raster.Mask
	// The detail test's (see detail): the frame's and the warped source's fine detail.
	detT, detS raster.Mask
	// The light over the face (see lightField), its coarse grid's (see structureCoarse), and
	// the sums lightField averages it from; dim: whether it falls off anywhere.
	light, clight, lightSum, lightN raster.Mask
	dim                             bool
	lightCols                       []lightCol
	// Their medians on the skin discs (see skinMedian), which thinCovers reads too.
	detMed [2]float32
	// Summed-area tables (the detail test's box means, the growth's opening).
	sat []float64
	// The texture test's (see texture): the descriptors, the orientation's doubled-angle
	// vector, the chroma's detail, the luma and its 3×3 and 7×7 means, boxSmooth's rows, and
	// chromaDetail's row sums and means.
	texE               [3]raster.Mask
	texJ               [2]raster.Mask
	texC               [2]raster.Mask
	texL, texB1, texB3 raster.Mask
	texSum             []float32
	latB, latS         raster.Mask
	latE               []raster.Mask
	latLags            []([3]int)
	latBin             [latBins]raster.Mask
	texPre             []float32
	texRows            []float32
	// The thin covers' (see thinCovers): the warped source's coarse luma, and whether each
	// ridge is long enough.
	srcLuma raster.Mask
	keep    []bool
	// bands is 1 on the thin covers found (over the face's rectangle), kept past dropSmall.
	bands raster.Mask
	// hueBand is 1 on the grid pixels whose colour departs from the skin's (see hueBands).
	hueBand raster.Mask
	// pairBand is 1 on the grid pixels of the skin-hued bands found by their edges (see
	// skinBands); pairGrid what it reads and scores of each grid pixel, pairTouched the
	// pixels a pass found a side at or followed a run from, pairIdx a run's points,
	// pairStart the pixels runs are followed from, pairCand those a pass's pairFrom finds a
	// pair at, pairSteps a direction's steps along a band's line (see pairStepsAlong).
	pairBand                                  raster.Mask
	pairGrid                                  []pairPix
	pairTouched, pairIdx, pairStart, pairCand []int32
	pairSteps                                 []pairStep
	// bridgeGaps's: the piece (8-connected, from 1) each grid pixel of a band belongs to, the
	// first piece whose line reaches it (-1 where two do), and a flood's stack.
	gapPiece, gapFrom, gapStack []int32
	// The growth's (see growIntoFeatures): each piece's bounding box; held, the finds before
	// dropSmall (see keepHeld).
	boxes []image.Rectangle
	held  raster.Mask
	// centres: the mouth's, the eyes' and the nostrils' centres a band's line may run into (see bandLane).
	centres [4]geom.Pt
	laneIdx []int32 // the pixels of a band bandLane fits
	// rodCross's: its samples' offsets, a cross-section's colours, the step at each of its
	// pixels and the steps between neighbours (see rodGrain).
	rodOffs []geom.Pt
	rodProf [][2]float32
	rodStep []float32
	rodDiff []float32
	// The detail test's: the smoothed luma across the lower nose, and its spread (see
	// noseShading).
	noseLuma  []float32
	noseShade float32
	// The glasses test's (see glasses).
	rings ringScratch
	// The mirror test's (see mirror).
	mir mirrorScratch
	// The small covers' test's (see keepSpots).
	spots spotScratch
	// foreignKept is how many pixels the last keepForeign added.
	foreignKept int
	// foreignLit is litPieces' answer, by label.
	foreignLit []bool
	// The shadows' (see shadows).
	shade shadeScratch
	// eyeZone: each eye's zone's hull and the bridge's (see eyeZones), in the coordinates its test works in.
	eyeZone [3][]geom.Pt
	eyeLid  [2]lowerLid // each eye's lower lid (see eyeZones)
	eyeArea []int       // each region's pixels in the eyes' zones (see enclosedRegions)
}

// NewSwapper returns a swapper for src; negative option values count as 0.
func NewSwapper(src *Source, opts Options) *Swapper {
	opts.Erode = math.Max(0, opts.Erode)
	opts.Feather = math.Max(0, opts.Feather)
	return &Swapper{src: src, opts: opts, sorted: make([]geom.Pt, 0, 136), hull: make([]geom.Pt, 0, 69), hull2: make([]geom.Pt, 0, 69),
		fitA: make([]geom.Pt, len(alignPoints)), fitB: make([]geom.Pt, len(alignPoints)), part: make([]geom.Pt, 0, 16), partHull: make([]geom.Pt, 0, 17)}
}

// Rect is the frame rectangle the last Apply may have changed; every pixel outside it was
// left bit-identical. It is empty when the last Apply left the frame alone.
func (s *Swapper) Rect() image.Rectangle { return s.last }

// Destination is the shape the last Apply warped the source to, in frame coordinates.
func (s *Swapper) Destination() face.Landmarks68 { return s.dst }

// shrink pulls the convex polygon in about its centroid so that every edge moves in by at
// least inset; false when nothing would be left.
func shrink(poly []geom.Pt, inset float64) bool {
	c := geom.Mean(poly)
	inradius := math.Inf(1)
	for i, p := range poly {
		q := poly[(i+1)%len(poly)]
		e := q.Sub(p)
		l := math.Hypot(e.X, e.Y)
		if l == 0 {
			continue
		}
		inradius = math.Min(inradius, math.Abs(e.X*(c.Y-p.Y)-e.Y*(c.X-p.X))/l)
	}
	if !(inradius > inset+1) {
		return false
	}
	k := 1 - inset/inradius
	for i, p := range poly {
		poly[i] = c.Add(p.Sub(c).Scale(k))
	}
	return true
}

// Apply swaps the source face onto the face with landmarks target, in place. Only pixels
// inside the feathered mask change. Faces partly outside the frame are clipped; faces that
// are too small, collapsed onto a line, wholly outside, or whose landmarks are not finite
// leave the frame untouched.
func (s *Swapper) Apply(frame *raster.Image, target *face.Landmarks68) {
	s.last = image.Rectangle{}
	defer func() { s.steadyOn, s.voteOn = false, false }() // Steady's and Votes' are this face's, however it ends
	size, mr, fr, ok := s.place(frame, target)
	if !ok {
		return
	}
	if s.opts.Occluders || s.opts.Seamless {
		s.features(target, fr)
	}
	if s.opts.Occluders {
		if s.voteOn {
			s.voteCovers(target, size, fr)
		} else {
			s.occluders(frame, target, &s.mask, size, fr)
		}
	}
	if s.opts.Seamless {
		s.seamBand(mr, fr)
	}
	if s.opts.Occluders {
		s.mask.Mul(&s.occ)
	}

	s.adjust(frame, target, fr, size)
	raster.Blend(frame, &s.warped, &s.mask)
	s.last = fr
}

// place puts the source's face on target: s.warped the source warped there, s.mask (over mr)
// the feathered weight it is blended with before occluders, s.dst the destination shape. It
// returns the face's size and mr clipped to the frame (fr), or false where the face cannot be
// swapped (Apply's list) and the frame stays as it is.
func (s *Swapper) place(frame *raster.Image, target *face.Landmarks68) (size float64, mr, fr image.Rectangle, ok bool) {
	if !finite(target) {
		return
	}
	b := geom.Bounds(target[:])
	size = math.Max(b.W(), b.H())
	if size < minFace || size > 16*float64(max(frame.W, frame.H)) { // the latter is a broken detection
		return
	}
	// The identity-keeping swap warps the mesh extended over the brows; the old one the
	// 68 points' own.
	srcPts, dstPts, tgtPts, tris := s.src.lm[:], s.dst[:], target[:], triangles
	if s.opts.Identity {
		destination(&s.src.lm, target, &s.dst, s.fitA, s.fitB)
		extend(&s.dst, &s.dstExt)
		extend(target, &s.tgtExt)
		srcPts, dstPts, tgtPts, tris = s.src.ext[:], s.dstExt[:], s.tgtExt[:], extTriangles
	} else {
		s.dst = *target
	}
	// The mask covers what the warped source covers (the hull of its destination shape),
	// clipped to the target's face (its hull). Each hull is shrunk about its centroid so
	// that every edge moves in by at least the erosion plus two σ of feathering: the
	// blurred mask then fades out (to ~2%) before the hull, where the warp's coverage ends,
	// instead of being cut off there.
	s.sorted, s.hull = convexHull(dstPts, s.sorted, s.hull)
	s.sorted, s.hull2 = convexHull(tgtPts, s.sorted, s.hull2)
	if len(s.hull) < 3 || len(s.hull2) < 3 {
		return
	}
	sigma := math.Min(s.opts.Feather*size, maxFeather)
	inset := s.opts.Erode*size + 2*sigma
	if !shrink(s.hull, inset) || !shrink(s.hull2, inset) { // nothing would be left of the face
		return
	}

	// The mask may hang over the frame's edge by the blur radius, so a face cut by the
	// frame border keeps full weight up to the border instead of fading towards it.
	rad := raster.Radius(sigma)
	b = geom.Bounds(tgtPts) // the mask lies inside the target's (extended) hull
	box := image.Rect(int(math.Floor(b.X0))-2, int(math.Floor(b.Y0))-2, int(math.Ceil(b.X1))+3, int(math.Ceil(b.Y1))+3)
	mr = box.Intersect(frame.Bounds().Inset(-rad))
	fr = mr.Intersect(frame.Bounds())
	if fr.Empty() {
		return
	}
	s.mask.Reset(mr)
	raster.FillConvex(&s.mask, s.hull, 1)
	s.clip.Reset(mr)
	raster.FillConvex(&s.clip, s.hull2, 1)
	s.mask.Mul(&s.clip)
	s.blur.Apply(&s.mask, sigma)

	s.warped.Reset(fr)
	s.cov.Reset(fr)
	raster.WarpTriangles(&s.warped, &s.cov, s.src.img, srcPts, dstPts, tris)
	s.mask.Mul(&s.cov)
	return size, mr, fr, true
}

// seamBand puts in s.cov (over fr) the membrane's band: the face mask's (s.mask, over mr)
// feathered edge on the target's skin, where the source must meet the target.
func (s *Swapper) seamBand(mr, fr image.Rectangle) {
	// The membrane's band is the face mask's feathered edge on the target's skin (no eye,
	// brow or mouth, no occluder): there the source must meet it. cov is free for it now.
	s.cov.Reset(fr)
	for y := fr.Min.Y; y < fr.Max.Y; y++ {
		mrow := s.mask.Pix[(y-mr.Min.Y)*s.mask.Stride+fr.Min.X-mr.Min.X:][:fr.Dx()]
		erow := s.excl.Pix[(y-fr.Min.Y)*s.excl.Stride:][:fr.Dx()]
		brow := s.cov.Pix[(y-fr.Min.Y)*s.cov.Stride:][:fr.Dx()]
		for i, m := range mrow {
			if erow[i] == 0 {
				brow[i] = 4 * m * (1 - m)
			}
		}
	}
	if s.opts.Occluders {
		s.cov.Mul(&s.occ)
	}
	if s.shade.on { // the membrane meets the target where it is lit; carryShadows does the rest
		s.unshaded(&s.cov)
	}
}

// adjust matches the warped source to the frame inside the mask: its colour, the seam along
// the mask's edge, and (with Identity) the target's own inner mouth.
func (s *Swapper) adjust(frame *raster.Image, target *face.Landmarks68, fr image.Rectangle, size float64) {
	// With steady tones the target's colour is the window's: the colour transfer's goal and
	// the membrane's target move by the same difference.
	var shift [3]float64
	if s.opts.ColourTransfer {
		lit := &s.mask
		if s.shade.on { // the target's colour where it is lit; carryShadows does the rest
			s.clip.Reset(s.mask.Rect)
			copy(s.clip.Pix, s.mask.Pix)
			s.unshaded(&s.clip)
			lit = &s.clip
		}
		to := raster.StatsImage(frame, lit)
		if s.steadyOn && to.Weight >= 1 {
			was := to.Mean
			to = s.steadied(to)
			shift = raster.RGBOfYCC([3]float64{to.Mean[0] - was[0], to.Mean[1] - was[1], to.Mean[2] - was[2]})
		}
		from := raster.StatsFloat(&s.warped, &s.mask)
		if to.Weight >= 1 && from.Weight >= 1 {
			raster.TransferColour(&s.warped, &s.mask, from, to)
		}
	}
	if s.opts.Seamless && s.membrane.Fit(fr, max(1, int(size/membraneCells)), frame, &s.warped, &s.cov) {
		s.membrane.Shift([3]float32{float32(shift[0]), float32(shift[1]), float32(shift[2])})
		s.membrane.Add(&s.warped, &s.mask, MembraneInner)
	}
	if s.shade.on {
		s.carryShadows(frame, fr, size)
	}
	if s.opts.Identity {
		// The inside of the mouth is the target's own (teeth, tongue, the dark of an open
		// mouth), moved to where the destination shape puts the lips.
		var from, to [9]geom.Pt
		innerMouth(target, &from)
		innerMouth(&s.dst, &to)
		s.cov.Reset(fr)
		raster.WarpTriangles(&s.warped, &s.cov, frame, from[:], to[:], mouthFan)
	}
}

func finite(l *face.Landmarks68) bool {
	for _, p := range l {
		if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
			return false
		}
	}
	return true
}
