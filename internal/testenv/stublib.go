package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// StubLibrary builds path, a shared library (gcc) that exports the named functions and needs
// (DT_NEEDED) the named sonames, which do not exist: each is built as an empty library to link
// against, then deleted, as a library the system lacks. A function named CreateEpFactories is
// ONNX Runtime's plugin entry point, which creates no factory, and comes with its
// ReleaseEpFactory; the others return 0.
func StubLibrary(t testing.TB, path string, exports, needs []string) string {
	t.Helper()
	gcc := Tool(t, "gcc")
	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("#include <stddef.h>\n")
	for _, name := range exports {
		if name == "CreateEpFactories" {
			src.WriteString("void *CreateEpFactories(const char *n, const void *api, const void *log, void **f, size_t max, size_t *num) { *num = 0; return NULL; }\n")
			src.WriteString("void *ReleaseEpFactory(void *f) { return NULL; }\n")
			continue
		}
		fmt.Fprintf(&src, "int %s(void) { return 0; }\n", name)
	}
	c := filepath.Join(dir, "stub.c")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-shared", "-fPIC", "-o", path, c, "-L" + dir, "-Wl,--no-as-needed"}
	for _, so := range needs {
		empty := filepath.Join(dir, so)
		if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", empty, "-Wl,-soname,"+so, "-x", "c", "/dev/null").CombinedOutput(); err != nil {
			t.Fatalf("gcc (%s): %v\n%s", so, err, out)
		}
		args = append(args, "-l:"+so)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc (%s): %v\n%s", path, err, out)
	}
	for _, so := range needs {
		os.Remove(filepath.Join(dir, so))
	}
	return path
}
