package infer

// ONNX Runtime's plugin execution providers through its C API. onnxruntime_go (v1.27) wraps
// RegisterExecutionProviderLibrary but not GetEpDevices or SessionOptionsAppendExecutionProvider_V2,
// and keeps its OrtEnv to itself; its header is not on our include path. So these wrappers reach
// the API table of the library onnxruntime_go loaded (dlopen with RTLD_NOLOAD, OrtGetApiBase,
// GetApi), and index it: OrtApi is a table of function pointers that ONNX Runtime only ever
// appends to (its ABI promise), so an entry's index is the same in every runtime that has it.
// TestEPAPIIndices holds the indices to the header. The environment is the process's one:
// CreateEnv hands back the environment that already exists (onnxruntime_go's), with a
// reference we keep for the life of the process, as the runtime is never unloaded.

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

// OrtApi entries, as indices of its function pointers (onnxruntime_c_api.h, API 22 on).
enum {
	ff_GetErrorMessage = 2,
	ff_CreateEnv = 3,
	ff_ReleaseStatus = 93,
	ff_GetKeyValue = 297,
	ff_RegisterExecutionProviderLibrary = 301,
	ff_UnregisterExecutionProviderLibrary = 302,
	ff_GetEpDevices = 303,
	ff_SessionOptionsAppendExecutionProvider_V2 = 304,
	ff_HardwareDevice_Type = 307,
	ff_HardwareDevice_VendorId = 308,
	ff_EpDevice_EpName = 312,
	ff_EpDevice_EpMetadata = 314,
	ff_EpDevice_EpOptions = 315,
	ff_EpDevice_Device = 316,
};

// The first API version with every entry above (ONNX Runtime 1.22).
#define FF_EP_API_VERSION 22

typedef struct {
	const void *(*GetApi)(uint32_t version);
	const char *(*GetVersionString)(void);
} ff_api_base;

static void *const *ff_api;
static void *ff_env;

#define FF_FN(i, type) ((type)ff_api[i])

// ff_ep_bind finds the API table of the runtime loaded from path and the process's
// environment. It returns NULL, or why not (a message, or "" when CreateEnv gave a status in
// *status).
static const char *ff_ep_bind(const char *path, void **status) {
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL) return dlerror();
	const ff_api_base *(*base)(void) = (const ff_api_base *(*)(void))dlsym(h, "OrtGetApiBase");
	if (base == NULL) return "no OrtGetApiBase";
	void *const *api = (void *const *)base()->GetApi(FF_EP_API_VERSION);
	if (api == NULL) return "the runtime has no C API version 22 (ONNX Runtime 1.22 or later is needed for plugin providers)";
	ff_api = api;
	*status = FF_FN(ff_CreateEnv, void *(*)(int, const char *, void **))(3, "facefusion", &ff_env);
	return *status == NULL ? NULL : "";
}

static int ff_ep_bound(void) { return ff_api != NULL && ff_env != NULL; }

static const char *ff_ep_message(void *status) {
	return FF_FN(ff_GetErrorMessage, const char *(*)(void *))(status);
}
static void ff_ep_release(void *status) { FF_FN(ff_ReleaseStatus, void (*)(void *))(status); }

static void *ff_ep_register(const char *name, const char *path) {
	return FF_FN(ff_RegisterExecutionProviderLibrary, void *(*)(void *, const char *, const char *))(ff_env, name, path);
}
static void *ff_ep_unregister(const char *name) {
	return FF_FN(ff_UnregisterExecutionProviderLibrary, void *(*)(void *, const char *))(ff_env, name);
}
static void *ff_ep_devices(void *const **devices, size_t *n) {
	return FF_FN(ff_GetEpDevices, void *(*)(void *, void *const **, size_t *))(ff_env, devices, n);
}
static void *ff_ep_append(void *options, void *device, const char *const *keys, const char *const *vals, size_t n) {
	void *devices[1] = {device};
	return FF_FN(ff_SessionOptionsAppendExecutionProvider_V2,
		void *(*)(void *, void *, void *const *, size_t, const char *const *, const char *const *, size_t))(
		options, ff_env, devices, 1, keys, vals, n);
}

static const char *ff_ep_name(void *d) { return FF_FN(ff_EpDevice_EpName, const char *(*)(void *))(d); }
static void *ff_ep_hardware(void *d) { return FF_FN(ff_EpDevice_Device, void *(*)(void *))(d); }
static int ff_hw_type(void *hw) { return FF_FN(ff_HardwareDevice_Type, int (*)(void *))(hw); }
static uint32_t ff_hw_vendor(void *hw) { return hw == NULL ? 0 : FF_FN(ff_HardwareDevice_VendorId, uint32_t (*)(void *))(hw); }

// ff_ep_value is the value of key in the device's provider options (which 0) or metadata
// (which 1), NULL when absent.
static const char *ff_ep_value(void *d, int which, const char *key) {
	void *kv = which == 0 ? FF_FN(ff_EpDevice_EpOptions, void *(*)(void *))(d) : FF_FN(ff_EpDevice_EpMetadata, void *(*)(void *))(d);
	if (kv == NULL) return NULL;
	return FF_FN(ff_GetKeyValue, const char *(*)(void *, const char *))(kv, key);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"
)

// epAPIIndex is the index of each OrtApi entry the wrappers call (TestEPAPIIndices).
var epAPIIndex = map[string]int{
	"GetErrorMessage":                          C.ff_GetErrorMessage,
	"CreateEnv":                                C.ff_CreateEnv,
	"ReleaseStatus":                            C.ff_ReleaseStatus,
	"GetKeyValue":                              C.ff_GetKeyValue,
	"RegisterExecutionProviderLibrary":         C.ff_RegisterExecutionProviderLibrary,
	"UnregisterExecutionProviderLibrary":       C.ff_UnregisterExecutionProviderLibrary,
	"GetEpDevices":                             C.ff_GetEpDevices,
	"SessionOptionsAppendExecutionProvider_V2": C.ff_SessionOptionsAppendExecutionProvider_V2,
	"HardwareDevice_Type":                      C.ff_HardwareDevice_Type,
	"HardwareDevice_VendorId":                  C.ff_HardwareDevice_VendorId,
	"EpDevice_EpName":                          C.ff_EpDevice_EpName,
	"EpDevice_EpMetadata":                      C.ff_EpDevice_EpMetadata,
	"EpDevice_EpOptions":                       C.ff_EpDevice_EpOptions,
	"EpDevice_Device":                          C.ff_EpDevice_Device,
}

// hardwareGPU is OrtHardwareDeviceType_GPU.
const hardwareGPU = 1

// epError turns a status into an error with the runtime's message (one line) and releases it;
// nil for none. Every status of these wrappers goes through here.
func epError(status unsafe.Pointer) error {
	if status == nil {
		return nil
	}
	msg := C.GoString(C.ff_ep_message(status))
	C.ff_ep_release(status)
	return errors.New(oneLine(errors.New(msg)))
}

// bindEPAPI reaches the C API of the runtime Init loaded; runtimeState.mu is held.
func bindEPAPI() error {
	if C.ff_ep_bound() != 0 {
		return nil
	}
	if runtimeState.path == "" {
		return errNotInitialized
	}
	path := C.CString(runtimeState.path)
	defer C.free(unsafe.Pointer(path))
	var status unsafe.Pointer
	if msg := C.ff_ep_bind(path, &status); msg != nil {
		if err := epError(status); err != nil {
			return fmt.Errorf("onnx runtime %s: no environment for plugin providers: %v", runtimeState.path, err)
		}
		return fmt.Errorf("onnx runtime %s: no C API for plugin providers: %s", runtimeState.path, C.GoString(msg))
	}
	return nil
}

func epRegister(name, path string) error {
	cname, cpath := C.CString(name), C.CString(path)
	defer C.free(unsafe.Pointer(cname))
	defer C.free(unsafe.Pointer(cpath))
	return epError(C.ff_ep_register(cname, cpath))
}

func epUnregister(name string) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return epError(C.ff_ep_unregister(cname))
}

// epDevice is one OrtEpDevice (owned by the runtime while its library stays registered), with
// what the matching needs copied into Go.
type epDevice struct {
	c        unsafe.Pointer
	ep       string
	gpu      bool
	vendorID uint32
	// deviceID is the provider option device_id the provider set on it (the CUDA ordinal for
	// ONNX Runtime's CUDA provider), "" when it set none.
	deviceID string
	version  string // the provider's version, from its metadata ("" when not given)
}

// epDevices is every provider-device pair the runtime's environment has.
func epDevices() ([]epDevice, error) {
	var arr *unsafe.Pointer
	var n C.size_t
	if err := epError(C.ff_ep_devices((**unsafe.Pointer)(unsafe.Pointer(&arr)), &n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	out := make([]epDevice, 0, int(n))
	for _, d := range unsafe.Slice(arr, int(n)) {
		hw := C.ff_ep_hardware(d)
		out = append(out, epDevice{
			c:        d,
			ep:       C.GoString(C.ff_ep_name(d)),
			gpu:      hw != nil && C.ff_hw_type(hw) == hardwareGPU,
			vendorID: uint32(C.ff_hw_vendor(hw)),
			deviceID: epValue(d, 0, "device_id"),
			version:  epValue(d, 1, "version"),
		})
	}
	return out, nil
}

func epValue(d unsafe.Pointer, which int, key string) string {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	v := C.ff_ep_value(d, C.int(which), ckey)
	if v == nil {
		return ""
	}
	return C.GoString(v)
}

// epAppend appends the provider of device d to so, with the provider options given.
func epAppend(so *ort.SessionOptions, d epDevice, options map[string]string) error {
	keys := make([]*C.char, 0, len(options))
	vals := make([]*C.char, 0, len(options))
	for k, v := range options {
		keys = append(keys, C.CString(k))
		vals = append(vals, C.CString(v))
	}
	defer func() {
		for i := range keys {
			C.free(unsafe.Pointer(keys[i]))
			C.free(unsafe.Pointer(vals[i]))
		}
	}()
	// C memory holding C pointers: cgo's rules forbid passing Go memory that holds pointers.
	n := len(keys)
	ck := (**C.char)(C.malloc(C.size_t(max(n, 1)) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	cv := (**C.char)(C.malloc(C.size_t(max(n, 1)) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(ck))
	defer C.free(unsafe.Pointer(cv))
	copy(unsafe.Slice(ck, n), keys)
	copy(unsafe.Slice(cv, n), vals)
	return epError(C.ff_ep_append(sessionOptionsHandle(so), d.c, ck, cv, C.size_t(n)))
}

// sessionOptionsHandle is the OrtSessionOptions behind so: onnxruntime_go keeps it in its one
// unexported field and has no call that takes an OrtEpDevice (TestSessionOptionsLayout holds
// the layout, so an upgrade that changes it fails a test rather than a run).
func sessionOptionsHandle(so *ort.SessionOptions) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(so))
}

// dlopenProbe loads path as the runtime will, binding functions lazily: it fails as the
// runtime's load would on a library that path needs and the system lacks.
func dlopenProbe(path string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if h := C.dlopen(cpath, C.RTLD_LAZY|C.RTLD_LOCAL); h == nil {
		return errors.New(strings.TrimSpace(C.GoString(C.dlerror())))
	}
	return nil
}
