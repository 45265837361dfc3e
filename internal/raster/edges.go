package raster

import (
	"math"

	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// Polygons are rasterised in fixed point (1/256 px) so that the inside test of a pixel centre
// is exact integer arithmetic: the same edge seen from the two triangles that share it gives
// exactly opposite answers, which floating point does not guarantee.
const (
	subBits = 8
	sub     = 1 << subBits
	// maxCoord bounds vertex coordinates (px) so edge products stay inside int64; points
	// further out than this are nonsense from a failed detector and are clamped.
	maxCoord = 1 << 20
)

type fixPt struct{ x, y int64 }

// toFix snaps p to the fixed-point grid; ok is false for NaN or infinite coordinates.
func toFix(p geom.Pt) (fixPt, bool) {
	if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
		return fixPt{}, false
	}
	c := func(v float64) int64 { return int64(math.Round(math.Max(-maxCoord, math.Min(maxCoord, v)) * sub)) }
	return fixPt{c(p.X), c(p.Y)}, true
}

// edge is the half-plane left of a→b for a positively oriented polygon:
// w(p) = dx·(p.y−a.y) − dy·(p.x−a.x) + bias > 0 means inside.
type edge struct {
	ax, ay, dx, dy, bias int64
}

// makeEdge builds the half-plane of a→b. A pixel centre exactly on the edge (w−bias == 0)
// is owned by the edge only when it points "down" (or exactly "left"): the rule flips when
// the edge is reversed, and a shared edge appears reversed in the neighbouring polygon, so
// exactly one of the two polygons owns the pixels on it (the top-left fill rule).
func makeEdge(a, b fixPt) edge {
	e := edge{ax: a.x, ay: a.y, dx: b.x - a.x, dy: b.y - a.y}
	if e.dy > 0 || (e.dy == 0 && e.dx < 0) {
		e.bias = 1
	}
	return e
}

// span narrows [lo, hi] (inclusive pixel columns) to the columns of row py inside e.
func (e *edge) span(py int, lo, hi int) (int, int) {
	// w(x) = c + s·x with x the pixel column.
	c := e.dx*(int64(py)*sub-e.ay) + e.dy*e.ax + e.bias
	s := -e.dy * sub
	switch {
	case s == 0:
		if c <= 0 {
			return lo, lo - 1
		}
	case s > 0: // x > −c/s
		lo = max(lo, clampInt(floorDiv(-c, s)+1))
	default: // x < c/(−s)
		hi = min(hi, clampInt(floorDiv(c-1, -s)))
	}
	return lo, hi
}

func floorDiv(a, b int64) int64 { // b > 0
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func clampInt(v int64) int {
	return int(max(-(1 << 30), min(1<<30, v)))
}

// orient2 is twice the signed area of the triangle a, b, c.
func orient2(a, b, c fixPt) int64 {
	return (b.x-a.x)*(c.y-a.y) - (b.y-a.y)*(c.x-a.x)
}
