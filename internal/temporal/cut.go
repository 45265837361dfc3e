package temporal

import "github.com/facefusion-hpc/facefusion/internal/raster"

// A shot cut ends every face's window: without it a face of the new shot that sits where one of
// the old shot was would be followed across the cut, and the frames near it would get landmarks
// that mix two faces. A cut between frames s and s+1 is decided from those two frames alone
// (never from a rank's or a chunk's range), so it is the same for any rank count: their colour
// histograms, which a pan or a moving face barely changes (the content stays, it moves), differ
// by more than CutDistance.

// histBins is the bins a channel: coarse, so that codec noise and a shift of light stay in a bin.
const histBins = 16

// histCols, histRows is the grid of pixels a histogram samples (fewer on a smaller frame): 9,216
// pixels whatever the frame's size, 44 µs a 1080p frame on one core (BenchmarkHistogram), against
// tens of ms for its detection.
const histCols, histRows = 128, 72

// CutDistance is the least histogram distance (the fraction of sampled pixels that would have to
// change bin in a channel, averaged over the channels: 0 the same, 1 nothing in common) between
// consecutive frames that is a shot cut. Measured with histograms sampled as Histogram.Of does:
// within a shot at most 0.022 on the demo clip, 0.032 with a face moving 10 px a frame across a
// 320×240 frame, 0.073 in a pan of 20 px a frame over astronaut.png; 0.194 at the cut of two
// centred close-ups (astronaut.png, then grace_hopper.png, 426×320, the black border the same).
// A cut missed leaves the mixing there; a cut found where there is none only ends the windows at
// that frame.
const CutDistance = 0.1

// Histogram is a frame's colour histogram: histBins bins for each of R, G and B over a grid of
// sampled pixels.
type Histogram struct {
	bins [3 * histBins]int32
	n    int32 // pixels sampled
}

// Of sets h to img's histogram.
func (h *Histogram) Of(img *raster.Image) {
	*h = Histogram{}
	nx, ny := min(img.W, histCols), min(img.H, histRows)
	for j := range ny {
		row := img.Pix[((2*j+1)*img.H/(2*ny))*img.Stride:]
		for i := range nx {
			p := row[3*((2*i+1)*img.W/(2*nx)):]
			h.bins[int(p[0])*histBins/256]++
			h.bins[histBins+int(p[1])*histBins/256]++
			h.bins[2*histBins+int(p[2])*histBins/256]++
		}
	}
	h.n = int32(nx * ny)
}

// Distance is half the sum of the two histograms' absolute bin differences, over the pixels
// sampled and the channels: 0 for the same histogram, 1 for two with no bin in common. Histograms
// of different sizes (never in one video) are apart.
func Distance(a, b *Histogram) float64 {
	if a.n != b.n || a.n == 0 {
		return 1
	}
	d := 0
	for k := range a.bins {
		d += int(max(a.bins[k]-b.bins[k], b.bins[k]-a.bins[k]))
	}
	return float64(d) / float64(2*3*a.n)
}

// IsCut reports whether a shot cut lies between the frames of histograms a and b.
func IsCut(a, b *Histogram) bool { return Distance(a, b) > CutDistance }
