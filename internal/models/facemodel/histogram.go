package facemodel

import (
	"math"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// HistogramDifference is FaceFusion's vision.calculate_histogram_difference(source, target): the
// correlation (cv2.compareHist HISTCMP_CORREL) of the two images' hue–saturation histograms
// (cv2.calcHist over HSV, 50 hue bins over 0..180, 60 saturation bins over 0..256), mapped from
// [−1, 1] onto [0, 1].
func HistogramDifference(source, target *raster.Image) float64 {
	a, b := hsHistogram(source), hsHistogram(target)
	var s1, s2, s11, s12, s22 float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		s1 += x
		s2 += y
		s11 += x * x
		s12 += x * y
		s22 += y * y
	}
	scale := 1 / float64(len(a))
	num := s12 - s1*s2*scale
	denom2 := (s11 - s1*s1*scale) * (s22 - s2*s2*scale)
	corr := 1.0
	if math.Abs(denom2) > 2.220446049250313e-16 {
		corr = num / math.Sqrt(denom2)
	}
	return (min(1, max(-1, corr)) + 1) / 2 // numpy.interp(corr, [−1, 1], [0, 1])
}

// hsHistogram is cv2.calcHist([HSV], [0, 1], None, [50, 60], [0, 180, 0, 256]) of img.
func hsHistogram(img *raster.Image) []float32 {
	h := make([]float32, 50*60)
	for y := range img.H {
		row := img.Pix[y*img.Stride:]
		for x := range img.W {
			hue, sat := hsv8(row[3*x], row[3*x+1], row[3*x+2])
			hb := int(math.Floor(float64(hue) * (50.0 / 180)))
			sb := int(math.Floor(float64(sat) * (60.0 / 256)))
			if hb < 50 && sb < 60 {
				h[hb*60+sb]++
			}
		}
	}
	return h
}

// hsv8 is OpenCV's 8-bit RGB → HSV hue (0..180) and saturation (RGB2HSV_b): integer tables in
// 12-bit fixed point, rounded half up.
func hsv8(r, g, b uint8) (hue, sat int) {
	const shift = 12
	R, G, B := int(r), int(g), int(b)
	v := max(R, G, B)
	diff := v - min(R, G, B)
	if v != 0 {
		sat = (diff*int(math.RoundToEven(float64(255<<shift)/float64(v))) + 1<<(shift-1)) >> shift
	}
	var h int
	switch {
	case v == R:
		h = G - B
	case v == G:
		h = B - R + 2*diff
	default:
		h = R - G + 4*diff
	}
	if diff != 0 {
		h = (h*int(math.RoundToEven(float64(180<<shift)/(6*float64(diff)))) + 1<<(shift-1)) >> shift
	} else {
		h = 0
	}
	if h < 0 {
		h += 180
	}
	return h, sat
}
