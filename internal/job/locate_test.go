package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// The binary's own folder decides the layout: an install prefix (even beside a .cache, as in
// $HOME), a checkout's .cache, or the working folder's .cache for a binary that has neither
// beside it.
func TestLayoutOf(t *testing.T) {
	root := t.TempDir()
	wd := filepath.Join(root, "wd")
	checkout := filepath.Join(root, "checkout")
	prefix := filepath.Join(root, "prefix")
	modelsOnly := filepath.Join(root, "models-only")
	home := filepath.Join(root, "home") // make install PREFIX=$HOME: ~/bin beside ~/.cache
	mkdirs(t, wd, filepath.Join(checkout, ".cache"), filepath.Join(prefix, "lib", "facefusion"),
		filepath.Join(modelsOnly, InstallModels), filepath.Join(root, "bare", "bin"),
		filepath.Join(home, ".cache"), filepath.Join(home, "lib", "facefusion"), filepath.Join(home, InstallModels))
	for _, c := range []struct {
		exe                   string
		runtime, models, from string
	}{
		{filepath.Join(checkout, "bin", "facefusion"),
			filepath.Join(checkout, ".cache/ort/libonnxruntime.so.1"), filepath.Join(checkout, ".cache/models"), "the .cache beside"},
		{filepath.Join(prefix, "bin", "facefusion"),
			filepath.Join(prefix, "lib/facefusion/libonnxruntime.so.1"), filepath.Join(prefix, "share/facefusion/models"), "the install prefix of"},
		{filepath.Join(modelsOnly, "bin", "facefusion"),
			filepath.Join(modelsOnly, "lib/facefusion/libonnxruntime.so.1"), filepath.Join(modelsOnly, "share/facefusion/models"), "the install prefix of"},
		{filepath.Join(home, "bin", "facefusion"),
			filepath.Join(home, "lib/facefusion/libonnxruntime.so.1"), filepath.Join(home, "share/facefusion/models"), "the install prefix of"},
		{filepath.Join(root, "bare", "bin", "facefusion"),
			filepath.Join(wd, ".cache/ort/libonnxruntime.so.1"), filepath.Join(wd, ".cache/models"), "the working folder: no .cache or install prefix beside"},
	} {
		got := layoutOf(c.exe, wd)
		if got.runtime != c.runtime || got.models != c.models || got.from != c.from+" "+c.exe {
			t.Errorf("layoutOf(%s) = %+v; want runtime %s, models %s, from %q", c.exe, got, c.runtime, c.models, c.from+" "+c.exe)
		}
	}
}

// A key beats its environment variable, which beats FACEFUSION_HOME, which beats the layout
// beside the binary; each Location says which one chose it.
func TestLocationPrecedence(t *testing.T) {
	home := t.TempDir()
	t.Setenv(HomeEnv, home)
	t.Setenv(ModelsEnv, "")
	t.Setenv(RuntimeEnv, "")
	var c Config
	if got := c.ModelsLocation(); got.Path != filepath.Join(home, ".cache", "models") || got.From != "$FACEFUSION_HOME" {
		t.Errorf("FACEFUSION_HOME only: models %v", got)
	}
	if got := c.RuntimeLocation(); got.Path != filepath.Join(home, ".cache", "ort", "libonnxruntime.so.1") || got.From != "$FACEFUSION_HOME" {
		t.Errorf("FACEFUSION_HOME only: runtime %v", got)
	}
	t.Setenv(ModelsEnv, "/env/models")
	t.Setenv(RuntimeEnv, "/env/libonnxruntime.so.1")
	if got := c.ModelsLocation(); got.Path != "/env/models" || got.From != "$FACEFUSION_MODELS_DIR" {
		t.Errorf("with FACEFUSION_MODELS_DIR: models %v", got)
	}
	if got := c.ModelPath("x.onnx"); got != "/env/models/x.onnx" {
		t.Errorf("with FACEFUSION_MODELS_DIR: ModelPath = %s", got)
	}
	if got := c.RuntimeLocation(); got.Path != "/env/libonnxruntime.so.1" || got.From != "$ONNXRUNTIME_LIBRARY" {
		t.Errorf("with ONNXRUNTIME_LIBRARY: runtime %v", got)
	}
	c.ModelsDir, c.OnnxruntimeLibrary = "/key/models", "/key/lib.so"
	if got := c.ModelsLocation(); got.Path != "/key/models" || !strings.HasPrefix(got.From, "models_dir") {
		t.Errorf("with models_dir: models %v", got)
	}
	if got := c.RuntimeLibrary(); got != "/key/lib.so" || !strings.HasPrefix(c.RuntimeLocation().From, "onnxruntime_library") {
		t.Errorf("with onnxruntime_library: runtime %v", c.RuntimeLocation())
	}
	if got := (Location{"/a", "b"}).String(); got != "/a (from b)" {
		t.Errorf("Location.String = %q", got)
	}
}

// The GPU providers' library: the key, then its variable, then the runtime's own folder when it
// holds the CUDA provider, then beside the program (a checkout's .cache/ort-gpu, an install's
// lib/facefusion).
func TestProviderLocationPrecedence(t *testing.T) {
	home := t.TempDir()
	t.Setenv(HomeEnv, home)
	t.Setenv(RuntimeEnv, "")
	t.Setenv(ProviderEnv, "")
	var c Config
	if got := c.ProviderLocation(); got.Path != filepath.Join(home, ".cache", "ort-gpu") || got.From != "$FACEFUSION_HOME" {
		t.Errorf("FACEFUSION_HOME only: providers %v", got)
	}
	site := t.TempDir()
	c.OnnxruntimeLibrary = filepath.Join(site, "libonnxruntime.so.1")
	if got := c.ProviderLocation(); got.Path != filepath.Join(home, ".cache", "ort-gpu") {
		t.Errorf("a runtime folder without providers: providers %v, want the cache's", got)
	}
	if err := os.WriteFile(filepath.Join(site, ProviderFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := c.ProviderLocation(); got.Path != site || !strings.HasPrefix(got.From, "the runtime's folder (onnxruntime_library") {
		t.Errorf("a runtime folder holding the CUDA provider: providers %v", got)
	}
	t.Setenv(ProviderEnv, "/env/ort-gpu")
	if got := c.ProviderLocation(); got.Path != "/env/ort-gpu" || got.From != "$"+ProviderEnv {
		t.Errorf("with %s: providers %v", ProviderEnv, got)
	}
	c.ExecutionProviderLibrary = "/key/libonnxruntime_providers_cuda.so"
	if got := c.ProviderLocation(); got.Path != c.ExecutionProviderLibrary || !strings.HasPrefix(got.From, "execution_provider_library") {
		t.Errorf("with execution_provider_library: providers %v", got)
	}
	exe := filepath.Join(t.TempDir(), "bin", "facefusion")
	os.MkdirAll(filepath.Join(filepath.Dir(filepath.Dir(exe)), "lib", "facefusion"), 0o755)
	if got := layoutOf(exe, "/wd"); got.providers != filepath.Join(filepath.Dir(filepath.Dir(exe)), "lib", "facefusion") {
		t.Errorf("an install: providers %s, want beside the runtime", got.providers)
	}
}
