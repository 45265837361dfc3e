package infer

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// The OrtApi indices the wrappers call are the header's: a C program compiled against
// onnxruntime_go's onnxruntime_c_api.h prints each entry's offset in pointers.
func TestEPAPIIndices(t *testing.T) {
	gcc, include := testenv.Tool(t, "gcc"), ortHeaders(t)
	var src bytes.Buffer
	src.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include \"onnxruntime_c_api.h\"\nint main(void) {\n")
	for name := range epAPIIndex {
		src.WriteString("printf(\"" + name + " %zu\\n\", offsetof(OrtApi, " + name + ") / sizeof(void *));\n")
	}
	src.WriteString("return 0; }\n")
	dir := t.TempDir()
	c, bin := filepath.Join(dir, "idx.c"), filepath.Join(dir, "idx")
	if err := os.WriteFile(c, src.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-I", include, "-o", bin, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	seen := 0
	for sc.Scan() {
		name, n, _ := strings.Cut(sc.Text(), " ")
		if want, _ := strconv.Atoi(n); epAPIIndex[name] != want {
			t.Errorf("OrtApi.%s is entry %d in the header, the wrappers call %d", name, want, epAPIIndex[name])
		}
		seen++
	}
	if seen != len(epAPIIndex) {
		t.Errorf("the header gave %d entries, want %d", seen, len(epAPIIndex))
	}
}

// ortHeaders is the folder of onnxruntime_go's copy of ONNX Runtime's C API headers.
func ortHeaders(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(testenv.Tool(t, "go"), "list", "-m", "-f", "{{.Dir}}", "github.com/yalue/onnxruntime_go").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// testEP is a plugin execution provider with one factory that offers a device for each CPU the
// runtime finds (with the provider option device_id 0) and creates no provider: enough to
// register it, list its devices and append it to session options, on a machine without a GPU.
const testEP = `#include "onnxruntime_c_api.h"
static const OrtApi *api;
static OrtEpFactory factory;
static const char *name(const OrtEpFactory *f) { return "FfTestExecutionProvider"; }
static const char *vendor(const OrtEpFactory *f) { return "facefusion-hpc"; }
static OrtStatus *devices(OrtEpFactory *f, const OrtHardwareDevice *const *hw, size_t n, OrtEpDevice **out, size_t max, size_t *found) {
	*found = 0;
	for (size_t i = 0; i < n && *found < max; i++) {
		if (api->HardwareDevice_Type(hw[i]) != OrtHardwareDeviceType_CPU) continue;
		OrtKeyValuePairs *opts = NULL;
		api->CreateKeyValuePairs(&opts);
		api->AddKeyValuePair(opts, "device_id", "0");
		OrtStatus *st = api->GetEpApi()->CreateEpDevice(f, hw[i], NULL, opts, &out[*found]);
		api->ReleaseKeyValuePairs(opts);
		if (st != NULL) return st;
		(*found)++;
	}
	return NULL;
}
static OrtStatus *create(OrtEpFactory *f, const OrtHardwareDevice *const *d, const OrtKeyValuePairs *const *m, size_t n, const OrtSessionOptions *o, const OrtLogger *l, OrtEp **ep) {
	return api->CreateStatus(ORT_NOT_IMPLEMENTED, "a test provider runs nothing");
}
static void release(OrtEpFactory *f, OrtEp *ep) {}
static uint32_t vendor_id(const OrtEpFactory *f) { return 0; }
static const char *version(const OrtEpFactory *f) { return "9.9.9"; }
// The runtime calls the later members whatever version a factory gives: none does anything.
static OrtStatus *validate(OrtEpFactory *f, const OrtHardwareDevice *const *d, size_t n, const char *info, OrtCompiledModelCompatibility *c) { *c = OrtCompiledModelCompatibility_EP_NOT_APPLICABLE; return NULL; }
static OrtStatus *allocator(OrtEpFactory *f, const OrtMemoryInfo *m, const OrtKeyValuePairs *o, OrtAllocator **a) { *a = NULL; return NULL; }
static void release_allocator(OrtEpFactory *f, OrtAllocator *a) {}
static OrtStatus *transfer(OrtEpFactory *f, OrtDataTransferImpl **t) { *t = NULL; return NULL; }
static bool streams(const OrtEpFactory *f) { return false; }
static OrtStatus *stream(OrtEpFactory *f, const OrtMemoryDevice *m, const OrtKeyValuePairs *o, OrtSyncStreamImpl **s) { *s = NULL; return NULL; }
static OrtStatus *incompatible(OrtEpFactory *f, const OrtHardwareDevice *hw, OrtDeviceEpIncompatibilityDetails *d) { return NULL; }
static OrtStatus *importer(OrtEpFactory *f, const OrtEpDevice *d, OrtExternalResourceImporterImpl **i) { *i = NULL; return NULL; }
static OrtStatus *num_domains(OrtEpFactory *f, size_t *n) { *n = 0; return NULL; }
static OrtStatus *domains(OrtEpFactory *f, OrtCustomOpDomain **d, size_t n) { return NULL; }
OrtStatus *CreateEpFactories(const char *reg, const OrtApiBase *base, const OrtLogger *log, OrtEpFactory **out, size_t max, size_t *n) {
	api = base->GetApi(22);
	factory.ort_version_supported = ORT_API_VERSION;
	factory.GetName = name;
	factory.GetVendor = vendor;
	factory.GetSupportedDevices = devices;
	factory.CreateEp = create;
	factory.ReleaseEp = release;
	factory.GetVendorId = vendor_id;
	factory.GetVersion = version;
	factory.ValidateCompiledModelCompatibilityInfo = validate;
	factory.CreateAllocator = allocator;
	factory.ReleaseAllocator = release_allocator;
	factory.CreateDataTransfer = transfer;
	factory.IsStreamAware = streams;
	factory.CreateSyncStreamForDevice = stream;
	factory.GetHardwareDeviceIncompatibilityDetails = incompatible;
	factory.CreateExternalResourceImporterForDevice = importer;
	factory.GetNumCustomOpDomains = num_domains;
	factory.GetCustomOpDomains = domains;
	out[0] = &factory;
	*n = 1;
	return NULL;
}
OrtStatus *ReleaseEpFactory(OrtEpFactory *f) { return NULL; }
`

// A plugin registered through the wrappers shows its devices with their provider options and
// version, and one of them appended to session options (SessionOptionsAppendExecutionProvider_V2)
// is the provider a session then asks for itself.
func TestPluginDeviceAppend(t *testing.T) {
	if err := Init(testenv.ORTLibrary(t)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c, lib := filepath.Join(dir, "ep.c"), filepath.Join(dir, "libtestep.so")
	if err := os.WriteFile(c, []byte(testEP), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(testenv.Tool(t, "gcc"), "-shared", "-fPIC", "-I", ortHeaders(t), "-o", lib, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	runtimeState.mu.Lock()
	err := bindEPAPI()
	runtimeState.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := epRegister("facefusion-test-ep", lib); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := epUnregister("facefusion-test-ep"); err != nil {
			t.Errorf("unregister: %v", err)
		}
	}()
	all, err := epDevices()
	if err != nil {
		t.Fatal(err)
	}
	var mine []epDevice
	for _, d := range all {
		if d.ep == "FfTestExecutionProvider" {
			mine = append(mine, d)
		}
	}
	if len(mine) == 0 || mine[0].deviceID != "0" || mine[0].gpu {
		t.Fatalf("the test provider's devices: %+v (of %d), want a CPU with device_id 0", mine, len(all))
	}
	so, err := sessionOptions(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer so.Destroy()
	if err := epAppend(so, mine[0], map[string]string{"device_id": "0", "some_option": "1"}); err != nil {
		t.Fatalf("append: %v", err)
	}
	// The session asks the provider appended for itself, which refuses.
	model := testenv.Model(t, "blazeface_front_128.onnx")
	ins, outs, err := ort.GetInputOutputInfo(model)
	if err != nil {
		t.Fatal(err)
	}
	var in, out []string
	for _, i := range ins {
		in = append(in, i.Name)
	}
	for _, o := range outs {
		out = append(out, o.Name)
	}
	s, err := ort.NewDynamicAdvancedSession(model, in, out, so)
	if err == nil {
		s.Destroy()
		t.Fatal("a session with the test provider appended was made: the append did not take")
	}
	if !strings.Contains(err.Error(), "a test provider runs nothing") {
		t.Errorf("session: %v, want the test provider's refusal", err)
	}
	if mine[0].version != "9.9.9" {
		t.Errorf("the provider's version %q, want its factory's 9.9.9", mine[0].version)
	}
}

// sessionOptionsHandle reads onnxruntime_go's SessionOptions as one pointer field.
func TestSessionOptionsLayout(t *testing.T) {
	typ := reflect.TypeFor[ort.SessionOptions]()
	if typ.NumField() != 1 || typ.Field(0).Type.Kind() != reflect.Pointer || typ.Field(0).Offset != 0 {
		t.Fatalf("onnxruntime_go's SessionOptions is %v: sessionOptionsHandle reads one pointer at its start", typ)
	}
	if err := Init(testenv.ORTLibrary(t)); err != nil {
		t.Fatal(err)
	}
	so, err := sessionOptions(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer so.Destroy()
	if sessionOptionsHandle(so) == nil {
		t.Error("no OrtSessionOptions behind a live SessionOptions")
	}
}

// useProviders points the process at path for the test, and back at none after it.
func useProviders(t *testing.T, path string) {
	t.Helper()
	if err := Init(testenv.ORTLibrary(t)); err != nil {
		t.Fatal(err)
	}
	SetProviderLibrary(path, "the test")
	t.Cleanup(func() { SetProviderLibrary("", "") })
}

// why is the reason AvailableProviders gives for provider p.
func why(t *testing.T, p string) string {
	t.Helper()
	a, err := AvailableProviders()
	if err != nil {
		t.Fatal(err)
	}
	if a.GPU() {
		t.Fatalf("a GPU provider is available here: %v", a.Available)
	}
	return a.Unavailable[p]
}

// Each way a provider library fails says what is missing in one line, in the reason
// AvailableProviders gives and in the refusal of a session that asks for it alone. The
// libraries are generated: not ELF, a truncated runtime, an ELF file that is no plugin, a
// plugin needing a CUDA library or the driver that are not here, one built for another
// runtime, a provider-bridge library (ONNX Runtime's own) without its shared host library
// beside the runtime, and one that needs a CUDA library too, which is said first.
func TestProviderLibraryFailures(t *testing.T) {
	dir := t.TempDir()
	folder := func(name string) string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	cuda := func(d string) string { return filepath.Join(d, providerFiles[ProviderCUDA]) }
	notELF := folder("text")
	os.WriteFile(cuda(notELF), []byte("not a library\n"), 0o644)
	half := folder("half")
	os.Rename(truncatedLibrary(t, dir), cuda(half))
	noEntry := folder("noentry")
	testenv.StubLibrary(t, cuda(noEntry), []string{"GetProvider"}, nil)
	cublas := folder("cublas")
	testenv.StubLibrary(t, cuda(cublas), []string{"CreateEpFactories"}, []string{"libcublasLt.so.13"})
	cudnn := folder("cudnn")
	testenv.StubLibrary(t, cuda(cudnn), []string{"CreateEpFactories"}, []string{"libcudnn.so.9"})
	newer := folder("newer")
	testenv.StubLibrary(t, cuda(newer), []string{"CreateEpFactories"}, nil)
	os.WriteFile(filepath.Join(newer, "VERSION"), []byte("2.0.0\n"), 0o644)
	bridge := folder("bridge")
	testenv.StubLibrary(t, cuda(bridge), []string{"CreateEpFactories", "GetProvider"}, nil)
	bridgeShared := folder("bridgeshared")
	testenv.StubLibrary(t, cuda(bridgeShared), []string{"CreateEpFactories", "GetProvider"}, nil)
	testenv.StubLibrary(t, filepath.Join(bridgeShared, "libonnxruntime_providers_shared.so"), []string{"Provider_GetHost"}, nil)
	bridgeCublas := folder("bridgecublas")
	testenv.StubLibrary(t, cuda(bridgeCublas), []string{"CreateEpFactories", "GetProvider"}, []string{"libcublasLt.so.13"})

	// The runtime's folder as the shared host library's check sees it: one without that library,
	// whether or not make fetch-gpu has linked it beside the cache's runtime.
	hostDir := folder("runtime")
	defer func(f func() string) { sharedHostDir = f }(sharedHostDir)
	sharedHostDir = func() string { return hostDir }
	none := "no CUDA provider library (run `make fetch-gpu`, or set execution_provider_library)"
	for _, c := range []struct {
		name, path string
		want       []string
	}{
		{"no setting", "", []string{none}},
		{"an empty folder", folder("empty"), []string{none, "has no libonnxruntime_providers_cuda.so"}},
		{"a missing file", filepath.Join(dir, "gone", "libonnxruntime_providers_cuda.so"), []string{"not found", "make fetch-gpu"}},
		{"not ELF", notELF, []string{cuda(notELF), "not a shared library", "make fetch-gpu"}},
		{"truncated", half, []string{cuda(half), "truncated", "make fetch-gpu"}},
		{"no CreateEpFactories", noEntry, []string{cuda(noEntry), "exports no CreateEpFactories"}},
		{"no cuBLAS", cublas, []string{cuda(cublas), "cannot be loaded: libcublasLt.so.13: cannot open shared object file", "CUDA 13's libraries are missing"}},
		{"no cuDNN", cudnn, []string{"libcudnn.so.9: cannot open shared object file", "cuDNN 9 is missing"}},
		{"another runtime", newer, []string{"built for ONNX Runtime 2.0.0", filepath.Join(newer, "VERSION"), "the runtime is 1.30.0"}},
		{"no shared host library", bridge, []string{"the runtime loads libonnxruntime_providers_shared.so from its own folder " + hostDir + " only", "link or copy the one of the provider's ONNX Runtime build there"}},
		{"the shared host library beside it", bridgeShared, []string{"link or copy " + filepath.Join(bridgeShared, "libonnxruntime_providers_shared.so") + " there"}},
		{"no cuBLAS, a bridge", bridgeCublas, []string{"cannot be loaded: libcublasLt.so.13: cannot open shared object file", "CUDA 13's libraries are missing"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			useProviders(t, c.path)
			got := why(t, ProviderCUDA)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("reason %q lacks %q", got, w)
				}
			}
			if strings.Contains(got, "\n") {
				t.Errorf("reason is more than one line: %q", got)
			}
			_, err := ResolveProviders(Execution{Providers: []string{ProviderCUDA}})
			if err == nil || !strings.Contains(err.Error(), got) {
				t.Errorf("cuda alone: %v, want a refusal carrying the reason", err)
			}
		})
	}
}

// A providers folder that is not there (make fetch-gpu not run yet) is missing for both
// providers alike: neither reason takes the path for the CUDA library file.
func TestProviderFolderMissing(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "ort-gpu")
	useProviders(t, gone)
	for _, p := range []string{ProviderCUDA, ProviderTensorRT} {
		got := why(t, p)
		want := "no " + providerTitle[p] + " provider library (run `make fetch-gpu`, or set execution_provider_library): " + gone + " (from the test): not found"
		if got != want {
			t.Errorf("%s: reason %q, want %q", p, got, want)
		}
	}
}

// A library that is a plugin and loads (a stub whose CreateEpFactories makes no factory) is
// registered through the runtime's C API and its devices listed: it has none, so the reason
// is the driver here (none on this machine) or that it finds no GPU; probe's line says it
// loaded. A relative path is the working folder's (the runtime's own would be its folder).
func TestProviderLibraryLoads(t *testing.T) {
	d := t.TempDir()
	file := testenv.StubLibrary(t, filepath.Join(d, "libonnxruntime_providers_cuda.so"), []string{"CreateEpFactories"}, nil)
	t.Chdir(d)
	useProviders(t, filepath.Base(file))
	got := why(t, ProviderCUDA)
	want := "finds no GPU here"
	if cudaDriver() != nil {
		want = "no NVIDIA driver: libcuda.so.1"
	}
	if !strings.Contains(got, want) {
		t.Errorf("reason %q, want %q", got, want)
	}
	libs := ProviderLibraries()
	if len(libs) != 2 || !libs[0].Loaded || libs[0].Path != file || libs[0].GPUs != 0 || !strings.Contains(libs[0].String(), "loaded, but it finds no GPU here") {
		t.Errorf("ProviderLibraries: %+v", libs)
	}
	if libs[1].Loaded || !strings.Contains(libs[1].Why, "no TensorRT provider library") || !strings.Contains(libs[1].Why, "is the CUDA one") {
		t.Errorf("TensorRT beside a CUDA file: %+v", libs[1])
	}
	if err := epUnregister(loadPlugin(ProviderCUDA, file).name); err != nil {
		t.Errorf("unregister: %v", err)
	}
}

// The rank's device is the provider's device with its device_id, else the one at its index.
func TestProviderDeviceMatch(t *testing.T) {
	pl := &plugin{provider: ProviderCUDA, file: "x.so", gpus: []epDevice{{deviceID: "1"}, {deviceID: "0"}}}
	if d, err := pl.device(0); err != nil || d.deviceID != "0" {
		t.Errorf("device 0: %+v, %v", d, err)
	}
	if _, err := pl.device(2); err == nil || !strings.Contains(err.Error(), "(device_id 1, 0), not the rank's device 2") {
		t.Errorf("device 2: %v", err)
	}
	pl.gpus = []epDevice{{ep: "a"}, {ep: "b"}}
	if d, err := pl.device(1); err != nil || d.ep != "b" {
		t.Errorf("no device_id: device 1 is %+v, %v", d, err)
	}
	pl.gpus = nil
	if _, err := pl.device(0); err == nil || !strings.Contains(err.Error(), "finds no GPU here") {
		t.Errorf("no GPU: %v", err)
	}
}

// realProviderRun says whether the test run names TestRealProvider (go test -run RealProvider).
func realProviderRun() bool {
	f := flag.Lookup("test.run")
	return f != nil && strings.Contains(f.Value.String(), "RealProvider")
}

// ONNX Runtime 1.29.0's CUDA provider from make fetch-gpu registers with our runtime: on a
// machine without CUDA it fails naming the CUDA library that is missing, on a GPU node it
// loads and finds the GPUs; its TensorRT library is no plugin. The GPU package is not one of
// make test's downloads: without it this test is skipped, saying so, unless it is asked for
// by name (go test ./infer -run RealProvider), when it fails with what to run.
func TestRealProvider(t *testing.T) {
	dir := filepath.Join(testenv.Cache(t), "ort-gpu")
	if _, err := os.Stat(filepath.Join(dir, providerFiles[ProviderCUDA])); err != nil {
		if realProviderRun() {
			t.Fatalf("%s has no libonnxruntime_providers_cuda.so: run `make fetch-gpu`", dir)
		}
		t.Skipf("the GPU provider package is optional, not one of make test's downloads: `make fetch-gpu`, then go test ./infer -run RealProvider")
	}
	useProviders(t, dir)
	libs := ProviderLibraries()
	cuda, trt := libs[0], libs[1]
	if !strings.HasPrefix(cuda.Version, "1.29.0 ") {
		t.Errorf("cuda version %q, want 1.29.0 from VERSION", cuda.Version)
	}
	if cuda.Loaded {
		if cuda.GPUs == 0 && cudaDriver() == nil {
			t.Errorf("loaded with the driver here but no GPU: %v", cuda)
		}
	} else if !regexp.MustCompile(`cannot be loaded: lib\S+\.so[.0-9]*: cannot open shared object file`).MatchString(cuda.Why) {
		t.Errorf("cuda did not load, and does not name the library it lacks: %s", cuda.Why)
	}
	t.Logf("cuda: %s", cuda)
	if trt.Loaded || !strings.Contains(trt.Why, "exports no CreateEpFactories") {
		t.Errorf("tensorrt: %s, want no plugin", trt)
	}
}
