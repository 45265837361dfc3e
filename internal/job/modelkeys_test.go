package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelKeysRefusedAtValidation: model names, detector sizes and model_sha256 are checked
// before any model loads, each complaint naming the key and its flag once.
func TestModelKeysRefusedAtValidation(t *testing.T) {
	base := []string{"-t", "t.mp4", "-o", "o.mp4", "-s", "s.png"}
	sums := filepath.Join(t.TempDir(), "job.toml")
	if err := os.WriteFile(sums, []byte("[model_sha256]\nscrfd = \""+strings.Repeat("0", 64)+"\"\n\"scrfd_2.5g\" = \"zz\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--face-detector-model", "SCRFD"}, []string{`face_detector_model (--face-detector-model): "SCRFD" is not one of blazeface, many, retinaface, scrfd, yolo_face, yunet`}},
		{[]string{"--face-mask-types", "mouth"}, []string{`face_mask_types (--face-mask-types): "mouth" is not one of box, occlusion, area, region`}},
		{[]string{"--face-mask-areas", "nose"}, []string{`face_mask_areas (--face-mask-areas): "nose" is not one of upper-face, lower-face, mouth`}},
		{[]string{"--face-mask-regions", "hair"}, []string{`face_mask_regions (--face-mask-regions): "hair" is not one of skin, left-eyebrow, right-eyebrow, left-eye, right-eye, glasses, nose, mouth, upper-lip, lower-lip`}},
		{[]string{"--face-occluder-model", "xseg"}, []string{`face_occluder_model (--face-occluder-model): "xseg" is not one of many, xseg_1, xseg_2, xseg_3`}},
		{[]string{"--face-parser-model", "bisenet"}, []string{`face_parser_model (--face-parser-model): "bisenet" is not one of bisenet_resnet_18, bisenet_resnet_34`}},
		{[]string{"--face-mask-padding", "1", "2", "3", "4", "5"}, []string{`face_mask_padding (--face-mask-padding): give 1 to 4 percentages`}},
		{[]string{"--face-detector-model", "scrfd", "--face-detector-size", "768x768"}, []string{"face_detector_size (--face-detector-size): scrfd does not take 768x768: use one of 160x160, 320x320, 480x480, 512x512, 640x640"}},
		{[]string{"--face-detector-model", "yolo_face", "--face-detector-size", "320"}, []string{"yolo_face does not take 320x320: use one of 640x640"}},
		{[]string{"--face-detector-model", "scrfd", "--face-detector-margin", "101"}, []string{"face_detector_margin (--face-detector-margin): value 1 (all sides) is 101, outside 0..100 percent"}},
		{[]string{"--face-detector-model", "scrfd", "--face-detector-margin", "1", "2", "3", "4", "5"}, []string{"give 1 to 4 percentages"}},
		{[]string{"--face-detector-model", "scrfd", "--face-detector-angles", "0", "45"}, []string{"face_detector_angles (--face-detector-angles): 45 is not one of 0, 90, 180, 270"}},
		{[]string{"--face-detector-angles", "90"}, []string{"not to the embedded blazeface"}},
		{[]string{"--face-detector-model", "scrfd", "--face-selector-gender", "Female"}, []string{`face_selector_gender (--face-selector-gender): "Female" is not one of auto, female, male`}},
		{[]string{"--face-detector-model", "scrfd", "--face-selector-race", "european"}, []string{`face_selector_race (--face-selector-race): "european" is not one of auto, white, black, latino, asian, indian, arabic`}},
		{[]string{"--face-detector-model", "scrfd", "--face-selector-age-start", "20"}, []string{"[20, 0) holds no age: give both"}},
		{[]string{"--face-detector-model", "scrfd", "--face-selector-age-start", "30", "--face-selector-age-end", "30"}, []string{"[30, 30) holds no age"}},
		{[]string{"--face-detector-model", "scrfd", "--face-selector-age-end", "101"}, []string{"face_selector_age_end (--face-selector-age-end): 101 is outside 0..100"}},
		{[]string{"--face-selector-gender", "male"}, []string{"need FaceFusion's classifier (fairface)"}},
		{[]string{"--execution-batch-size", "1000000000"}, []string{"execution_batch_size (--execution-batch-size): 1000000000 is more than 128"}},
		{[]string{"--face-detector-size", "0x0"}, []string{`face_detector_size (--face-detector-size): "0x0" is not a size like 640x640 (not positive)`}},
		{[]string{"--config", sums}, []string{`model_sha256: key "scrfd" names no model: use FaceFusion's model names (2dfan4,`, `model_sha256: scrfd_2.5g = "zz" is not a sha256 (64 hex digits)`}},
	} {
		_, err := Parse(append(c.args, base...))
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v, want an error with %q", c.args, err, w)
			}
		}
		if err != nil && strings.Contains(err.Error(), "<nil>") {
			t.Errorf("%v: %v leaks a Go nil", c.args, err)
		}
	}
	// The debugger's unknown item is said once, not twice.
	_, err := Parse(append([]string{"--processors", "face_debugger", "--face-debugger-items", "foo"}, base...))
	if err == nil || strings.Count(err.Error(), `"foo"`) != 1 {
		t.Errorf("unknown debugger item: %v, want it named once", err)
	}
	if _, err := Parse(append([]string{"--face-detector-model", "scrfd", "--face-detector-margin", "100", "0", "--face-detector-angles", "270", "0", "90", "90"}, base...)); err != nil {
		t.Errorf("FaceFusion's margin and angles: %v", err)
	}
	if _, err := Parse(append([]string{"--face-detector-model", "yunet", "--face-selector-gender", "auto", "--face-selector-race", "arabic", "--face-selector-age-start", "0", "--face-selector-age-end", "3"}, base...)); err != nil {
		t.Errorf("FaceFusion's selector filters: %v", err)
	}
	if _, err := Parse(append([]string{"--face-detector-model", "scrfd", "--face-detector-size", "320x320"}, base...)); err != nil {
		t.Errorf("a size scrfd offers: %v", err)
	}
}
