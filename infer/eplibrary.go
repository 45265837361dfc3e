package infer

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// GPU providers as plugin libraries. The runtime make fetch brings is ONNX Runtime's CPU build;
// its CUDA and TensorRT providers come as separate libraries (make fetch-gpu), which the runtime
// loads as plugin execution providers (RegisterExecutionProviderLibrary) and runs on the
// devices they report (GetEpDevices), one of which a session takes: the rank's bound GPU. A
// runtime with the providers built in (a site's GPU build) runs them without a plugin library.

// providerFiles are the provider libraries' names in a folder (ONNX Runtime's own).
var providerFiles = map[string]string{
	ProviderCUDA:     "libonnxruntime_providers_cuda.so",
	ProviderTensorRT: "libonnxruntime_providers_tensorrt.so",
}

// sharedProviderFile is the library ONNX Runtime's provider libraries take their host
// interface from (they import Provider_GetHost); the runtime loads it from its own folder.
const sharedProviderFile = "libonnxruntime_providers_shared.so"

// providerHint is what a user does about a missing or broken provider library.
const providerHint = "run `make fetch-gpu`, or set execution_provider_library"

var providerKind = libraryKind{"provider library", "make fetch-gpu", "execution_provider_library"}

// providerTitle is a provider's name in messages.
var providerTitle = map[string]string{ProviderCUDA: "CUDA", ProviderTensorRT: "TensorRT"}

var plugins struct {
	mu         sync.Mutex
	path, from string             // the setting (SetProviderLibrary)
	by         map[string]*plugin // by library file: a registration is once per process
}

// A plugin is one provider library and what became of it.
type plugin struct {
	provider, file string
	name           string // its registration name, one a library: a failed one may be tried again
	version        string // the ONNX Runtime version it was built for, "" when unknown
	versionFrom    string // where version was read
	err            error  // why it cannot run; nil once registered
	gpus           []epDevice
}

// SetProviderLibrary says where the GPU providers' plugin libraries are: a provider library
// file (TensorRT's when its name says tensorrt, else CUDA's), or a folder holding
// libonnxruntime_providers_{cuda,tensorrt}.so; from is what chose it, for messages. A library
// registered once stays registered for the life of the process.
func SetProviderLibrary(path, from string) {
	plugins.mu.Lock()
	defer plugins.mu.Unlock()
	plugins.path, plugins.from = path, from
}

// providerFile is provider p's library under the setting, or "" and why there is none.
func providerFile(p string) (file, why string) {
	plugins.mu.Lock()
	path, from := plugins.path, plugins.from
	plugins.mu.Unlock()
	none := fmt.Sprintf("no %s provider library (%s)", providerTitle[p], providerHint)
	if path == "" {
		return "", none
	}
	st, err := os.Stat(path)
	if err != nil {
		// Not there (make fetch-gpu's folder before it ran) or not readable: neither a folder nor
		// a file to tell the providers apart by.
		return "", fmt.Sprintf("%s: %s (from %s): %s", none, path, from, statWhy(err))
	}
	if st.IsDir() {
		f := filepath.Join(path, providerFiles[p])
		if _, err := os.Stat(f); errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Sprintf("%s: %s (from %s) has no %s", none, path, from, providerFiles[p])
		} else if err != nil {
			return "", fmt.Sprintf("%s: %s (from %s): %s", none, f, from, statWhy(err))
		}
		return f, ""
	}
	if fileProvider(path) != p {
		return "", fmt.Sprintf("%s: %s (from %s) is the %s one", none, path, from, providerTitle[fileProvider(path)])
	}
	return path, ""
}

// statWhy is why os.Stat failed, without the path its error repeats.
func statWhy(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "not found"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func fileProvider(path string) string {
	if strings.Contains(strings.ToLower(filepath.Base(path)), ProviderTensorRT) {
		return ProviderTensorRT
	}
	return ProviderCUDA
}

// loadPlugin registers provider p's library file with the runtime, once per process.
func loadPlugin(p, file string) *plugin {
	// The runtime takes a relative path from its own folder, not the working one.
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	plugins.mu.Lock()
	defer plugins.mu.Unlock()
	if pl := plugins.by[file]; pl != nil {
		return pl
	}
	pl := &plugin{provider: p, file: file, name: fmt.Sprintf("facefusion-%s-%d", p, len(plugins.by))}
	pl.version, pl.versionFrom = builtFor(file)
	pl.err = pl.register()
	if plugins.by == nil {
		plugins.by = map[string]*plugin{}
	}
	plugins.by[file] = pl
	return pl
}

// builtFor is the runtime version in the VERSION file beside the library (make fetch-gpu writes
// it), and that file's path.
func builtFor(file string) (version, from string) {
	from = filepath.Join(filepath.Dir(file), "VERSION")
	b, err := os.ReadFile(from)
	if err != nil {
		return "", ""
	}
	return strings.TrimSpace(string(b)), from
}

// register checks pl's file, registers it and keeps its GPU devices; the error says what is
// missing in one line.
func (pl *plugin) register() error {
	title := providerTitle[pl.provider] + " provider library " + pl.file
	if _, err := os.Stat(pl.file); err != nil {
		return fmt.Errorf("%s: not found (%s)", title, providerHint)
	}
	k := providerKind
	k.what = providerTitle[pl.provider] + " " + k.what
	if err := checkELF(pl.file, k); err != nil {
		return err
	}
	bridge, err := pluginExports(pl.file)
	if err != nil {
		return fmt.Errorf("%s: %v", title, err)
	}
	rt := RuntimeVersion()
	if pl.version != "" && major(pl.version) != major(rt) {
		return fmt.Errorf("%s is built for ONNX Runtime %s (%s), but the runtime is %s: use the provider library of the runtime's version (%s)", title, pl.version, pl.versionFrom, rt, providerHint)
	}
	if bridge {
		// What it needs is said before what the runtime needs for it.
		if err := dlopenProbe(pl.file); err != nil {
			return fmt.Errorf("%s cannot be loaded: %s%s", title, loadWhy(err), pl.versionNote(rt))
		}
		if err := sharedBesideRuntime(pl.file); err != nil {
			return fmt.Errorf("%s: %v", title, err)
		}
	}
	runtimeState.mu.Lock()
	err = bindEPAPI()
	runtimeState.mu.Unlock()
	if err != nil {
		return err
	}
	before, err := epDevices()
	if err != nil {
		return fmt.Errorf("%s: listing the runtime's devices: %v", title, err)
	}
	if err := epRegister(pl.name, pl.file); err != nil {
		return fmt.Errorf("%s cannot be loaded: %s%s", title, loadWhy(err), pl.versionNote(rt))
	}
	after, err := epDevices()
	if err != nil {
		return fmt.Errorf("%s: listing its devices: %v", title, err)
	}
	for _, d := range after {
		if !slices.ContainsFunc(before, func(b epDevice) bool { return b.c == d.c }) && d.gpu {
			pl.gpus = append(pl.gpus, d)
			if pl.version == "" && d.version != "" {
				pl.version, pl.versionFrom = d.version, "the provider"
			}
		}
	}
	return nil
}

// versionNote says that the library was built for another runtime version, for a failure line.
func (pl *plugin) versionNote(rt string) string {
	if pl.version == "" || pl.version == rt {
		return ""
	}
	return fmt.Sprintf(" (it is built for ONNX Runtime %s; the runtime is %s)", pl.version, rt)
}

func major(v string) string {
	m, _, _ := strings.Cut(v, ".")
	return m
}

// pluginExports checks that file is a plugin provider (it exports CreateEpFactories and
// ReleaseEpFactory) and reports
// whether it is one of ONNX Runtime's provider-bridge libraries (it exports GetProvider too).
func pluginExports(file string) (bridge bool, err error) {
	f, err := elf.Open(file)
	if err != nil {
		return false, err
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return false, fmt.Errorf("not a plugin provider: no dynamic symbols (%v)", err)
	}
	has := func(name string) bool {
		return slices.ContainsFunc(syms, func(s elf.Symbol) bool { return s.Name == name && s.Section != elf.SHN_UNDEF })
	}
	if !has("CreateEpFactories") {
		return false, errors.New("not a plugin provider: it exports no CreateEpFactories, ONNX Runtime's entry point for one (a provider library that only loads into a GPU build of the runtime: set onnxruntime_library to that build instead)")
	}
	return has("GetProvider"), nil
}

// sharedBesideRuntime checks that libonnxruntime_providers_shared.so is in the runtime's folder,
// the only place the runtime loads it from for a provider-bridge library (which takes its host
// interface from that copy): a copy elsewhere, even loaded, is not the one the runtime sets up.
func sharedBesideRuntime(file string) error {
	dir := sharedHostDir()
	if _, err := os.Stat(filepath.Join(dir, sharedProviderFile)); err == nil {
		return nil
	}
	src := filepath.Join(filepath.Dir(file), sharedProviderFile)
	if _, err := os.Stat(src); err != nil {
		src = "the one of the provider's ONNX Runtime build"
	}
	return fmt.Errorf("the runtime loads %s from its own folder %s only, and it is not there: link or copy %s there (`make install` puts them together)", sharedProviderFile, dir, src)
}

// sharedHostDir is the runtime's folder, where sharedBesideRuntime looks; a variable so that
// the tests' answer does not depend on whether make fetch-gpu has linked the file there.
var sharedHostDir = func() string { return filepath.Dir(runtimeLibraryPath()) }

func runtimeLibraryPath() string {
	runtimeState.mu.Lock()
	defer runtimeState.mu.Unlock()
	return runtimeState.path
}

// Why a provider library does not load, as ONNX Runtime says it ("Failed to load library X
// with error: Y"): Y, with what to do about a missing CUDA library or driver.
var (
	loadFailed    = regexp.MustCompile(`Failed to load library \S+ with error: (.*)$`)
	missingShared = regexp.MustCompile(`^(lib\S+\.so[.0-9]*): cannot open shared object file`)
)

func loadWhy(err error) string {
	msg := providerWhy(err)
	if m := loadFailed.FindStringSubmatch(msg); m != nil {
		msg = m[1]
	}
	m := missingShared.FindStringSubmatch(msg)
	switch {
	case m == nil:
		return msg
	case m[1] == driverLibrary:
		return "no NVIDIA driver: " + msg + " (run on a GPU node)"
	case strings.HasPrefix(m[1], "libcudnn"):
		return msg + " (cuDNN 9 is missing: load the site's cuDNN module or add its lib folder to LD_LIBRARY_PATH)"
	case strings.HasPrefix(m[1], "libnvinfer") || strings.HasPrefix(m[1], "libnvonnxparser"):
		return msg + " (TensorRT 10 is missing: load the site's TensorRT module or add its lib folder to LD_LIBRARY_PATH)"
	}
	return msg + " (CUDA 13's libraries are missing: load the site's CUDA 13 module, with cuDNN 9, or add their lib folders to LD_LIBRARY_PATH)"
}

// device is the plugin's device for the rank's GPU: the one whose provider option device_id is
// id (ONNX Runtime's CUDA provider numbers its devices by CUDA ordinal), else the id-th GPU.
func (pl *plugin) device(id int) (epDevice, error) {
	var ids []string
	for _, d := range pl.gpus {
		if d.deviceID == strconv.Itoa(id) {
			return d, nil
		}
		if d.deviceID != "" {
			ids = append(ids, d.deviceID)
		}
	}
	if len(ids) == 0 && id >= 0 && id < len(pl.gpus) {
		return pl.gpus[id], nil
	}
	if len(pl.gpus) == 0 {
		return epDevice{}, fmt.Errorf("the %s provider (%s) finds no GPU here", providerTitle[pl.provider], pl.file)
	}
	return epDevice{}, fmt.Errorf("the %s provider (%s) has %d GPU(s) (device_id %s), not the rank's device %d: check CUDA_VISIBLE_DEVICES and execution_device_ids",
		providerTitle[pl.provider], pl.file, len(pl.gpus), strings.Join(ids, ", "), id)
}

// A ProviderLibrary is a GPU provider's plugin library, for probe and models.
type ProviderLibrary struct {
	Provider string // cuda, tensorrt
	Path     string // "" when none is found
	Version  string // the ONNX Runtime version it is built for ("" unknown), and from where
	Loaded   bool
	GPUs     int    // devices it runs on here
	Why      string // why it is not loaded or has no GPU
}

// ProviderLibraries registers the GPU providers' libraries (SetProviderLibrary) with the
// loaded runtime (Init) and says what became of each.
func ProviderLibraries() []ProviderLibrary {
	var out []ProviderLibrary
	for _, p := range []string{ProviderCUDA, ProviderTensorRT} {
		file, why := providerFile(p)
		if file == "" {
			out = append(out, ProviderLibrary{Provider: p, Why: why})
			continue
		}
		pl := loadPlugin(p, file)
		l := ProviderLibrary{Provider: p, Path: pl.file, Loaded: pl.err == nil, GPUs: len(pl.gpus)}
		if pl.version != "" {
			l.Version = pl.version + " (" + pl.versionFrom + ")"
		}
		switch {
		case pl.err != nil: // the line without the library's name, which Path gives
			l.Why = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(pl.err.Error(), providerTitle[p]+" provider library "+pl.file), ":"))
		case len(pl.gpus) == 0:
			l.Why = "loaded, but it finds no GPU here"
			// The driver is why, where it is missing: probe's runtime line leaves the why of a
			// provider with a library to this line.
			if err := cudaDriver(); err != nil {
				l.Why += " (" + err.Error() + ")"
			}
		}
		out = append(out, l)
	}
	return out
}

// String is one line: the library, its version and what loaded or why not.
func (l ProviderLibrary) String() string {
	if l.Path == "" {
		return l.Why
	}
	s := l.Path
	if l.Version != "" {
		s += ", built for ONNX Runtime " + l.Version
	}
	switch {
	case l.Loaded && l.GPUs > 0:
		return fmt.Sprintf("%s: loaded, %d GPU(s)", s, l.GPUs)
	}
	return s + ": " + l.Why
}
