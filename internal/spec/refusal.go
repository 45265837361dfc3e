package spec

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// audioRefusal names the flag behind re-encoded audio that ffmpeg refused in the output check.
func audioRefusal(cfg job.Config, a video.AudioOptions, oe *video.OutputError) error {
	ext := filepath.Ext(cfg.OutputPath)
	flag := "--output-audio-encoder " + a.Encoder
	if cfg.OutputAudioEncoder == "" {
		flag = fmt.Sprintf("%s (the encoder --output-audio-quality %d / --output-audio-volume %d re-encode with when no --output-audio-encoder is given)",
			a.Encoder, cfg.OutputAudioQuality, cfg.OutputAudioVolume)
	}
	if oe.Problem == video.UnknownAudioEncoder {
		return fmt.Errorf("%s is not an audio encoder of this ffmpeg (ffmpeg: %s): use another that `ffmpeg -encoders` lists, or an ffmpeg built with it", flag, oe.Detail)
	}
	return fmt.Errorf("%s: the target's audio cannot be stored in %s this way (ffmpeg: %s): use %s", flag, ext, oe.Detail, otherContainer(ext, "another audio encoder", ".mkv"))
}

// otherContainer is the advice after "use": the containers named, less the output's own ext (a
// user told to use .mkv for a .mkv output learns nothing), or else fallback.
func otherContainer(ext, fallback string, containers ...string) string {
	var other []string
	for _, c := range containers {
		if !strings.EqualFold(c, ext) {
			other = append(other, c)
		}
	}
	if len(other) == 0 {
		return fallback
	}
	return strings.Join(other, " or ") + " or " + fallback
}
