package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpaceKeysReadAlike: face_detector_margin and face_mask_padding are both FaceFusion's
// normalize_space: each count of values spreads the same way onto top, right, bottom, left,
// and both refuse the same lists (none, five, a value outside 0..100) with the same words.
func TestSpaceKeysReadAlike(t *testing.T) {
	base := []string{"-t", "t.mp4", "-o", "o.mp4", "-s", "s.png", "--face-detector-model", "scrfd"}
	for _, p := range []struct {
		vals string
		want [4]int
	}{
		{"7", [4]int{7, 7, 7, 7}},
		{"7 9", [4]int{7, 9, 7, 9}},
		{"7 9 11", [4]int{7, 9, 11, 9}},
		{"7 9 11 13", [4]int{7, 9, 11, 13}},
	} {
		c, err := Parse(append(append(append([]string{"--face-detector-margin"}, strings.Fields(p.vals)...), "--face-mask-padding"), append(strings.Fields(p.vals), base...)...))
		if err != nil {
			t.Fatal(err)
		}
		if c.DetectorMargin() != p.want || c.MaskPadding() != p.want {
			t.Errorf("%s: margin %v, padding %v, want both %v (top, right, bottom, left)", p.vals, c.DetectorMargin(), c.MaskPadding(), p.want)
		}
	}
	dir := t.TempDir()
	for _, bad := range []struct{ toml, want string }{
		{"[]", "give 1 to 4 percentages (all; top/bottom right/left; top right/left bottom; top right bottom left, as CSS), got 0"},
		{"[1, 2, 3, 4, 5]", "give 1 to 4 percentages (all; top/bottom right/left; top right/left bottom; top right bottom left, as CSS), got 5"},
		{"[0, 101]", "value 2 (right and left) is 101, outside 0..100 percent"},
		{"[0, 0, -1]", "value 3 (bottom) is -1, outside 0..100 percent"},
	} {
		for _, key := range []string{"face_detector_margin", "face_mask_padding"} {
			file := filepath.Join(dir, "job.toml")
			if err := os.WriteFile(file, []byte(key+" = "+bad.toml+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Parse(append([]string{"--config", file}, base...))
			want := key + " (--" + strings.ReplaceAll(key, "_", "-") + "): " + bad.want
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s = %s: %v, want %q", key, bad.toml, err, want)
			}
		}
	}
}
