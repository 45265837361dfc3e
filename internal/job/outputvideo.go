package job

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
