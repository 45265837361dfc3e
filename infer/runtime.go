// Package infer runs the pipeline's neural networks on ONNX Runtime and adapts each model's
// tensors to the pipeline's types; it is the only package that touches the runtime.
//
// The runtime is a shared library loaded once per process (Init). Each model adapter (BlazeFace,
// …) owns one ONNX Runtime session and its input and output tensors, allocated once and reused
// on every call, so steady-state inference allocates nothing. An adapter is used by one goroutine
// at a time; a pipeline creates one per worker.
package infer

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// Options configures a model session.
type Options struct {
	// Library is the ONNX Runtime shared library. When set, the adapter constructors call Init
	// with it (a no-op when the process already loaded that library).
	Library string
	// IntraOpThreads is the number of threads one inference may use; 0 means 1, which is the
	// fastest for small models such as BlazeFace on a shared CPU and leaves cores to the other
	// pipeline workers.
	IntraOpThreads int
	// Execution chooses the providers (cuda, tensorrt, cpu) as for FaceFusion's models; the
	// zero value is CPU. Its Threads field is ignored here: IntraOpThreads rules.
	Execution Execution
	// Logf receives the provider fallback line; nil means the process log's warnings.
	Logf func(format string, args ...any)
}

// fetchHint is what a user does about a missing or broken runtime or model file.
const fetchHint = "run `make fetch` or set onnxruntime_library in the config"

var runtimeState struct {
	mu   sync.Mutex
	path string // the library loaded; "" until a load succeeds
}

// RuntimeVersion is the loaded ONNX Runtime core's version ("1.30.0"), "" before Init.
func RuntimeVersion() string {
	if !ortReady() {
		return ""
	}
	return ort.GetVersion()
}

// Init loads the ONNX Runtime shared library at libraryPath and creates the process-wide
// runtime environment. It may be called many times with the same path; asking for a different
// library once one is loaded is an error, because the runtime cannot be unloaded safely while
// sessions exist. A failed load may be retried.
func Init(libraryPath string) error {
	runtimeState.mu.Lock()
	defer runtimeState.mu.Unlock()
	if runtimeState.path != "" {
		if runtimeState.path == libraryPath {
			return nil
		}
		return fmt.Errorf("onnx runtime: %s is already loaded in this process; cannot switch to %s: use one onnxruntime_library per process",
			runtimeState.path, libraryPath)
	}
	if libraryPath == "" {
		return fmt.Errorf("onnx runtime: no library path given: %s", fetchHint)
	}
	if st, err := os.Stat(libraryPath); err != nil {
		return fmt.Errorf("onnx runtime library %s: not found: %s", libraryPath, fetchHint)
	} else if st.IsDir() {
		return fmt.Errorf("onnx runtime library %s: is a directory, not the libonnxruntime.so file: %s", libraryPath, fetchHint)
	}
	if err := checkLibrary(libraryPath); err != nil {
		return err
	}
	// The runtime's telemetry would keep a device id and an events database (sessions, OS,
	// executable paths) in every user's ~/.cache/Microsoft/DeveloperTools/.onnxruntime. It
	// starts with the environment, so only the variable read then keeps it off; disabling the
	// events after is for a runtime that ignores the variable.
	if err := os.Setenv("ORT_DISABLE_TELEMETRY", "1"); err != nil {
		return fmt.Errorf("onnx runtime: cannot turn its telemetry off: %v", err)
	}
	ort.SetSharedLibraryPath(libraryPath)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("onnx runtime library %s: cannot be loaded (%s): %s", libraryPath, oneLine(err), fetchHint)
	}
	if err := ort.DisableTelemetry(); err != nil {
		return fmt.Errorf("onnx runtime library %s: cannot turn its telemetry off (%s)", libraryPath, oneLine(err))
	}
	runtimeState.path = libraryPath
	return nil
}

// errNotInitialized is returned by constructors when neither Init nor Options.Library loaded
// the runtime.
var errNotInitialized = errors.New("onnx runtime is not loaded: call infer.Init or set Options.Library (onnxruntime_library in the config)")

// ensureRuntime loads opts.Library if given and reports whether a runtime is available.
func ensureRuntime(opts Options) error {
	if opts.Library != "" {
		return Init(opts.Library)
	}
	if !ort.IsInitialized() {
		return errNotInitialized
	}
	return nil
}

// oneLine flattens a runtime message: ONNX Runtime statuses often span lines, and our errors are
// one line so they read well in logs and Slurm output.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// sessionOptions builds the options every session shares: a fixed thread count, sequential
// execution (our graphs have no parallel branches worth an inter-op pool).
func sessionOptions(opts Options) (*ort.SessionOptions, error) {
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("onnx runtime: cannot create session options: %s", oneLine(err))
	}
	threads := opts.IntraOpThreads
	if threads <= 0 {
		threads = 1
	}
	for _, set := range []func() error{
		func() error { return so.SetIntraOpNumThreads(threads) },
		func() error { return so.SetInterOpNumThreads(1) },
		func() error { return so.SetExecutionMode(ort.ExecutionModeSequential) },
	} {
		if err := set(); err != nil {
			so.Destroy()
			return nil, fmt.Errorf("onnx runtime: cannot set session options: %s", oneLine(err))
		}
	}
	return so, nil
}
