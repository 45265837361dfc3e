package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// A FaceFusion model file that is there but refused (damaged, or another file under its name)
// is named with what to do: force-download leaves a file with other bytes alone unless
// --force, so the error says --force. Here face_editor's stitcher.
func TestRefusedModelSaysForceDownload(t *testing.T) {
	lp := []string{"live_portrait_feature_extractor", "live_portrait_motion_extractor", "live_portrait_generator",
		"live_portrait_eye_retargeter", "live_portrait_lip_retargeter", "live_portrait_stitcher"}
	eye, err := fixtures.Model("live_portrait_eye_retargeter")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		file []byte
		why  string
	}{
		{"truncated", eye[:len(eye)/2], "not a loadable ONNX model"},
		{"another model", eye, "wrong signature"},
	} {
		dir := fixtures.Dir(t, lp...)
		for _, f := range []string{"blazeface_front_128.onnx", job.DlibFile} {
			if err := os.Symlink(testenv.Model(t, f), filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, "live_portrait_stitcher.onnx")
		if err := os.WriteFile(path, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := job.Default()
		cfg.Processors = []string{job.ProcessorFaceEditor}
		cfg.ModelsDir = dir
		cfg.OnnxruntimeLibrary = testenv.ORTLibrary(t)
		cfg.IdentityMeasure = "off"
		m, err := LoadModels(cfg, nil)
		if err == nil {
			m.Close()
		}
		testenv.CheckError(t, c.name, err, path, c.why, "`facefusion force-download --force` with the job's flags")
	}
}
