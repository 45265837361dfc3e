package infer_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
)

// telemetryChild marks the child process of TestNoTelemetryAtHome: the runtime is loaded once
// per process, so the home folder the runtime sees is set for a fresh one.
const telemetryChild = "FACEFUSION_TEST_TELEMETRY_CHILD"

// TestNoTelemetryAtHome: loading ONNX Runtime and running a session writes nothing into the
// user's home (the runtime's telemetry keeps an events database under
// ~/.cache/Microsoft/DeveloperTools/.onnxruntime unless it is turned off).
func TestNoTelemetryAtHome(t *testing.T) {
	if os.Getenv(telemetryChild) != "" {
		dir := fixtures.Dir(t, fixtures.Names[0])
		s := openFixture(t, dir, fixtures.Names[0], 1)
		if err := s.Run(1); err != nil {
			t.Fatal(err)
		}
		return
	}
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoTelemetryAtHome$", "-test.count=1")
	// Init sets ORT_DISABLE_TELEMETRY in this process when another test loaded the runtime:
	// the child must not inherit it, or it would not test Init's own.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ORT_DISABLE_TELEMETRY=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, telemetryChild+"=1", "HOME="+home, "XDG_CACHE_HOME=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child failed: %v\n%s", err, out)
	}
	filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
		if path != home {
			t.Errorf("written into the home folder: %s", path)
		}
		return nil
	})
}
