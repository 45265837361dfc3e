package swap

import (
	"math"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// The skin about an eye, from its brow down to the under-eye fold and the cheekbone, is cut
// into closed patches by the lids, the fold, the lashes' shadow and a glasses lens's rim, and
// its colour under a lens or in the fold's shade is not the cheek's; so is the nose's bridge
// between the eyes by the lenses' inner rims and a frame's bridge. A patch there is no cover
// on the evidence of its outline and its colour alone (enclosedRegions, completeCovers), but
// for a band or a blob wholly below the fold that keepSpots judges by its shape as well.

const (
	// eyeZoneDown is how far down the zone reaches, as a share of the way from the eye's
	// centre down to the nose's tip (a large lens's lower rim), eyeZoneBelow the least, in
	// eye widths below the eye's centre; eyeZoneSide is how far past the eye's corners.
	eyeZoneDown  = 1
	eyeZoneBelow = 1
	eyeZoneSide  = 0.3
)

// eyeZones puts in s.eyeZone the convex hull of each eye's zone (see above) from the
// landmarks l, in l's coordinates: its brow, and its eye's corners widened and carried down;
// then the bridge's, from the brows' inner ends to the eyes' inner corners and the nose's
// ridge halfway down.
func (s *Swapper) eyeZones(l *face.Landmarks68) {
	for z, p := range [2][4]int{{17, 22, 36, 42}, {22, 27, 42, 48}} {
		s.part = append(s.part[:0], l[p[0]:p[1]]...)
		eye := l[p[2]:p[3]]
		outer, inner := eye[0], eye[3]
		across := inner.Sub(outer)
		width := across.Dist(geom.Pt{})
		if width == 0 {
			s.eyeZone[z], s.eyeLid[z] = s.eyeZone[z][:0], lowerLid{}
			continue
		}
		// Down the face: across the eye's line, away from its brow.
		c := geom.Mean(eye)
		down := geom.Pt{X: -across.Y / width, Y: across.X / width}
		if dot(down, c.Sub(geom.Mean(s.part))) < 0 {
			down = down.Scale(-1)
		}
		s.eyeLid[z] = lowerLid{at: eye[4].Add(eye[5]).Scale(0.5), down: down, width: width}
		depth := max(eyeZoneBelow*width, eyeZoneDown*dot(down, l[30].Sub(c)))
		side := across.Scale(eyeZoneSide)
		for _, q := range []geom.Pt{outer.Sub(side), inner.Add(side)} {
			s.part = append(s.part, q, q.Add(down.Scale(depth-dot(down, q.Sub(c)))))
		}
		s.sorted, s.eyeZone[z] = convexHull(s.part, s.sorted, s.eyeZone[z])
	}
	s.part = append(s.part[:0], l[21], l[22], l[39], l[42], l[29])
	s.sorted, s.eyeZone[2] = convexHull(s.part, s.sorted, s.eyeZone[2])
}

// inEyeZone reports whether p lies in an eye's zone (see eyeZones), or the bridge's too.
func (s *Swapper) inEyeZone(p geom.Pt, bridge bool) bool {
	for z, h := range s.eyeZone {
		if z == 2 && !bridge {
			break
		}
		if insideConvex(h, p) {
			return true
		}
	}
	return false
}

// lowerLid is where an eye's lower lid lies: the middle of its two landmarks, the way down
// the face across the eye's line, and the eye's width (0: no eye).
type lowerLid struct {
	at, down geom.Pt
	width    float64
}

// belowLid is how far p lies below the lower lid of the eye whose zone holds it (see
// eyeZones), in that eye's widths; -Inf where no eye's zone holds it.
func (s *Swapper) belowLid(p geom.Pt) float64 {
	for z, l := range s.eyeLid {
		if l.width > 0 && insideConvex(s.eyeZone[z], p) {
			return dot(l.down, p.Sub(l.at)) / l.width
		}
	}
	return math.Inf(-1)
}

// insideConvex reports whether p lies within the convex polygon h, of either winding.
func insideConvex(h []geom.Pt, p geom.Pt) bool {
	if len(h) < 3 {
		return false
	}
	sign := 0.0
	for i, a := range h {
		b := h[(i+1)%len(h)]
		c := (b.X-a.X)*(p.Y-a.Y) - (b.Y-a.Y)*(p.X-a.X)
		if c == 0 {
			continue
		}
		if sign == 0 {
			sign = c
		} else if sign*c < 0 {
			return false
		}
	}
	return true
}
