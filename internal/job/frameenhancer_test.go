package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// frame_enhancer's keys are FaceFusion's as flag, TOML key and facefusion.ini key, with its
// defaults and choices, and both are in the resume fingerprint.
func TestFrameEnhancerOptions(t *testing.T) {
	d := Default()
	if d.FrameEnhancerModel != "span_kendata_x4" || d.FrameEnhancerBlend != 80 {
		t.Errorf("defaults %q %d, want FaceFusion's span_kendata_x4 80", d.FrameEnhancerModel, d.FrameEnhancerBlend)
	}
	if n := len(FrameEnhancers); n != 19 {
		t.Errorf("%d frame enhancers, FaceFusion 3.8.1 offers 19", n)
	}
	base := []string{"-t", "t.png", "-o", "o.png", "--processors", "frame_enhancer"}
	c, err := Parse(append(base, "--frame-enhancer-model", "real_esrgan_x2", "--frame-enhancer-blend", "35"))
	if err != nil || c.FrameEnhancerModel != "real_esrgan_x2" || c.FrameEnhancerBlend != 35 || !c.EnhancesFrames() {
		t.Errorf("flags: %+v, %v", c.FrameEnhancer, err)
	}
	dir := t.TempDir()
	toml := filepath.Join(dir, "job.toml")
	if err := os.WriteFile(toml, []byte("frame_enhancer_model = \"ultra_sharp_2_x4\"\nframe_enhancer_blend = 12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := Parse(append(base, "--config", toml)); err != nil || c.FrameEnhancerModel != "ultra_sharp_2_x4" || c.FrameEnhancerBlend != 12 {
		t.Errorf("TOML: %+v, %v", c.FrameEnhancer, err)
	}
	ini := writeINI(t, "[processors]\nframe_enhancer_model = tghq_face_x8\nframe_enhancer_blend = 64\n")
	if c, err := Parse(append(base, "--config-path", ini)); err != nil || c.FrameEnhancerModel != "tghq_face_x8" || c.FrameEnhancerBlend != 64 {
		t.Errorf("facefusion.ini: %+v, %v", c.FrameEnhancer, err)
	}
	for _, bad := range [][]string{{"--frame-enhancer-model", "esrgan"}, {"--frame-enhancer-blend", "101"}, {"--frame-enhancer-blend", "-1"}} {
		if _, err := Parse(append(base, bad...)); err == nil || !strings.Contains(err.Error(), "frame_enhancer_") {
			t.Errorf("%v: %v, want a complaint naming the key", bad, err)
		}
	}
	s := c.Settings()
	for _, key := range []string{"frame_enhancer_model", "frame_enhancer_blend"} {
		if _, ok := s[key]; !ok {
			t.Errorf("%s is not in the resume fingerprint", key)
		}
	}
}
