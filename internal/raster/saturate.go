package raster

import "math"

// SaturateU8 is OpenCV's saturate_cast<uchar> of a float (and numpy's round then uint8 clip):
// half to even, clamped to 0..255, NaN to 0. Every 8-bit result of float arithmetic goes
// through it so the rounding rule is written once.
func SaturateU8(v float64) uint8 {
	if !(v > 0) {
		return 0
	}
	if v >= 255 {
		return 255
	}
	return uint8(math.RoundToEven(v))
}
