package job

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
)

// LipSync is the keys of FaceFusion's lip_syncer processor (processors/modules/lip_syncer) and
// its voice extractor (program.py's voice_extractor group): their own block of the option
// table.
type LipSync struct {
	LipSyncerModel      string  `toml:"lip_syncer_model"`
	LipSyncerWeight     float64 `toml:"lip_syncer_weight"`
	VoiceExtractorModel string  `toml:"voice_extractor_model"`
}

// ProcessorLipSync is FaceFusion's lip syncer.
const ProcessorLipSync = "lip_syncer"

// The lip syncers and voice extractors a job may name (the catalog's).
var (
	LipSyncers      = catalog.Selectors(catalog.LipSyncer)
	VoiceExtractors = catalog.Selectors(catalog.VoiceExtractor)
)

// AudioFormats are the extensions FaceFusion takes a source for audio by (types.py
// AudioFormat, filesystem.get_file_format's names): its is_audio is the extension alone.
var AudioFormats = []string{"flac", "m4a", "mp3", "ogg", "opus", "wav"}

// IsAudio is FaceFusion's filesystem.is_audio on a path's name: its extension (lower-cased
// as get_file_extension does) is an audio format's.
func IsAudio(path string) bool {
	return slices.Contains(AudioFormats, strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."))
}

// SourceAudio is the first audio file among the sources (workflows' get_first of
// filter_audio_paths), "" when there is none.
func (c *Config) SourceAudio() string {
	for _, p := range c.SourcePaths {
		if IsAudio(p) {
			return p
		}
	}
	return ""
}

// SourceImages are the sources but the audio files: what the processors that read source
// faces read (FaceFusion's image readers pass over an audio source).
func (c *Config) SourceImages() []string {
	var out []string
	for _, p := range c.SourcePaths {
		if !IsAudio(p) {
			out = append(out, p)
		}
	}
	return out
}

// LipSyncs reports whether the lip syncer runs.
func (c *Config) LipSyncs() bool { return slices.Contains(c.Processors, ProcessorLipSync) }

// validateLipSync adds the lip syncer's keys' complaints to bad; FaceFusion's refusal of a lip
// syncer without an audio source (its pre_process: "choose an audio for the source!") to combo.
func (c *Config) validateLipSync(bad, combo func(string, ...any), paths bool) {
	for _, msg := range []string{
		oneOf("lip_syncer_model", c.LipSyncerModel, LipSyncers),
		oneOf("voice_extractor_model", c.VoiceExtractorModel, VoiceExtractors),
	} {
		if msg != "" {
			bad("%s", msg)
		}
	}
	if c.LipSyncs() && paths && c.SourceAudio() == "" {
		combo("processors: lip_syncer needs an audio file among the sources (-s VOICE.wav; %s): FaceFusion refuses to run it so (\"choose an audio for the source!\")", strings.Join(AudioFormats, ", "))
	}
}

var lipSyncOptions = []option{
	{long: "lip-syncer-model", arg: "NAME", help: strings.Join(LipSyncers, ", ") + " (default wav2lip_gan_96; processor lip_syncer)",
		set: str(func(c *Config) *string { return &c.LipSyncerModel })},
	{long: "lip-syncer-weight", arg: floatArg("lip_syncer_weight"), help: "how strongly the voice moves the mouth (default 0.5)",
		set: float("lip-syncer-weight", func(c *Config) *float64 { return &c.LipSyncerWeight })},
	{long: "voice-extractor-model", arg: "NAME", help: strings.Join(VoiceExtractors, ", ") + " (default kim_vocal_2): separates the voice the lip syncer follows from the source audio",
		set: str(func(c *Config) *string { return &c.VoiceExtractorModel })},
}

func init() { options = append(options, lipSyncOptions...) }
