package job

import (
	"fmt"
	"math"
	"strconv"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// FaceFusion's ranges for the output video: output_video_scale is one of its choices, 0.25 to
// 8 in steps of 0.25 (choices.output_video_scale_range); output_video_fps is what its
// normalize_fps keeps a given rate within (it clamps; here a rate outside is an error).
const (
	VideoScaleMin, VideoScaleMax, VideoScaleStep = 0.25, 8.0, 0.25
	VideoFPSMin, VideoFPSMax                     = 1.0, 60.0
)

// validateOutputVideo checks output_video_fps and output_video_scale, naming the key, the flag
// and the range.
func (c *Config) validateOutputVideo(bad func(string, ...any)) {
	if f := c.OutputVideoFPS; f != 0 && !(f >= VideoFPSMin && f <= VideoFPSMax) {
		bad("output_video_fps (--output-video-fps): %v is outside %g..%g frames per second (0 or unset: the target's rate)", f, VideoFPSMin, VideoFPSMax)
	}
	if s := c.OutputVideoScale; !validVideoScale(s) {
		bad("output_video_scale (--output-video-scale): %v is not a scale FaceFusion offers: %g to %g in steps of %g (1: the target's size)", s, VideoScaleMin, VideoScaleMax, VideoScaleStep)
	}
}

func validVideoScale(s float64) bool {
	steps := s / VideoScaleStep
	return s >= VideoScaleMin && s <= VideoScaleMax && steps == math.Trunc(steps)
}

// floating is the setter of a flag with a decimal value.
func floating(name string, dst func(*Config) *float64) func(*Config, []string) error {
	return func(c *Config, v []string) error {
		f, err := strconv.ParseFloat(v[0], 64)
		if err != nil {
			return fmt.Errorf("--%s: %s is not a number", name, safefs.Excerpt(v[0]))
		}
		*dst(c) = f
		return nil
	}
}
