package enginebench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestRun runs the path on small weights, shared by three workers and per worker: every item
// reaches its engine (the detector's runs are one frame each), and the shared set holds one
// engine per model.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	if err := WriteModels(dir, 2<<20, 4<<20); err != nil {
		t.Fatal(err)
	}
	cfg := infer.SessionConfig{ModelsDir: dir, Library: testenv.ORTLibrary(t), MaxBatch: 4, Logf: func(string, ...any) {}}
	const frames, rounds = 4, 2
	r, err := Run(Shared, cfg, 3, frames, rounds)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Engines) != len(Models) || r.FramesPerSecond <= 0 {
		t.Fatalf("shared: %v frames/s, engines %v; want one engine per model of %v", r.FramesPerSecond, r.Engines, Models)
	}
	for name, st := range r.Engines {
		if want := int64(3 + rounds*frames); st.Items != want { // a warm-up frame per worker, then the rounds
			t.Errorf("%s: %d items run, want %d", name, st.Items, want)
		}
	}
	if st := r.Engines["yoloface_8n"]; st.Runs != st.Items {
		t.Errorf("the detector batched (%d items in %d runs): its file fixes batch 1", st.Items, st.Runs)
	}
	if r, err = Run(PerWorker, cfg, 2, 2, 1); err != nil || r.FramesPerSecond <= 0 || len(r.Engines) != 0 {
		t.Errorf("per worker: %v frames/s, engines %v, %v", r.FramesPerSecond, r.Engines, err)
	}
}

// childEnv makes the test binary a child that runs the path once, so that its peak RSS, read
// by the parent from getrusage, is the process's own: "MODE WORKERS FRAMES DIR LIBRARY".
const childEnv = "ENGINEBENCH_CHILD"

// The child starts in the test binary's init, before any test or flag: it is not a test run.
func init() {
	if spec, ok := os.LookupEnv(childEnv); ok {
		child(spec)
	}
}

// child is the child's whole life; it prints one JSON line and exits.
func child(spec string) {
	f := strings.Fields(spec)
	if len(f) != 5 {
		fmt.Fprintln(os.Stderr, "enginebench child: want MODE WORKERS FRAMES DIR LIBRARY, got", spec)
		os.Exit(2)
	}
	workers, _ := strconv.Atoi(f[1])
	frames, _ := strconv.Atoi(f[2])
	r, err := Run(Mode(f[0]), infer.SessionConfig{ModelsDir: f[3], Library: f[4], MaxBatch: 1, Logf: func(string, ...any) {}}, workers, frames, 5)
	if err != nil {
		fmt.Fprintln(os.Stderr, "enginebench child:", err)
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(map[string]float64{"frames_per_s": r.FramesPerSecond})
	os.Exit(0)
}

// BenchmarkEngineMemory writes the path with FaceFusion's weight sizes (a 554 MB swapper and a
// 340 MB enhancer, random, in a temporary folder) and runs it in a child process per
// configuration, reporting the child's peak RSS (getrusage's ru_maxrss: its resident memory at
// the highest, weights, buffers and runtime arenas alike) and the path's frames per second at
// batch 1 on the CPU (best of five rounds of 64 frames): one shared engine per model for 1, 2
// and 8 workers, then a session of every model per worker (before the engine) for 1 and 2.
// The engine's 8 workers may take at most 300 MB more than its 1, and may not be slower
// (beyond 10%: this machine's other load moves a round by more than that, even best of five).
func BenchmarkEngineMemory(b *testing.B) {
	lib := testenv.ORTLibrary(b)
	dir := b.TempDir()
	if err := WriteModels(dir, SwapperBytes, EnhancerBytes); err != nil {
		b.Fatal(err)
	}
	const frames = 64
	type result struct{ rssMB, fps float64 }
	got := map[string]result{}
	for _, c := range []struct {
		mode    Mode
		workers int
	}{{Shared, 1}, {Shared, 2}, {Shared, 8}, {PerWorker, 1}, {PerWorker, 2}} {
		key := fmt.Sprintf("%s/workers=%d", c.mode, c.workers)
		b.Run(key, func(b *testing.B) {
			var r result
			for range b.N {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d %s %s", childEnv, c.mode, c.workers, frames, dir, lib))
				out, err := cmd.Output()
				if err != nil {
					msg := ""
					if ee, ok := err.(*exec.ExitError); ok {
						msg = string(ee.Stderr)
					}
					b.Fatalf("child %s: %v: %s", key, err, msg)
				}
				var v map[string]float64
				if err := json.Unmarshal(out, &v); err != nil {
					b.Fatalf("child %s printed %q: %v", key, out, err)
				}
				ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				r = result{rssMB: float64(ru.Maxrss) / 1024, fps: v["frames_per_s"]} // ru_maxrss is in KiB on Linux
			}
			got[key] = r
			b.ReportMetric(r.rssMB, "peak-RSS-MB")
			b.ReportMetric(r.fps, "frames/s")
		})
	}
	one, eight := got["engine/workers=1"], got["engine/workers=8"]
	if one.rssMB == 0 || eight.rssMB == 0 {
		return // a filtered run (-bench with a sub-benchmark pattern)
	}
	b.Logf("engine: 8 workers take %.0f MB more than 1 (limit 300) at %.2f× its frames/s", eight.rssMB-one.rssMB, eight.fps/one.fps)
	if eight.rssMB-one.rssMB >= 300 {
		b.Errorf("engine: 8 workers peak at %.0f MB, 1 worker at %.0f MB: the difference must stay under 300 MB", eight.rssMB, one.rssMB)
	}
	if eight.fps < 0.9*one.fps {
		b.Errorf("engine: 8 workers run %.2f frames/s, 1 worker %.2f: 8 must not be slower", eight.fps, one.fps)
	}
}
