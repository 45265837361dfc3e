package conformance

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestCoverage holds notYetCovered to the cases: every option of the list is covered by a case
// or named there, and nothing named there is covered.
func TestCoverage(t *testing.T) {
	cases, err := LoadCases(filepath.Join(testenv.Root(t), "internal", "conformance", "cases"), filepath.Join(testenv.Cache(t), "samples"))
	if err != nil {
		t.Fatal(err)
	}
	missing, covered := diffLists(uncovered(cases), notYetCovered)
	if len(missing) > 0 {
		t.Errorf("no case covers these, and notYetCovered (coverage.go) does not name them: add a case, or add them to the list: %q", missing)
	}
	if len(covered) > 0 {
		t.Errorf("notYetCovered (coverage.go) names what a case covers now: take these out: %q", covered)
	}
}

// TestOptionsAreFaceFusions holds the suite's option list to FaceFusion 3.8.1's source: every flag
// of program.py's face detector, landmarker, selector, tracker and masker groups and of the three
// processors' register_args is in it, and each choice list is types.py's Literal.
func TestOptionsAreFaceFusions(t *testing.T) {
	ff := filepath.Join(reference(t), "facefusion-3.8.1", "facefusion")
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(ff, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	flagRe := regexp.MustCompile(`add_argument\('--([a-z0-9-]+)'`)
	var keys []string
	program := read("program.py")
	for _, group := range []string{"detector", "landmarker", "selector", "tracker", "masker"} {
		start := strings.Index(program, "def create_face_"+group+"_program(")
		if start < 0 {
			t.Fatalf("program.py has no create_face_%s_program", group)
		}
		body := program[start:]
		if end := strings.Index(body[1:], "\ndef "); end >= 0 {
			body = body[:end+1]
		}
		for _, m := range flagRe.FindAllStringSubmatch(body, -1) {
			keys = append(keys, strings.ReplaceAll(m[1], "-", "_"))
		}
	}
	for _, p := range []string{"face_swapper", "face_enhancer", "face_debugger", "frame_enhancer", "frame_colorizer", "background_remover", "age_modifier", "deep_swapper"} {
		for _, m := range flagRe.FindAllStringSubmatch(read(filepath.Join("processors", "modules", p, "core.py")), -1) {
			keys = append(keys, strings.ReplaceAll(m[1], "-", "_"))
		}
	}
	if len(keys) < 25 {
		t.Fatalf("read only %d flags from FaceFusion's source: %v", len(keys), keys)
	}
	for _, k := range keys {
		if !knownKey(k) {
			t.Errorf("FaceFusion's --%s is not in the suite's option list (coverage.go options)", strings.ReplaceAll(k, "_", "-"))
		}
	}

	literals := read("types.py") + read("processors/modules/face_swapper/types.py") + read("processors/modules/face_enhancer/types.py") + read("processors/modules/face_debugger/types.py") +
		read("processors/modules/frame_enhancer/types.py") + read("processors/modules/frame_colorizer/types.py") +
		read("processors/modules/background_remover/types.py") + read("processors/modules/age_modifier/types.py")
	types := map[string]string{
		"face_detector_model": "FaceDetectorModel", "face_landmarker_model": "FaceLandmarkerModel",
		"face_selector_mode": "FaceSelectorMode", "face_selector_order": "FaceSelectorOrder",
		"face_selector_gender": "FaceSelectorGender", "face_selector_race": "FaceSelectorRace",
		"face_occluder_model": "FaceOccluderModel", "face_parser_model": "FaceParserModel",
		"face_mask_types": "FaceMaskType", "face_mask_areas": "FaceMaskArea", "face_mask_regions": "FaceMaskRegion",
		"face_swapper_model": "FaceSwapperModel", "face_enhancer_model": "FaceEnhancerModel",
		"face_debugger_items": "FaceDebuggerItem", "frame_enhancer_model": "FrameEnhancerModel",
		"frame_colorizer_model": "FrameColorizerModel", "background_remover_model": "BackgroundRemoverModel",
		"age_modifier_model": "AgeModifierModel",
	}
	for _, o := range options {
		name, ok := types[o.key]
		if !ok {
			continue
		}
		m := regexp.MustCompile(`(?m)^` + name + ` = Literal\[(.*)\]`).FindStringSubmatch(literals)
		if m == nil {
			t.Errorf("no Literal %s in FaceFusion's types.py", name)
			continue
		}
		var want []string
		for _, v := range strings.Split(m[1], ",") {
			want = append(want, strings.Trim(strings.TrimSpace(v), "'"))
		}
		if !slices.Equal(o.choices, want) {
			t.Errorf("%s: the suite lists %q, FaceFusion's %s is %q", o.key, o.choices, name, want)
		}
	}
}

// TestLoadCasesRefuses checks that a bad case file is refused with the file and the case named.
func TestLoadCasesRefuses(t *testing.T) {
	samples := filepath.Join(testenv.Cache(t), "samples")
	good := "[[case]]\nname = \"a\"\ncovers = [\"face_detector_model=scrfd\"]\ncompare = \"faces\"\ntarget = \"astronaut.png\"\nargs = []\n"
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"unknown key", good + "colour = 1\n", []string{"x.toml", "unknown key", "colour"}},
		{"duplicate", good + good, []string{"x.toml", `"a"`, "taken already"}},
		{"compare", strings.Replace(good, `"faces"`, `"pixels"`, 1), []string{"x.toml", `"a"`, `compare "pixels"`}},
		{"transform", good + "transform = \"flip\"\n", []string{"x.toml", `"a"`, `transform "flip"`}},
		{"crop", good + "transform = \"crop:0,0,0,5\"\n", []string{"x.toml", `"a"`, "empty"}},
		{"jpeg quantiser", good + "transform = \"jpeg:1\"\n", []string{"x.toml", `"a"`, "2 to 31"}},
		{"jpeg video", strings.Replace(good, `"faces"`, `"video"`, 1) + "source = \"astronaut.png\"\ntransform = \"jpeg:3\"\n", []string{"x.toml", `"a"`, "lossless"}},
		{"sample", strings.Replace(good, "astronaut.png", "nobody.png", 1), []string{"x.toml", `"a"`, "nobody.png"}},
		{"path flag", strings.Replace(good, "args = []", `args = ["-o", "x.png"]`, 1), []string{"x.toml", `"a"`, "-o"}},
		{"covers key", strings.Replace(good, "face_detector_model=scrfd", "face_detector_modle=scrfd", 1), []string{"x.toml", `"a"`, "face_detector_modle"}},
		{"no source", strings.Replace(good, `"faces"`, `"image"`, 1), []string{"x.toml", `"a"`, "source"}},
		{"name", strings.Replace(good, `"a"`, `"A b"`, 1), []string{"x.toml", "kebab-case"}},
		{"gap not video", good + "gap = 1\n", []string{"x.toml", `"a"`, "gap = 1", "video"}},
		{"gap past the clip", strings.Replace(good, `"faces"`, `"video"`, 1) + "source = \"astronaut.png\"\ngap = 3\n", []string{"x.toml", `"a"`, "0 to 2"}},
		{"extra sources alone", good + "extra_sources = [\"astronaut.png\"]\n", []string{"x.toml", `"a"`, "extra_sources", "no source"}},
		{"extra source sample", good + "source = \"astronaut.png\"\nextra_sources = [\"nobody.png\"]\n", []string{"x.toml", `"a"`, "nobody.png"}},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "x.toml"), []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadCases(dir, samples)
		testenv.CheckError(t, tc.name, err, tc.want...)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.toml"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if cases, err := LoadCases(dir, samples); err != nil || len(cases) != 1 || cases[0].File != "x.toml" {
		t.Errorf("a good file: %v, %+v", err, cases)
	}
}

// TestTransforms checks each transform against pixels worked out by hand on a 3×2 image.
func TestTransforms(t *testing.T) {
	src := rasterOf(3, 2, []uint8{1, 2, 3, 4, 5, 6})
	for _, tc := range []struct {
		name string
		w, h int
		want []uint8
	}{
		{"mirror", 3, 2, []uint8{3, 2, 1, 6, 5, 4}},
		{"rotate180", 3, 2, []uint8{6, 5, 4, 3, 2, 1}},
		{"rotate90", 2, 3, []uint8{3, 6, 2, 5, 1, 4}}, // counter-clockwise: the right column on top
		{"rotate270", 2, 3, []uint8{4, 1, 5, 2, 6, 3}},
		{"crop:1,0,2,1", 2, 1, []uint8{2, 3}},
		{"twin", 6, 2, []uint8{1, 2, 3, 3, 2, 1, 4, 5, 6, 6, 5, 4}},
	} {
		got, err := transformImage(src, tc.name)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.W != tc.w || got.H != tc.h || !slices.Equal(greys(got), tc.want) {
			t.Errorf("%s: %dx%d %v, want %dx%d %v", tc.name, got.W, got.H, greys(got), tc.w, tc.h, tc.want)
		}
	}
	if got, _ := transformImage(rasterOf(1, 1, []uint8{203}), "dark"); greys(got)[0] != 50 {
		t.Errorf("dark: 203 → %d, want 50", greys(got)[0])
	}
}

// rasterOf is a w×h image whose pixel i is grey v[i] in R, and i in G and B (so that a
// channel swap would show).
func rasterOf(w, h int, v []uint8) *raster.Image {
	img := raster.New(w, h)
	for i, g := range v {
		img.Set(i%w, i/w, g, uint8(i), uint8(i))
	}
	return img
}

// greys are the R values of img, row by row.
func greys(img *raster.Image) []uint8 {
	var out []uint8
	for y := range img.H {
		for x := range img.W {
			out = append(out, img.Pix[y*img.Stride+3*x])
		}
	}
	return out
}
