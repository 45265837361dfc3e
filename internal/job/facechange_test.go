package job

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The age_modifier and deep_swapper keys as flag, TOML and ini key, with FaceFusion's defaults
// and ranges, in the resume fingerprint; a site's custom deep_swapper models listed from
// models_dir/custom as FaceFusion lists .assets/models/custom.
func TestFaceChangeKeys(t *testing.T) {
	base := []string{"-t", "t.png", "-o", "o.png", "--face-detector-model", "scrfd"}
	c, err := Parse(append([]string{"--processors", "deep_swapper", "age_modifier"}, base...))
	if err != nil {
		t.Fatal(err)
	}
	if c.AgeModifierModel != "fran" || c.AgeModifierDirection != 0 || c.DeepSwapperModel != DefaultDeepSwapper || c.DeepSwapperMorph != 100 {
		t.Errorf("defaults %q %d %q %d, want FaceFusion's fran 0 %s 100", c.AgeModifierModel, c.AgeModifierDirection, c.DeepSwapperModel, c.DeepSwapperMorph, DefaultDeepSwapper)
	}
	if !c.ModifiesAge() || !c.DeepSwaps() || !c.FindsFaces() || !c.NeedsClasses() {
		t.Error("age_modifier and deep_swapper: both run, find faces, and fran reads the faces' classes")
	}
	s := c.Settings()
	for _, k := range []string{"age_modifier_model", "age_modifier_direction", "deep_swapper_model", "deep_swapper_morph"} {
		if _, ok := s[k]; !ok {
			t.Errorf("the resume fingerprint lacks %s", k)
		}
	}
	ini := writeINI(t, "[processors]\nage_modifier_model = styleganex_age\nage_modifier_direction = -40\ndeep_swapper_morph = 25\n")
	c, err = Parse(append([]string{"--config-path", ini, "--processors", "age_modifier"}, base...))
	if err != nil || c.AgeModifierModel != "styleganex_age" || c.AgeModifierDirection != -40 || c.DeepSwapperMorph != 25 || c.NeedsClasses() {
		t.Errorf("from facefusion.ini: %q %d %d (classes %v), %v", c.AgeModifierModel, c.AgeModifierDirection, c.DeepSwapperMorph, c.NeedsClasses(), err)
	}
	for _, bad := range [][]string{
		{"--age-modifier-direction", "101"}, {"--age-modifier-direction", "-101"}, {"--deep-swapper-morph", "-1"},
		{"--deep-swapper-morph", "101"}, {"--age-modifier-model", "fran_2"},
		{"--processors", "deep_swapper", "--deep-swapper-model", "iperov/elon_musk_225"},
	} {
		if _, err := Parse(append(bad, base...)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// The embedded detector gives no FaceFusion five points: age_modifier and deep_swapper are
// refused with it, saying why for the model asked for, and which detectors to choose.
func TestFaceChangeNeedsFaceFusionDetector(t *testing.T) {
	for _, c := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"--processors", "age_modifier"}, "age_modifier warps by FaceFusion's five points and fran reads the faces' classes (fairface)", ""},
		{[]string{"--processors", "age_modifier", "--age-modifier-model", "styleganex_age"}, "age_modifier warps by FaceFusion's five points:", "fairface"},
		{[]string{"--processors", "deep_swapper"}, "deep_swapper warps by FaceFusion's five points", ""},
	} {
		_, err := Parse(append(c.args, "-t", "t.png", "-o", "o.png"))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--face-detector-model (many, retinaface, scrfd") ||
			(c.not != "" && strings.Contains(err.Error(), c.not)) {
			t.Errorf("%v with blazeface: %v, want %q", c.args, err, c.want)
		}
	}
}

func TestCustomDeepSwappers(t *testing.T) {
	models := t.TempDir()
	custom := filepath.Join(models, "custom")
	if err := os.MkdirAll(filepath.Join(custom, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"zed.dfm", "zed.onnx", "anna.onnx", ".hidden.dfm", "__init__.py"} {
		if err := os.WriteFile(filepath.Join(custom, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := Default()
	c.ModelsDir, c.Processors, c.DeepSwapperModel = models, []string{ProcessorDeepSwap}, "custom/zed"
	names, files := c.CustomDeepSwappers()
	if !slices.Equal(names, []string{"custom/anna", "custom/zed"}) || !slices.Equal(files, []string{"anna.onnx", "zed.onnx"}) {
		t.Errorf("custom models %v %v, want custom/anna (anna.onnx) and custom/zed once (zed.onnx, the later)", names, files)
	}
	m, err := c.DeepSwapperEntry()
	if err != nil || m.File != "custom/zed.onnx" || m.Name != "custom/zed" {
		t.Fatalf("custom/zed: %+v, %v", m, err)
	}
	c.DeepSwapperModel = "custom/nobody"
	if _, err := c.DeepSwapperEntry(); err == nil || !strings.Contains(err.Error(), "custom/anna, custom/zed") {
		t.Errorf("an unknown custom model: %v, want the folder's models listed", err)
	}
}
