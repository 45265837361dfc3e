package job

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// face_debugger's items: FaceFusion's default, set by flag or by FaceFusion's facefusion.ini
// ([processors] face_debugger_items, space-separated); a name FaceFusion does not have is
// refused always, one this program cannot draw only when face_debugger runs (a studio's ini may
// name age for FaceFusion's own runs); no item at all is refused with face_debugger.
func TestFaceDebuggerItems(t *testing.T) {
	base := []string{"-t", "t.png", "-o", "o.png"}
	c, err := Parse(append([]string{"--processors", "face_swapper", "face_debugger", "-s", "s.png"}, base...))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Debugs() || !c.FindsFaces() || !slices.Equal(c.FaceDebuggerItems, []string{"face-landmark-5/68", "face-mask"}) {
		t.Errorf("debugs %v, items %v: want FaceFusion's default face-landmark-5/68 face-mask", c.Debugs(), c.FaceDebuggerItems)
	}
	if got := c.Settings()["face_debugger_items"]; got != "face-landmark-5/68 face-mask" {
		t.Errorf("the resume fingerprint holds face_debugger_items as %q", got)
	}
	if !slices.Equal(c.Processors, []string{"face_swapper", "face_debugger"}) {
		t.Errorf("processors %v: the order given is the order they run", c.Processors)
	}
	ini := writeINI(t, "[processors]\nprocessors = face_debugger\nface_debugger_items = bounding-box face-landmark-68\n")
	c, err = Parse(append([]string{"--config-path", ini}, base...))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.FaceDebuggerItems, []string{"bounding-box", "face-landmark-68"}) || c.Swaps() {
		t.Errorf("from facefusion.ini: items %v, swaps %v", c.FaceDebuggerItems, c.Swaps())
	}
	if _, err := Parse(append([]string{"--face-debugger-items", "face-landmark-68/5"}, append(base, "-s", "s.png")...)); err != nil {
		t.Errorf("face-landmark-68/5 without face_debugger: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "job.toml")
	if err := os.WriteFile(empty, []byte("face_debugger_items = []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--processors", "face_debugger", "--face-debugger-items", "bounding-box", "face-landmark-68/5"}, "face_debugger_items (--face-debugger-items): face-landmark-68/5 cannot be drawn: it draws the 68 points FaceFusion's fan_68_5"},
		{[]string{"--processors", "face_swapper", "-s", "s.png", "--face-debugger-items", "age"}, `face_debugger_items (--face-debugger-items): "age" is not one of bounding-box, face-mask, face-landmark-5, face-landmark-5/68, face-landmark-68, face-landmark-68/5`},
		{[]string{"--processors", "face_debugger", "--face-debugger-items", "face-landmark-68/5"}, "fan_68_5"},
		{[]string{"--processors", "face_swapper", "-s", "s.png", "--face-debugger-items", "landmarks"}, `face_debugger_items (--face-debugger-items): "landmarks" is not one of bounding-box`},
		{[]string{"--processors", "face_debugger", "--config", empty}, "face_debugger_items (--face-debugger-items): give at least one of"},
		{[]string{"--processors", "face_debuger"}, `"face_debuger" is not known (face_swapper, face_enhancer, face_debugger, frame_enhancer, frame_colorizer, background_remover, age_modifier, deep_swapper, lip_syncer, expression_restorer, face_editor, none)`},
	} {
		_, err := Parse(append(bad.args, base...))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v, want an error with %q", bad.args, err, bad.want)
		}
	}
}
