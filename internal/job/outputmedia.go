package job

import (
	"strings"
	"sync"

	"github.com/facefusion-hpc/facefusion/internal/video"
)

// The output's audio and image keys, with FaceFusion's ranges (choices.py): quality and volume
// 0..100 (the image scale is in floatRanges).

// audioEncoderHelp is --output-audio-encoder's help, its names from video's one table.
var audioEncoderHelp = "re-encode the target's audio (encode the source audio that replaces it) with " + strings.Join(video.AudioEncoderNames(), ", ") +
	" (default: copied as it is, bit-exact)"

// validateOutputMedia checks the audio and image keys, naming the key, the flag and the range.
func (c *Config) validateOutputMedia(bad func(string, ...any)) {
	if e := c.OutputAudioEncoder; e != "" {
		if msg := oneOf(keyAndFlag("output_audio_encoder"), e, video.AudioEncoderNames()); msg != "" {
			bad("%s (FaceFusion's; empty: the target's audio is copied)", msg)
		}
	}
	percent := func(key string, v int, what string) {
		if v < 0 || v > 100 {
			bad("%s: %d is outside 0..100 (%s)", keyAndFlag(key), v, what)
		}
	}
	percent("output_audio_quality", c.OutputAudioQuality, "0 the smallest, 100 the best re-encoded audio")
	percent("output_audio_volume", c.OutputAudioVolume, "percent of the target's loudness")
	percent("output_image_quality", c.OutputImageQuality, "JPEG quality")
}

// embeddedDefault is Default, decoded once.
var embeddedDefault = sync.OnceValue(Default)

// ReencodesAudio reports whether the target's audio is re-encoded rather than copied: an
// output_audio_encoder is named, or output_audio_quality or output_audio_volume differs from
// the embedded default's. Copying is lossless and costs nothing, so it stays the rule until a
// setting asks for a change that only re-encoding makes.
func (c *Config) ReencodesAudio() bool {
	d := embeddedDefault()
	return c.OutputAudioEncoder != "" || c.OutputAudioQuality != d.OutputAudioQuality || c.OutputAudioVolume != d.OutputAudioVolume
}
