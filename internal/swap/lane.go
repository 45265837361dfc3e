package swap

import (
	"image"
	"math"
	"slices"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A cover found beside a feature that is a straight band whose line runs into the feature (a
// pencil between the lips, a strap or a strand across an eye, a finger under the nose) is one
// thing across it: a face's own lips, eyes and nostrils end at their outline, while a band in
// front of them runs on. Its growth over the feature (see floodCover) may then leave the found
// piece's box along the band's line, within the band's width of it, still only through the
// pixels that look like it: a band's piece is short across the line, so its box would stop
// the growth a little way into the feature.

const (
	// laneElong is how many times longer than wide the found cover near a feature must be to
	// be a band.
	laneElong = 2.5
	// laneThickMost is the widest band (share of the face size) that counts: a wider cover is
	// a hand or a bar, which covers the feature between its sides (see bridgeThick).
	laneThickMost = 0.1
	// laneAim is how near (share of the face size) the band's edge must pass a feature's
	// centre for the band to run into it rather than past or along it (a glasses rim).
	laneAim = 0.06
	// laneReach is how far (share of the face size) past the found band's ends its line is
	// followed: across a smiling mouth.
	laneReach = 0.5
	// laneSlack is how far (share of the face size) beyond the band's half-width its lane
	// reaches: the line's direction, fitted to a short ragged piece, is a few degrees off.
	laneSlack = 0.03
	// laneSeen is how far (share of the face size) beyond the box a piece grows in its
	// found cover is fitted: enough of a band's length to tell its line.
	laneSeen = 0.1
)

// lane is a found band's line: its centre, unit direction, half-width and half-length (with
// laneReach); ok when the cover is a band aimed at a feature.
type lane struct {
	c, a       geom.Pt
	half, long float64
	ok         bool
}

// holds reports whether pixel (x, y) of fr's grid lies within the lane.
func (l *lane) holds(x, y int) bool {
	dx, dy := float64(x)-l.c.X, float64(y)-l.c.Y
	return l.ok && math.Abs(dx*l.a.X+dy*l.a.Y) <= l.long && math.Abs(dx*l.a.Y-dy*l.a.X) <= l.half
}

// featureCentres puts in s.centres the centres of the mouth, the eyes and the nostrils of
// target, on fr's grid.
func (s *Swapper) featureCentres(target *face.Landmarks68, fr image.Rectangle) {
	o := geom.Pt{X: float64(fr.Min.X), Y: float64(fr.Min.Y)}
	s.centres = [4]geom.Pt{geom.Mean(target[48:60]).Sub(o), geom.Mean(target[36:42]).Sub(o),
		geom.Mean(target[42:48]).Sub(o), geom.Mean(target[31:36]).Sub(o)}
}

// bandLane fits c.lane to the found cover (s.occ) that s.label's region k is part of and that
// looks like it (c's colour, not what a find joined it to: the jaw's shadow, hair), off the
// features (s.zone < 2), within laneSeen·size of the piece (on fr's grid): its principal axis,
// and its length and thickness along it. s.cov marks the pixels visited with k.
func (s *Swapper) bandLane(frame *raster.Image, fr image.Rectangle, size float64, k int32, c *coverLook) {
	c.lane = lane{}
	w, h := fr.Dx(), fr.Dy()
	g := int(laneSeen * size)
	pb := s.boxes[k]
	b := image.Rect(pb.Min.X-g, pb.Min.Y-g, pb.Max.X+g, pb.Max.Y+g).Intersect(image.Rect(0, 0, w, h))
	s.stackRegion(k, w)
	for _, i := range s.stack {
		s.cov.Pix[i] = float32(k)
	}
	s.laneIdx = s.laneIdx[:0]
	var n, sx, sy, sxx, sxy, syy float64
	for len(s.stack) > 0 {
		i := int(s.stack[len(s.stack)-1])
		s.stack = s.stack[:len(s.stack)-1]
		x, y := i%w, i/w
		if s.zone.Pix[i] < 2 {
			fx, fy := float64(x), float64(y)
			n, sx, sy, sxx, sxy, syy = n+1, sx+fx, sy+fy, sxx+fx*fx, sxy+fx*fy, syy+fy*fy
			s.laneIdx = append(s.laneIdx, int32(i))
		}
		for dy := -1; dy <= 1; dy++ {
			for dx := -1; dx <= 1; dx++ {
				if p := (image.Point{x + dx, y + dy}); p.In(b) {
					if j := p.Y*w + p.X; s.occ.Pix[j] == 1 && s.cov.Pix[j] != float32(k) && c.dist(pixelFeatures(frame, fr, w, j), c.med) <= 1 {
						s.cov.Pix[j] = float32(k)
						s.stack = append(s.stack, int32(j))
					}
				}
			}
		}
	}
	if n < 8 {
		return
	}
	mx, my, ax, ay := principalAxis(n, sx, sy, sxx, sxy, syy)
	// Refitted to the pixels near that line: a blob beside one end (a shadow at the mouth's
	// corner, where the band leaves the face) tilts it.
	var near float64
	n, sx, sy, sxx, sxy, syy = 0, 0, 0, 0, 0, 0
	for _, i := range s.laneIdx {
		near = max(near, math.Abs((float64(int(i)%w)-mx)*ay-(float64(int(i)/w)-my)*ax))
	}
	for _, i := range s.laneIdx {
		fx, fy := float64(int(i)%w), float64(int(i)/w)
		if math.Abs((fx-mx)*ay-(fy-my)*ax) <= near/2 {
			n, sx, sy, sxx, sxy, syy = n+1, sx+fx, sy+fy, sxx+fx*fx, sxy+fx*fy, syy+fy*fy
		}
	}
	if n >= 8 {
		mx, my, ax, ay = principalAxis(n, sx, sy, sxx, sxy, syy)
	}
	// Its length is the span of most of its pixels along the line (a blob where it leaves
	// the face or meets a shadow does not stretch it), its thickness the pixels per length
	// (the nine tenths of them that lie within that span).
	s.dev = s.dev[:0]
	for _, i := range s.laneIdx {
		s.dev = append(s.dev, float32((float64(int(i)%w)-mx)*ax+(float64(int(i)/w)-my)*ay))
	}
	slices.Sort(s.dev)
	lo, hi := float64(s.dev[len(s.dev)/20]), float64(s.dev[len(s.dev)-1-len(s.dev)/20])
	long := hi - lo
	thick := 0.9 * float64(len(s.laneIdx)) / max(1, long)
	if long < laneElong*thick || thick > laneThickMost*size {
		return
	}
	c.lane = lane{c: geom.Pt{X: mx + (lo+hi)/2*ax, Y: my + (lo+hi)/2*ay}, a: geom.Pt{X: ax, Y: ay},
		half: thick/2 + laneSlack*size, long: long/2 + laneReach*size}
	for _, f := range s.centres {
		if dx, dy := f.X-c.lane.c.X, f.Y-c.lane.c.Y; math.Abs(dx*ay-dy*ax) <= thick/2+laneAim*size {
			c.lane.ok = true
		}
	}
}

// principalAxis is the centre and the unit principal axis of n points from their sums.
func principalAxis(n, sx, sy, sxx, sxy, syy float64) (mx, my, ax, ay float64) {
	mx, my = sx/n, sy/n
	ax, ay = majorAxis(sxx/n-mx*mx, sxy/n-mx*my, syy/n-my*my, 1e-9)
	return mx, my, ax, ay
}
