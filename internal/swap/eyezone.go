package swap

import (
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
)

// The skin about an eye, from its brow down to the under-eye fold and the cheekbone, is cut
// into closed patches by the lids, the fold, the lashes' shadow and a glasses lens's rim, and
// its colour under a lens or in the fold's shade is not the cheek's. A patch there is no
// cover on the evidence of its outline and its colour alone (enclosedRegions, keepSpots).

const (
	// eyeZoneBelow is how far below the lower lid, in eye widths, the zone reaches (a lens's
	// lower rim); eyeZoneSide how far past the eye's corners.
	eyeZoneBelow = 0.8
	eyeZoneSide  = 0.3
)

// eyeZones puts in s.eyeZone the convex hull of each eye's zone (see above) from the
// landmarks l, in l's coordinates.
func (s *Swapper) eyeZones(l *face.Landmarks68) {
	for z, p := range [2][4]int{{17, 22, 36, 42}, {22, 27, 42, 48}} {
		s.part = append(s.part[:0], l[p[0]:p[1]]...)
		eye := l[p[2]:p[3]]
		outer, inner := eye[0], eye[3]
		across := inner.Sub(outer)
		width := across.Dist(geom.Pt{})
		if width == 0 {
			s.eyeZone[z] = s.eyeZone[z][:0]
			continue
		}
		// Down the face: across the eye's line, away from its brow.
		down := geom.Pt{X: -across.Y / width, Y: across.X / width}
		if down.X*(geom.Mean(eye).X-geom.Mean(s.part).X)+down.Y*(geom.Mean(eye).Y-geom.Mean(s.part).Y) < 0 {
			down = down.Scale(-1)
		}
		side := across.Scale(eyeZoneSide)
		s.part = append(s.part, outer.Sub(side), inner.Add(side))
		for _, q := range []geom.Pt{outer.Sub(side), eye[4], eye[5], inner.Add(side)} {
			s.part = append(s.part, q.Add(down.Scale(eyeZoneBelow*width)))
		}
		s.sorted, s.eyeZone[z] = convexHull(s.part, s.sorted, s.eyeZone[z])
	}
}

// inEyeZone reports whether p lies in either eye's zone (see eyeZones).
func (s *Swapper) inEyeZone(p geom.Pt) bool {
	for _, h := range s.eyeZone {
		if insideConvex(h, p) {
			return true
		}
	}
	return false
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
