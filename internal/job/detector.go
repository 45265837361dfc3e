package job

import (
	"fmt"
	"slices"
	"strings"

	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
)

// FaceFusion's face detector choices (facefusion/choices.py): the angles a frame is also
// searched at.
var DetectorAngles = []int{0, 90, 180, 270}

// validateDetector adds the complaints about face_detector_margin and face_detector_angles;
// those against the embedded blazeface go to combo.
func (c *Config) validateDetector(bad, combo func(string, ...any)) {
	checkSpace(bad, "face_detector_margin", c.FaceDetectorMargin)
	if len(c.FaceDetectorAngles) == 0 {
		bad("face_detector_angles (--face-detector-angles): give at least one angle of %s", angleList())
	}
	for _, a := range c.FaceDetectorAngles {
		if !slices.Contains(DetectorAngles, a) {
			bad("face_detector_angles (--face-detector-angles): %d is not one of %s", a, angleList())
			break
		}
	}
	if c.FaceDetectorModel == "blazeface" && (c.DetectorMargin() != [4]int{} || !slices.Equal(c.FaceDetectorAngles, []int{0})) {
		combo("face_detector_margin and face_detector_angles apply to FaceFusion's detectors (%s), not to the embedded blazeface: choose one with --face-detector-model, or leave them at 0 0 0 0 and 0",
			strings.Join(Detectors[1:], ", "))
	}
}

func angleList() string {
	s := make([]string, len(DetectorAngles))
	for i, a := range DetectorAngles {
		s[i] = fmt.Sprint(a)
	}
	return strings.Join(s, ", ")
}

// validateSelector adds the complaints about the face selector's filters. FaceFusion stops
// with a TypeError when only one end of the age filter is given; here an empty or reversed
// range is refused, since it would keep no face. The checks of one key against another go to
// combo.
func (c *Config) validateSelector(bad, combo func(string, ...any)) {
	if msg := oneOf("face_selector_gender", c.FaceSelectorGender, append([]string{"", "auto"}, facemodel.Genders...)); msg != "" {
		bad("%s", strings.Replace(msg, "is not one of , ", "is not one of ", 1))
	}
	if msg := oneOf("face_selector_race", c.FaceSelectorRace, append([]string{"", "auto"}, facemodel.Races...)); msg != "" {
		bad("%s", strings.Replace(msg, "is not one of , ", "is not one of ", 1))
	}
	for _, a := range []struct {
		key string
		v   int
	}{{"face_selector_age_start", c.FaceSelectorAgeStart}, {"face_selector_age_end", c.FaceSelectorAgeEnd}} {
		if a.v < 0 || a.v > 100 {
			bad("%s (--%s): %d is outside 0..100", a.key, strings.ReplaceAll(a.key, "_", "-"), a.v)
		}
	}
	if (c.FaceSelectorAgeStart != 0 || c.FaceSelectorAgeEnd != 0) && c.FaceSelectorAgeEnd <= c.FaceSelectorAgeStart {
		combo("face_selector_age_start and face_selector_age_end: [%d, %d) holds no age: give both, the end above the start (e.g. 20 and 40)", c.FaceSelectorAgeStart, c.FaceSelectorAgeEnd)
	}
	if c.SelectsByClass() && c.FaceDetectorModel == "blazeface" {
		combo("face_selector_gender, face_selector_race and the age filter need FaceFusion's classifier (fairface) on FaceFusion's faces: choose a detector with --face-detector-model (%s)", strings.Join(Detectors[1:], ", "))
	}
}

// SelectsByClass reports whether a face selector filter reads the faces' gender, race or age:
// only then does fairface run (FaceFusion runs it on every face; its result changes no pixel
// otherwise).
func (c *Config) SelectsByClass() bool {
	return c.FaceSelectorGender != "" || c.FaceSelectorRace != "" || c.FaceSelectorAgeStart != 0 || c.FaceSelectorAgeEnd != 0
}

// DetectorMargin is face_detector_margin as top, right, bottom, left percentages.
func (c *Config) DetectorMargin() [4]int { return spread4(c.FaceDetectorMargin) }
