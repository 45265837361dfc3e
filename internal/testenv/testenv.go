// Package testenv finds the real dependencies tests run against: the fetched cache of models,
// runtime and sample media (make fetch), and tools on PATH. A missing dependency fails the
// test with what to run; it never skips. Full marks the full tier: what go test -short (make
// check) leaves to make test.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Root is the repository root (the folder holding go.mod).
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testenv: cannot locate the source tree")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Cache is the fetched asset cache: $FACEFUSION_CACHE, else ROOT/.cache.
func Cache(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("FACEFUSION_CACHE")
	if dir == "" {
		dir = filepath.Join(Root(t), ".cache")
	}
	return dir
}

func need(t testing.TB, path string) string {
	t.Helper()
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("test dependency %s is missing: run `make fetch` (or `make test`, which fetches it)", path)
	}
	return path
}

// Sample is a sample image from the cache (astronaut.png, grace_hopper.png, coffee.png, …).
func Sample(t testing.TB, name string) string {
	t.Helper()
	return need(t, filepath.Join(Cache(t), "samples", name))
}

// Model is a model file from the cache (blazeface_front_128.onnx,
// shape_predictor_68_face_landmarks.dat, …).
func Model(t testing.TB, name string) string {
	t.Helper()
	return need(t, filepath.Join(Cache(t), "models", name))
}

// SharedModel is a real model file from ROOT/../shared/models, the folder beside the repository
// that holds files whose licences keep them out of it (FaceFusion's scrfd_2.5g.onnx, see that
// folder's README.md). Tests use them from there and never copy them into the repository. A
// missing file fails the test, in CI and everywhere else.
func SharedModel(t testing.TB, name string) string {
	t.Helper()
	path := filepath.Join(Root(t), "..", "shared", "models", name)
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("test dependency %s is missing: the real model files live in ../shared/models beside the repository (see its README.md); they are never fetched or committed", filepath.Clean(path))
	}
	return filepath.Clean(path)
}

// SharedModelsDir is a temporary models folder holding links to the named files of
// ../shared/models (see SharedModel), for code that takes a models_dir.
func SharedModelsDir(t testing.TB, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.Symlink(SharedModel(t, n), filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ORTLibrary is the ONNX Runtime shared library from the cache.
func ORTLibrary(t testing.TB) string {
	t.Helper()
	return need(t, filepath.Join(Cache(t), "ort", "libonnxruntime.so.1"))
}

// Full skips t under go test -short (make check), saying why: what launches MPI or Slurm, runs
// the binary end to end, runs ffmpeg at length or FaceFusion's code is the full tier, which
// make test (and CI) runs.
func Full(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("full tier: %s (make test)", why)
	}
}

// Tool is the absolute path of a program on PATH (ffmpeg, ffprobe, g++, mpirun, …). Asking for
// mpirun is launching it: the full tier.
func Tool(t testing.TB, name string) string {
	t.Helper()
	if name == "mpirun" {
		Full(t, "launches mpirun")
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("test dependency %s is not on PATH: run `make deps` (installs the Debian packages)", name)
	}
	return p
}

// MeanVolume is ffmpeg's volumedetect mean_volume of path's first audio stream, in dB.
func MeanVolume(t testing.TB, path string) float64 {
	t.Helper()
	cmd := exec.Command(Tool(t, "ffmpeg"), "-nostdin", "-hide_banner", "-i", path, "-map", "0:a:0", "-af", "volumedetect", "-f", "null", "-")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("volumedetect of %s: %v: %s", path, err, out)
	}
	m := regexp.MustCompile(`mean_volume: (-?[0-9.]+) dB`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("volumedetect of %s printed no mean_volume: %s", path, out)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// MeanVolumes is MeanVolume of each path, from one ffmpeg (a volumedetect filter an input,
// in one filter graph, numbered in order): a process start costs 0.1–0.3 CPU-s here.
func MeanVolumes(t testing.TB, paths ...string) []float64 {
	t.Helper()
	args := []string{"-nostdin", "-hide_banner"}
	var graph []string
	for i, p := range paths {
		args = append(args, "-i", p)
		graph = append(graph, fmt.Sprintf("[%d:a:0]volumedetect[o%d]", i, i))
	}
	args = append(args, "-filter_complex", strings.Join(graph, ";"))
	for i := range paths {
		args = append(args, "-map", fmt.Sprintf("[o%d]", i), "-f", "null", "-")
	}
	out, err := exec.Command(Tool(t, "ffmpeg"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("volumedetect of %s: %v: %s", strings.Join(paths, ", "), err, out)
	}
	vs := make([]float64, len(paths))
	for i, p := range paths {
		m := regexp.MustCompile(fmt.Sprintf(`\[Parsed_volumedetect_%d @ [^]]*\] mean_volume: (-?[0-9.]+) dB`, i)).FindSubmatch(out)
		if m == nil {
			t.Fatalf("volumedetect of %s printed no mean_volume: %s", p, out)
		}
		vs[i], _ = strconv.ParseFloat(string(m[1]), 64)
	}
	return vs
}

// CheckError fails t unless err is one line that mentions every one of wants.
func CheckError(t testing.TB, what string, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("%s: error spans lines: %q", what, msg)
	}
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: error %q does not mention %q", what, msg, w)
		}
	}
}

// BlockHash is the run report's output hash of the file at path as a user checks it, with
// coreutils alone: split's blocks of block bytes, each through sha256sum, the lines through
// sha256sum again. The tests hold the program's hash to it.
func BlockHash(t testing.TB, path string, block int64) string {
	t.Helper()
	Tool(t, "split")
	Tool(t, "sha256sum")
	cmd := exec.Command("sh", "-c", `split -b "$1" --filter=sha256sum "$2" | sha256sum`, "sh", strconv.FormatInt(block, 10), path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("split -b %d --filter=sha256sum %s | sha256sum: %v", block, path, err)
	}
	sum, rest, ok := strings.Cut(string(out), "  -\n")
	if !ok || rest != "" || len(sum) != 64 {
		t.Fatalf("split | sha256sum printed %q", out)
	}
	return sum
}
