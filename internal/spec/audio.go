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
//
// At output_audio_volume 0 the output has no audio (None), as FaceFusion's restore_audio skips
// it then: lip_syncer still reads the source audio (job.Config.SourceAudio), the output holds none.
func AudioOptions(cfg job.Config) video.AudioOptions {
	if cfg.OutputAudioVolume == 0 {
		return video.AudioOptions{None: true}
	}
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
