package spec

import (
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// The audio is copied by default; a named encoder is used as it is; quality or volume alone
// re-encode with the container's usual encoder.
func TestAudioOptions(t *testing.T) {
	with := func(out, enc string, q, v int) job.Config {
		c := job.Default()
		c.OutputPath, c.OutputAudioEncoder, c.OutputAudioQuality, c.OutputAudioVolume = out, enc, q, v
		return c
	}
	voiced := func(c job.Config) job.Config {
		c.SourcePaths = []string{"face.png", "v.wav"}
		return c
	}
	for _, c := range []struct {
		cfg  job.Config
		want video.AudioOptions
	}{
		{job.Default(), video.AudioOptions{}},
		{with("o.mp4", "libmp3lame", 80, 100), video.AudioOptions{Encoder: "libmp3lame", Quality: 80, Volume: 100}},
		{with("o.mkv", "", 80, 50), video.AudioOptions{Encoder: "aac", Quality: 80, Volume: 50}},
		{with("o.webm", "", 20, 100), video.AudioOptions{Encoder: "libopus", Quality: 20, Volume: 100}},
		{with("o.mp4", "", 80, 0), video.AudioOptions{None: true}}, // FaceFusion skips the audio
		{voiced(with("o.mp4", "flac", 80, 0)), video.AudioOptions{None: true}},
		{voiced(with("o.mp4", "", 80, 100)), video.AudioOptions{Encoder: "aac", Quality: 80, Volume: 100, Source: "v.wav"}},
	} {
		if got := AudioOptions(c.cfg); got != c.want {
			t.Errorf("%s encoder %q quality %d volume %d: %+v, want %+v", c.cfg.OutputPath, c.cfg.OutputAudioEncoder,
				c.cfg.OutputAudioQuality, c.cfg.OutputAudioVolume, got, c.want)
		}
	}
}
