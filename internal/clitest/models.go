package clitest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// FixtureModels is a models folder holding the fixture models (FaceFusion's names and
// signatures, known arithmetic) plus the embedded default's real BlazeFace and dlib files.
func FixtureModels(t *testing.T) string {
	t.Helper()
	if shortMain {
		fullTier(t) // as FFmpeg
	}
	dir := filepath.Join(t.TempDir(), "models")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fixtures.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"blazeface_front_128.onnx", "shape_predictor_68_face_landmarks.dat"} {
		if err := os.Symlink(testenv.Model(t, f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
