package infer_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/catalog"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// The model path the memory benchmark runs per frame: a detector, a swapper and an enhancer of
// FaceFusion's sizes (its inswapper_128.onnx is 554 MB, gfpgan_1.4.onnx 340 MB; yoloface_8n's
// 12 MB weights do not matter here, the tiny fixture stands in).
var heavyWeights = map[string]int64{"inswapper_128": 554 << 20, "gfpgan_1.4": 340 << 20}

var pathModels = []string{"yoloface_8n", "inswapper_128", "gfpgan_1.4"}

// pathInputs are the inputs a worker packs per model.
var pathInputs = map[string][]string{"yoloface_8n": {"input"}, "inswapper_128": {"target", "source"}, "gfpgan_1.4": {"input"}}

// engineBenchEnv makes the test binary a child that loads the model path in one of two ways and
// runs frames through it, so that its peak RSS, read by the parent from getrusage, is the
// process's own: "MODE WORKERS FRAMES DIR LIBRARY", MODE engine (one engine per model, shared)
// or sessions (a session of every model per worker, as before the engine).
const engineBenchEnv = "INFER_ENGINE_BENCH_CHILD"

// The child starts in the test binary's init, before any test or flag: it is not a test run.
func init() {
	if spec, ok := os.LookupEnv(engineBenchEnv); ok {
		engineBenchChild(spec)
	}
}

// engineBenchChild is the child's whole life; it prints one JSON line and exits.
func engineBenchChild(spec string) {
	f := strings.Fields(spec)
	if len(f) != 5 {
		fmt.Fprintln(os.Stderr, "engine bench child: want MODE WORKERS FRAMES DIR LIBRARY, got", spec)
		os.Exit(2)
	}
	workers, _ := strconv.Atoi(f[1])
	frames, _ := strconv.Atoi(f[2])
	fps, err := runModelPath(f[0], workers, frames, infer.SessionConfig{ModelsDir: f[3], Library: f[4], MaxBatch: 1, Logf: func(string, ...any) {}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "engine bench child:", err)
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(map[string]float64{"frames_per_s": fps})
	os.Exit(0)
}

// runner runs one model on one packed item: an engine's lease or a worker's own session.
type runner interface {
	run(pack func(in func(name string) infer.View), read func(out func(k int) infer.View)) error
}

type engineRunner struct{ e *infer.Engine }

func (r engineRunner) run(pack func(func(string) infer.View), read func(func(int) infer.View)) error {
	l, err := r.e.Claim(1)
	if err != nil {
		return err
	}
	defer l.Release()
	pack(func(name string) infer.View { return l.Input(name, 0) })
	if err := l.Run(); err != nil {
		return err
	}
	read(func(k int) infer.View { return l.Output(k, 0) })
	return nil
}

type sessionRunner struct{ s *infer.Session }

func (r sessionRunner) run(pack func(func(string) infer.View), read func(func(int) infer.View)) error {
	pack(func(name string) infer.View { return r.s.Input(name).Item(0) })
	if err := r.s.Run(1); err != nil {
		return err
	}
	read(func(k int) infer.View { return r.s.Outputs()[k].Item(0) })
	return nil
}

// runModelPath opens the model path (mode engine or sessions) for workers and runs frames
// through it: each frame a detector run, a swap and an enhancement of one face, packed from a
// frame-sized image the worker keeps. It returns the frames per second of the best of three
// rounds of frames, after one warm-up frame per worker.
func runModelPath(mode string, workers, frames int, cfg infer.SessionConfig) (float64, error) {
	per := make([]map[string]runner, workers)
	var closers []func() error
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	set := infer.NewEngineSet(infer.EngineConfig{Workers: workers}) // one per rank, as the pipeline's
	closers = append(closers, set.Close)
	for _, name := range pathModels {
		switch mode {
		case "engine":
			ecfg := cfg
			ecfg.Engines = set
			e, err := infer.OpenEngine(catalog.Must(name).Spec(), ecfg)
			if err != nil {
				return 0, err
			}
			for w := range per {
				if per[w] == nil {
					per[w] = map[string]runner{}
				}
				per[w][name] = engineRunner{e}
			}
		case "sessions":
			for w := range per {
				s, err := infer.OpenSession(catalog.Must(name).Spec(), cfg)
				if err != nil {
					return 0, err
				}
				closers = append(closers, s.Close)
				if per[w] == nil {
					per[w] = map[string]runner{}
				}
				per[w][name] = sessionRunner{s}
			}
		default:
			return 0, fmt.Errorf("mode %q: engine or sessions", mode)
		}
	}
	// Each worker warms up on one frame, then the workers run the frames together, three
	// times; the best round counts (this machine's other load only ever slows a round down).
	const rounds = 3
	var warm, done sync.WaitGroup
	warm.Add(workers)
	var start [rounds]chan struct{}
	var finished [rounds]sync.WaitGroup
	for r := range start {
		start[r] = make(chan struct{})
		finished[r].Add(workers)
	}
	done.Add(workers)
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			defer done.Done()
			frame := make([]float32, 3*640*640) // the worker's own frame: its packing source
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range frame {
				frame[i] = r.Float32()
			}
			var sink float32
			step := func() error {
				for _, name := range pathModels {
					err := per[w][name].run(func(in func(string) infer.View) {
						for _, t := range pathInputs[name] {
							v := in(t)
							v.SetFloat32(0, frame[:v.Len()])
						}
					}, func(out func(int) infer.View) {
						sink += out(0).Float32()[0]
					})
					if err != nil {
						return err
					}
				}
				return nil
			}
			err := step()
			warm.Done()
			for round := range rounds {
				<-start[round]
				for i := w; err == nil && i < frames; i += workers {
					err = step()
				}
				finished[round].Done()
			}
			if err != nil {
				errs <- err
			}
			if math.IsNaN(float64(sink)) {
				errs <- fmt.Errorf("worker %d: NaN results", w)
			}
		}()
	}
	warm.Wait()
	best := time.Duration(math.MaxInt64)
	for r := range rounds {
		began := time.Now()
		close(start[r])
		finished[r].Wait()
		best = min(best, time.Since(began))
	}
	done.Wait()
	close(errs)
	for err := range errs {
		return 0, err
	}
	return float64(frames) / best.Seconds(), nil
}

// BenchmarkEngineMemory loads the model path with FaceFusion-sized fixture weights (a 554 MB
// swapper and a 340 MB enhancer, random, written to a temporary folder) in a child process per
// configuration and reports its peak RSS (getrusage's ru_maxrss: the process's resident memory
// at its highest, weights, buffers and runtime arenas alike) and the frames per second of the
// model path at batch 1 on the CPU: with one shared engine per model for 1, 2 and 8 workers,
// then with a session of every model per worker (before the engine) for 1 and 2. The engine's
// 8 workers may take at most 300 MB more than its 1, and may not be slower (beyond 10%: this
// machine's other load moves a round's frames/s by more than that, even best of three).
func BenchmarkEngineMemory(b *testing.B) {
	lib := testenv.ORTLibrary(b)
	dir := b.TempDir()
	for i, name := range fixtures.HeavyNames {
		if err := fixtures.WriteHeavy(filepath.Join(dir, name+".onnx"), name, heavyWeights[name], uint64(i+1)); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "yoloface_8n.onnx"), mustFixture(b, "yoloface_8n"), 0o644); err != nil {
		b.Fatal(err)
	}
	const frames = 64
	type result struct{ rssMB, fps float64 }
	got := map[string]result{}
	for _, c := range []struct {
		mode    string
		workers int
	}{{"engine", 1}, {"engine", 2}, {"engine", 8}, {"sessions", 1}, {"sessions", 2}} {
		key := fmt.Sprintf("%s/workers=%d", c.mode, c.workers)
		b.Run(key, func(b *testing.B) {
			var r result
			for range b.N {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d %s %s", engineBenchEnv, c.mode, c.workers, frames, dir, lib))
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

func mustFixture(b *testing.B, name string) []byte {
	m, err := fixtures.Model(name)
	if err != nil {
		b.Fatal(err)
	}
	return m
}
