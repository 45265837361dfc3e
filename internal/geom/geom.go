// Package geom holds the plain 2-D value types the face pipeline shares: points, rectangles
// and affine maps, in image pixel coordinates (x right, y down, pixel centres at integers).
package geom

import "math"

// Pt is a point in pixel coordinates.
type Pt struct{ X, Y float64 }

func (p Pt) Add(q Pt) Pt        { return Pt{p.X + q.X, p.Y + q.Y} }
func (p Pt) Sub(q Pt) Pt        { return Pt{p.X - q.X, p.Y - q.Y} }
func (p Pt) Scale(s float64) Pt { return Pt{p.X * s, p.Y * s} }
func (p Pt) Dist(q Pt) float64  { return math.Hypot(p.X-q.X, p.Y-q.Y) }
func Mean(ps []Pt) Pt {
	var m Pt
	for _, p := range ps {
		m = m.Add(p)
	}
	return m.Scale(1 / float64(len(ps)))
}

// Rect is an axis-aligned rectangle [X0,X1)×[Y0,Y1) in pixel coordinates.
type Rect struct{ X0, Y0, X1, Y1 float64 }

func (r Rect) W() float64    { return r.X1 - r.X0 }
func (r Rect) H() float64    { return r.Y1 - r.Y0 }
func (r Rect) Center() Pt    { return Pt{(r.X0 + r.X1) / 2, (r.Y0 + r.Y1) / 2} }
func (r Rect) Area() float64 { return math.Max(0, r.W()) * math.Max(0, r.H()) }
func (r Rect) Empty() bool   { return r.X1 <= r.X0 || r.Y1 <= r.Y0 }

// Intersect returns the overlap of r and s (empty if they do not overlap).
func (r Rect) Intersect(s Rect) Rect {
	return Rect{math.Max(r.X0, s.X0), math.Max(r.Y0, s.Y0), math.Min(r.X1, s.X1), math.Min(r.Y1, s.Y1)}
}

// IoU is the intersection over union of r and s.
func (r Rect) IoU(s Rect) float64 {
	in := r.Intersect(s).Area()
	if in <= 0 {
		return 0
	}
	return in / (r.Area() + s.Area() - in)
}

// Bounds returns the smallest rectangle holding every point.
func Bounds(ps []Pt) Rect {
	r := Rect{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, p := range ps {
		r.X0, r.Y0 = math.Min(r.X0, p.X), math.Min(r.Y0, p.Y)
		r.X1, r.Y1 = math.Max(r.X1, p.X), math.Max(r.Y1, p.Y)
	}
	return r
}

// Affine is the map (x, y) → (A·x + B·y + C, D·x + E·y + F).
type Affine struct{ A, B, C, D, E, F float64 }

// Identity is the affine map that leaves every point where it is.
var Identity = Affine{A: 1, E: 1}

func (m Affine) Apply(p Pt) Pt { return Pt{m.A*p.X + m.B*p.Y + m.C, m.D*p.X + m.E*p.Y + m.F} }

// Then returns the map that applies m first and n second.
func (m Affine) Then(n Affine) Affine {
	return Affine{
		A: n.A*m.A + n.B*m.D, B: n.A*m.B + n.B*m.E, C: n.A*m.C + n.B*m.F + n.C,
		D: n.D*m.A + n.E*m.D, E: n.D*m.B + n.E*m.E, F: n.D*m.C + n.E*m.F + n.F,
	}
}

// Invert returns the inverse map; ok is false when m is singular.
func (m Affine) Invert() (inv Affine, ok bool) {
	det := m.A*m.E - m.B*m.D
	if math.Abs(det) < 1e-12 {
		return Affine{}, false
	}
	a, b, d, e := m.E/det, -m.B/det, -m.D/det, m.A/det
	return Affine{A: a, B: b, C: -(a*m.C + b*m.F), D: d, E: e, F: -(d*m.C + e*m.F)}, true
}

// Triangle maps the triangle src onto dst exactly; ok is false for a degenerate src.
func Triangle(src, dst [3]Pt) (m Affine, ok bool) {
	// Solve for the map sending the src basis to the dst basis.
	u1, u2 := src[1].Sub(src[0]), src[2].Sub(src[0])
	v1, v2 := dst[1].Sub(dst[0]), dst[2].Sub(dst[0])
	det := u1.X*u2.Y - u2.X*u1.Y
	if math.Abs(det) < 1e-9 {
		return Affine{}, false
	}
	// M·[u1 u2] = [v1 v2]  →  M = [v1 v2]·[u1 u2]^-1
	i11, i12, i21, i22 := u2.Y/det, -u2.X/det, -u1.Y/det, u1.X/det
	m.A = v1.X*i11 + v2.X*i21
	m.B = v1.X*i12 + v2.X*i22
	m.D = v1.Y*i11 + v2.Y*i21
	m.E = v1.Y*i12 + v2.Y*i22
	m.C = dst[0].X - (m.A*src[0].X + m.B*src[0].Y)
	m.F = dst[0].Y - (m.D*src[0].X + m.E*src[0].Y)
	return m, true
}

// Similarity is the least-squares 4-DOF (rotation, uniform scale, translation) map taking
// src to dst (Umeyama without reflection). src and dst must have the same length ≥ 2.
func Similarity(src, dst []Pt) Affine {
	ms, md := Mean(src), Mean(dst)
	var sxx, sxy, ss float64 // Σ (s·d), Σ (s×d), Σ |s|²
	for i := range src {
		s, d := src[i].Sub(ms), dst[i].Sub(md)
		sxx += s.X*d.X + s.Y*d.Y
		sxy += s.X*d.Y - s.Y*d.X
		ss += s.X*s.X + s.Y*s.Y
	}
	if ss == 0 {
		return Affine{A: 1, E: 1, C: md.X - ms.X, F: md.Y - ms.Y}
	}
	a, b := sxx/ss, sxy/ss // scale·cos, scale·sin
	return Affine{A: a, B: -b, C: md.X - (a*ms.X - b*ms.Y), D: b, E: a, F: md.Y - (b*ms.X + a*ms.Y)}
}
