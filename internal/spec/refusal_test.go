package spec

import (
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// A refusal advises containers other than the output's own: "use .mkv" for a .mkv output
// leaves the user nowhere.
func TestRefusalAdvisesAnotherContainer(t *testing.T) {
	for _, c := range []struct {
		out     string
		problem video.OutputProblem
		audio   string
		want    string // the advice after the last "use "
	}{
		{"o.mp4", video.CodecNotInContainer, "", ".mkv or another encoder"},
		{"o.mkv", video.CodecNotInContainer, "", "another encoder"},
		{"o.MKV", video.CodecNotInContainer, "", "another encoder"},
		{"o.ts", video.NotReadable, "", ".mkv or .mp4 or another encoder"},
		{"o.mp4", video.NotReadable, "", ".mkv or another encoder"},
		{"o.mkv", video.AudioNotInContainer, "", ".mp4 or an --output-audio-encoder it holds"},
		{"o.mp4", video.AudioNotInContainer, "pcm_s16le", ".mkv or another audio encoder"},
		{"o.mkv", video.AudioNotInContainer, "libfoo", "another audio encoder"},
	} {
		cfg := job.Default()
		cfg.OutputPath, cfg.OutputAudioEncoder = c.out, c.audio
		err := outputRefusal(cfg, &Spec{Audio: AudioOptions(cfg)}, &video.OutputError{Problem: c.problem, Detail: "ffmpeg's words"})
		msg := err.Error()
		if i := strings.LastIndex(msg, ": use "); i < 0 || msg[i+len(": use "):] != c.want {
			t.Errorf("%s, problem %d, audio encoder %q: %q, want it to end \": use %s\"", c.out, c.problem, c.audio, msg, c.want)
		}
	}
}
