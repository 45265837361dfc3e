package infer

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	ort "github.com/yalue/onnxruntime_go"
)

// Execution providers under FaceFusion's names (--execution-providers).
const (
	ProviderTensorRT = "tensorrt"
	ProviderCUDA     = "cuda"
	ProviderCPU      = "cpu"
)

// Execution chooses where a session runs. The zero value runs on the CPU with one thread.
type Execution struct {
	// Providers is the ordered preference, FaceFusion style: e.g. [tensorrt cuda cpu]. Empty
	// means FaceFusion's default: the first provider the runtime has (AvailableProviders). A GPU provider that cannot be appended (no provider library, no device) is
	// skipped; if none of the listed providers is available the session is refused.
	Providers []string
	// DeviceID is the GPU for cuda and tensorrt (the rank's bound GPU).
	DeviceID int
	// Threads is ONNX Runtime's intra-op thread count; 0 means 1.
	Threads int
	// TensorRTFP16 lets TensorRT build half-precision engines.
	TensorRTFP16 bool
	// TensorRTCacheDir keeps built engines and timing caches (node-local disk: an engine is
	// specific to the GPU model); empty disables the caches.
	TensorRTCacheDir string
}

// ParseProviders checks a FaceFusion provider list and returns it normalised (lower case,
// duplicates removed).
func ParseProviders(names []string) ([]string, error) {
	out := make([]string, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		switch n {
		case ProviderTensorRT, ProviderCUDA, ProviderCPU:
		default:
			return nil, fmt.Errorf("execution provider %q: not supported: use tensorrt, cuda or cpu (in order of preference)", n)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// applyProviders appends the wanted GPU providers to so. It returns the providers in use (in
// order), and one line for the log when a GPU provider was skipped in favour of a later one.
func applyProviders(so *ort.SessionOptions, ex Execution) (used []string, note string, err error) {
	names, err := ParseProviders(ex.Providers)
	if err != nil {
		return nil, "", err
	}
	if len(names) == 0 {
		a, err := AvailableProviders()
		if err != nil {
			return nil, "", err
		}
		names = a.Default()
	}
	var skipped []string
	for _, n := range names {
		if perr := appendProvider(so, ex, n); perr != nil {
			skipped = append(skipped, n+": "+providerWhy(perr))
			continue
		}
		used = append(used, n)
	}
	if len(used) == 0 {
		return nil, "", fmt.Errorf("execution providers %s: none is available here (%s): add cpu to execution_providers to fall back, or run on a node with a GPU and ONNX Runtime's GPU provider libraries",
			strings.Join(names, " "), strings.Join(skipped, "; "))
	}
	if len(skipped) > 0 {
		note = fmt.Sprintf("execution providers: using %s; unavailable: %s", strings.Join(used, " "), strings.Join(skipped, "; "))
	}
	return used, note, nil
}

// ResolveProviders is the providers a session with ex uses on this node after the fallback
// (cuda asked for on a node without it gives cpu): where a job's pixels actually come from,
// which the resume fingerprint compares. It needs the runtime loaded (Init).
func ResolveProviders(ex Execution) ([]string, error) {
	so, err := sessionOptions(Options{})
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	used, _, err := applyProviders(so, ex)
	return used, err
}

// appendProvider appends provider n to so. A GPU provider comes from its plugin library when
// one is found (SetProviderLibrary), else from the runtime itself (a GPU build). It needs the
// driver too: a provider library built into the runtime loads without one, and only the
// session would fail.
func appendProvider(so *ort.SessionOptions, ex Execution, n string) error {
	if n != ProviderCUDA && n != ProviderTensorRT {
		// ONNX Runtime always falls back to its CPU provider: nothing to append.
		return nil
	}
	if file, _ := providerFile(n); file != "" {
		pl := loadPlugin(n, file)
		if pl.err != nil {
			return pl.err
		}
		if err := cudaDriver(); err != nil {
			return err
		}
		d, err := pl.device(ex.DeviceID)
		if err != nil {
			return err
		}
		return epAppend(so, d, providerOptions(n, ex))
	}
	if err := cudaDriver(); err != nil {
		// A missing provider library is the likelier fix (a CPU build of the runtime).
		if why, _ := providerMissing(n); why != "" {
			return errors.New(why)
		}
		return err
	}
	return appendBuiltIn(so, ex, n)
}

// appendBuiltIn appends provider n as the runtime itself has it (a GPU build).
func appendBuiltIn(so *ort.SessionOptions, ex Execution, n string) error {
	if n == ProviderCUDA {
		o, err := ort.NewCUDAProviderOptions()
		if err != nil {
			return err
		}
		defer o.Destroy()
		if err := o.Update(providerOptions(n, ex)); err != nil {
			return err
		}
		return so.AppendExecutionProviderCUDA(o)
	}
	o, err := ort.NewTensorRTProviderOptions()
	if err != nil {
		return err
	}
	defer o.Destroy()
	if err := o.Update(providerOptions(n, ex)); err != nil {
		return err
	}
	return so.AppendExecutionProviderTensorRT(o)
}

// providerOptions are FaceFusion's options for GPU provider n on ex's device.
func providerOptions(n string, ex Execution) map[string]string {
	opts := map[string]string{"device_id": strconv.Itoa(ex.DeviceID)}
	if n == ProviderCUDA {
		// FaceFusion's default search: EXHAUSTIVE picks the fastest convolution once per shape.
		opts["cudnn_conv_algo_search"] = "EXHAUSTIVE"
		return opts
	}
	if ex.TensorRTFP16 {
		opts["trt_fp16_enable"] = "1"
	}
	if ex.TensorRTCacheDir != "" {
		opts["trt_engine_cache_enable"] = "1"
		opts["trt_engine_cache_path"] = ex.TensorRTCacheDir
		opts["trt_timing_cache_enable"] = "1"
		opts["trt_timing_cache_path"] = ex.TensorRTCacheDir
	}
	// FaceFusion's builder level: slower first build, faster engines.
	opts["trt_builder_optimization_level"] = "4"
	return opts
}

// providerWhy keeps the useful end of ONNX Runtime's provider error ("Failed to load library
// …"), dropping the source location and status prefix it starts with.
func providerWhy(err error) string {
	msg := oneLine(err)
	if i := strings.LastIndex(msg, "FAIL : "); i >= 0 {
		msg = msg[i+len("FAIL : "):]
	}
	return msg
}
