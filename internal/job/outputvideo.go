package job

import (
	"fmt"
	"strconv"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
)

// FaceFusion's range for the output video's rate: output_video_fps is what its normalize_fps
// keeps a given rate within (it clamps; here a rate outside is an error). output_video_scale
// is in floatRanges.
const VideoFPSMin, VideoFPSMax = 1.0, 60.0

// validateOutputVideo checks output_video_fps, naming the key, the flag and the range.
func (c *Config) validateOutputVideo(bad func(string, ...any)) {
	if f := c.OutputVideoFPS; f != 0 && !(f >= VideoFPSMin && f <= VideoFPSMax) {
		bad("output_video_fps (--output-video-fps): %v is outside %g..%g frames per second (0 or unset: the target's rate)", f, VideoFPSMin, VideoFPSMax)
	}
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
