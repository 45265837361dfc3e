package infer

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// initProbeEnv makes the test binary a child that only calls Init with the named library and
// prints the result: Init is once per process, so its failure message is tested in a fresh one.
const initProbeEnv = "INFER_TEST_INIT_PROBE"

func TestMain(m *testing.M) {
	if lib, ok := os.LookupEnv(initProbeEnv); ok {
		if err := Init(lib); err != nil {
			fmt.Println("ERROR:", err)
		} else {
			fmt.Println("OK")
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestInit(t *testing.T) {
	lib := testenv.ORTLibrary(t)
	if err := Init(lib); err != nil {
		t.Fatal(err)
	}
	if err := Init(lib); err != nil {
		t.Errorf("Init again with the same library: %v", err)
	}
	other := filepath.Join(t.TempDir(), "libonnxruntime.so.1")
	testenv.CheckError(t, "Init with another library", Init(other), lib, other, "already loaded")
}

// TestInitFailures runs Init in fresh processes, since a process loads the runtime only once.
func TestInitFailures(t *testing.T) {
	dir := t.TempDir()
	notLib := filepath.Join(dir, "libonnxruntime.so.1")
	if err := os.WriteFile(notLib, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A truncated copy used to be mapped by dlopen and die with SIGBUS in the probe process.
	truncated := truncatedLibrary(t, dir)
	for _, c := range []struct{ what, path, why string }{
		{"missing library", filepath.Join(dir, "missing", "libonnxruntime.so.1"), "not found"},
		{"not a shared library", notLib, "is truncated or not a shared library (not a readable ELF file"},
		{"directory", dir, "is a directory"},
		{"truncated library", truncated, "is truncated or not a shared library"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), initProbeEnv+"="+c.path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: probe process: %v: %s", c.what, err, out)
		}
		msg, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "ERROR: ")
		if !ok {
			t.Errorf("%s: Init succeeded or printed something else: %q", c.what, out)
			continue
		}
		hint := "run `make fetch` or set onnxruntime_library in the config"
		if strings.Contains(c.why, "truncated") {
			hint = "run `make fetch` again, or point onnxruntime_library at a complete file"
		}
		for _, w := range []string{c.path, c.why, hint} {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error %q does not mention %q", c.what, msg, w)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: error spans lines: %q", c.what, msg)
		}
	}
}
