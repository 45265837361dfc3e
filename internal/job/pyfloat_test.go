package job

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parseFloat accepts what Python 3's float() accepts, with the same number, and refuses the
// rest: each case's answer is CPython 3.11's (python3 -c 'print(float(s))').
func TestParseFloatIsPythons(t *testing.T) {
	for _, c := range []struct {
		s    string
		want float64 // NaN: refused, unless nan
		nan  bool
	}{
		{"0.5", 0.5, false}, {"1_0", 10, false}, {" 1.5\n", 1.5, false}, {".5", 0.5, false}, {"5.", 5, false},
		{"+.5", 0.5, false}, {"-.5e-3", -0.0005, false}, {"1e1_0", 1e10, false}, {"1E+2", 100, false},
		{"Infinity", math.Inf(1), false}, {"-iNF", math.Inf(-1), false}, {"+nan", 0, true}, {"-NaN", 0, true},
		{"1e400", math.Inf(1), false}, {"\u00a01\u3000", 1, false}, {"\u0661.\u0665", 1.5, false},
		{"\U0001D7D9", 1, false}, {"\u0663_\u0663", 33, false}, {"0.05", 0.05, false}, {"-1", -1, false},
	} {
		got, err := parseFloat("x", c.s)
		if err != nil || (c.nan != math.IsNaN(got)) || (!c.nan && got != c.want) {
			t.Errorf("parseFloat(%q) = %v, %v; want Python's %v", c.s, got, err, c.want)
		}
	}
	for _, s := range []string{"0x1p-1", "0x10", "0X1P0", "1__0", "_1", "1_", "1_.5", "1._5", ".", "e5", "1e", "1e+_5",
		"infinit", "nan()", "\x1c1", "1\x1f", "1\u00a00", "1.5f", "1,5", "", "  ", "+", "-+1", "1d5", "1 0", "\x7f1", "½"} {
		if got, err := parseFloat("face-detector-score", s); err == nil || !strings.HasPrefix(err.Error(), "--face-detector-score: ") ||
			!strings.Contains(err.Error(), "is not a number") || strings.Contains(err.Error(), "\n") {
			t.Errorf("parseFloat(%q) = %v, %v; want refused in one line naming the flag, as Python's float() refuses it", s, got, err)
		}
	}
}

// Every float option, given as a flag or in facefusion.ini, refuses a hexadecimal float as
// FaceFusion does, with one line naming it, and takes Python's forms of a choice
// (underscores, whitespace) as FaceFusion does.
func TestFloatOptionsReadAsPython(t *testing.T) {
	dir := t.TempDir()
	ini := filepath.Join(dir, "facefusion.ini")
	keys := []string{"output_video_fps"}
	for _, r := range floatRanges {
		keys = append(keys, r.key)
	}
	for _, key := range keys {
		flag := "--" + strings.ReplaceAll(key, "_", "-")
		if err := os.WriteFile(ini, []byte("["+iniSection(key)+"]\n"+key+" = 0x1p-1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{flag, "0x1p-1"}, {"--config-path", ini}} {
			_, err := Parse(append(args, paths...))
			if err == nil || !strings.Contains(err.Error(), "0x1p-1") || !strings.Contains(err.Error(), "is not a number") ||
				!(strings.Contains(err.Error(), flag) || strings.Contains(err.Error(), key)) {
				t.Errorf("%s given as %v: %v, want the hex float refused naming it", key, args[0], err)
			}
		}
	}
	c, err := Parse(append([]string{"--face-detector-score", " 0.2_5 ", "--output-video-fps", "2_5"}, paths...))
	if err != nil || c.FaceDetectorScore != 0.25 || c.OutputVideoFPS != 25 {
		t.Errorf("Python's forms: %v, score %v, fps %v; want 0.25 and 25", err, c.FaceDetectorScore, c.OutputVideoFPS)
	}
}
