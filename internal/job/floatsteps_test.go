package job

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFloatRangesAreFaceFusions: every float key FaceFusion offers as create_float_range
// choices is in floatRanges with choices.py's start, stop and step, and is checked the same
// way from a flag, the job file and facefusion.ini: each choice accepted, a value between two
// choices (FaceFusion's "invalid choice") and one past the end refused with the range named.
func TestFloatRangesAreFaceFusions(t *testing.T) {
	// FaceFusion 3.8.1's choices.py and processors/modules/*/choices.py.
	want := map[string][3]float64{
		"face_detector_score": {0, 1, 0.05}, "face_landmarker_score": {0, 1, 0.05}, "face_mask_blur": {0, 1, 0.05},
		"reference_face_distance": {0, 1, 0.05}, "face_tracker_score": {0, 0.5, 0.05},
		"face_swapper_weight": {0, 1, 0.05}, "face_enhancer_weight": {0, 1, 0.05}, "lip_syncer_weight": {0, 1, 0.05},
		"output_image_scale": {0.25, 8, 0.25}, "output_video_scale": {0.25, 8, 0.25},
	}
	// face_editor's fourteen sliders (face_editor/choices.py): -1..1 in steps of 0.05
	for _, s := range []string{"eyebrow_direction", "eye_gaze_horizontal", "eye_gaze_vertical", "eye_open_ratio",
		"lip_open_ratio", "mouth_grim", "mouth_pout", "mouth_purse", "mouth_smile", "mouth_position_horizontal",
		"mouth_position_vertical", "head_pitch", "head_yaw", "head_roll"} {
		want["face_editor_"+s] = [3]float64{-1, 1, 0.05}
	}
	got := map[string][3]float64{}
	for _, r := range floatRanges {
		got[r.key] = [3]float64{r.start, r.stop, r.step}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("floatRanges %v, want FaceFusion's %v", got, want)
	}
	// Every float key of the job is one of them, but output_video_fps (normalize_fps's clamp).
	var c Config
	eachSetting(reflect.ValueOf(&c).Elem(), "", false, func(key string, v reflect.Value, _ bool) {
		if _, ok := want[key]; v.Kind() == reflect.Float64 && !ok && key != "output_video_fps" {
			t.Errorf("float key %s is not in floatRanges", key)
		}
	})

	dir := t.TempDir()
	for _, r := range floatRanges {
		flag := "--" + strings.ReplaceAll(r.key, "_", "-")
		section := iniSection(r.key)
		if section == "" {
			t.Fatalf("%s has no section in FaceFusion's facefusion.ini", r.key)
		}
		// Each way of giving v: the error, or nil.
		give := func(v string) []error {
			toml := filepath.Join(dir, "job.toml")
			ini := filepath.Join(dir, "facefusion.ini")
			if err := os.WriteFile(toml, []byte(r.key+" = "+v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ini, []byte("["+section+"]\n"+r.key+" = "+v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var errs []error
			for _, args := range [][]string{{flag, v}, {"--config", toml}, {"--config-path", ini}} {
				_, err := Parse(append(args, paths...))
				errs = append(errs, err)
			}
			return errs
		}
		// Every choice is taken as the flag's value; the three ways at the ends and the middle
		// (every way reaches the same check, and a Parse costs a millisecond and a half).
		n, mid := 0, int((r.stop-r.start)/r.step+0.5)/2
		for x := r.start; x <= r.stop+1e-9; x = math.Round((x+r.step)*100) / 100 {
			v := strconv.FormatFloat(x, 'f', -1, 64)
			if !strings.Contains(v, ".") {
				v += ".0" // a TOML float
			}
			if n == 0 || n == mid || x+r.step > r.stop+1e-9 {
				for i, err := range give(v) {
					if err != nil {
						t.Errorf("%s %s (way %d): %v, want it accepted", r.key, v, i, err)
					}
				}
			} else if f, err := parseFloat(flag, v); err != nil || !r.holds(f) {
				t.Errorf("%s %s: %v, in range %v, want it accepted", r.key, v, err, r.holds(f))
			}
			n++
		}
		if steps := int((r.stop-r.start)/r.step + 0.5); n != steps+1 {
			t.Errorf("%s: %d choices tried, want %d", r.key, n, steps+1)
		}
		for _, x := range []float64{r.start + r.step/3, r.stop - r.step*0.4, r.stop + r.step, r.start - r.step} {
			v := strconv.FormatFloat(x, 'f', -1, 64)
			msg := keyAndFlag(r.key) + ": " + strconv.FormatFloat(x, 'g', -1, 64) + " is not one of FaceFusion's choices, " + r.String()
			for i, err := range give(v) {
				if err == nil || !strings.Contains(err.Error(), msg) {
					t.Errorf("%s %s (way %d): %v, want %q", r.key, v, i, err, msg)
				}
			}
		}
		if o := lookup(flag); o == nil || o.arg != floatArg(r.key) || !slices.Contains([]string{"[0.0..1.0:0.05]", "[0.0..0.5:0.05]", "[0.25..8.0:0.25]", "[-1.0..1.0:0.05]"}, o.arg) {
			t.Errorf("%s's value in the help: %+v, want FaceFusion's metavar", flag, o)
		}
	}
}
