package swap

import (
	"image"
	"math"
	"testing"
)

// bridgeOnLine runs bridgeGaps on a 40×60 grid (f = 1) whose smoothed channels hold a dark,
// vertical line at x = 20 (its centre wobbling by up to wobble px along it, as a lossy frame's
// noise moves it) inside a brow's band (s.zone 1: a horizontal line there), with s.clip set on
// the rows pieces lists ([from, to) each), and returns s.clip's rows after it.
func bridgeOnLine(wobble float64, pieces [][2]int) []bool {
	cr := image.Rect(0, 0, 40, 60)
	s := &Swapper{}
	s.clip.Reset(cr)
	s.excl.Reset(cr)
	s.zone.Reset(cr)
	for i := range s.zone.Pix {
		s.zone.Pix[i] = 1
	}
	for c := range 3 {
		s.chan3[c].Reset(cr)
		for y := range cr.Dy() {
			x0 := 20 + wobble*math.Sin(1.7*float64(y))
			for x := range cr.Dx() {
				d := float64(x) - x0
				s.chan3[c].Pix[y*cr.Dx()+x] = float32(120 - 40*math.Exp(-d*d/4.5))
			}
		}
	}
	for _, p := range pieces {
		for y := p[0]; y < p[1]; y++ {
			s.clip.Pix[y*cr.Dx()+20] = 1
		}
	}
	s.bridgeGaps(cr, 1, cr, 8)
	rows := make([]bool, cr.Dy())
	for y := range rows {
		for x := range cr.Dx() {
			rows[y] = rows[y] || s.clip.Pix[y*cr.Dx()+x] >= 0.5
		}
	}
	return rows
}

// bridgeGaps joins two pieces of one line across a gap (lines from both meet there), but a
// piece's loose end must not grow: only its own line reaches past the end. On a vertical line
// whose centre wobbles by a tenth of a pixel (any real one), the direction along the line
// flips sign from pixel to pixel, so telling the ways apart by it let a single piece's pixels
// reach the rows past its end from "both sides", and the end grew by the whole reach (a very
// dark grace_hopper lost more of her bare face with the join than without it).
func TestBridgeGapsGrowsNoLooseEnd(t *testing.T) {
	for _, wobble := range []float64{0, 0.1} {
		// Two pieces, rows 10–24 and 32–44: the gap 25–31 is joined.
		rows := bridgeOnLine(wobble, [][2]int{{10, 25}, {32, 45}})
		for y := 25; y < 32; y++ {
			if !rows[y] {
				t.Errorf("wobble %.1f: the gap between two pieces is not joined at row %d", wobble, y)
			}
		}
		// One piece, rows 20–34: nothing past its ends.
		rows = bridgeOnLine(wobble, [][2]int{{20, 35}})
		grown := 0
		for y, on := range rows {
			if on && (y < 20 || y >= 35) {
				grown++
			}
		}
		if grown > 0 {
			t.Errorf("wobble %.1f: a single piece's loose ends grew by %d rows (want 0)", wobble, grown)
		}
	}
}
