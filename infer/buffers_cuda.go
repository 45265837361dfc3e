package infer

// Pinning is optional and found at run time: the binary links no CUDA library, so it builds
// and runs on machines without one. When libcudart loads, cudaHostRegister page-locks each
// buffer so host-device copies run at full PCIe speed without a staging copy.

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

typedef int (*cuda_host_register_fn)(void *, size_t, unsigned int);
typedef int (*cuda_host_unregister_fn)(void *);
typedef const char *(*cuda_error_string_fn)(int);

static void *ff_cudart;
static cuda_host_register_fn ff_register;
static cuda_host_unregister_fn ff_unregister;
static cuda_error_string_fn ff_error_string;

// ff_load_cudart returns NULL on success or dlerror's message.
static const char *ff_load_cudart(const char *name) {
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) return dlerror();
	cuda_host_register_fn r = (cuda_host_register_fn)dlsym(h, "cudaHostRegister");
	cuda_host_unregister_fn u = (cuda_host_unregister_fn)dlsym(h, "cudaHostUnregister");
	if (r == NULL || u == NULL) { dlclose(h); return "cudaHostRegister not exported"; }
	ff_cudart = h;
	ff_register = r;
	ff_unregister = u;
	ff_error_string = (cuda_error_string_fn)dlsym(h, "cudaGetErrorString");
	return NULL;
}

static int ff_host_register(void *p, size_t n) { return ff_register(p, n, 0); }
static int ff_host_unregister(void *p) { return ff_unregister(p); }
static const char *ff_cuda_error(int code) { return ff_error_string ? ff_error_string(code) : "unknown CUDA error"; }
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// cudartNames are the CUDA runtime sonames tried in order: ORT 1.29's GPU providers want 13,
// site builds are often 12.
var cudartNames = []string{"libcudart.so.13", "libcudart.so.12", "libcudart.so"}

var cudart struct {
	once sync.Once
	err  error // why pinning is unavailable; nil when libcudart loaded
}

func loadCudart() error {
	cudart.once.Do(func() {
		var why []string
		for _, name := range cudartNames {
			cname := C.CString(name)
			msg := C.ff_load_cudart(cname)
			C.free(unsafe.Pointer(cname))
			if msg == nil {
				return
			}
			why = append(why, C.GoString(msg))
		}
		cudart.err = fmt.Errorf("no CUDA runtime (%s)", strings.Join(why, "; "))
	})
	return cudart.err
}

// pin page-locks b with cudaHostRegister.
func pin(b []byte) error {
	if err := loadCudart(); err != nil {
		return err
	}
	if rc := C.ff_host_register(unsafe.Pointer(&b[0]), C.size_t(len(b))); rc != 0 {
		return fmt.Errorf("cudaHostRegister of %d bytes: %s (code %d)", len(b), C.GoString(C.ff_cuda_error(rc)), int(rc))
	}
	return nil
}

func unpin(b []byte) {
	if cudart.err == nil && len(b) > 0 {
		C.ff_host_unregister(unsafe.Pointer(&b[0]))
	}
}
