package swap

import (
	"image"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// A lossy clip's keyframe changes a still face's pixels by a few levels, and what the swap
// matches to the target (its colour statistics, the seam membrane's values) followed them in
// that frame alone, so the swapped face's light jumped with every keyframe. The analysis
// measures each face's Tone, the window smooths it with the landmarks (temporal.Smoother), and
// Apply matches the source to the target's colour as the window sees it: the frame's own
// statistics moved by the steady tone's difference to the frame's tone. Both tones are
// measured the same way, in the same frame, so only their difference counts.

// toneEllipse is the share of the detector's box that the tone's ellipse spans each way: the
// eyes, nose, cheeks and mouth, inside the face whatever its turn. The detector's box, not the
// landmarks: BlazeFace's box holds within a tenth of a pixel where dlib's points jump a pixel
// at a keyframe, and a region edge that jumps moves the statistics with it.
const toneEllipse = 0.8

// toneGainRange bounds the steady tone's spread over the frame's (each way): a window over a
// change of light far beyond a codec's rounding is left to the frame's own.
const toneGainRange = 1.25

// toneShiftHeld and toneShiftLeft bound the steady tone's move of the frame's mean (levels of
// Y, Cb or Cr, the largest): up to toneShiftHeld (a keyframe's few levels, and then some) it is
// held whole; from toneShiftLeft (a flash, a flicker of light on the face that is no shot cut)
// it is the frame's own, which the swapped face then follows as the skin around it does; between,
// in part, so that the swap is continuous in the tones.
const (
	toneShiftHeld = 6.0
	toneShiftLeft = 12.0
)

// ToneMeter measures faces' Tone. It owns its scratch: one per goroutine.
type ToneMeter struct {
	mask raster.Mask
	poly [24]geom.Pt
}

// Measure is the colour of the face the detector boxed in frame: over the ellipse inscribed
// in toneEllipse of the box. Zero (Weight 0) when the box misses the frame.
func (tm *ToneMeter) Measure(frame *raster.Image, box geom.Rect) face.Tone {
	c := box.Center()
	rx, ry := toneEllipse*box.W()/2, toneEllipse*box.H()/2
	if !(rx >= 1 && ry >= 1) || math.IsInf(rx+ry, 0) {
		return face.Tone{}
	}
	for i := range tm.poly {
		a := 2 * math.Pi * float64(i) / float64(len(tm.poly))
		tm.poly[i] = geom.Pt{X: c.X + rx*math.Cos(a), Y: c.Y + ry*math.Sin(a)}
	}
	r := image.Rect(int(math.Floor(c.X-rx)), int(math.Floor(c.Y-ry)), int(math.Ceil(c.X+rx))+1, int(math.Ceil(c.Y+ry))+1).Intersect(frame.Bounds())
	if r.Empty() {
		return face.Tone{}
	}
	tm.mask.Reset(r)
	raster.FillConvex(&tm.mask, tm.poly[:], 1)
	st := raster.StatsImage(frame, &tm.mask)
	return face.Tone{Mean: st.Mean, Std: st.Std, Weight: st.Weight}
}

// Steady makes the next Apply match the source to the target's colour as steady (the window's
// tone) has it rather than as own (this frame's tone, measured alike) has it; it lasts one
// Apply. Tones without weight, or as far apart as toneShiftLeft, leave the frame's own.
func (s *Swapper) Steady(own, steady face.Tone) {
	s.own, s.steady = own, steady
	shift := 0.0
	for c := range 3 {
		shift = max(shift, math.Abs(steady.Mean[c]-own.Mean[c]))
	}
	s.steadyShare = min(1, max(0, (toneShiftLeft-shift)/(toneShiftLeft-toneShiftHeld)))
	s.steadyOn = own.Weight > 0 && steady.Weight > 0 && s.steadyShare > 0
}

// steadied is to (the frame's colour under the mask) moved as the steady tone differs from
// the frame's own: each of Y, Cb, Cr scaled about the frame's tone by the spreads' ratio, then
// moved to the steady mean.
func (s *Swapper) steadied(to raster.ColourStats) raster.ColourStats {
	out := to
	for c := range 3 {
		k := 1.0
		if s.own.Std[c] > 1 {
			k = min(max(s.steady.Std[c]/s.own.Std[c], 1/toneGainRange), toneGainRange)
		}
		out.Mean[c] = s.steady.Mean[c] + k*(to.Mean[c]-s.own.Mean[c])
		out.Std[c] = k * to.Std[c]
		if f := s.steadyShare; f < 1 {
			out.Mean[c] = to.Mean[c] + f*(out.Mean[c]-to.Mean[c])
			out.Std[c] = to.Std[c] + f*(out.Std[c]-to.Std[c])
		}
	}
	return out
}
