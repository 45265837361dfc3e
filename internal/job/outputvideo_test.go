package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --output-video-fps and --output-video-scale: FaceFusion's spelling, its ranges, the TOML keys
// under the flags, and one line naming the flag and the range for a value outside.
func TestOutputVideoSettings(t *testing.T) {
	paths := []string{"--processors", "none", "-t", "t.mp4", "-o", "o.mkv"}
	d := Default()
	if d.OutputVideoFPS != 0 || d.OutputVideoScale != 1 {
		t.Fatalf("defaults fps %v, scale %v; want 0 (the target's rate) and 1", d.OutputVideoFPS, d.OutputVideoScale)
	}
	file := filepath.Join(t.TempDir(), "job.toml")
	os.WriteFile(file, []byte("output_video_fps = 12.5\noutput_video_scale = 0.75\n"), 0o644)
	c, err := Parse(append([]string{"--config", file}, paths...))
	if err != nil || c.OutputVideoFPS != 12.5 || c.OutputVideoScale != 0.75 {
		t.Fatalf("from TOML: fps %v, scale %v, %v", c.OutputVideoFPS, c.OutputVideoScale, err)
	}
	c, err = Parse(append([]string{"--config", file, "--output-video-fps", "29.97", "--output-video-scale=8"}, paths...))
	if err != nil || c.OutputVideoFPS != 29.97 || c.OutputVideoScale != 8 {
		t.Fatalf("flags over TOML: fps %v, scale %v, %v", c.OutputVideoFPS, c.OutputVideoScale, err)
	}
	for _, ok := range []string{"0.25", "1", "2.5", "7.75"} {
		if _, err := Parse(append([]string{"--output-video-scale", ok}, paths...)); err != nil {
			t.Errorf("--output-video-scale %s: %v", ok, err)
		}
	}
	for _, bad := range []struct{ flag, value, want string }{
		{"--output-video-scale", "0.3", "0.25 to 8 in steps of 0.25"},
		{"--output-video-scale", "8.25", "0.25 to 8 in steps of 0.25"},
		{"--output-video-scale", "0", "0.25 to 8 in steps of 0.25"},
		{"--output-video-scale", "-1", "0.25 to 8 in steps of 0.25"},
		{"--output-video-fps", "61", "outside 1..60"},
		{"--output-video-fps", "0.5", "outside 1..60"},
		{"--output-video-fps", "-25", "outside 1..60"},
		{"--output-video-fps", "ten", "is not a number"},
		{"--output-video-scale", "half", "is not a number"},
	} {
		_, err := Parse(append([]string{bad.flag, bad.value}, paths...))
		if err == nil || !strings.Contains(err.Error(), bad.flag) || !strings.Contains(err.Error(), bad.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %s: %v; want one line naming the flag and %q", bad.flag, bad.value, err, bad.want)
		}
	}
}
