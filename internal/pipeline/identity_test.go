package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestIdentityRecognizer: which recognizer the identity measure and reference mode run, and
// when the measure runs at all.
func TestIdentityRecognizer(t *testing.T) {
	base := job.Default()
	base.ModelsDir = filepath.Join(testenv.Cache(t), "models")
	testenv.Model(t, "fr_feature.onnx")
	for _, c := range []struct {
		name       string
		set        func(*job.Config)
		rec, meter string // RecognizerName, identityRecognizer's name
		why        string // identityRecognizer's reason, when none
	}{
		{"embedded default", func(*job.Config) {}, "fr_feature", "fr_feature", ""},
		{"off", func(c *job.Config) { c.IdentityMeasure = "off" }, "fr_feature", "", "identity_measure is off"},
		{"no swap", func(c *job.Config) { c.Processors = []string{job.ProcessorDebug} }, "fr_feature", "", "no face_swapper"},
		{"FaceFusion's swapper", func(c *job.Config) { c.FaceSwapperModel = "inswapper_128" }, "arcface_w600k_r50", "", "arcface_w600k_r50.onnx is not in the models folder"},
		{"FaceFusion's detector", func(c *job.Config) { c.FaceDetectorModel = "scrfd" }, "arcface_w600k_r50", "", "arcface_w600k_r50.onnx"},
		{"an enhancer", func(c *job.Config) { c.Processors = append(c.Processors, job.ProcessorEnhance) }, "arcface_w600k_r50", "", "arcface_w600k_r50.onnx"},
		{"no fr_feature", func(c *job.Config) { c.ModelsDir = t.TempDir() }, "fr_feature", "", "fr_feature.onnx is not in the models folder"},
	} {
		cfg := base
		cfg.Processors = append([]string(nil), base.Processors...)
		c.set(&cfg)
		name, why := identityRecognizer(cfg)
		if got := RecognizerName(cfg); got != c.rec || name != c.meter || !strings.Contains(why, c.why) || (name == "") == (why == "") {
			t.Errorf("%s: recognizer %q, measure %q (%q); want %q, %q (%q)", c.name, got, name, why, c.rec, c.meter, c.why)
		}
	}
}
