package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The face landmarker group of FaceFusion's program.py: --face-landmarker-model takes
// FaceFusion's choices (many, 2dfan4, peppa_wutz) and the embedded dlib_68; --face-landmarker-score
// takes create_float_range(0, 1, 0.05), from a flag, the job file or facefusion.ini alike.
func TestLandmarkerOptions(t *testing.T) {
	for _, model := range []string{"dlib_68", "2dfan4", "peppa_wutz", "many"} {
		c, err := Parse(append([]string{"--face-landmarker-model", model}, paths...))
		if err != nil || c.FaceLandmarkerModel != model {
			t.Errorf("--face-landmarker-model %s: %q, %v", model, c.FaceLandmarkerModel, err)
		}
	}
	_, err := Parse(append([]string{"--face-landmarker-model", "fan_68_5"}, paths...))
	if err == nil || !strings.Contains(err.Error(), `"fan_68_5" is not one of dlib_68, 2dfan4, peppa_wutz, many`) {
		t.Errorf("fan_68_5 (not a landmarker option): %v", err)
	}
	for _, v := range []string{"0", "0.05", "0.3", "0.55", "0.95", "1", "1.0"} {
		if _, err := Parse(append([]string{"--face-landmarker-score", v}, paths...)); err != nil {
			t.Errorf("--face-landmarker-score %s: %v", v, err)
		}
	}
	for _, v := range []string{"0.07", "0.333", "0.999"} {
		_, err := Parse(append([]string{"--face-landmarker-score", v}, paths...))
		if err == nil || !strings.Contains(err.Error(), "face_landmarker_score (--face-landmarker-score): "+strings.TrimRight(v, "0")+" is not one of FaceFusion's choices, 0 to 1 in steps of 0.05") {
			t.Errorf("--face-landmarker-score %s: %v", v, err)
		}
	}
	dir := t.TempDir()
	ini := filepath.Join(dir, "facefusion.ini")
	os.WriteFile(ini, []byte("[face_landmarker]\nface_landmarker_model = peppa_wutz\nface_landmarker_score = 0.25\n"), 0o644)
	c, err := Parse(append([]string{"--config-path", ini}, paths...))
	if err != nil || c.FaceLandmarkerModel != "peppa_wutz" || c.FaceLandmarkerScore != 0.25 {
		t.Errorf("facefusion.ini: %q at %v, %v", c.FaceLandmarkerModel, c.FaceLandmarkerScore, err)
	}
	toml := filepath.Join(dir, "job.toml")
	os.WriteFile(toml, []byte("face_landmarker_model = \"many\"\nface_landmarker_score = 0.12\n"), 0o644)
	if _, err := Parse(append([]string{"--config", toml}, paths...)); err == nil || !strings.Contains(err.Error(), "0.12 is not one of FaceFusion's choices") {
		t.Errorf("job file score 0.12: %v", err)
	}
}
