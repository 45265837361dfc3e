package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A face is bilaterally symmetric: each side's skin has its mirror's chroma, grain and
// shading (once the light's own smooth fall across the face is taken out), whatever the
// skin's tone. A cover over one side (a thumb on the cheekbone, a hand's edge along the
// nose, a braid over the jaw, a cord across a cheek) makes that side unlike its mirror,
// even in the skin's hue and with a texture of its own. Each inner-face pixel is mapped to
// its mirror through the landmarks (each triangle of the mesh onto its mirrored triangle,
// so a turned face maps too), and local statistics of the two are compared: chroma along
// and across the skin's axis, the detail at the texture test's two scales, and luminance
// over the lighting's. A pixel much unlike its mirror counts only on the side that lies
// farther from the skin samples: the cover's, not the bare side it is compared with.
// Symmetric covers (a mask, a band across the nose) leave both sides alike and are the
// other tests' to find. The outline's band (hair, ears, the background differ by side) and
// the features are left out.

const (
	// mirInset is how far inside the outline (jaw and brows), as a share of the face size,
	// the pixels compared lie: the outline's band holds hair, ears and background, and the
	// forehead a hairline, unlike by side.
	mirInset = 0.06
	// mirLight is the half-width, as a share of the face size, of the window whose mean
	// luminance is the light's: luminance is compared as a ratio to it.
	mirLight = 0.12
	// mirSeed and mirWeak are how unlike its mirror, in robust standard deviations of the
	// face's own mirror differences (summed in quadrature over the statistics), a pixel must
	// be to seed a find and to join one.
	mirSeed = 5
	mirWeak = 3
	// mirSide is the least share of the squared difference that must lie on the pixel's
	// side: how much farther from the skin samples it is than its mirror.
	mirSide = 0.2
	// mirCap is the most one statistic adds to the difference (in its spreads): a cover
	// differs in several, the skin's own asymmetries (a fold, a lens's glint) in one.
	mirCap = 5
	// mirSeedArea is the least share of the face a seed region must cover: less than the
	// texture test's (texSeedArea), as a seed here is told by two sides' difference, not by
	// one pixel's descriptors against the skin's.
	mirSeedArea = 0.005
)

// mirStats is the number of local statistics compared (see mirror).
const mirStats = 5

// mirLeast is the least number of pixels compared with their mirrors for the test to run,
// and about how many its spreads are taken from.
const mirLeast = 512

// mirFloor is the least spread each statistic's mirror difference is given: the chroma's
// two, the two scales of detail (log), the luminance over the light's (log).
var mirFloor = [mirStats]float32{0.01, 0.01, 0.08, 0.08, 0.02}

// mirrorOf is each extended point's mirror partner in the iBUG layout (see extend).
var mirrorOf = func() (m [extPoints]int) {
	for i := range m {
		m[i] = i
	}
	pair := func(a, b int) { m[a], m[b] = b, a }
	for i := range 8 {
		pair(i, 16-i) // jaw
	}
	for i := range 5 {
		pair(17+i, 26-i) // brows
	}
	pair(31, 35)
	pair(32, 34)
	for _, p := range [][2]int{{36, 45}, {37, 44}, {38, 43}, {39, 42}, {40, 47}, {41, 46}} {
		pair(p[0], p[1])
	}
	for _, p := range [][2]int{{48, 54}, {49, 53}, {50, 52}, {55, 59}, {56, 58}, {60, 64}, {61, 63}, {65, 67}} {
		pair(p[0], p[1])
	}
	for k := range len(foreheadOf) / 2 {
		pair(68+k, 68+len(foreheadOf)-1-k)
	}
	return m
}()

// mirrorScratch is the mirror test's: each pixel's mirror (an index over the face's
// rectangle, −1 for none), the compared region, the statistics and their mirror differences.
type mirrorScratch struct {
	to    []int32
	inner raster.Mask
	stat  [mirStats]raster.Mask
	light raster.Mask
	diff  []float32
}

// mirror adds to s.occ (over fr, 1 on occluders; after s.features and s.texture, whose
// detail maps it reads) what the face's symmetry says covers one side (see above).
func (s *Swapper) mirror(frame *raster.Image, target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle, m skinModel) {
	w, h := fr.Dx(), fr.Dy()
	r := max(texWindowLeast, int(math.Round(texWindow*size)))
	n := s.mirrorRegion(target, fm, size, fr, r)
	if n < mirLeast {
		return
	}
	var centres [8]geom.Pt
	skinCentres(target, &centres)
	s.mirrorStats(frame, fr, r, size, m, &centres)
	sd, ref, ok := s.mirrorSpreads(fr, n, &centres)
	if !ok {
		return
	}
	s.mirrorScore(fr, &sd, &ref)
	// As addSeededFinds, with smaller seeds: the cover is told by two sides' difference, not
	// by a single pixel's.
	s.labelRegions(s.clip.Pix, 3, fr)
	least := int(mirSeedArea * float64(faceArea(fm, fr)))
	s.stack = s.stack[:0]
	for i, l := range s.label {
		switch {
		case l <= 0:
		case s.area[l] < least:
			s.clip.Pix[i] = 1
		default:
			s.stack = append(s.stack, int32(i))
		}
	}
	if len(s.stack) == 0 {
		return
	}
	s.growFromSeeds(&s.clip, w, h)
	s.dropSmall(&s.clip, fm, fr, occMinArea)
	s.coverFeatures(frame, target, fr, size)
	for i, v := range s.clip.Pix {
		if v > 0.5 {
			s.occ.Pix[i] = 1
		}
	}
}

// mirrorRegion sets s.mir.inner to the pixels compared (see mirror) and s.mir.to to each
// one's mirror among them (−1: none, or one whose window sees another test's cover), with
// the statistics' window r; it returns how many pixels have a mirror.
func (s *Swapper) mirrorRegion(target *face.Landmarks68, fm *raster.Mask, size float64, fr image.Rectangle, r int) int {
	ms := &s.mir
	w, h := fr.Dx(), fr.Dy()
	var ext [extPoints]geom.Pt
	extend(target, &ext)
	// The compared region: inside the outline (jaw and brows) by mirInset, on the
	// face, off the features by the statistics' window (a window reaching into the lips or
	// an eye measures the feature, which need not mirror the landmarks exactly).
	s.part = append(s.part[:0], ext[:27]...)
	s.sorted, s.partHull = convexHull(s.part, s.sorted, s.partHull)
	ms.inner.Reset(fr)
	raster.FillConvex(&ms.inner, s.partHull, 1)
	ms.light.Reuse(fr) // each value written here
	for i, v := range ms.inner.Pix {
		ms.light.Pix[i] = 1 - v
	}
	s.spread(&ms.light, int(math.Round(mirInset*size)))
	ms.stat[1].Reset(fr)
	copy(ms.stat[1].Pix, s.excl.Pix)
	// A pixel whose mirror's window sees a cover the other tests found is unlike it because
	// of that cover: it is not compared.
	ms.stat[2].Reset(fr)
	for i, v := range s.occ.Pix {
		if v > 0.5 {
			ms.stat[2].Pix[i] = 1
		}
	}
	// Scratch here (spread2 writes each value before it reads it); mirrorStats fills them.
	ms.stat[0].Reuse(fr)
	ms.stat[3].Reuse(fr)
	s.spread2(&ms.stat[1], &ms.stat[2], r, ms.stat[0].Pix, ms.stat[3].Pix)
	for y := range h {
		frow := fm.Pix[(y+fr.Min.Y-fm.Rect.Min.Y)*fm.Stride+fr.Min.X-fm.Rect.Min.X:][:w]
		for x, v := range frow {
			if i := y*w + x; !(v > 0.5) || ms.light.Pix[i] > 0 || ms.stat[1].Pix[i] > 0 {
				ms.inner.Pix[i] = 0
			}
		}
	}
	s.mirrorMap(&ext, fr)
	n := 0
	for i, j := range ms.to {
		switch {
		case j < 0:
		case ms.inner.Pix[j] == 0 || ms.stat[2].Pix[j] > 0:
			ms.to[i] = -1
		default:
			n++
		}
	}
	return n
}

// mirrorSpreads is each statistic's spread of mirror differences over the face (from about
// mirLeast of its n pixels with a mirror), and its value on the skin: the median over the
// skin sample discs (centres) of its value at their centres (it is a window's mean already);
// false when no disc lies in fr.
func (s *Swapper) mirrorSpreads(fr image.Rectangle, n int, centres *[8]geom.Pt) (sd, ref [mirStats]float32, ok bool) {
	ms := &s.mir
	w := fr.Dx()
	step := max(1, n/mirLeast)
	for k := range mirStats {
		ms.diff = ms.diff[:0]
		st := ms.stat[k].Pix
		seen := 0
		for i, j := range ms.to {
			if j >= 0 {
				if seen++; seen%step == 0 {
					ms.diff = append(ms.diff, float32(math.Abs(float64(st[i]-st[j]))))
				}
			}
		}
		sd[k] = max(mirFloor[k], 1.4826*median(ms.diff)) // magnitudes: no −0
		var vals [8]float32
		nv := 0
		for d, c := range centres {
			x, y := int(c.X), int(c.Y)
			if (s.upperSkin && !s.skinDisc[d]) || !(image.Point{x, y}).In(fr) {
				continue
			}
			vals[nv] = st[(y-fr.Min.Y)*w+x-fr.Min.X]
			nv++
		}
		if nv == 0 {
			return sd, ref, false
		}
		slices.Sort(vals[:nv])
		ref[k] = (vals[(nv-1)/2] + vals[nv/2]) / 2
	}
	return sd, ref, true
}

// mirrorScore marks in s.clip (over fr) the pixels much unlike their mirrors on the side
// farther from the skin: 3 past mirSeed spreads, 1 past mirWeak.
func (s *Swapper) mirrorScore(fr image.Rectangle, sd, ref *[mirStats]float32) {
	ms := &s.mir
	s.clip.Reset(fr)
	for i, j := range ms.to {
		if j < 0 {
			continue
		}
		var a2, side float32
		for k := range mirStats {
			p, q := ms.stat[k].Pix[i], ms.stat[k].Pix[j]
			d := (p - q) / sd[k]
			a2 += min(d*d, mirCap*mirCap)
			// (p−ref)² − (q−ref)², in the statistic's spread.
			side += d * (p + q - 2*ref[k]) / sd[k]
		}
		if side < mirSide*a2 {
			continue
		}
		switch {
		case a2 > mirSeed*mirSeed:
			s.clip.Pix[i] = 3
		case a2 > mirWeak*mirWeak:
			s.clip.Pix[i] = 1
		}
	}
}

// mirrorMap fills s.mir.to: each pixel of s.mir.inner in a triangle of the extended mesh maps
// by that triangle's affine map onto its mirrored triangle.
func (s *Swapper) mirrorMap(ext *[extPoints]geom.Pt, fr image.Rectangle) {
	w, h := fr.Dx(), fr.Dy()
	ms := &s.mir
	if cap(ms.to) < w*h {
		ms.to = make([]int32, w*h)
	}
	ms.to = ms.to[:w*h]
	for i := range ms.to {
		ms.to[i] = -1
	}
	for _, t := range extTriangles {
		src := [3]geom.Pt{ext[t[0]], ext[t[1]], ext[t[2]]}
		dst := [3]geom.Pt{ext[mirrorOf[t[0]]], ext[mirrorOf[t[1]]], ext[mirrorOf[t[2]]]}
		a, ok := geom.Triangle(src, dst)
		if !ok {
			continue
		}
		// Barycentric coordinates of a pixel in src.
		e1, e2 := src[1].Sub(src[0]), src[2].Sub(src[0])
		det := e1.X*e2.Y - e1.Y*e2.X
		if det == 0 {
			continue
		}
		tb := geom.Bounds(src[:])
		x0, y0 := max(fr.Min.X, int(math.Floor(tb.X0))), max(fr.Min.Y, int(math.Floor(tb.Y0)))
		x1, y1 := min(fr.Max.X-1, int(math.Ceil(tb.X1))), min(fr.Max.Y-1, int(math.Ceil(tb.Y1)))
		for y := y0; y <= y1; y++ {
			for x := x0; x <= x1; x++ {
				i := (y-fr.Min.Y)*w + x - fr.Min.X
				if ms.to[i] >= 0 || ms.inner.Pix[i] == 0 {
					continue
				}
				p := geom.Pt{X: float64(x), Y: float64(y)}.Sub(src[0])
				u := (p.X*e2.Y - p.Y*e2.X) / det
				v := (e1.X*p.Y - e1.Y*p.X) / det
				if u < -1e-9 || v < -1e-9 || u+v > 1+1e-9 {
					continue
				}
				q := a.Apply(geom.Pt{X: float64(x), Y: float64(y)})
				qx, qy := int(math.Round(q.X))-fr.Min.X, int(math.Round(q.Y))-fr.Min.Y
				if qx >= 0 && qy >= 0 && qx < w && qy < h {
					ms.to[i] = int32(qy*w + qx)
				}
			}
		}
	}
}

// mirrorStats puts in s.mir.stat (over fr) the local statistics compared, each averaged over
// the texture test's window: the log-chromaticity along and across the skin's axis, the log of
// the texture test's fine and band detail, and the log-luminance less the light's.
func (s *Swapper) mirrorStats(frame *raster.Image, fr image.Rectangle, r int, size float64, m skinModel, centres *[8]geom.Pt) {
	ms := &s.mir
	w, h := fr.Dx(), fr.Dy()
	// Each value of the statistics and the light is written below before it is read
	// (the detail's two are boxSmooth2's row sums, then cleared).
	for k := range ms.stat {
		ms.stat[k].Reuse(fr)
	}
	ms.light.Reuse(fr)
	along, across, lum := ms.stat[0].Pix, ms.stat[1].Pix, ms.stat[4].Pix
	for y := range h {
		row := frame.Pix[(y+fr.Min.Y)*frame.Stride+3*fr.Min.X:][:3*w]
		for x := range w {
			f := features(row[3*x], row[3*x+1], row[3*x+2])
			i := y*w + x
			along[i], across[i] = f[1]*m.ux+f[2]*m.uy, f[2]*m.ux-f[1]*m.uy
			lum[i] = f[0]
		}
	}
	copy(ms.light.Pix, lum)
	// Two planes a pass, the detail's two (filled below) as scratch.
	ta, tb := ms.stat[2].Pix, ms.stat[3].Pix
	s.boxSmooth2(&ms.stat[0], &ms.stat[1], r, r, ta, tb)
	s.boxSmooth2(&ms.stat[4], &ms.light, r, max(r, int(math.Round(mirLight*size))), ta, tb)
	clear(ta)
	clear(tb)
	for i, v := range ms.light.Pix {
		lum[i] -= v
	}
	// The detail's log only where it is compared (the compared region, the skin discs'
	// centres).
	for k := range 2 {
		dst := ms.stat[2+k].Pix
		for i, v := range s.texE[k].Pix {
			if ms.inner.Pix[i] > 0 {
				dst[i] = float32(math.Log(float64(v) + 0.5))
			}
		}
		for _, c := range centres {
			if x, y := int(c.X), int(c.Y); (image.Point{x, y}).In(fr) {
				i := (y-fr.Min.Y)*w + x - fr.Min.X
				dst[i] = float32(math.Log(float64(s.texE[k].Pix[i]) + 0.5))
			}
		}
	}
}

// spread grows the set in m (values above ½) by a square of half-width r, by box sums: their
// cost does not grow with r.
func (s *Swapper) spread(m *raster.Mask, r int) {
	if r <= 0 {
		return
	}
	binarize(m.Pix, 0.5)
	s.boxSmooth(m, r)
	binarize(m.Pix, spreadLeast(r))
}

// spread2 is spread over a and b (of one rectangle, Stride its width) in one pass, by
// boxSmooth2; ta and tb are scratch as long as their Pix.
func (s *Swapper) spread2(a, b *raster.Mask, r int, ta, tb []float32) {
	if r <= 0 {
		return
	}
	binarize(a.Pix, 0.5)
	binarize(b.Pix, 0.5)
	s.boxSmooth2(a, b, r, r, ta, tb)
	binarize(a.Pix, spreadLeast(r))
	binarize(b.Pix, spreadLeast(r))
}

// spreadLeast is the threshold on a box mean (half-width r) that tells a box holding a set
// pixel: such a box has a mean of at least 1/(2r+1)²; the running sums leave crumbs far below.
func spreadLeast(r int) float32 { return 0.5 / float32((2*r+1)*(2*r+1)) }

// binarize sets each value of v to 1 if above least, else to 0.
func binarize(v []float32, least float32) {
	for i, x := range v {
		if x > least {
			v[i] = 1
		} else {
			v[i] = 0
		}
	}
}
