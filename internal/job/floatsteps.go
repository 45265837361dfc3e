package job

import (
	"math"
	"strconv"
	"strings"
)

// floatRange is one of FaceFusion's float options whose values are argparse choices
// (common_helper.create_float_range: start, start+step, … up to stop, each rounded to two
// decimals, the next from the rounded one): a value in range that is not one of them is
// refused too, as FaceFusion's parser refuses it ("invalid choice"), whether it comes from a
// flag, the job file or facefusion.ini.
type floatRange struct {
	key               string // the TOML key, the flag with '-' for '_'
	start, stop, step float64
	value             func(*Config) float64
}

// floatRanges are FaceFusion's create_float_range options (choices.py, and the processors'
// choices.py for the swapper's and the enhancer's weight): the one statement of their ranges.
var floatRanges = []floatRange{
	{"face_detector_score", 0, 1, 0.05, func(c *Config) float64 { return c.FaceDetectorScore }},
	{"face_landmarker_score", 0, 1, 0.05, func(c *Config) float64 { return c.FaceLandmarkerScore }},
	{"face_mask_blur", 0, 1, 0.05, func(c *Config) float64 { return c.FaceMaskBlur }},
	{"reference_face_distance", 0, 1, 0.05, func(c *Config) float64 { return c.ReferenceFaceDistance }},
	{"face_tracker_score", 0, 0.5, 0.05, func(c *Config) float64 { return c.FaceTrackerScore }},
	{"face_swapper_weight", 0, 1, 0.05, func(c *Config) float64 { return c.FaceSwapperWeight }},
	{"face_enhancer_weight", 0, 1, 0.05, func(c *Config) float64 { return c.FaceEnhancerWeight }},
	{"lip_syncer_weight", 0, 1, 0.05, func(c *Config) float64 { return c.LipSyncerWeight }},
	{"output_image_scale", 0.25, 8, 0.25, func(c *Config) float64 { return c.OutputImageScale }},
	{"output_video_scale", 0.25, 8, 0.25, func(c *Config) float64 { return c.OutputVideoScale }},
}

// validateFloatRanges adds the complaint of each floatRanges key whose value is not one of
// FaceFusion's choices. A NaN or an infinity is finiteFloats' to report, once.
func (c *Config) validateFloatRanges(bad func(string, ...any)) {
	for _, r := range floatRanges {
		if v := r.value(c); finite(v) && !r.holds(v) {
			bad("%s: %g is not one of FaceFusion's choices, %s", keyAndFlag(r.key), v, r)
		}
	}
}

// holds reports whether v is one of the range's choices.
func (r floatRange) holds(v float64) bool {
	round2 := func(x float64) float64 { return math.Round(x*100) / 100 }
	for x := r.start; x <= r.stop; x = round2(x + r.step) {
		if v == round2(x) {
			return true
		}
	}
	return false
}

// String writes the range as the errors and the flags' help give it: "0 to 1 in steps of 0.05".
func (r floatRange) String() string {
	return fmtG(r.start) + " to " + fmtG(r.stop) + " in steps of " + fmtG(r.step)
}

// floatArg is the flag's value as FaceFusion's create_float_metavar writes it:
// [0.0..1.0:0.05].
func floatArg(key string) string {
	for _, r := range floatRanges {
		if r.key == key {
			return "[" + pyFloat(r.start) + ".." + pyFloat(r.stop) + ":" + fmtG(r.step) + "]"
		}
	}
	panic("job: " + key + " is not in floatRanges")
}

func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// pyFloat writes x as Python's str(float) does for these ranges: a whole number keeps ".0".
func pyFloat(x float64) string {
	if s := fmtG(x); !strings.ContainsAny(s, ".e") {
		return s + ".0"
	}
	return fmtG(x)
}
