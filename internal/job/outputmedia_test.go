package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The audio and image keys are read from flags and TOML; a value outside FaceFusion's range is
// an error naming the key, the flag and the range.
func TestOutputMediaKeys(t *testing.T) {
	run := []string{"--processors", "none", "-t", "t.mp4", "-o", "o.mkv"}
	file := filepath.Join(t.TempDir(), "job.toml")
	os.WriteFile(file, []byte("output_audio_encoder = \"libopus\"\noutput_audio_quality = 30\noutput_image_scale = 0.5\n"), 0o644)
	c, err := Parse(append(run, "--config", file, "--output-audio-volume", "40", "--output-image-quality", "95", "--output-image-scale", "2.25"))
	if err != nil {
		t.Fatal(err)
	}
	if c.OutputAudioEncoder != "libopus" || c.OutputAudioQuality != 30 || c.OutputAudioVolume != 40 || c.OutputImageQuality != 95 || c.OutputImageScale != 2.25 {
		t.Errorf("got encoder %q quality %d volume %d, image quality %d scale %g",
			c.OutputAudioEncoder, c.OutputAudioQuality, c.OutputAudioVolume, c.OutputImageQuality, c.OutputImageScale)
	}
	d := Default() // FaceFusion's defaults, except that the audio is copied
	if d.OutputAudioEncoder != "" || d.OutputAudioQuality != 80 || d.OutputAudioVolume != 100 || d.OutputImageQuality != 80 || d.OutputImageScale != 1 {
		t.Errorf("defaults: encoder %q quality %d volume %d, image quality %d scale %g",
			d.OutputAudioEncoder, d.OutputAudioQuality, d.OutputAudioVolume, d.OutputImageQuality, d.OutputImageScale)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--output-audio-encoder", "mp3"}, []string{"output_audio_encoder (--output-audio-encoder)", `"mp3"`, "libmp3lame", "pcm_s32le"}},
		{[]string{"--output-audio-quality", "101"}, []string{"output_audio_quality (--output-audio-quality)", "101", "0..100"}},
		{[]string{"--output-audio-volume", "-1"}, []string{"output_audio_volume (--output-audio-volume)", "-1", "0..100"}},
		{[]string{"--output-audio-volume", "loud"}, []string{"--output-audio-volume", "loud", "whole number"}},
		{[]string{"--output-image-quality", "200"}, []string{"output_image_quality (--output-image-quality)", "200", "0..100"}},
		{[]string{"--output-image-scale", "0.3"}, []string{"output_image_scale (--output-image-scale)", "0.3", "0.25 to 8 in steps of 0.25"}},
		{[]string{"--output-image-scale", "8.25"}, []string{"output_image_scale (--output-image-scale)", "8.25"}},
	} {
		_, err := Parse(append(append([]string{}, run...), c.args...))
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %v, want one with %q", c.args, err, w)
			}
		}
	}
}

// The audio is copied unless a setting asks for what only re-encoding does.
func TestReencodesAudio(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--output-audio-quality", "80", "--output-audio-volume", "100"}, false}, // the defaults, given
		{[]string{"--output-audio-encoder", "aac"}, true},
		{[]string{"--output-audio-quality", "10"}, true},
		{[]string{"--output-audio-volume", "50"}, true},
	} {
		cfg, err := Parse(append([]string{"--processors", "none", "-t", "t.mp4", "-o", "o.mkv"}, c.args...))
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.ReencodesAudio(); got != c.want {
			t.Errorf("%v: re-encodes %v, want %v", c.args, got, c.want)
		}
	}
}
