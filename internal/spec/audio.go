package spec

import (
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// AudioOptions are cfg's settings for the output's audio: the target's audio is copied unless
// cfg.ReencodesAudio; then it is re-encoded with output_audio_encoder or, when none is named,
// the output container's usual encoder (video.DefaultAudioEncoder). They need no probe: a
// batch's keys (which are made before any target is probed) take them from here too.
//
// An audio file among the sources replaces the target's audio (FaceFusion's replace_audio,
// which encodes it with output_audio_encoder at output_audio_quality and volume): re-encoded
// always, since no stream is there to copy.
func AudioOptions(cfg job.Config) video.AudioOptions {
	source := cfg.SourceAudio()
	if !cfg.ReencodesAudio() && source == "" {
		return video.AudioOptions{}
	}
	enc := cfg.OutputAudioEncoder
	if enc == "" {
		enc = video.DefaultAudioEncoder(cfg.OutputPath)
	}
	return video.AudioOptions{Encoder: enc, Quality: cfg.OutputAudioQuality, Volume: cfg.OutputAudioVolume, Source: source}
}
