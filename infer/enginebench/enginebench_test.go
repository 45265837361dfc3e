package enginebench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// TestRun runs the path on small weights, shared by three workers and per worker, two faces a
// frame: every item reaches its engine (the detector's runs are one frame each), and the shared
// set holds one engine per model. Compare finds batch 4 bit-identical to batch 1 on the CPU.
func TestRun(t *testing.T) {
	testenv.Full(t, "writes and runs the benchmark's models")
	dir := t.TempDir()
	if err := WriteModels(dir, 2<<20, 4<<20); err != nil {
		t.Fatal(err)
	}
	cfg := infer.SessionConfig{ModelsDir: dir, Library: testenv.ORTLibrary(t), MaxBatch: 4, Logf: func(string, ...any) {}}
	const frames, rounds = 4, 2
	r, err := Run(Shared, cfg, Options{Workers: 3, Frames: frames, Rounds: rounds, Faces: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Engines) != len(Models) || r.FramesPerSecond <= 0 {
		t.Fatalf("shared: %v frames/s, engines %v; want one engine per model of %v", r.FramesPerSecond, r.Engines, Models)
	}
	for name, st := range r.Engines {
		if want := int64(3+rounds*frames) * int64(itemsOf(name, 2)); st.Items != want { // a warm-up frame per worker, then the rounds
			t.Errorf("%s: %d items run, want %d", name, st.Items, want)
		}
	}
	if st := r.Engines["yoloface_8n"]; st.Runs != st.Items {
		t.Errorf("the detector batched (%d items in %d runs): its file fixes batch 1", st.Items, st.Runs)
	}
	if r, err = Run(PerWorker, cfg, Options{Workers: 2, Frames: 2, Rounds: 1, Faces: 2}); err != nil || r.FramesPerSecond <= 0 || len(r.Engines) != 0 {
		t.Errorf("per worker: %v frames/s, engines %v, %v", r.FramesPerSecond, r.Engines, err)
	}
	diff, err := Compare(cfg, 4, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(diff) != 0 {
		t.Errorf("batch 4 against batch 1 on the CPU: items differ %v", diff)
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

// child is the child's whole life; it prints one JSON line and exits: frames/s, its peak RSS
// during the rounds (VmHWM, reset after the warm-up: the weights are resident then, their
// loading peak is not), its resident memory at the end (VmRSS), and each engine's most runs in
// flight at once.
func child(spec string) {
	f := strings.Fields(spec)
	if len(f) != 5 {
		fmt.Fprintln(os.Stderr, "enginebench child: want MODE WORKERS FRAMES DIR LIBRARY, got", spec)
		os.Exit(2)
	}
	workers, _ := strconv.Atoi(f[1])
	frames, _ := strconv.Atoi(f[2])
	// The load peak is VmHWM before the reset (getrusage's ru_maxrss follows the reset too).
	var loadMB, runMB, endMB float64
	var readErr error
	status := func() []byte {
		b, err := os.ReadFile("/proc/self/status")
		if readErr == nil {
			readErr = err
		}
		return b
	}
	reset := func() {
		loadMB = statusMB(status(), "VmHWM")
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil && readErr == nil { // 5: VmHWM back to VmRSS
			readErr = err
		}
	}
	end := func() {
		st := status()
		runMB, endMB = statusMB(st, "VmHWM"), statusMB(st, "VmRSS")
	}
	r, err := Run(Mode(f[0]), infer.SessionConfig{ModelsDir: f[3], Library: f[4], MaxBatch: 1, Logf: func(string, ...any) {}},
		Options{Workers: workers, Frames: frames, Rounds: 5, AfterWarmup: reset, AfterRounds: end})
	if err == nil {
		err = readErr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "enginebench child:", err)
		os.Exit(1)
	}
	out := map[string]float64{"frames_per_s": r.FramesPerSecond, "load_mb": loadMB, "hwm_mb": runMB, "rss_mb": endMB}
	for name, st := range r.Engines {
		out["in_flight/"+name] = float64(st.MaxInFlight)
	}
	json.NewEncoder(os.Stdout).Encode(out)
	os.Exit(0)
}

// statusMB is field key of /proc/self/status (in kB) in MB.
func statusMB(status []byte, key string) float64 {
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == key+":" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkEngineMemory writes the path with FaceFusion's weight sizes (a 554 MB swapper and a
// 340 MB enhancer, random, in a temporary folder) and runs it in a child process per
// configuration at batch 1 on the CPU (best of five rounds of 64 frames): one shared engine per
// model for 1, 2 and 8 workers, then a session of every model per worker (before the engine)
// for 1, 2 and 8. For each it reports three memories, from the child's /proc/self/status: the
// load peak (VmHWM after the warm-up: while a session loads, ONNX Runtime holds the parsed file
// and the copied weights at once), the peak during the rounds (VmHWM reset after the warm-up: what the workers' runs hold on top
// of the loaded models) and the resident memory at the end; and the frames per second.
//
// The gates: the engine's 8 workers may add at most 300 MB to its 1 worker's peak during the
// rounds; and every engine (batch 1 here) must have had min(workers, cores) runs inside ONNX
// Runtime at once with 2 and 8 workers: a lock around a model keeps it at 1, whatever the
// frames/s (each run uses one thread, so 8 workers on 2 cores only need to match 1 worker's
// frames/s, and other load moves them more than that). Frames/s are reported, engine/8 against
// sessions/8 logged, not gated.
func BenchmarkEngineMemory(b *testing.B) {
	lib := testenv.ORTLibrary(b)
	dir := b.TempDir()
	if err := WriteModels(dir, SwapperBytes, EnhancerBytes); err != nil {
		b.Fatal(err)
	}
	const frames = 64
	type result struct {
		loadMB, runMB, endMB, fps float64
		inFlight                  map[string]int
	}
	got := map[string]result{}
	for _, c := range []struct {
		mode    Mode
		workers int
	}{{Shared, 1}, {Shared, 2}, {Shared, 8}, {PerWorker, 1}, {PerWorker, 2}, {PerWorker, 8}} {
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
				r = result{loadMB: v["load_mb"], runMB: v["hwm_mb"], endMB: v["rss_mb"], fps: v["frames_per_s"], inFlight: map[string]int{}}
				for k, n := range v {
					if name, ok := strings.CutPrefix(k, "in_flight/"); ok {
						r.inFlight[name] = int(n)
					}
				}
			}
			got[key] = r
			b.ReportMetric(r.loadMB, "load-peak-MB")
			b.ReportMetric(r.runMB, "run-peak-MB")
			b.ReportMetric(r.endMB, "resident-MB")
			b.ReportMetric(r.fps, "frames/s")
			if c.mode != Shared {
				return
			}
			if len(r.inFlight) != len(Models) {
				b.Errorf("%s: engines %v, want one per model of %v", key, r.inFlight, Models)
			}
			for name, n := range r.inFlight {
				if want := min(c.workers, runtime.NumCPU()); n < want {
					b.Errorf("%s: %s had at most %d runs in flight at once, want %d (min of workers and cores): is a lock held around its runs?", key, name, n, want)
				}
			}
		})
	}
	one, eight, sessions := got["engine/workers=1"], got["engine/workers=8"], got["sessions/workers=8"]
	if one.runMB == 0 || eight.runMB == 0 {
		return // a filtered run (-bench with a sub-benchmark pattern)
	}
	b.Logf("engine: 8 workers add %.0f MB to 1 worker's peak during the rounds (limit 300), %.0f MB resident at the end; frames/s 8 over 1 %.2f×", eight.runMB-one.runMB, eight.endMB-one.endMB, eight.fps/one.fps)
	if sessions.fps > 0 {
		b.Logf("8 workers: the engine at %.2f× a session per worker's frames/s, in %.0f MB against %.0f MB (peak during the rounds)", eight.fps/sessions.fps, eight.runMB, sessions.runMB)
	}
	if eight.runMB-one.runMB >= 300 {
		b.Errorf("engine: 8 workers peak at %.0f MB during the rounds, 1 worker at %.0f MB: what the workers add must stay under 300 MB", eight.runMB, one.runMB)
	}
}
