package job

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseFlagsOverFileOverDefault(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "job.toml")
	os.WriteFile(file, []byte("source_paths = [\"a.png\"]\ntarget_path = \"t.mp4\"\noutput_path = \"o.mp4\"\nface_detector_score = 0.7\nchunk_frames = 10\n"), 0o644)
	c, err := Parse([]string{"--config", file, "-s", "x.png", "y.jpg", "--face-detector-score=0.3", "--trim-frame-end", "50"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.SourcePaths, []string{"x.png", "y.jpg"}) {
		t.Errorf("source_paths %v: the flag's two values should win", c.SourcePaths)
	}
	if c.FaceDetectorScore != 0.3 || c.ChunkFrames != 10 || c.TargetPath != "t.mp4" || c.TrimFrameEnd != 50 {
		t.Errorf("got %+v", c)
	}
	if c.OutputVideoEncoder != "libx264" || c.Processors[0] != "face_swapper" {
		t.Errorf("defaults lost: %+v", c)
	}
}

func TestParseErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("target_path = \"t.mp4\"\n[face]\nswaper = 1\n"), 0o644)
	cases := map[string][]string{
		"face.swaper":              {"--config", bad},
		"--nope":                   {"--nope"},
		"face_selector_mode":       {"-s", "a", "-t", "b", "-o", "c", "--face-selector-mode", "all"},
		"output_video_quality":     {"-s", "a", "-t", "b", "-o", "c", "--output-video-quality", "-1"},
		"trim_frame_end":           {"-s", "a", "-t", "b", "-o", "c", "--trim-frame-start", "9", "--trim-frame-end", "3"},
		"--execution-thread-count": {"--execution-thread-count", "two"},
		"source_paths":             {"-t", "b", "-o", "c"},
		"chunk_frames":             {"-s", "a", "-t", "b", "-o", "c", "--chunk-frames", "0"},
		"model_broadcast":          {"-s", "a", "-t", "b", "-o", "c", "--model-broadcast", "maybe"},
	}
	for want, args := range cases {
		_, err := Parse(args)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want one naming %s", args, err, want)
		}
	}
}

func TestProcessorsNoneNeedsNoSource(t *testing.T) {
	c, err := Parse([]string{"--processors", "none", "-t", "b.mp4", "-o", "c.mp4"})
	if err != nil || c.Swaps() {
		t.Fatalf("err %v, swaps %v", err, c.Swaps())
	}
}

// paths are the flags every run needs, so that a test's error is the value under test.
var paths = []string{"-s", "a.png", "-t", "b.mp4", "-o", "c.mp4"}

func TestNonFiniteFloatFlagsAreRefused(t *testing.T) {
	cases := map[string][]string{
		"face_detector_score (--face-detector-score): NaN":         {"--face-detector-score", "NaN"},
		"face_mask_blur (--face-mask-blur): +Inf":                  {"--face-mask-blur", "inf"},
		"face_enhancer_weight (--face-enhancer-weight): -Inf":      {"--face-enhancer-weight", "-Inf"},
		"face_landmarker_score (--face-landmarker-score): +Inf":    {"--face-landmarker-score=+infinity"},
		"reference_face_distance (--reference-face-distance): NaN": {"--reference-face-distance", "nan"},
	}
	for want, flag := range cases {
		_, err := Parse(append(append([]string{}, paths...), flag...))
		if err == nil || !strings.Contains(err.Error(), want+" is not a finite number") {
			t.Errorf("%v: error %v, want one saying %q is not a finite number", flag, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "outside") {
			t.Errorf("%v: %v: a non-finite value is reported once, not as out of range too", flag, err)
		}
	}
}

func TestNonFiniteFloatKeysAreRefused(t *testing.T) {
	dir := t.TempDir()
	for key, value := range map[string]string{
		"face_detector_score": "nan", "face_mask_blur": "+inf", "face_enhancer_weight": "-inf",
		"face_landmarker_score": "inf", "reference_face_distance": "-nan",
	} {
		file := filepath.Join(dir, key+".toml")
		os.WriteFile(file, []byte(key+" = "+value+"\n"), 0o644)
		_, err := Parse(append([]string{"--config", file}, paths...))
		if err == nil || !strings.Contains(err.Error(), key+" (--") || !strings.Contains(err.Error(), "is not a finite number") {
			t.Errorf("%s = %s: error %v, want one naming the key and saying it is not finite", key, value, err)
		}
	}
}

// A float field added later is covered without a line of validation: the walk finds floats in
// embedded and nested structs and in slices, and names them by their TOML keys.
func TestFiniteFloatsWalksEveryFloatField(t *testing.T) {
	type table struct {
		Gain float32 `toml:"gain"`
	}
	type settings struct {
		Models
		Weights []float64 `toml:"weights"`
		Nested  table     `toml:"nested"`
		Fine    float64   `toml:"fine"`
		Skipped float64   `toml:"-"`
	}
	var s settings
	s.FaceMaskBlur = math.NaN()
	s.Weights = []float64{0.5, math.Inf(1)}
	s.Nested.Gain = float32(math.Inf(-1))
	s.Fine = 0.25
	s.Skipped = math.NaN()
	var got []string
	finiteFloats(reflect.ValueOf(s), "", func(f string, a ...any) { got = append(got, fmt.Sprintf(f, a...)) })
	want := []string{
		"face_mask_blur (--face-mask-blur): NaN is not a finite number",
		"weights: value 2 is +Inf, not a finite number",
		"nested.gain: -Inf is not a finite number",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// And every float key of Config itself: set each to NaN, each is named.
	c := Default()
	var keys []string
	v := reflect.ValueOf(&c).Elem()
	var setNaN func(v reflect.Value)
	setNaN = func(v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			switch f := v.Field(i); f.Kind() {
			case reflect.Struct:
				setNaN(f)
			case reflect.Float64:
				f.SetFloat(math.NaN())
				keys = append(keys, strings.Split(v.Type().Field(i).Tag.Get("toml"), ",")[0])
			}
		}
	}
	setNaN(v)
	if len(keys) < 5 {
		t.Fatalf("found %d float keys in Config (%v); the walk above is broken", len(keys), keys)
	}
	err := c.validate(false)
	for _, k := range keys {
		if err == nil || !strings.Contains(err.Error(), k+" (--"+strings.ReplaceAll(k, "_", "-")+"): NaN is not a finite number") {
			t.Errorf("%s = NaN: error %v does not name it", k, err)
		}
	}
}

func TestFloatAndPaddingRanges(t *testing.T) {
	refused := map[string][]string{
		"face_mask_padding (--face-mask-padding): value 1 (top) is -50, outside 0..100":                                        {"--face-mask-padding", "-50", "0", "0", "0"},
		"face_mask_padding (--face-mask-padding): value 3 (bottom) is 500, outside 0..100":                                     {"--face-mask-padding", "0", "0", "500", "0"},
		"face_landmarker_score (--face-landmarker-score): 1.5 is not one of FaceFusion's choices, 0 to 1 in steps of 0.05":     {"--face-landmarker-score", "1.5"},
		"face_enhancer_weight (--face-enhancer-weight): -0.1 is not one of FaceFusion's choices, 0 to 1 in steps of 0.05":      {"--face-enhancer-weight", "-0.1"},
		"reference_face_distance (--reference-face-distance): 1.2 is not one of FaceFusion's choices, 0 to 1 in steps of 0.05": {"--reference-face-distance", "1.2"},
		"face_mask_blur (--face-mask-blur): 2 is not one of FaceFusion's choices, 0 to 1 in steps of 0.05":                     {"--face-mask-blur", "2"},
		"face_detector_score (--face-detector-score): -0.5 is not one of FaceFusion's choices, 0 to 1 in steps of 0.05":        {"--face-detector-score", "-0.5"},
	}
	for want, flag := range refused {
		_, err := Parse(append(append([]string{}, paths...), flag...))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want %q", flag, err, want)
		}
	}
	for _, flag := range [][]string{
		{"--face-mask-padding", "0", "100", "25", "0"},
		{"--reference-face-distance", "1"},
		{"--face-enhancer-weight", "1"},
		{"--face-landmarker-score", "0"},
	} {
		if _, err := Parse(append(append([]string{}, paths...), flag...)); err != nil {
			t.Errorf("%v: %v, want it accepted", flag, err)
		}
	}
}

// max_restarts and stop_margin come from the default, the job file and the flags like every
// key, and a value out of range (negative; a stop margin over a day) names its key.
func TestStopKeys(t *testing.T) {
	c, err := Parse(paths)
	if err != nil || c.MaxRestarts != 10 || c.StopMargin != 90 {
		t.Fatalf("defaults: max_restarts %d, stop_margin %d, %v; want 10, 90", c.MaxRestarts, c.StopMargin, err)
	}
	file := filepath.Join(t.TempDir(), "job.toml")
	os.WriteFile(file, []byte("max_restarts = 0\nstop_margin = 45\n"), 0o644)
	if c, err = Parse(append([]string{"--config", file}, paths...)); err != nil || c.MaxRestarts != 0 || c.StopMargin != 45 {
		t.Fatalf("job file: max_restarts %d, stop_margin %d, %v; want 0, 45", c.MaxRestarts, c.StopMargin, err)
	}
	if c, err = Parse(append([]string{"--config", file, "--max-restarts", "3", "--stop-margin=200"}, paths...)); err != nil || c.MaxRestarts != 3 || c.StopMargin != 200 {
		t.Fatalf("flags: max_restarts %d, stop_margin %d, %v; want 3, 200", c.MaxRestarts, c.StopMargin, err)
	}
	for _, args := range [][]string{{"--max-restarts", "-1"}, {"--stop-margin", "-5"}, {"--stop-margin", "9223372037"}, {"--stop-margin", "86401"}} {
		key := strings.ReplaceAll(strings.TrimPrefix(args[0], "--"), "-", "_")
		if _, err := Parse(append(args, paths...)); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%v: error %v, want one naming %s", args, err, key)
		}
	}
}

// A job file's value of the wrong type is refused naming the file, the line, the key and what
// the key takes, not in the TOML decoder's Go terms.
func TestConfigFileWrongType(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ body, want string }{
		{"model_broadcast = true\n", "line 1: model_broadcast is a bool there, the key takes a string"},
		{"\nface_detector_score = \"high\"\n", "line 2: face_detector_score is a string there, the key takes a number"},
		{"processors = \"face_swapper\"\n", "line 1: processors is a string there, the key takes a list"},
	} {
		path := filepath.Join(dir, "job.toml")
		if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		var cfg Config
		err := LoadFile(path, &cfg)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "destination") {
			t.Errorf("%q: %v, want an error naming %s and %q", c.body, err, path, c.want)
		}
	}
}
