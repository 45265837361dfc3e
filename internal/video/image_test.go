package video

import (
	"slices"
	"testing"
)

// FaceFusion's image quality is JPEG's -q:v round(31 − 0.31·q), Python's round; PNG has none.
func TestImageQualityArgs(t *testing.T) {
	for q, want := range map[int]string{0: "31", 10: "28", 50: "16", 80: "6", 95: "2", 100: "0"} {
		if got := imageQualityArgs("jpeg", q); !slices.Equal(got, []string{"-q:v", want}) {
			t.Errorf("jpeg quality %d: %q, want -q:v %s", q, got, want)
		}
	}
	if got := imageQualityArgs("png", 10); got != nil {
		t.Errorf("png quality: %q, want nothing", got)
	}
}
