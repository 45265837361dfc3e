package infer

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// ff_driver_error returns NULL when the CUDA driver library loads, else dlerror's message.
static const char *ff_driver_error(const char *name) {
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) return dlerror();
	return NULL;
}
*/
import "C"

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// FaceFusionOrder is FaceFusion's order of the providers this program has (its
// facefusion.choices.execution_providers): the default is the first of them the runtime has.
var FaceFusionOrder = []string{ProviderCUDA, ProviderTensorRT, ProviderCPU}

// driverLibrary is the NVIDIA driver's CUDA library: ONNX Runtime's CUDA provider library
// loads without it, and only a session then fails, so it is asked for on its own.
const driverLibrary = "libcuda.so.1"

var driverOnce struct {
	sync.Once
	err error
}

// cudaDriver reports why the CUDA driver library cannot be loaded (nil when it can).
func cudaDriver() error {
	driverOnce.Do(func() {
		name := C.CString(driverLibrary)
		defer C.free(unsafe.Pointer(name))
		if msg := C.ff_driver_error(name); msg != nil {
			driverOnce.err = fmt.Errorf("no NVIDIA driver: %s is not loadable (%s)", driverLibrary, C.GoString(msg))
		}
	})
	return driverOnce.err
}

// Availability is which providers the loaded runtime can run on this node, in FaceFusion's
// order, and why each other one cannot (the provider library the runtime looked for and did
// not find, or no driver).
type Availability struct {
	Available   []string
	Unavailable map[string]string
}

// GPU reports whether a GPU provider is available.
func (a Availability) GPU() bool {
	return slices.Contains(a.Available, ProviderCUDA) || slices.Contains(a.Available, ProviderTensorRT)
}

// Default is FaceFusion's default execution_providers: the first available one.
func (a Availability) Default() []string {
	if len(a.Available) == 0 {
		return []string{ProviderCPU}
	}
	return a.Available[:1]
}

// Why is the unavailable providers and their reasons in FaceFusion's order, "; " between
// them, providers that share a reason named together ("cuda, tensorrt: …").
func (a Availability) Why() string {
	var reasons []string
	names := map[string][]string{}
	for _, p := range FaceFusionOrder {
		if why, ok := a.Unavailable[p]; ok {
			if names[why] == nil {
				reasons = append(reasons, why)
			}
			names[why] = append(names[why], p)
		}
	}
	parts := make([]string, len(reasons))
	for i, why := range reasons {
		parts[i] = strings.Join(names[why], ", ") + ": " + why
	}
	return strings.Join(parts, "; ")
}

// AvailableProviders asks the loaded runtime (Init) which providers it can append on this node,
// as FaceFusion asks onnxruntime.get_available_providers; a GPU provider also needs the driver.
// A missing provider library is named before a missing driver: on a GPU node that is the cause.
func AvailableProviders() (Availability, error) {
	if !ortReady() {
		return Availability{}, errNotInitialized
	}
	a := Availability{Unavailable: map[string]string{}}
	for _, p := range FaceFusionOrder {
		why, err := providerMissing(p)
		if err != nil {
			return a, err
		}
		if why == "" {
			a.Available = append(a.Available, p)
		} else {
			a.Unavailable[p] = why
		}
	}
	return a, nil
}

// providerMissing is why provider p cannot run here ("" when it can): its plugin library does
// not load or finds no GPU, or, with none found, the runtime has it not built in.
func providerMissing(p string) (string, error) {
	if p == ProviderCPU {
		return "", nil
	}
	file, none := providerFile(p)
	if file != "" {
		pl := loadPlugin(p, file)
		switch {
		case pl.err != nil:
			return pl.err.Error(), nil
		case len(pl.gpus) == 0:
			if err := cudaDriver(); err != nil {
				return err.Error(), nil
			}
			return fmt.Sprintf("the %s provider (%s) finds no GPU here", providerTitle[p], file), nil
		}
		return "", nil
	}
	so, err := sessionOptions(Options{})
	if err != nil {
		return "", err
	}
	defer so.Destroy()
	// A CPU build says it has no such provider, or that it finds no library for it.
	if err := appendBuiltIn(so, Execution{}, p); err != nil {
		return none, nil
	}
	if err := cudaDriver(); err != nil {
		return err.Error(), nil
	}
	return "", nil
}

// missingLibrary is ONNX Runtime's message for a provider library that is not there.
var missingLibrary = regexp.MustCompile(`^Failed to load library (\S+) with error: \S+: cannot open shared object file: No such file or directory$`)

// shortWhy names a missing provider library once, where ONNX Runtime names it twice.
func shortWhy(why string) string {
	if m := missingLibrary.FindStringSubmatch(why); m != nil {
		return m[1] + " not found"
	}
	return why
}
