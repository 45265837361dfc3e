package job

import (
	"fmt"
	"os"
	"path/filepath"
)

// Where the program finds the ONNX Runtime library and the model files. A setting wins (the key
// or its flag), then an environment variable, then the layout beside the program's own binary:
// the checkout that `make build` leaves (bin/facefusion beside .cache/) or the prefix that
// `make install` fills (bin/facefusion beside lib/facefusion/ and share/facefusion/). Every
// reader of the runtime or the models goes through ModelsLocation and RuntimeLocation.

// The install layout under PREFIX, the folder above the binary's bin/. internal/deps/install.sh
// writes it; its test (internal/deps) runs an installed binary from elsewhere, which holds the
// two together.
const (
	InstallRuntime = "lib/facefusion/libonnxruntime.so.1"
	InstallModels  = "share/facefusion/models"
)

// The environment variables that locate the runtime and the models; a key or flag wins over
// them.
const (
	// HomeEnv names a folder holding .cache/ort and .cache/models, as a checkout does.
	HomeEnv = "FACEFUSION_HOME"
	// ModelsEnv is the models folder.
	ModelsEnv = "FACEFUSION_MODELS_DIR"
	// RuntimeEnv is the ONNX Runtime library (for example a site's GPU build).
	RuntimeEnv = "ONNXRUNTIME_LIBRARY"
	// ProviderEnv is the GPU providers' plugin library, or the folder holding them.
	ProviderEnv = "FACEFUSION_EXECUTION_PROVIDER_LIBRARY"
)

// ProviderFile is the CUDA provider's plugin library in a folder: a folder holding it is one
// the GPU providers are looked for in (make fetch-gpu's, the install's, a site runtime's).
const ProviderFile = "libonnxruntime_providers_cuda.so"

// A Location is a path the program reads and what chose it, so that a message about a missing
// file says where the program looked and why there.
type Location struct {
	Path string
	From string
}

func (l Location) String() string { return fmt.Sprintf("%s (from %s)", l.Path, l.From) }

// ModelsLocation is the models folder: models_dir (--models-dir), else $FACEFUSION_MODELS_DIR,
// else beside the program.
func (c *Config) ModelsLocation() Location {
	if c.ModelsDir != "" {
		return Location{c.ModelsDir, "models_dir (--models-dir)"}
	}
	if d := os.Getenv(ModelsEnv); d != "" {
		return Location{d, "$" + ModelsEnv}
	}
	b := besideProgram()
	return Location{b.models, b.from}
}

// RuntimeLocation is the ONNX Runtime library: onnxruntime_library (--onnxruntime-library),
// else $ONNXRUNTIME_LIBRARY, else beside the program.
func (c *Config) RuntimeLocation() Location {
	if c.OnnxruntimeLibrary != "" {
		return Location{c.OnnxruntimeLibrary, "onnxruntime_library (--onnxruntime-library)"}
	}
	if p := os.Getenv(RuntimeEnv); p != "" {
		return Location{p, "$" + RuntimeEnv}
	}
	b := besideProgram()
	return Location{b.runtime, b.from}
}

// ProviderLibraryGiven reports whether the user named the GPU providers' library (the setting
// or the environment variable of ProviderLocation) rather than the program finding it.
func (c *Config) ProviderLibraryGiven() bool {
	return c.ExecutionProviderLibrary != "" || os.Getenv(ProviderEnv) != ""
}

// ProviderLocation is the GPU providers' plugin library or their folder:
// execution_provider_library (--execution-provider-library), else
// $FACEFUSION_EXECUTION_PROVIDER_LIBRARY, else the runtime's own folder when it holds the CUDA
// provider (an install, or a site's runtime with its providers), else beside the program (the
// install's lib/facefusion, a checkout's .cache/ort-gpu).
func (c *Config) ProviderLocation() Location {
	if c.ExecutionProviderLibrary != "" {
		return Location{c.ExecutionProviderLibrary, "execution_provider_library (--execution-provider-library)"}
	}
	if p := os.Getenv(ProviderEnv); p != "" {
		return Location{p, "$" + ProviderEnv}
	}
	rt := c.RuntimeLocation()
	if dir := filepath.Dir(rt.Path); isFile(filepath.Join(dir, ProviderFile)) {
		return Location{dir, "the runtime's folder (" + rt.From + ")"}
	}
	b := besideProgram()
	return Location{b.providers, b.from}
}

// ModelPath is the path of a model file in the models folder (ModelsLocation).
func (c *Config) ModelPath(name string) string {
	return filepath.Join(c.ModelsLocation().Path, name)
}

// RuntimeLibrary is the ONNX Runtime library's path (RuntimeLocation).
func (c *Config) RuntimeLibrary() string { return c.RuntimeLocation().Path }

// layout is where the runtime and the models are when no setting names them, and why there.
type layout struct {
	runtime, models, providers, from string
}

// besideProgram is the layout $FACEFUSION_HOME names, else the one beside the running binary
// (links resolved, so a link in ~/bin to an installed binary finds its install).
func besideProgram() layout {
	if h := os.Getenv(HomeEnv); h != "" {
		return cacheLayout(h, "$"+HomeEnv)
	}
	wd, _ := os.Getwd()
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return cacheLayout(wd, "the working folder (the program's own path is unknown)")
	}
	return layoutOf(exe, wd)
}

// layoutOf is the layout for the binary exe, in PREFIX/bin: PREFIX's install folders when
// either is there, else PREFIX/.cache when it is there (a checkout), else wd/.cache (a binary
// copied elsewhere and run from a checkout). The install comes first because a .cache beside
// bin/ is not only a checkout's: `make install PREFIX=$HOME` puts the binary in ~/bin, beside
// ~/.cache, the XDG cache every desktop has; a checkout has no lib/facefusion.
func layoutOf(exe, wd string) layout {
	prefix := filepath.Dir(filepath.Dir(exe))
	if isDir(filepath.Dir(filepath.Join(prefix, InstallRuntime))) || isDir(filepath.Join(prefix, InstallModels)) {
		return layout{
			runtime:   filepath.Join(prefix, InstallRuntime),
			models:    filepath.Join(prefix, InstallModels),
			providers: filepath.Dir(filepath.Join(prefix, InstallRuntime)),
			from:      "the install prefix of " + exe,
		}
	}
	if isDir(filepath.Join(prefix, ".cache")) {
		return cacheLayout(prefix, "the .cache beside "+exe)
	}
	return cacheLayout(wd, "the working folder: no .cache or install prefix beside "+exe)
}

func cacheLayout(home, from string) layout {
	return layout{
		runtime:   filepath.Join(home, ".cache", "ort", "libonnxruntime.so.1"),
		models:    filepath.Join(home, ".cache", "models"),
		providers: filepath.Join(home, ".cache", "ort-gpu"),
		from:      from,
	}
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
