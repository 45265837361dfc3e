package pipeline

import (
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
)

func TestFaceReport(t *testing.T) {
	cfg := job.Default()
	cfg.TargetPath = "in.mp4"
	with := func(f func(*job.Config)) job.Config { c := cfg; f(&c); return c }
	for _, c := range []struct {
		name          string
		cfg           job.Config
		faces, frames int
		line, err     string
	}{
		{"some", cfg, 7, 20, "a face was swapped in 7 of 20 frames", ""},
		{"enhancer only", with(func(c *job.Config) { c.Processors = []string{"face_enhancer"} }), 3, 9, "a face was enhanced in 3 of 9 frames", ""},
		{"none", cfg, 0, 20, "warning: no face was found in any of the 20 frames of in.mp4 (detector score ≥ 0.5): the output is the target unchanged; lower --face-detector-score or check the target", ""},
		{"none, fail", with(func(c *job.Config) { c.FailIfNoFace = true }), 0, 20, "",
			"no face was found in any of the 20 frames of in.mp4 (detector score ≥ 0.5): nothing was written to the output path (--fail-if-no-face); lower --face-detector-score or check the target"},
		{"image", with(func(c *job.Config) { c.TargetPath = "photo.jpg"; c.FaceDetectorScore = 0.8 }), 0, 1, "warning: no face was found in the image photo.jpg (detector score ≥ 0.8)", ""},
		{"reference", with(func(c *job.Config) { c.FaceSelectorMode = "reference" }), 0, 5, "warning: no face like the reference face was found in any of the 5 frames", ""},
		{"debugger only", with(func(c *job.Config) { c.Processors = []string{"face_debugger"} }), 2, 4, "a face was drawn by face_debugger in 2 of 4 frames", ""},
		{"lip syncer only", with(func(c *job.Config) { c.Processors = []string{"lip_syncer"} }), 2, 4, "a face was lip-synced in 2 of 4 frames", ""},
		{"age modifier only", with(func(c *job.Config) { c.Processors = []string{"age_modifier"} }), 1, 4, "a face was changed by age_modifier in 1 of 4 frames", ""},
		{"deep swapper, debugger", with(func(c *job.Config) { c.Processors = []string{"deep_swapper", "face_debugger"} }), 3, 4, "a face was swapped by deep_swapper in 3 of 4 frames", ""},
		{"debugger, none", with(func(c *job.Config) { c.Processors = []string{"face_debugger"} }), 0, 4, "warning: no face was found in any of the 4 frames of in.mp4", ""},
		{"pass-through", with(func(c *job.Config) { c.Processors = []string{"none"}; c.FailIfNoFace = true }), 0, 20, "", ""},
	} {
		line, err := FaceReport(c.cfg, c.faces, c.frames)
		if !strings.HasPrefix(line, c.line) || (c.line == "" && line != "") {
			t.Errorf("%s: line %q, want %q", c.name, line, c.line)
		}
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: error %v", c.name, err)
		case c.err != "" && (err == nil || err.Error() != c.err || fault.KindOf(err) != fault.Input):
			t.Errorf("%s: error %v (kind %v), want the input error %q", c.name, err, fault.KindOf(err), c.err)
		}
	}
}
