package job

import (
	"slices"
	"strings"
	"testing"
)

// TestChoicesAreTaken: every value Choices gives for a key (what the conformance suite must
// cover) is one the job takes from its flag; a value beside them is refused.
func TestChoicesAreTaken(t *testing.T) {
	keys := []string{"face_detector_model", "face_detector_angles", "face_landmarker_model", "face_selector_mode",
		"face_selector_order", "face_selector_gender", "face_selector_race", "face_occluder_model", "face_parser_model",
		"face_mask_types", "face_mask_areas", "face_mask_regions", "face_swapper_model", "face_enhancer_model",
		"face_debugger_items", "processors", "workflow_mode", "workflow_strategy", "temp_frame_format",
		"temp_pixel_format", "video_memory_strategy", "lip_syncer_model", "voice_extractor_model"}
	for _, key := range keys {
		choices := Choices(key)
		if len(choices) == 0 {
			t.Errorf("%s: no choices", key)
		}
		flag := "--" + strings.ReplaceAll(key, "_", "-")
		for _, v := range append(slices.Clone(choices), "not-a-choice") {
			args := []string{flag, v}
			if key != "face_detector_model" {
				args = append(args, "--face-detector-model", "scrfd") // the filters and angles need FaceFusion's detectors
			}
			args = append(args, paths...)
			if v == ProcessorLipSync {
				args = append(args, "-s", "a.png", "voice.wav") // FaceFusion's lip syncer refuses to run without
			}
			_, err := Parse(args)
			if v == "not-a-choice" {
				if err == nil {
					t.Errorf("%s %s: accepted", flag, v)
				}
			} else if err != nil {
				t.Errorf("%s %s: %v, want it taken", flag, v, err)
			}
		}
	}
	if Choices("face_detector_score") != nil {
		t.Errorf("face_detector_score has choices %v, want none (a float range)", Choices("face_detector_score"))
	}
}

// TestHelpFromTheCatalog: the flags' help states the catalog's facts, not a copy of them:
// each detector's sizes (many's being those all its detectors take, FaceFusion's 640x640), and
// the swappers face_swapper_weight does not apply to.
func TestHelpFromTheCatalog(t *testing.T) {
	if got := DetectorSizes("many"); !slices.Equal(got, []int{640}) {
		t.Errorf("many's sizes %v, want FaceFusion's 640x640", got)
	}
	if DetectorSizes("blazeface") != nil {
		t.Errorf("blazeface's sizes %v, want none (its file fixes it)", DetectorSizes("blazeface"))
	}
	help := detectorSizeHelp()
	for _, d := range Detectors[1:] {
		i := strings.Index(help, d)
		list := sizeList(DetectorSizes(d))
		if i < 0 || !strings.Contains(help[i:], list) {
			t.Errorf("--face-detector-size's help %q does not give %s's sizes %s", help, d, list)
		}
	}
	if !strings.HasPrefix(help, "detector input size: many, yolo_face and yunet 640x640; retinaface and scrfd 160x160, 320x320, 480x480, 512x512, 640x640 (default: 640x640)") {
		t.Errorf("--face-detector-size's help: %q", help)
	}
	if got := unbalancedSwappers(); !slices.Equal(got, []string{"blendswap_256", "uniface_256"}) {
		t.Errorf("swappers the weight does not apply to: %v, want blendswap_256, uniface_256 (FaceFusion's, which take the source face as an image)", got)
	}
	if o := lookup("--face-swapper-weight"); !strings.Contains(o.help, "not for blendswap_256, uniface_256") {
		t.Errorf("--face-swapper-weight's help: %q", o.help)
	}
	// A size outside a detector's is refused naming the catalog's list.
	for _, d := range []string{"many", "yunet", "scrfd"} {
		_, err := Parse(append([]string{"--face-detector-model", d, "--face-detector-size", "1024x1024"}, paths...))
		if want := d + " does not take 1024x1024: use one of " + sizeList(DetectorSizes(d)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s at 1024x1024: %v, want %q", d, err, want)
		}
	}
}
