package swap

import (
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// MeanShape is a frontal face in the iBUG 68-point layout, drawn from simple curves (jaw an
// elliptic arc, eyes and lips small polygons) in face units: the eyes lie at y ≈ −0.1, the
// chin at y = 1.1, the jaw spans x = −1…1. It fixes the triangulation and gives tests a
// face to scale, rotate and move.
func MeanShape() face.Landmarks68 {
	var l face.Landmarks68
	for i := range 17 { // jaw, image left → chin → image right
		a := math.Pi - float64(i)*math.Pi/16
		l[i] = geom.Pt{X: math.Cos(a), Y: 1.1 * math.Sin(a)}
	}
	for i := range 5 { // brows, outer → inner on the left, inner → outer on the right
		t := float64(i) / 4
		y := -0.35 - 0.1*math.Sin(math.Pi*(0.3+0.7*t))
		l[17+i] = geom.Pt{X: -0.8 + 0.65*t, Y: y}
		l[26-i] = geom.Pt{X: 0.8 - 0.65*t, Y: y}
	}
	for i := range 4 { // nose bridge
		l[27+i] = geom.Pt{X: 0, Y: -0.2 + 0.15*float64(i)}
	}
	for i, p := range [5]geom.Pt{{X: -0.2, Y: 0.35}, {X: -0.1, Y: 0.38}, {X: 0, Y: 0.4}, {X: 0.1, Y: 0.38}, {X: 0.2, Y: 0.35}} {
		l[31+i] = p
	}
	eye := [6]geom.Pt{{X: -0.6, Y: -0.1}, {X: -0.47, Y: -0.17}, {X: -0.33, Y: -0.17}, {X: -0.2, Y: -0.1}, {X: -0.33, Y: -0.04}, {X: -0.47, Y: -0.04}}
	for i, p := range eye {
		l[36+i] = p
		// The right eye mirrors the left, starting from its inner corner.
		l[42+i] = geom.Pt{X: -eye[(3-i+6)%6].X, Y: eye[(3-i+6)%6].Y}
	}
	outer := [12]geom.Pt{{X: -0.35, Y: 0.65}, {X: -0.22, Y: 0.58}, {X: -0.08, Y: 0.55}, {X: 0, Y: 0.56}, {X: 0.08, Y: 0.55}, {X: 0.22, Y: 0.58},
		{X: 0.35, Y: 0.65}, {X: 0.22, Y: 0.74}, {X: 0.08, Y: 0.78}, {X: 0, Y: 0.79}, {X: -0.08, Y: 0.78}, {X: -0.22, Y: 0.74}}
	copy(l[48:60], outer[:])
	inner := [8]geom.Pt{{X: -0.3, Y: 0.65}, {X: -0.1, Y: 0.62}, {X: 0, Y: 0.62}, {X: 0.1, Y: 0.62}, {X: 0.3, Y: 0.65}, {X: 0.1, Y: 0.69}, {X: 0, Y: 0.7}, {X: -0.1, Y: 0.69}}
	copy(l[60:68], inner[:])
	return l
}

// triangles is the fixed triangulation of the 68-point topology: the Delaunay triangulation
// of MeanShape, which covers its convex hull. Every face is warped with these index triples.
var triangles = func() [][3]int { m := MeanShape(); return delaunay(m[:]) }()

// Triangles returns a copy of the fixed triangulation (index triples into Landmarks68).
func Triangles() [][3]int { return slices.Clone(triangles) }

// foreheadOf are the brow points a forehead point is placed above, image left to right.
var foreheadOf = [...]int{17, 19, 21, 22, 24, 26}

// extPoints is the number of points of an extended shape: the 68 landmarks and one forehead
// point above each of foreheadOf.
const extPoints = 68 + len(foreheadOf)

// foreheadRise is how far a forehead point lies above its brow point, as a share of the
// distance from the nose tip (33) up to the eyes' midpoint: a little more than the brows'
// own height above the eyes, so the swapped region takes in the brows and the brow ridge
// above them (0.35 gave 0.03–0.05 less identity on the close-ups).
const foreheadRise = 0.45

// extend writes the landmarks and the forehead points above the brows into out.
func extend(l *face.Landmarks68, out *[extPoints]geom.Pt) {
	copy(out[:68], l[:])
	eyes := geom.Mean(l[36:48])
	up := eyes.Sub(l[33]).Scale(foreheadRise)
	for k, i := range foreheadOf {
		out[68+k] = l[i].Add(up)
	}
}

// extTriangles triangulates the extended mean shape: the mesh the identity-keeping swap
// warps, reaching over the brows so that they are the source's, not cut by the mask's edge.
var extTriangles = func() [][3]int {
	m := MeanShape()
	var e [extPoints]geom.Pt
	extend(&m, &e)
	return delaunay(e[:])
}()

// delaunay triangulates the points with Bowyer–Watson; O(n²) is nothing for 74 points run
// once. Points are nudged by a tiny deterministic amount first, because the mean shape is
// symmetric and cocircular quadruples make the empty-circle test ambiguous.
func delaunay(l []geom.Pt) [][3]int {
	n := len(l)
	pts := make([]geom.Pt, n, n+3)
	for i, p := range l {
		pts[i] = geom.Pt{X: p.X + 1e-7*float64(i%7), Y: p.Y + 1e-7*float64(i%5)}
	}
	// A super-triangle far outside every point.
	pts = append(pts, geom.Pt{X: -100, Y: -100}, geom.Pt{X: 100, Y: -100}, geom.Pt{X: 0, Y: 100})
	tris := [][3]int{{n, n + 1, n + 2}}
	for i := range n {
		p := pts[i]
		var bad [][3]int
		keep := tris[:0:0]
		for _, t := range tris {
			if inCircumcircle(pts[t[0]], pts[t[1]], pts[t[2]], p) {
				bad = append(bad, t)
			} else {
				keep = append(keep, t)
			}
		}
		// The hole's boundary: edges of bad triangles that no other bad triangle shares.
		type edge struct{ a, b int }
		count := map[edge]int{}
		for _, t := range bad {
			for k := range 3 {
				a, b := t[k], t[(k+1)%3]
				count[edge{min(a, b), max(a, b)}]++
			}
		}
		for _, t := range bad {
			for k := range 3 {
				a, b := t[k], t[(k+1)%3]
				if count[edge{min(a, b), max(a, b)}] == 1 {
					keep = append(keep, [3]int{a, b, i})
				}
			}
		}
		tris = keep
	}
	out := tris[:0]
	for _, t := range tris {
		if t[0] < n && t[1] < n && t[2] < n {
			out = append(out, t)
		}
	}
	return out
}

// inCircumcircle reports whether d lies inside the circle through a, b, c.
func inCircumcircle(a, b, c, d geom.Pt) bool {
	ax, ay := a.X-d.X, a.Y-d.Y
	bx, by := b.X-d.X, b.Y-d.Y
	cx, cy := c.X-d.X, c.Y-d.Y
	det := (ax*ax+ay*ay)*(bx*cy-cx*by) - (bx*bx+by*by)*(ax*cy-cx*ay) + (cx*cx+cy*cy)*(ax*by-bx*ay)
	orient := (b.X-a.X)*(c.Y-a.Y) - (b.Y-a.Y)*(c.X-a.X)
	if orient < 0 {
		det = -det
	}
	return det > 0
}

// convexHull writes the hull of pts (counter-clockwise in y-up terms, i.e. with positive
// shoelace area) into hull, using sorted as scratch; both are returned resliced. Andrew's
// monotone chain; collinear points are dropped.
func convexHull(pts []geom.Pt, sorted, hull []geom.Pt) ([]geom.Pt, []geom.Pt) {
	sorted = append(sorted[:0], pts...)
	slices.SortFunc(sorted, func(a, b geom.Pt) int {
		if a.X != b.X {
			if a.X < b.X {
				return -1
			}
			return 1
		}
		if a.Y < b.Y {
			return -1
		}
		if a.Y > b.Y {
			return 1
		}
		return 0
	})
	hull = hull[:0]
	cross := func(o, a, b geom.Pt) float64 { return (a.X-o.X)*(b.Y-o.Y) - (a.Y-o.Y)*(b.X-o.X) }
	for _, p := range sorted { // lower chain
		for len(hull) >= 2 && cross(hull[len(hull)-2], hull[len(hull)-1], p) <= 0 {
			hull = hull[:len(hull)-1]
		}
		hull = append(hull, p)
	}
	lower := len(hull) + 1
	for i := len(sorted) - 2; i >= 0; i-- { // upper chain
		p := sorted[i]
		for len(hull) >= lower && cross(hull[len(hull)-2], hull[len(hull)-1], p) <= 0 {
			hull = hull[:len(hull)-1]
		}
		hull = append(hull, p)
	}
	if len(hull) > 1 {
		hull = hull[:len(hull)-1] // the last point repeats the first
	}
	return sorted, hull
}
