package job

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// writeINI writes text as a facefusion.ini in a fresh folder and returns its path.
func writeINI(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "facefusion.ini")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// FaceFusion's file as shipped (every key empty) loads and changes nothing, and the sections
// and keys the program reads from it are FaceFusion's (spot checks of the embedded file).
func TestINIShippedFileChangesNothing(t *testing.T) {
	const shipped = "facefusion.ini" // the embedded file, as a user would give it
	c := Default()
	if err := LoadINI(shipped, &c); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, Default()) {
		t.Errorf("the shipped file changed the job:\n%+v\nwant\n%+v", c, Default())
	}
	if n := len(faceFusionINI); n != 19 {
		t.Errorf("FaceFusion 3.8.1's file has 19 sections, the program read %d", n)
	}
	for key, section := range map[string]string{"temp_path": "paths", "face_detector_angles": "face_detector",
		"output_video_fps": "output_creation", "processors": "processors", "lip_syncer_weight": "processors",
		"execution_thread_count": "execution", "log_level": "misc", "halt_on_error": "misc"} {
		if got := iniSection(key); got != section {
			t.Errorf("key %s is in section %q, want [%s]", key, got, section)
		}
	}
}

// FaceFusion keys this program has no setting for load when they say what it does anyway.
func TestINIFixedValues(t *testing.T) {
	ini := writeINI(t, "[face_detector]\nface_detector_angles = 0\nface_detector_margin = 0 0  0 0\n"+
		"[face_masker]\nface_occluder_model = xseg_1\nface_parser_model = bisenet_resnet_34\n")
	c := Default()
	if err := LoadINI(ini, &c); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, Default()) {
		t.Error("stating what the program does changed the job")
	}
}

// A file setting supported keys of every kind (lists, floats, ints, sizes, names) gives the
// same job as the flags of the same names.
func TestINIEqualsFlags(t *testing.T) {
	ini := writeINI(t, `; a studio's defaults
[paths]
source_paths = a.png b.jpg
target_path = in.mp4
output_path = out.mp4
temp_path = /scratch/local

[face_detector]
face_detector_model = yolo_face
face_detector_size = 640x640
face_detector_score = 0.35
face_detector_margin = 10 20
face_detector_angles = 0 90

[face_selector]
face_selector_mode = reference
face_selector_gender = female
face_selector_race = auto
face_selector_age_start = 20
face_selector_age_end = 40
reference_face_distance = 0.45
reference_frame_number = 7

[face_masker]
face_mask_types = box occlusion
face_mask_blur = 0.25
# a list may go on over indented lines, as in configparser
face_mask_padding = 1 2
	3 4

[frame_extraction]
trim_frame_start = 5
trim_frame_end = 40

[output_creation]
output_video_encoder = libx265
output_video_quality = 60

[processors]
processors = face_swapper face_enhancer
face_enhancer_blend = 70
face_swapper_model = inswapper_128

[execution]
execution_providers = cuda cpu
execution_device_ids = 0 1
execution_thread_count = 3

[misc]
log_level = warn
`)
	fromINI, err := Parse([]string{"--config-path", ini})
	if err != nil {
		t.Fatal(err)
	}
	fromFlags, err := Parse([]string{"-s", "a.png", "b.jpg", "-t", "in.mp4", "-o", "out.mp4", "--temp-path", "/scratch/local",
		"--face-detector-model", "yolo_face", "--face-detector-size", "640x640", "--face-detector-score", "0.35",
		"--face-detector-margin", "10", "20", "--face-detector-angles", "0", "90",
		"--face-selector-mode", "reference", "--face-selector-gender", "female", "--face-selector-race", "auto",
		"--face-selector-age-start", "20", "--face-selector-age-end", "40", "--reference-face-distance", "0.45", "--reference-frame-number", "7",
		"--face-mask-types", "box", "occlusion", "--face-mask-blur", "0.25", "--face-mask-padding", "1", "2", "3", "4",
		"--trim-frame-start", "5", "--trim-frame-end", "40", "--output-video-encoder", "libx265", "--output-video-quality", "60",
		"--processors", "face_swapper", "face_enhancer", "--face-enhancer-blend", "70", "--face-swapper-model", "inswapper_128",
		"--execution-providers", "cuda", "cpu", "--execution-device-ids", "0", "1", "--execution-thread-count", "3",
		"--log-level", "warn"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromINI, fromFlags) {
		t.Errorf("from the file:\n%+v\nfrom the flags:\n%+v", fromINI, fromFlags)
	}
	if reflect.DeepEqual(fromINI, Default()) || fromINI.FaceDetectorScore != 0.35 || fromINI.TempPath != "/scratch/local" ||
		fromINI.DetectorMargin() != [4]int{10, 20, 10, 20} || fromINI.FaceSelectorAgeEnd != 40 || fromINI.FaceSelectorRace != "auto" || !slices.Equal(fromINI.FaceDetectorAngles, []int{0, 90}) {
		t.Errorf("the file was not applied: %+v", fromINI)
	}
}

// The job file overrides facefusion.ini, and flags override both.
func TestINIUnderTOMLAndFlags(t *testing.T) {
	ini := writeINI(t, "[face_detector]\nface_detector_score = 0.7\n[frame_extraction]\ntrim_frame_start = 5\n[output_creation]\noutput_video_quality = 60\n[misc]\nlog_level = debug\n")
	toml := filepath.Join(t.TempDir(), "job.toml")
	os.WriteFile(toml, []byte("face_detector_score = 0.6\nlog_level = \"error\"\n"), 0o644)
	c, err := Parse(append([]string{"--config-path", ini, "--config", toml, "--trim-frame-start", "3", "--log-level", "warn"}, paths...))
	if err != nil {
		t.Fatal(err)
	}
	if c.FaceDetectorScore != 0.6 || c.TrimFrameStart != 3 || c.OutputVideoQuality != 60 || c.LogLevel != "warn" {
		t.Errorf("score %v (TOML's 0.6), trim start %d (the flag's 3), quality %d (the file's 60), log level %s (the flag's warn)",
			c.FaceDetectorScore, c.TrimFrameStart, c.OutputVideoQuality, c.LogLevel)
	}
}

// Without --config-path, facefusion.ini is read from the working folder when it is there.
func TestINIFromWorkingFolder(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if c, err := ParseLoose(nil); err != nil || c.FaceDetectorScore != Default().FaceDetectorScore {
		t.Fatalf("no facefusion.ini: %v, score %v", err, c.FaceDetectorScore)
	}
	os.WriteFile(filepath.Join(dir, INIFile), []byte("[face_detector]\nface_detector_score = 0.8\n"), 0o644)
	c, err := ParseLoose(nil)
	if err != nil || c.FaceDetectorScore != 0.8 {
		t.Fatalf("facefusion.ini in the working folder: %v, score %v, want 0.8", err, c.FaceDetectorScore)
	}
	// A file named by --config-path replaces it.
	other := writeINI(t, "[face_detector]\nface_detector_score = 0.4\n")
	if c, err = ParseLoose([]string{"--config-path", other}); err != nil || c.FaceDetectorScore != 0.4 {
		t.Fatalf("--config-path: %v, score %v, want 0.4", err, c.FaceDetectorScore)
	}
}

// Every mistake is an error naming the file and what is wrong in it.
func TestINIErrors(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string
	}{
		{"unknown section", "[face_detecter]\nface_detector_score = 0.5\n", []string{":1: [face_detecter]: FaceFusion has no section [face_detecter]: did you mean [face_detector]?"}},
		{"unknown empty section", "[paths]\n[DEFAULT]\n", []string{":2: [DEFAULT]: FaceFusion has no section [DEFAULT]"}},
		{"unknown key", "[face_detector]\n\nface_detector_scor = 0.5\n", []string{":3: [face_detector] face_detector_scor", "no key", "did you mean face_detector_score?"}},
		{"key in another section", "[paths]\nface_swapper_model = inswapper_128\n", []string{"[paths] face_swapper_model", "belongs in section [processors]"}},
		{"a key of this program", "[misc]\nchunk_frames = 4\n", []string{"[misc] chunk_frames", "facefusion-hpc's own", "--chunk-frames"}},
		{"unknown model", "[face_masker]\nface_occluder_model = xseg_4\n", []string{"face_occluder_model (--face-occluder-model): \"xseg_4\" is not one of many, xseg_1, xseg_2, xseg_3"}},
		{"an ignored option's bad choice", "[memory]\nvideo_memory_strategy = lax\n", []string{"[memory] video_memory_strategy", `"lax" is not one of strict, moderate, tolerant`}},
		{"a slider past its end", "[processors]\nface_editor_head_yaw = 1.5\n", []string{"face_editor_head_yaw (--face-editor-head-yaw): 1.5 is not one of FaceFusion's choices, -1 to 1 in steps of 0.05"}},
		{"not a number", "[face_detector]\nface_detector_score = high\n", []string{"[face_detector] face_detector_score", `"high" is not a number`}},
		{"not a whole number", "[execution]\nexecution_thread_count = 2.5\n", []string{"[execution] execution_thread_count", "not a whole number"}},
		{"a model this program lacks", "[face_detector]\nface_detector_model = mtcnn\n", []string{"face_detector_model", `"mtcnn" is not one of`}},
		{"a bad log level", "[misc]\nlog_level = verbose\n", []string{"log_level", `"verbose" is not a log level`}},
		{"key before a section", "face_detector_score = 0.5\n", []string{":1:", "before the first [section]"}},
		{"no value", "[paths]\ntarget_path\n", []string{":2:", `"target_path" is not "key = value"`}},
		{"key twice", "[paths]\ntarget_path = a\ntarget_path = b\n", []string{":3:", "[paths] target_path is given twice"}},
		{"section twice", "[paths]\n[misc]\n[paths]\n", []string{":3:", "section [paths] is given twice"}},
		{"interpolation", "[paths]\ntemp_path = /scratch/%(user)s\n", []string{":2:", "interpolation", "%%"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ini := writeINI(t, c.text)
			_, err := Parse(append([]string{"--config-path", ini}, paths...))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append(c.want, ini) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "nope.ini")
	if _, err := Parse(append([]string{"--config-path", missing}, paths...)); err == nil || !strings.Contains(err.Error(), "--config-path "+missing+": no such file") {
		t.Errorf("a missing --config-path: %v", err)
	}
}

// configparser's rules as FaceFusion's files need them: ':' as well as '=', keys in any case,
// whole-line comments (inside a continued value too), no inline comments, "%%", a BOM.
func TestParseINI(t *testing.T) {
	text := "\ufeff# comment\n[Paths]\n  Target_Path: in put.mp4  \n; comment\n[x]\nk = a ; not a comment\nlist =\n    one\n    # skipped\n\n    two\npct = 100%%\n"
	entries, err := parseINI([]byte(text), "f.ini")
	if err != nil {
		t.Fatal(err)
	}
	want := []iniEntry{
		{section: "Paths", line: 2},
		{section: "Paths", key: "target_path", value: "in put.mp4", line: 3},
		{section: "x", line: 5},
		{section: "x", key: "k", value: "a ; not a comment", line: 6},
		{section: "x", key: "list", value: "\none\ntwo", line: 7},
		{section: "x", key: "pct", value: "100%", line: 12},
	}
	if !reflect.DeepEqual(entries, want) {
		t.Errorf("got\n%+v\nwant\n%+v", entries, want)
	}
}

// configparser's getboolean words.
func TestINIBool(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "yes": true, "True": true, "on": true, "0": false, "no": false, "FALSE": false, "off": false} {
		if got, err := iniBool(v); err != nil || got != want {
			t.Errorf("%s: %v, %v", v, got, err)
		}
	}
	if _, err := iniBool("maybe"); err == nil {
		t.Error("maybe is a boolean")
	}
}

// A switch set to false in facefusion.ini changes nothing, which is right only while every
// switch is off in the embedded default, the layer below the file.
func TestINISwitchesAreOffByDefault(t *testing.T) {
	for _, o := range options {
		if o.arg != "" || o.set == nil {
			continue
		}
		c := Default()
		if err := o.set(&c, nil); err != nil {
			t.Fatal(err)
		}
		if reflect.DeepEqual(c, Default()) {
			t.Errorf("--%s is on in the embedded default: a facefusion.ini setting it false would be ignored", o.long)
		}
	}
}
