package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// face_swapper_weight comes from the default, facefusion.ini, the job file and the flag, as
// FaceFusion's --face-swapper-weight, and changes the fingerprint.
func TestSwapperWeight(t *testing.T) {
	c, err := Parse(paths)
	if err != nil || c.FaceSwapperWeight != 0.5 {
		t.Fatalf("default: %v, %v; want FaceFusion's 0.5", c.FaceSwapperWeight, err)
	}
	ini := writeINI(t, "[processors]\nface_swapper_weight = 0.25\n")
	if c, err = Parse(append([]string{"--config-path", ini}, paths...)); err != nil || c.FaceSwapperWeight != 0.25 {
		t.Fatalf("facefusion.ini: %v, %v; want 0.25", c.FaceSwapperWeight, err)
	}
	file := filepath.Join(t.TempDir(), "job.toml")
	os.WriteFile(file, []byte("face_swapper_weight = 0.75\n"), 0o644)
	if c, err = Parse(append([]string{"--config-path", ini, "--config", file}, paths...)); err != nil || c.FaceSwapperWeight != 0.75 {
		t.Fatalf("job file: %v, %v; want 0.75", c.FaceSwapperWeight, err)
	}
	if c, err = Parse(append([]string{"--config", file, "--face-swapper-weight", "0"}, paths...)); err != nil || c.FaceSwapperWeight != 0 {
		t.Fatalf("flag: %v, %v; want 0", c.FaceSwapperWeight, err)
	}
	def := Default()
	before := def.Settings()["face_swapper_weight"]
	if after := c.Settings()["face_swapper_weight"]; after == before || after == "" {
		t.Errorf("fingerprint entry %q at weight 0, %q at 0.5", after, before)
	}
	for _, v := range []string{"0.33", "1.05", "-0.05"} {
		_, err := Parse(append([]string{"--face-swapper-weight", v}, paths...))
		if err == nil || !strings.Contains(err.Error(), "face_swapper_weight (--face-swapper-weight): "+v+" is not one of FaceFusion's choices") {
			t.Errorf("weight %s: %v", v, err)
		}
	}
	for _, v := range []string{"1", "0.05", "0.95", "0.3"} {
		if _, err := Parse(append([]string{"--face-swapper-weight", v}, paths...)); err != nil {
			t.Errorf("weight %s refused: %v", v, err)
		}
	}
}

// --face-swapper-pixel-boost takes the choices FaceFusion lists for the model, less the two it
// lists but cannot tile.
func TestSwapperPixelBoostChoices(t *testing.T) {
	for _, ok := range [][2]string{{"inswapper_128", "384x384"}, {"blendswap_256", "512x512"}, {"simswap_unofficial_512", "1024x1024"}, {"uniface_256", "256x256"}} {
		if _, err := Parse(append([]string{"--face-swapper-model", ok[0], "--face-swapper-pixel-boost", ok[1]}, paths...)); err != nil {
			t.Errorf("%s at %s refused: %v", ok[0], ok[1], err)
		}
	}
	for _, bad := range [][3]string{
		{"hyperswap_1a_256", "384x384", "hyperswap_1a_256 does not take 384x384: use one of 256x256, 512x512, 768x768, 1024x1024"},
		{"simswap_unofficial_512", "256x256", "does not take 256x256: use one of 512x512, 768x768, 1024x1024"},
		{"blendswap_256", "384x384", "not a whole multiple of the model's 256 px and FaceFusion fails on it"},
		{"simswap_unofficial_512", "768x768", "use one of 512x512, 1024x1024"},
	} {
		_, err := Parse(append([]string{"--face-swapper-model", bad[0], "--face-swapper-pixel-boost", bad[1]}, paths...))
		if err == nil || !strings.Contains(err.Error(), bad[2]) {
			t.Errorf("%s at %s: %v, want %q", bad[0], bad[1], err, bad[2])
		}
	}
}
