package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// face_editor's keys: FaceFusion's defaults (live_portrait, every slider 0), each slider set
// by flag, TOML key and facefusion.ini ([processors]) and in the resume fingerprint, so that
// a job resumed with another slider is refused; a model FaceFusion does not have is refused.
func TestFaceEditorKeys(t *testing.T) {
	base := []string{"-t", "t.png", "-o", "o.png"}
	c, err := Parse(append([]string{"--processors", "face_editor"}, base...))
	if err != nil {
		t.Fatal(err)
	}
	if !c.EditsFaces() || !c.FindsFaces() || c.Swaps() || c.FaceEditorModel != "live_portrait" {
		t.Errorf("defaults: edits %v, finds faces %v, model %q", c.EditsFaces(), c.FindsFaces(), c.FaceEditorModel)
	}
	if len(faceEditorSliders) != 14 {
		t.Fatalf("%d sliders, want FaceFusion's 14", len(faceEditorSliders))
	}
	dir := t.TempDir()
	for i, s := range faceEditorSliders {
		key := "face_editor_" + s.name
		if *s.field(&c) != 0 || c.Settings()[key] != "0" {
			t.Errorf("%s: default %g, fingerprint %q, want 0", key, *s.field(&c), c.Settings()[key])
		}
		// a value of its own per slider: one field set for another would show
		v := []string{"-1.0", "1.0", "-0.35", "0.05"}[i%4]
		toml := writeFile(t, dir, "job.toml", key+" = "+v+"\n")
		ini := writeINI(t, "[processors]\n"+key+" = "+v+"\n")
		for _, args := range [][]string{{"--" + strings.ReplaceAll(key, "_", "-"), v}, {"--config", toml}, {"--config-path", ini}} {
			got, err := Parse(append(append([]string{"--processors", "face_editor"}, args...), base...))
			if err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			want := strings.TrimSuffix(v, ".0")
			if fp := got.Settings()[key]; fp != want || fmtG(*s.field(&got)) != want {
				t.Errorf("%v: %s = %g, fingerprint %q, want %s", args, key, *s.field(&got), fp, want)
			}
			for j, o := range faceEditorSliders {
				if j != i && *o.field(&got) != 0 {
					t.Errorf("%v also set face_editor_%s", args, o.name)
				}
			}
		}
	}
	_, err = Parse(append([]string{"--processors", "face_editor", "--face-editor-model", "live_portrait_stitcher"}, base...))
	if want := `face_editor_model (--face-editor-model): "live_portrait_stitcher" is not one of live_portrait`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a file for the model: %v, want %q", err, want)
	}
	if got := Choices("face_editor_model"); len(got) != 1 || got[0] != "live_portrait" {
		t.Errorf("face_editor_model's choices %v", got)
	}
}

// writeFile writes text to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
