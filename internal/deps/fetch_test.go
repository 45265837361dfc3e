package deps

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestFetchPinsTheCatalog: fetch.sh fetches fr_feature from the package, and checks it by the
// sha256, that the catalog publishes.
func TestFetchPinsTheCatalog(t *testing.T) {
	b, err := os.ReadFile("fetch.sh")
	if err != nil {
		t.Fatal(err)
	}
	value := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + `=(\S+)$`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("fetch.sh sets no %s", name)
		}
		return string(m[1])
	}
	m := catalog.Must("fr_feature")
	if pkg := "npm " + value("FRFEATURE"); pkg != m.Package || pkg != m.Published.By {
		t.Errorf("fetch.sh fetches %s; the catalog says %s (published by %s)", pkg, m.Package, m.Published.By)
	}
	if sum := value("FRFEATURE_SHA256"); sum != m.Published.SHA256 {
		t.Errorf("fetch.sh checks fr_feature.onnx against sha256 %s; the catalog publishes %s", sum, m.Published.SHA256)
	}
}

// TestFetchRefetchesAWrongRecognizer: a cache whose fr_feature.onnx is cut short is fetched
// again (here: npm is not on PATH, so the fetch stops at naming it, and leaves the file as it
// was); with the package's file, fetch.sh has nothing to do.
func TestFetchRefetchesAWrongRecognizer(t *testing.T) {
	real := testenv.Cache(t)
	good, err := os.ReadFile(testenv.Model(t, "fr_feature.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	for _, d := range []string{"ort", "samples"} {
		if err := os.Symlink(filepath.Join(real, d), filepath.Join(cache, d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(cache, "models"), 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(real, "models"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "fr_feature.onnx" {
			if err := os.Symlink(filepath.Join(real, "models", e.Name()), filepath.Join(cache, "models", e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	fr := filepath.Join(cache, "models", "fr_feature.onnx")
	path := shadowPath(t, append(noRoot, "npm")...)
	fetch := func() (string, error) {
		cmd := exec.Command("bash", "fetch.sh", cache)
		cmd.Env = withEnv(os.Environ(), nil, "PATH="+path)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if err := os.WriteFile(fr, good[:100000], 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := fetch()
	if err == nil || !strings.Contains(out, fr+" has sha256") || !strings.Contains(out, "fetching it again") || !strings.Contains(out, "npm") {
		t.Errorf("a cut fr_feature.onnx: %v, %q; want it fetched again (and npm named as missing)", err, out)
	}
	if st, err := os.Stat(fr); err != nil || st.Size() != 100000 {
		t.Errorf("the failed fetch changed %s: %v", fr, err)
	}
	if err := os.WriteFile(fr, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := fetch(); err != nil || out != "" {
		t.Errorf("the package's fr_feature.onnx: %v, %q; want nothing fetched", err, out)
	}
}

// gpuPackage writes a .tgz laid out as npm's com.github.asus4.onnxruntime.linux-x64-gpu is,
// with the provider libraries' contents given (fake, but as fetch-gpu.sh reads them), and
// returns its path and sha256.
func gpuPackage(t *testing.T, libs map[string]string) (string, string) {
	t.Helper()
	files := map[string]string{"package/LICENSE": "MIT License\n\nCopyright (c) Microsoft Corporation.\n", "package/README.md": "readme\n"}
	for name, body := range libs {
		files["package/Plugins/Linux/x64/"+name] = body
	}
	return packageOf(t, files)
}

// packageOf writes a .tgz of files (a name ending in / is a folder) and returns its path and
// sha256.
func packageOf(t *testing.T, files map[string]string) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		h := &tar.Header{Name: name, Mode: 0o755, Size: int64(len(files[name]))}
		if strings.HasSuffix(name, "/") {
			h.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gpu.tgz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return path, hex.EncodeToString(sum[:])
}

// gpuLibs are fake provider libraries: the CUDA and TensorRT ones carry ONNX Runtime's version
// as the real ones do, a NUL-ended string of its own.
func gpuLibs(version string) map[string]string {
	return map[string]string{
		"libonnxruntime_providers_cuda.so":     "\x7fELF cuda\x00" + version + "\x00more",
		"libonnxruntime_providers_tensorrt.so": "\x7fELF trt\x00" + version + "\x00",
		"libonnxruntime_providers_shared.so":   "\x7fELF shared",
	}
}

// fetch-gpu.sh takes nothing from a package whose sha256 is not the pinned one, nor from one
// whose libraries are not built for the version it names; a package it trusts lands in
// CACHE/ort-gpu with its licence and VERSION, once. No download: ORT_GPU_TGZ names the package,
// and ORT_GPU_SHA256 stands in for the pinned sum where the test's own package must pass.
func TestFetchGPUChecksThePackage(t *testing.T) {
	fetch := func(cache string, env ...string) ran {
		cmd := exec.Command("bash", "fetch-gpu.sh", cache)
		cmd.Env = withEnv(os.Environ(), []string{"ORT_GPU_SHA256", "ORT_GPU_TGZ"}, env...)
		return run(t, cmd)
	}
	libs := gpuLibs("1.29.0")
	tgz, sum := gpuPackage(t, libs)
	cache := t.TempDir()
	dest := filepath.Join(cache, "ort-gpu")
	if err := os.Mkdir(filepath.Join(cache, "ort"), 0o755); err != nil { // the checkout's runtime folder
		t.Fatal(err)
	}

	r := fetch(cache, "ORT_GPU_TGZ="+tgz)
	if r.code == 0 || !strings.Contains(r.stderr, tgz+" has sha256 "+sum+", not ") || !strings.Contains(r.stderr, "refused") {
		t.Errorf("a package of another sha256: exit %d, %q; want it refused naming both sums", r.code, r.stderr)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("a refused package left %s: %v", dest, err)
	}

	old, oldSum := gpuPackage(t, gpuLibs("1.28.1"))
	r = fetch(cache, "ORT_GPU_TGZ="+old, "ORT_GPU_SHA256="+oldSum)
	if r.code == 0 || !strings.Contains(r.stderr, "does not carry ONNX Runtime's version 1.29.0") {
		t.Errorf("libraries of another ONNX Runtime: exit %d, %q; want them refused", r.code, r.stderr)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("a refused package left %s: %v", dest, err)
	}

	r = fetch(cache, "ORT_GPU_TGZ="+tgz, "ORT_GPU_SHA256="+sum)
	if r.code != 0 {
		t.Fatalf("the package as pinned: exit %d, %q", r.code, r.stderr)
	}
	want := map[string]string{"LICENSE": "MIT License\n\nCopyright (c) Microsoft Corporation.\n", "VERSION": "1.29.0\n"}
	maps.Copy(want, libs)
	entries, _ := os.ReadDir(dest)
	if len(entries) != len(want) {
		t.Errorf("%s holds %d files, want %d: %v", dest, len(entries), len(want), entries)
	}
	for name, body := range want {
		if b, err := os.ReadFile(filepath.Join(dest, name)); err != nil || string(b) != body {
			t.Errorf("%s: %q, %v; want %q", name, b, err, body)
		}
	}
	// The runtime loads the shared host library from its own folder only: linked there.
	host := filepath.Join(cache, "ort", "libonnxruntime_providers_shared.so")
	if b, err := os.ReadFile(host); err != nil || string(b) != libs["libonnxruntime_providers_shared.so"] {
		t.Errorf("%s: %q, %v; want the fetched host library", host, b, err)
	}
	if target, err := os.Readlink(host); err != nil || filepath.IsAbs(target) {
		t.Errorf("%s links to %q (%v); want a relative link into ort-gpu", host, target, err)
	}
	os.Remove(host)
	if r := fetch(cache, "ORT_GPU_TGZ=/nonexistent"); r.code != 0 || r.stderr != "" {
		t.Errorf("a second fetch-gpu: exit %d, %q; want nothing done", r.code, r.stderr)
	}
	if _, err := os.Stat(host); err != nil {
		t.Errorf("a second fetch-gpu did not link the host library again: %v", err)
	}
}

// make fetch-gpu's 179 MB are no part of what fetch, demo, check, test or install need: only
// gpu-check asks for them.
func TestFetchGPUIsOptional(t *testing.T) {
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	prereqs := map[string][]string{}
	for _, m := range regexp.MustCompile(`(?m)^([^\s:#=$]+):([^=\n]*)$`).FindAllSubmatch(b, -1) {
		fields := strings.Fields(strings.ReplaceAll(string(m[2]), "|", " "))
		prereqs[string(m[1])] = append(prereqs[string(m[1])], fields...)
	}
	if _, ok := prereqs["fetch-gpu"]; !ok {
		t.Fatal("the Makefile has no fetch-gpu target")
	}
	var reach func(target string, seen map[string]bool) bool
	reach = func(target string, seen map[string]bool) bool {
		if target == "fetch-gpu" {
			return true
		}
		if seen[target] {
			return false
		}
		seen[target] = true
		for _, p := range prereqs[target] {
			if reach(p, seen) {
				return true
			}
		}
		return false
	}
	for _, target := range []string{"fetch", "demo", "check", "test", "install", "build", "bench"} {
		if _, ok := prereqs[target]; !ok {
			t.Errorf("the Makefile has no %s target", target)
		} else if reach(target, map[string]bool{}) {
			t.Errorf("make %s reaches fetch-gpu", target)
		}
	}
	if !reach("gpu-check", map[string]bool{}) {
		t.Error("make gpu-check does not fetch the provider libraries it bundles")
	}
}

// Runs of fetch-gpu.sh on one cache may overlap (two users, a job array's first steps): each
// copies under a private name beside its target and renames it into place, so another run's
// file in the folder is never taken or overwritten, four runs at once all place whole files,
// and no temporary file is left behind.
func TestFetchGPURunsOverlap(t *testing.T) {
	libs := gpuLibs("1.29.0")
	tgz, sum := gpuPackage(t, libs)
	cache := t.TempDir()
	dest := filepath.Join(cache, "ort-gpu")
	for _, d := range []string{dest, filepath.Join(cache, "ort")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// What a run that used the old fixed names would be writing now.
	theirs := map[string]string{
		filepath.Join(dest, "libonnxruntime_providers_cuda.so.part"):           "another run's partial copy",
		filepath.Join(dest, "VERSION.part"):                                    "another run's VERSION",
		filepath.Join(cache, "ort", "libonnxruntime_providers_shared.so.part"): "another run's link",
	}
	for f, body := range theirs {
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const runs = 4
	errs := make([]string, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("bash", "fetch-gpu.sh", cache)
			cmd.Env = withEnv(os.Environ(), []string{"ORT_GPU_SHA256", "ORT_GPU_TGZ"}, "ORT_GPU_TGZ="+tgz, "ORT_GPU_SHA256="+sum)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Sprintf("%v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Errorf("run %d of %d at once: %s", i+1, runs, e)
		}
	}
	for f, body := range theirs {
		if b, err := os.ReadFile(f); err != nil || string(b) != body {
			t.Errorf("another run's %s: %q, %v; want it untouched", f, b, err)
		}
	}
	want := map[string]string{"LICENSE": "MIT License\n\nCopyright (c) Microsoft Corporation.\n", "VERSION": "1.29.0\n"}
	maps.Copy(want, libs)
	for name, body := range want {
		if b, err := os.ReadFile(filepath.Join(dest, name)); err != nil || string(b) != body {
			t.Errorf("%s: %q, %v; want %q", name, b, err, body)
		}
	}
	if st, err := os.Stat(filepath.Join(dest, "libonnxruntime_providers_cuda.so")); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("the CUDA provider library: %v, %v; want it executable, as packed", st, err)
	}
	for _, d := range []string{dest, filepath.Join(cache, "ort")} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("%s: a temporary %s was left behind", d, e.Name())
			}
		}
	}
}

// A copy that fails (here the package's LICENSE is a folder; a full disk the same) stops
// fetch-gpu.sh with its error and removes its temporary file: the script does not go on to
// say the providers are in place.
func TestFetchGPUFailedCopy(t *testing.T) {
	files := map[string]string{"package/LICENSE/": ""}
	for name, body := range gpuLibs("1.29.0") {
		files["package/Plugins/Linux/x64/"+name] = body
	}
	tgz, sum := packageOf(t, files)
	cache := t.TempDir()
	dest := filepath.Join(cache, "ort-gpu")
	cmd := exec.Command("bash", "fetch-gpu.sh", cache)
	cmd.Env = withEnv(os.Environ(), []string{"ORT_GPU_SHA256", "ORT_GPU_TGZ"}, "ORT_GPU_TGZ="+tgz, "ORT_GPU_SHA256="+sum)
	r := run(t, cmd)
	if r.code == 0 || !strings.Contains(r.stderr, "LICENSE") || strings.Contains(r.stderr, "fetch-gpu: "+dest+": ") {
		t.Errorf("a copy that failed: exit %d, %q; want the script stopped with cp's error", r.code, r.stderr)
	}
	entries, _ := os.ReadDir(dest)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("%s: a temporary %s was left behind", dest, e.Name())
		}
	}
}
