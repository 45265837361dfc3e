package swap

import (
	"math"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// The destination shape keeps the source's identity: the source's inner face (brows, eyes,
// nose, mouth) is carried into the target frame by one fitted transform, so its proportions
// survive, while the parts that carry expression (eye opening, mouth opening and lip shape)
// and the head's outline follow the target.

// alignPoints are the landmarks the transform is fitted on: brows, nose, eye corners and
// mouth corners, which move little with expression (the eyelids and lips are left out so
// that a blink or an open mouth does not tilt or scale the face).
var alignPoints = func() []int {
	var idx []int
	for i := 17; i <= 35; i++ {
		idx = append(idx, i)
	}
	return append(idx, 36, 39, 42, 45, 48, 54)
}()

// part is a feature whose shape follows the target's expression: its points lo..hi−1 are
// placed about the feature's centre (where the source's proportions put it) with their
// offsets along the feature's axis (corner a → corner b) and across it mixed from source
// and target.
type part struct {
	lo, hi, a, b int
	along        float64 // share of the target in the offsets along the axis (width)
	across       float64 // share of the target in the offsets across it (opening)
}

// parts: an eye keeps the source's width and takes the target's opening; the mouth takes
// the target's opening and half of its width change (a smile widens it).
var parts = []part{
	{lo: 36, hi: 42, a: 36, b: 39, along: EyeWidthFollow, across: EyeOpeningFollow},
	{lo: 42, hi: 48, a: 42, b: 45, along: EyeWidthFollow, across: EyeOpeningFollow},
	{lo: 48, hi: 68, a: 48, b: 54, along: MouthWidthFollow, across: MouthOpeningFollow},
}

// The blend weights of the destination shape: 0 takes the source's geometry, 1 the
// target's.
const (
	// AffineShare mixes the fitted similarity (0) with the fitted affine map (1). A little
	// affine lets a turned head foreshorten the source's face; all of it would stretch the
	// source's proportions into the target's.
	AffineShare = 0.15
	// JawFollow places the jaw line between the source's (carried by the transform) and the
	// target's, so the outline fits the target's head without taking its shape whole.
	JawFollow = 0.6
	// EyeWidthFollow and EyeOpeningFollow mix the eyes' shape along and across their axis.
	EyeWidthFollow   = 0.0
	EyeOpeningFollow = 1.0
	// MouthWidthFollow and MouthOpeningFollow mix the mouth's shape likewise.
	MouthWidthFollow   = 0.5
	MouthOpeningFollow = 1.0
)

// mouthFan triangulates the inner lip polygon (points 60–67, here 0–7) as a fan about its
// centre (here 8): its pixels come from the target, its teeth, tongue and the dark of an
// open mouth, which a warp of a closed source mouth would smear out of the lips. (The fixed
// triangulation joins the inner mouth corners to the outer ones, so it has no triangles
// that cover exactly this polygon.)
var mouthFan = func() [][3]int {
	var out [][3]int
	for i := range 8 {
		out = append(out, [3]int{8, i, (i + 1) % 8})
	}
	return out
}()

// innerMouth writes the inner lip polygon of l and its centre into out.
func innerMouth(l *face.Landmarks68, out *[9]geom.Pt) {
	copy(out[:8], l[60:68])
	out[8] = geom.Mean(out[:8])
}

// destination writes the shape the source is warped to for a target face into dst; fa and
// fb are scratch for the fit (len(alignPoints) each).
func destination(src, target, dst *face.Landmarks68, fa, fb []geom.Pt) {
	for k, i := range alignPoints {
		fa[k], fb[k] = src[i], target[i]
	}
	sim := geom.Similarity(fa, fb)
	m := sim
	if aff, ok := fitAffine(fa, fb); ok {
		m = mixAffine(sim, aff, AffineShare)
	}
	for i := range src {
		dst[i] = m.Apply(src[i])
	}
	for i := 0; i < 17; i++ {
		dst[i] = dst[i].Scale(1 - JawFollow).Add(target[i].Scale(JawFollow))
	}
	for _, p := range parts {
		cs, ct := geom.Mean(dst[p.lo:p.hi]), geom.Mean(target[p.lo:p.hi])
		axis := dst[p.b].Sub(dst[p.a])
		l := math.Hypot(axis.X, axis.Y)
		if !(l > 0) {
			continue
		}
		u := axis.Scale(1 / l)
		v := geom.Pt{X: -u.Y, Y: u.X}
		for i := p.lo; i < p.hi; i++ {
			os, ot := dst[i].Sub(cs), target[i].Sub(ct)
			along := (1-p.along)*dot(os, u) + p.along*dot(ot, u)
			across := (1-p.across)*dot(os, v) + p.across*dot(ot, v)
			dst[i] = cs.Add(u.Scale(along)).Add(v.Scale(across))
		}
	}
}

func dot(a, b geom.Pt) float64 { return a.X*b.X + a.Y*b.Y }

// fitAffine is the least-squares affine map taking src to dst; false when the points are
// (nearly) collinear.
func fitAffine(src, dst []geom.Pt) (geom.Affine, bool) {
	ms, md := geom.Mean(src), geom.Mean(dst)
	var sxx, sxy, syy, uxx, uxy, vxx, vxy float64
	for i := range src {
		s, d := src[i].Sub(ms), dst[i].Sub(md)
		sxx += s.X * s.X
		sxy += s.X * s.Y
		syy += s.Y * s.Y
		uxx += d.X * s.X
		uxy += d.X * s.Y
		vxx += d.Y * s.X
		vxy += d.Y * s.Y
	}
	det := sxx*syy - sxy*sxy
	if !(math.Abs(det) > 1e-9*(sxx*syy+1e-300)) {
		return geom.Affine{}, false
	}
	// [A B] = [uxx uxy]·S⁻¹ and [D E] = [vxx vxy]·S⁻¹, S = [[sxx sxy] [sxy syy]].
	a := (uxx*syy - uxy*sxy) / det
	b := (uxy*sxx - uxx*sxy) / det
	d := (vxx*syy - vxy*sxy) / det
	e := (vxy*sxx - vxx*sxy) / det
	return geom.Affine{A: a, B: b, C: md.X - a*ms.X - b*ms.Y, D: d, E: e, F: md.Y - d*ms.X - e*ms.Y}, true
}

func mixAffine(p, q geom.Affine, t float64) geom.Affine {
	mix := func(a, b float64) float64 { return a + (b-a)*t }
	return geom.Affine{A: mix(p.A, q.A), B: mix(p.B, q.B), C: mix(p.C, q.C), D: mix(p.D, q.D), E: mix(p.E, q.E), F: mix(p.F, q.F)}
}
