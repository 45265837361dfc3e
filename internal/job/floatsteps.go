package job

import "math"

// withinSteps is within for a range FaceFusion offers as argparse choices
// (common_helper.create_float_range: lo, lo+step, … up to hi, each rounded to two decimals, the
// next from the rounded one): a finite v in range that is not one of them is refused too, as
// FaceFusion's parser refuses it.
func withinSteps(bad func(string, ...any), key string, v, lo, hi, step float64) {
	if !finite(v) || v < lo || v > hi {
		within(bad, key, v, lo, hi)
		return
	}
	round2 := func(x float64) float64 { return math.Round(x*100) / 100 }
	for c := lo; c <= hi; c = round2(c + step) {
		if v == round2(c) {
			return
		}
	}
	bad("%s: %g is not one of FaceFusion's choices %g..%g in steps of %g", keyAndFlag(key), v, lo, hi, step)
}
