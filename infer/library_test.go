package infer

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// truncatedLibrary is the fetched runtime library cut to half its size, in dir.
func truncatedLibrary(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(testenv.ORTLibrary(t))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "half", "libonnxruntime.so.1")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckLibrary(t *testing.T) {
	lib := testenv.ORTLibrary(t)
	if err := checkLibrary(lib); err != nil {
		t.Fatalf("the fetched library: %v", err)
	}
	data, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Without section headers (e_shoff, e_shnum, e_shstrndx zeroed, as a loader allows), the
	// loadable segments alone must catch the cut.
	noSections := append([]byte(nil), data...)
	binary.LittleEndian.PutUint64(noSections[0x28:], 0)
	binary.LittleEndian.PutUint16(noSections[0x3c:], 0)
	binary.LittleEndian.PutUint16(noSections[0x3e:], 0)
	if err := checkLibrary(write("whole-no-sections.so", noSections)); err != nil {
		t.Fatalf("a complete library without section headers: %v", err)
	}
	// A section (header 1, never the names' table) that points past the file's end.
	sectionOut := append([]byte(nil), data...)
	shoff := binary.LittleEndian.Uint64(data[0x28:])
	binary.LittleEndian.PutUint64(sectionOut[shoff+64+0x18:], uint64(len(data)))
	executable, err := os.ReadFile("/bin/true") // an ELF file, but no shared object
	if err != nil {
		t.Fatal(err)
	}
	exe := append([]byte(nil), executable...)
	binary.LittleEndian.PutUint16(exe[0x10:], 2) // e_type ET_EXEC: /bin/true may be PIE (ET_DYN)
	for _, c := range []struct {
		name string
		data []byte
		why  string
	}{
		{"half.so", data[:len(data)/2], "its section header table ends at byte"},
		{"last-byte.so", data[:len(data)-1], "its section header table ends at byte"},
		{"header-only.so", data[:64], "its section header table ends at byte"},
		{"segments-cut.so", noSections[:len(data)*6/10], "loadable segment"},
		{"section-out.so", sectionOut, "(section ."},
		{"empty.so", nil, "not a readable ELF file"},
		{"text.so", []byte("INPUT(libonnxruntime.so.1.30.0)\n"), "not a readable ELF file"},
		{"executable.so", exe, "not a shared object"},
	} {
		p := write(c.name, c.data)
		err := checkLibrary(p)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		msg := err.Error()
		for _, w := range []string{"ONNX Runtime library " + p + " is truncated or not a shared library (", c.why,
			"): run `make fetch` again, or point onnxruntime_library at a complete file"} {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error %q does not say %q", c.name, msg, w)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: error spans lines: %q", c.name, msg)
		}
	}
}
