package job

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The face masker's keys: FaceFusion's defaults, each set by flag, by facefusion.ini's
// [face_masker] and by the TOML job file, carried into the resume fingerprint; the padding's
// 1 to 4 values read as FaceFusion's normalize_space reads them.
func TestFaceMaskerKeys(t *testing.T) {
	base := []string{"-s", "s.png", "-t", "t.png", "-o", "o.png"}
	c, err := Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	if c.FaceOccluderModel != "xseg_1" || c.FaceParserModel != "bisenet_resnet_34" || !slices.Equal(c.FaceMaskTypes, []string{"box"}) ||
		!slices.Equal(c.FaceMaskAreas, MaskAreas) || !slices.Equal(c.FaceMaskRegions, MaskRegions) || c.FaceMaskBlur != 0.3 || c.MaskPadding() != [4]int{} {
		t.Errorf("defaults: %q %q %v %v %v %v %v, want FaceFusion's", c.FaceOccluderModel, c.FaceParserModel, c.FaceMaskTypes, c.FaceMaskAreas, c.FaceMaskRegions, c.FaceMaskBlur, c.MaskPadding())
	}
	want := func(what string, c Config) {
		t.Helper()
		if c.FaceOccluderModel != "many" || c.FaceParserModel != "bisenet_resnet_18" || !slices.Equal(c.FaceMaskTypes, []string{"area", "region"}) ||
			!slices.Equal(c.MaskAreaIndexes(), []int{2, 0}) || !slices.Equal(c.MaskRegionClasses(), []int{10, 1}) {
			t.Errorf("%s: %q %q %v %v %v", what, c.FaceOccluderModel, c.FaceParserModel, c.FaceMaskTypes, c.MaskAreaIndexes(), c.MaskRegionClasses())
		}
		s := c.Settings()
		if s["face_occluder_model"] != "many" || s["face_parser_model"] != "bisenet_resnet_18" || s["face_mask_areas"] != "mouth upper-face" || s["face_mask_regions"] != "nose skin" {
			t.Errorf("%s: the resume fingerprint holds %q %q %q %q", what, s["face_occluder_model"], s["face_parser_model"], s["face_mask_areas"], s["face_mask_regions"])
		}
	}
	c, err = Parse(append([]string{"--face-occluder-model", "many", "--face-parser-model", "bisenet_resnet_18", "--face-mask-types", "area", "region",
		"--face-mask-areas", "mouth", "upper-face", "--face-mask-regions", "nose", "skin"}, base...))
	if err != nil {
		t.Fatal(err)
	}
	want("flags", c)
	ini := writeINI(t, "[face_masker]\nface_occluder_model = many\nface_parser_model = bisenet_resnet_18\nface_mask_types = area region\nface_mask_areas = mouth upper-face\nface_mask_regions = nose skin\n")
	if c, err = Parse(append([]string{"--config-path", ini}, base...)); err != nil {
		t.Fatal(err)
	}
	want("facefusion.ini", c)
	toml := filepath.Join(t.TempDir(), "job.toml")
	if err := os.WriteFile(toml, []byte("face_occluder_model = \"many\"\nface_parser_model = \"bisenet_resnet_18\"\nface_mask_types = [\"area\", \"region\"]\nface_mask_areas = [\"mouth\", \"upper-face\"]\nface_mask_regions = [\"nose\", \"skin\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err = Parse(append([]string{"--config", toml}, base...)); err != nil {
		t.Fatal(err)
	}
	want("job.toml", c)

	for _, p := range []struct {
		args []string
		want [4]int
	}{
		{[]string{"7"}, [4]int{7, 7, 7, 7}},
		{[]string{"7", "9"}, [4]int{7, 9, 7, 9}},
		{[]string{"7", "9", "11"}, [4]int{7, 9, 11, 9}},
		{[]string{"7", "9", "11", "13"}, [4]int{7, 9, 11, 13}},
	} {
		c, err := Parse(append(append([]string{"--face-mask-padding"}, p.args...), base...))
		if err != nil {
			t.Fatal(err)
		}
		if c.MaskPadding() != p.want {
			t.Errorf("--face-mask-padding %v: %v, want %v (top, right, bottom, left)", p.args, c.MaskPadding(), p.want)
		}
	}
}
