package catalog_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/align"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
)

// TestTable checks the table's own consistency: every fact a consumer derives from must be there
// and well-formed.
func TestTable(t *testing.T) {
	hex := regexp.MustCompile(`^[0-9a-f]+$`)
	seen := map[catalog.Kind]map[string]bool{}
	for _, m := range catalog.All() {
		want := m.Name + ".onnx"
		if m.Kind == catalog.DeepSwapper {
			want = m.Name + ".dfm" // scope/name.dfm, FaceFusion's DeepFaceLive files
		}
		if m.File != want && m.Package == "" {
			t.Errorf("%s: file %q, FaceFusion names it %s", m.Name, m.File, want)
		}
		if m.Size <= 0 {
			t.Errorf("%s: no input size", m.Name)
		}
		if m.Template != "" {
			if _, ok := align.Templates[m.Template]; !ok {
				t.Errorf("%s: template %q is not one of FaceFusion's", m.Name, m.Template)
			}
		}
		if m.Kind != catalog.Converter && m.Kind != catalog.LandmarkEstimator && m.Kind != catalog.VoiceExtractor && m.Norm.Scale == 0 { // these take vectors or spectra, not crops
			t.Errorf("%s: no normalisation", m.Name)
		}
		if len(m.Want.Inputs) == 0 || len(m.Want.Outputs) == 0 {
			t.Errorf("%s: no signature", m.Name)
		}
		switch m.Kind {
		case catalog.Detector:
			if !slices.Contains(m.Sizes, m.Size) || m.Batched {
				t.Errorf("%s: default size %d not offered in %v, or batched", m.Name, m.Size, m.Sizes)
			}
		case catalog.Swapper:
			if len(m.Sizes) == 0 || m.Sizes[0] != m.Size || m.SwapperType == "" {
				t.Errorf("%s: pixel boosts %v should start at its size %d; type %q", m.Name, m.Sizes, m.Size, m.SwapperType)
			}
			if m.Converter != "" {
				if c, err := catalog.Lookup(m.Converter); err != nil || c.Kind != catalog.Converter {
					t.Errorf("%s: converter %q is not a converter in the table", m.Name, m.Converter)
				}
			}
		}
		if p := m.Published; p.SHA256 != "" || p.CRC32 != "" || p.Bytes != 0 {
			if len(p.SHA256) != 64 || !hex.MatchString(p.SHA256) || p.Bytes <= 0 ||
				p.CRC32 != "" && (len(p.CRC32) != 8 || !hex.MatchString(p.CRC32)) {
				t.Errorf("%s: published facts malformed: %+v", m.Name, p)
			}
		}
		if (m.Base == "") == (m.Package == "") || m.Licence == "" {
			t.Errorf("%s: needs a download base (FaceFusion's) or a package (make fetch's), not both, and a licence", m.Name)
		}
		if seen[m.Kind] == nil {
			seen[m.Kind] = map[string]bool{}
		}
		if seen[m.Kind][m.Selector()] {
			t.Errorf("%s: two %ss answer to %q", m.Name, m.Kind, m.Selector())
		}
		seen[m.Kind][m.Selector()] = true
		if got, err := catalog.Select(m.Kind, m.Selector()); err != nil || got != m {
			t.Errorf("%s: Select(%s, %s) = %v, %v", m.Name, m.Kind, m.Selector(), got, err)
		}
	}
	if _, err := catalog.Lookup("inswapper_256"); err == nil || !strings.Contains(err.Error(), "inswapper_128") {
		t.Errorf("unknown model: error %v should list the known names", err)
	}
	if _, err := catalog.Select(catalog.Detector, "scrfd_2.5g"); err == nil || !strings.Contains(err.Error(), "retinaface, scrfd, yolo_face") {
		t.Errorf("a detector is picked by its option value: error %v should list them", err)
	}
	// The published facts of ../shared/models' real file.
	if p := catalog.Must("scrfd_2.5g").Published; p.Bytes != 3295067 || p.CRC32 != "d0266d7d" || !strings.HasPrefix(p.SHA256, "2c0734") {
		t.Errorf("scrfd_2.5g published %+v", p)
	}
}

// LivePortrait's files are one choice, live_portrait, whose parts are found by FaceFusion's
// keys in its model set; the files download as FaceFusion names them.
func TestLivePortraitSet(t *testing.T) {
	if got := catalog.Sets(catalog.LivePortrait); len(got) != 1 || got[0] != "live_portrait" {
		t.Fatalf("LivePortrait sets %v, want [live_portrait]", got)
	}
	for _, part := range []string{"feature_extractor", "motion_extractor", "generator", "eye_retargeter", "lip_retargeter", "stitcher"} {
		m, err := catalog.Part("live_portrait", part)
		if err != nil {
			t.Fatal(err)
		}
		if m.File != "live_portrait_"+part+".onnx" || m.Base != "models-3.0.0" || m.Licence != "MIT" {
			t.Errorf("%s: file %s, base %s, licence %s", part, m.File, m.Base, m.Licence)
		}
	}
	if _, err := catalog.Part("live_portrait", "landmarker"); err == nil {
		t.Error("a part FaceFusion's model set lacks was found")
	}
}
