package job

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// FuzzINI feeds the facefusion.ini reader any bytes (the file is the user's, or a colleague's
// in a shared working folder): parseINI and loadINI give entries or an error naming the file,
// never a panic, and what parses, written back out (iniText), parses to the same entries. The
// seeds are FaceFusion 3.8.1's own facefusion.ini (../shared/reference), the embedded copy and
// files that set keys of each kind, with continuation lines, comments and a '%%'.
func FuzzINI(f *testing.F) {
	ref, err := os.ReadFile(filepath.Join(testenv.Root(f), "..", "shared", "reference", "facefusion-3.8.1", "facefusion.ini"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ref)
	f.Add(shippedINI)
	f.Add([]byte("\ufeff[face_detector]\nface_detector_angles = 0\nface_detector_margin = 0 0  0 0\r\n" +
		"[face_masker]\n; a comment\nface_occluder_model = xseg_1\nface_mask_types = box\n  occlusion\n\n" +
		"[output_creation]\noutput_video_quality: 80\n[paths]\noutput_pattern = out-100%%\n"))
	f.Add([]byte("[misc]\nlog_level = debug\nhalt_on_error = true\n[execution]\nexecution_thread_count = 4\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Default()
		if err := loadINI(data, "fuzz.ini", &c); err != nil && !strings.Contains(err.Error(), "fuzz.ini") {
			t.Fatalf("an error that does not name the file: %v", err)
		}
		entries, err := parseINI(data, "fuzz.ini")
		if err != nil {
			return
		}
		again, err := parseINI([]byte(iniText(entries)), "again.ini")
		if err != nil {
			t.Fatalf("%q, written back as %q: %v", data, iniText(entries), err)
		}
		for i := range again {
			again[i].line = entries[i].line
		}
		if !reflect.DeepEqual(again, entries) && (len(again) > 0 || len(entries) > 0) {
			t.Fatalf("%q, written back as %q, reads as\n%+v\nnot\n%+v", data, iniText(entries), again, entries)
		}
	})
}

// iniText writes entries as a facefusion.ini: '%' doubled, a value's further lines indented.
func iniText(entries []iniEntry) string {
	var b strings.Builder
	for _, e := range entries {
		if e.key == "" {
			b.WriteString("[" + e.section + "]\n")
			continue
		}
		v := strings.ReplaceAll(strings.ReplaceAll(e.value, "%", "%%"), "\n", "\n\t")
		b.WriteString(e.key + " = " + v + "\n")
	}
	return b.String()
}
