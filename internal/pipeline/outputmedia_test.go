package pipeline

import (
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/video"
)

// An image output has FaceFusion's packed sizes (even sides, halves to even, at scale 1 too);
// a scale that leaves nothing or more than ffmpeg takes is a usage error naming the flag.
func TestImageSizes(t *testing.T) {
	c := job.Default()
	if tw, th, ow, oh, err := imageSizes(c, 513, 301); err != nil || [4]int{tw, th, ow, oh} != [4]int{512, 300, 512, 300} {
		t.Errorf("scale 1: %dx%d, %dx%d, %v", tw, th, ow, oh, err)
	}
	c.OutputImageScale = 0.5
	if tw, th, ow, oh, err := imageSizes(c, 513, 301); err != nil || [4]int{tw, th, ow, oh} != [4]int{256, 150, 256, 150} { // 256.5 → 256, 150.5 → 150
		t.Errorf("scale 0.5: %dx%d, %dx%d, %v", tw, th, ow, oh, err)
	}
	c.OutputImageScale = 2
	if tw, th, ow, oh, err := imageSizes(c, 513, 301); err != nil || [4]int{tw, th, ow, oh} != [4]int{512, 300, 1026, 602} {
		t.Errorf("scale 2: %dx%d, %dx%d, %v; want the copy at the target's own size", tw, th, ow, oh, err)
	}
	c.OutputImageScale = 0.25
	if _, _, _, _, err := imageSizes(c, 513, 5); fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "--output-image-scale 0.25") {
		t.Errorf("a 513x5 target at 0.25 (a side of 0): %v, want a usage error naming the flag", err)
	}
	c.OutputImageScale = 1
	if _, _, _, _, err := imageSizes(c, 1, 301); fault.KindOf(err) != fault.Usage {
		t.Errorf("a 1x301 target at 1 (packed to a side of 0): %v, want a usage error", err)
	}
	// Larger than ffmpeg takes: refused before the work, not after it (FaceFusion allows 8).
	c.OutputImageScale = 8
	if _, _, _, _, err := imageSizes(c, 2100, 2100); fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "16800x16800") {
		t.Errorf("a 2100x2100 target at 8: %v, want a usage error naming the size", err)
	}
	if _, _, _, _, err := imageSizes(c, 1000, 1000); err != nil {
		t.Errorf("a 1000x1000 target at 8 (8000x8000): %v", err)
	}
}

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
		err := outputRefusal(cfg, &spec.Spec{Audio: spec.AudioOptions(cfg)}, &video.OutputError{Problem: c.problem, Detail: "ffmpeg's words"})
		msg := err.Error()
		if i := strings.LastIndex(msg, ": use "); i < 0 || msg[i+len(": use "):] != c.want {
			t.Errorf("%s, problem %d, audio encoder %q: %q, want it to end \": use %s\"", c.out, c.problem, c.audio, msg, c.want)
		}
	}
}
