// Package swap is the classic, model-free face swapper: it warps a source face onto a
// target's 68 landmarks triangle by triangle, matches its colour to the target's skin and
// blends it in under a feathered mask of the landmark hull.
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
}

// DefaultOptions are the settings the pipeline uses unless configured otherwise.
func DefaultOptions() Options {
	return Options{Erode: 0.03, Feather: 0.025, ColourTransfer: true}
}

// Swapper swaps one prepared Source into frames. It owns every scratch buffer, so Apply does
// not allocate once it has seen its largest face; it is not safe for concurrent use (give
// each worker goroutine its own; they may share the Source).
type Swapper struct {
	src  *Source
	opts Options

	sorted, hull []geom.Pt
	warped       raster.FloatImage
	cov, mask    raster.Mask
	blur         raster.Blur
	last         image.Rectangle
}

// NewSwapper returns a swapper for src; negative option values count as 0.
func NewSwapper(src *Source, opts Options) *Swapper {
	opts.Erode = math.Max(0, opts.Erode)
	opts.Feather = math.Max(0, opts.Feather)
	return &Swapper{src: src, opts: opts, sorted: make([]geom.Pt, 0, 68), hull: make([]geom.Pt, 0, 69)}
}

// Rect is the frame rectangle the last Apply may have changed; every pixel outside it was
// left bit-identical. It is empty when the last Apply left the frame alone.
func (s *Swapper) Rect() image.Rectangle { return s.last }

// Apply swaps the source face onto the face with landmarks target, in place. Only pixels
// inside the feathered mask change. Faces partly outside the frame are clipped; faces that
// are too small, collapsed onto a line, wholly outside, or whose landmarks are not finite
// leave the frame untouched.
func (s *Swapper) Apply(frame *raster.Image, target *face.Landmarks68) {
	s.last = image.Rectangle{}
	if !finite(target) {
		return
	}
	b := geom.Bounds(target[:])
	size := math.Max(b.W(), b.H())
	if size < minFace || size > 16*float64(max(frame.W, frame.H)) { // the latter is a broken detection
		return
	}
	s.sorted, s.hull = convexHull(target[:], s.sorted, s.hull)
	poly := s.hull
	if len(poly) < 3 {
		return
	}
	// Shrink the hull about its centroid so that every edge moves in by at least the
	// erosion plus two σ of feathering: the blurred mask then fades out (to ~2%) before the
	// hull, where the warp's coverage ends, instead of being cut off there.
	sigma := math.Min(s.opts.Feather*size, maxFeather)
	inset := s.opts.Erode*size + 2*sigma
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
	if !(inradius > inset+1) { // nothing would be left of the face
		return
	}
	k := 1 - inset/inradius
	for i, p := range poly {
		poly[i] = c.Add(p.Sub(c).Scale(k))
	}

	// The mask may hang over the frame's edge by the blur radius, so a face cut by the
	// frame border keeps full weight up to the border instead of fading towards it.
	rad := raster.Radius(sigma)
	box := image.Rect(int(math.Floor(b.X0))-2, int(math.Floor(b.Y0))-2, int(math.Ceil(b.X1))+3, int(math.Ceil(b.Y1))+3)
	mr := box.Intersect(frame.Bounds().Inset(-rad))
	fr := mr.Intersect(frame.Bounds())
	if fr.Empty() {
		return
	}
	s.mask.Reset(mr)
	raster.FillConvex(&s.mask, poly, 1)
	s.blur.Apply(&s.mask, sigma)

	s.warped.Reset(fr)
	s.cov.Reset(fr)
	raster.WarpTriangles(&s.warped, &s.cov, s.src.img, s.src.lm[:], target[:], triangles)
	s.mask.Mul(&s.cov)

	if s.opts.ColourTransfer {
		to := raster.StatsImage(frame, &s.mask)
		from := raster.StatsFloat(&s.warped, &s.mask)
		if to.Weight >= 1 && from.Weight >= 1 {
			raster.TransferColour(&s.warped, &s.mask, from, to)
		}
	}
	raster.Blend(frame, &s.warped, &s.mask)
	s.last = fr
}

func finite(l *face.Landmarks68) bool {
	for _, p := range l {
		if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
			return false
		}
	}
	return true
}
