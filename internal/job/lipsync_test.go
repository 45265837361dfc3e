package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The lip syncer's keys are taken as a flag, a TOML key and a facefusion.ini key, with
// FaceFusion's defaults and choices, and are in the resume fingerprint.
func TestLipSyncKeys(t *testing.T) {
	d := Default()
	if d.LipSyncerModel != "wav2lip_gan_96" || d.LipSyncerWeight != 0.5 || d.VoiceExtractorModel != "kim_vocal_2" {
		t.Errorf("defaults %q %v %q, want FaceFusion's wav2lip_gan_96 0.5 kim_vocal_2", d.LipSyncerModel, d.LipSyncerWeight, d.VoiceExtractorModel)
	}
	dir := t.TempDir()
	toml := filepath.Join(dir, "job.toml")
	ini := filepath.Join(dir, "facefusion.ini")
	if err := os.WriteFile(toml, []byte("lip_syncer_model = \"edtalk_256\"\nlip_syncer_weight = 0.75\nvoice_extractor_model = \"uvr_mdxnet\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ini, []byte("[processors]\nlip_syncer_model = edtalk_256\nlip_syncer_weight = 0.75\n[voice_extractor]\nvoice_extractor_model = uvr_mdxnet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--lip-syncer-model", "edtalk_256", "--lip-syncer-weight", "0.75", "--voice-extractor-model", "uvr_mdxnet"},
		{"--config", toml}, {"--config-path", ini},
	} {
		c, err := Parse(append(args, paths...))
		if err != nil {
			t.Errorf("%v: %v", args, err)
			continue
		}
		if c.LipSyncerModel != "edtalk_256" || c.LipSyncerWeight != 0.75 || c.VoiceExtractorModel != "uvr_mdxnet" {
			t.Errorf("%v: %q %v %q", args, c.LipSyncerModel, c.LipSyncerWeight, c.VoiceExtractorModel)
		}
		fp, def := c.Settings(), d.Settings()
		for _, key := range []string{"lip_syncer_model", "lip_syncer_weight", "voice_extractor_model"} {
			if fp[key] == "" || fp[key] == def[key] {
				t.Errorf("%v: the fingerprint's %s is %q, the default's %q", args, key, fp[key], def[key])
			}
		}
	}
	for _, bad := range [][]string{{"--lip-syncer-model", "wav2lip_192"}, {"--voice-extractor-model", "kim_vocal_3"}, {"--lip-syncer-weight", "0.33"}} {
		if _, err := Parse(append(bad, paths...)); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}

// Every lip syncer FaceFusion offers runs: edtalk_256 and wav2lip_96 are taken with the
// lip syncer, not refused.
func TestLipSyncModelsAccepted(t *testing.T) {
	for _, m := range []string{"edtalk_256", "wav2lip_96"} {
		if _, err := Parse([]string{"--processors", "lip_syncer", "--lip-syncer-model", m, "-s", "v.wav", "-t", "b.mp4", "-o", "c.mp4"}); err != nil {
			t.Errorf("lip_syncer with %s: %v", m, err)
		}
	}
}

// The lip syncer takes the first audio file among the sources, by FaceFusion's is_audio (the
// extension, any case), and refuses to run without one, with FaceFusion's reason.
func TestLipSyncNeedsAudio(t *testing.T) {
	_, err := Parse([]string{"--processors", "lip_syncer", "-s", "a.png", "-t", "b.mp4", "-o", "c.mp4"})
	if err == nil || !strings.Contains(err.Error(), "choose an audio for the source") {
		t.Errorf("lip_syncer without audio: %v, want FaceFusion's reason", err)
	}
	c, err := Parse([]string{"--processors", "face_swapper", "lip_syncer", "-s", "a.png", "voice.WAV", "b.mp3", "-t", "b.mp4", "-o", "c.mp4"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.SourceAudio(); got != "voice.WAV" {
		t.Errorf("source audio %q, want the first, voice.WAV", got)
	}
	if !c.LipSyncs() || !c.FindsFaces() {
		t.Error("lip_syncer does not count as running on faces")
	}
	for _, p := range []string{"a.flac", "a.m4a", "a.Mp3", "a.ogg", "a.opus", "a.wav"} {
		if !IsAudio(p) {
			t.Errorf("%s is not taken for audio", p)
		}
	}
	for _, p := range []string{"a.aac", "a.mp4", "wav", "a.wav.png"} {
		if IsAudio(p) {
			t.Errorf("%s is taken for audio", p)
		}
	}
}

// An audio source is not a source image: the swapper still needs one.
func TestSourceImages(t *testing.T) {
	c, err := Parse([]string{"--processors", "face_swapper", "lip_syncer", "-s", "v.mp3", "a.png", "b.jpg", "-t", "b.mp4", "-o", "c.mp4"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.SourceImages(), " "); got != "a.png b.jpg" {
		t.Errorf("source images %q, want a.png b.jpg", got)
	}
	if _, err := Parse([]string{"--processors", "face_swapper", "lip_syncer", "-s", "v.mp3", "-t", "b.mp4", "-o", "c.mp4"}); err == nil {
		t.Error("a face swap with an audio source alone accepted")
	}
}
