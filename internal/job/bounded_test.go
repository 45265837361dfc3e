package job

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// The inputs a user names (the TOML job file, facefusion.ini) are refused, promptly and with
// the file and the limit named, when they are a FIFO (which a plain open would wait on for a
// writer), a device that never ends, or a file over the limit (sparse: no disk spent).
func TestConfigInputsAreBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	if f, err := os.Create(huge); err != nil {
		t.Fatal(err)
	} else if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	} else {
		f.Close()
	}
	for _, c := range []struct{ path, want string }{
		{fifo, "is a FIFO (named pipe), not a regular file"},
		{"/dev/zero", "is a character device, not a regular file"},
		{huge, "is larger than the 1 MiB this program reads"},
	} {
		for _, load := range []struct {
			name string
			f    func(string, *Config) error
			want string
		}{
			{"LoadFile", LoadFile, "give a TOML job file"},
			{"LoadINI", LoadINI, "--config-path: "},
		} {
			cfg := Default()
			err := testenv.Guard(t, 10*time.Second, load.name+" "+c.path, func() error { return load.f(c.path, &cfg) })
			if err == nil || !strings.Contains(err.Error(), c.path+" "+c.want) || !strings.Contains(err.Error(), load.want) {
				t.Errorf("%s %s: %v: want it refused (%q, %q)", load.name, c.path, err, c.want, load.want)
			}
		}
	}
	// facefusion.ini in the working folder, read without being named, is refused the same way.
	t.Chdir(dir)
	if err := syscall.Mkfifo(INIFile, 0o644); err != nil {
		t.Fatal(err)
	}
	c := Default()
	err := testenv.Guard(t, 10*time.Second, "facefusion.ini as a FIFO", func() error { return LoadINI("", &c) })
	if err == nil || !strings.Contains(err.Error(), "facefusion.ini is a FIFO") || !strings.Contains(err.Error(), "move it away") {
		t.Errorf("facefusion.ini a FIFO in the working folder: %v", err)
	}
}

// A huge key, value or run of continued lines is refused, and the error quotes an excerpt of
// it, never the whole. That the time grows with the size, not its square, is BenchmarkIni's and
// BenchmarkConfig's to show (100 kB to 10 MB); here a hang guard only.
func TestHugeKeysAndValuesParseInTimeAndErrBriefly(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: parses megabyte keys and values (make test)")
	}
	const n = 1_000_000
	filler := func(b byte) string { return strings.Repeat(string(b), n) }
	for _, c := range []struct {
		name, text string
		load       func(string, *Config) error
	}{
		{"ini key", "[misc]\n" + filler('k') + " = 1\n", LoadINI},
		{"ini section", "[" + filler('s') + "]\n", LoadINI},
		{"ini value", "[misc]\nlog_level = " + filler('v') + "\n", LoadINI},
		{"ini unsupported value", "[uis]\nui_layouts = " + filler('u') + "\n", LoadINI},
		{"ini number", "[face_detector]\nface_detector_score = " + filler('9') + "\n", LoadINI},
		{"ini not key = value", "[misc]\n" + filler('w') + "\n", LoadINI},
		{"ini continued lines", "[processors]\nprocessors = face_swapper\n" + strings.Repeat(" x\n", n/3), LoadINI},
		{"ini many bad lines", "[misc]\n" + manyKeys(n/14), LoadINI},
		{"toml key", filler('k') + " = 1\n", LoadFile},
		{"toml value", "log_level = \"" + filler('v') + "\"\n", LoadFile},
		{"toml number", "chunk_frames = " + filler('9') + "\n", LoadFile},
		{"toml list", "processors = [" + strings.Repeat(`"p",`, n/4) + "]\n", LoadFile},
		{"toml wrong type", "face_detector_score = \"" + filler('v') + "\"\n", LoadFile},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := Default()
			err := testenv.Guard(t, 30*time.Second, c.name, func() error { return c.load(path, &cfg) })
			if err == nil {
				err = cfg.Validate()
			}
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); len(msg) > 1500 || strings.Contains(msg, strings.Repeat(msg[len(msg)/2:len(msg)/2+1], 2*safefs.ExcerptLen)) {
				t.Errorf("error of %d bytes: %.1000s", len(msg), msg)
			}
		})
	}
}

// manyKeys is n lines of keys FaceFusion does not have, each its own.
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "zz%d = 1\n", i)
	}
	return b.String()
}
