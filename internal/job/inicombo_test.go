package job

import (
	"strings"
	"testing"
)

// TestINIValuesMeetTheFlags: facefusion.ini is read before the job file and the flags, so a
// value it gives is checked on its own there; whether it goes with another key's value (the
// margin with the detector, the age filter's two ends, the size with the model) is checked on
// the final configuration, as the same values given all by flags or all in TOML are. A value
// bad on its own is still refused naming the file; a combination still bad at the end is
// refused then.
func TestINIValuesMeetTheFlags(t *testing.T) {
	for _, c := range []struct {
		name, ini string
		flags     []string
		refused   string // "" accepted; else a part of the error
	}{
		{"margin, detector by flag", "[face_detector]\nface_detector_margin = 5 5\n", []string{"--face-detector-model", "scrfd"}, ""},
		{"angles, detector by flag", "[face_detector]\nface_detector_angles = 0 90\n", []string{"--face-detector-model", "retinaface"}, ""},
		{"gender, detector by flag", "[face_selector]\nface_selector_gender = female\n", []string{"--face-detector-model", "scrfd"}, ""},
		{"age start, end by flag", "[face_detector]\nface_detector_model = scrfd\n[face_selector]\nface_selector_age_start = 20\n", []string{"--face-selector-age-end", "40"}, ""},
		{"size, detector by flag", "[face_detector]\nface_detector_model = yolo_face\nface_detector_size = 320x320\n", []string{"--face-detector-model", "scrfd"}, ""},
		{"boost, swapper by flag", "[processors]\nface_swapper_model = simswap_256\nface_swapper_pixel_boost = 384x384\n", []string{"--face-swapper-model", "inswapper_128"}, ""},
		{"trim end by flag", "[frame_extraction]\ntrim_frame_start = 10\ntrim_frame_end = 5\n", []string{"--trim-frame-end", "20"}, ""},
		{"lossy temp frames, format by flag", "[workflow]\nworkflow_strategy = disk\n[frame_extraction]\ntemp_frame_format = jpeg\n", []string{"--temp-frame-format", "png"}, ""},
		{"margin with blazeface at the end", "[face_detector]\nface_detector_margin = 5\n", nil, "not to the embedded blazeface"},
		{"age end never given", "[face_detector]\nface_detector_model = scrfd\n[face_selector]\nface_selector_age_start = 20\n", nil, "[20, 0) holds no age"},
		{"a bad value on its own", "[face_detector]\nface_detector_margin = 101\n", []string{"--face-detector-model", "scrfd"}, "facefusion.ini: face_detector_margin (--face-detector-margin): value 1 (all sides) is 101"},
		{"an off-step score", "[face_detector]\nface_detector_score = 0.33\n", nil, "facefusion.ini: face_detector_score (--face-detector-score): 0.33 is not one of FaceFusion's choices"},
	} {
		ini := writeINI(t, c.ini)
		_, err := Parse(append(append([]string{"--config-path", ini}, c.flags...), paths...))
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%s: %v, want it accepted", c.name, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%s: %v, want %q", c.name, err, c.refused)
		}
	}
}
