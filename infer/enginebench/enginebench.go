// Package enginebench runs a frame's model path (a detector, a swapper and an enhancer of
// FaceFusion's sizes, fixture files written at run time) through a rank's models the way the
// pipeline's workers do, and measures it: frames per second, and each engine's batching. The
// memory benchmark (make bench) and the GPU check (make gpu-check) both run it.
package enginebench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/catalog"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
)

// The model path, per frame, in order: one detector run, then one face swapped and enhanced.
var (
	Models = []string{"yoloface_8n", "inswapper_128", "gfpgan_1.4"}
	inputs = map[string][]string{"yoloface_8n": {"input"}, "inswapper_128": {"target", "source"}, "gfpgan_1.4": {"input"}}
)

// FaceFusion's file sizes for the path's weights: inswapper_128.onnx is 554 MB, gfpgan_1.4.onnx
// 340 MB (yoloface_8n's 12 MB do not matter; its small fixture stands in).
const (
	SwapperBytes  = 554 << 20
	EnhancerBytes = 340 << 20
)

// WriteModels writes the path's fixtures into dir: the swapper's and the enhancer's weights
// (fixtures.WriteHeavy) weigh swapperBytes and enhancerBytes.
func WriteModels(dir string, swapperBytes, enhancerBytes int64) error {
	for i, c := range []struct {
		name  string
		bytes int64
	}{{"inswapper_128", swapperBytes}, {"gfpgan_1.4", enhancerBytes}} {
		if err := fixtures.WriteHeavy(filepath.Join(dir, c.name+".onnx"), c.name, c.bytes, uint64(i+1)); err != nil {
			return err
		}
	}
	yolo, err := fixtures.Model("yoloface_8n")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "yoloface_8n.onnx"), yolo, 0o644)
}

// Mode is how the workers hold the models.
type Mode string

const (
	// Shared is the pipeline's way: one EngineSet, one session per model for every worker.
	Shared Mode = "engine"
	// PerWorker is the way before the engine: a session of every model for each worker.
	PerWorker Mode = "sessions"
)

// Result is what one Run measured.
type Result struct {
	// FramesPerSecond is the best round's.
	FramesPerSecond float64
	// Engines are the shared engines' counts by model (none in PerWorker mode).
	Engines map[string]infer.EngineStats
}

// Run opens the path's models from cfg.ModelsDir (at cfg.MaxBatch, on cfg's providers) for
// workers, and runs rounds of frames through them: every worker warms up on one frame, then the
// workers share each round's frames. The best round counts: other load on the machine only
// ever slows a round down. cfg.Engines is ignored: Shared makes its own set.
func Run(mode Mode, cfg infer.SessionConfig, workers, frames, rounds int) (Result, error) {
	per := make([][]runner, workers)
	var res Result
	set := infer.NewEngineSet(infer.EngineConfig{Workers: workers})
	defer set.Close()
	for _, name := range Models {
		spec := catalog.Must(name).Spec()
		switch mode {
		case Shared:
			c := cfg
			c.Engines = set
			e, err := infer.OpenEngine(spec, c)
			if err != nil {
				return res, err
			}
			for w := range per {
				per[w] = append(per[w], engineRunner{e})
			}
		case PerWorker:
			c := cfg
			c.Engines = nil
			for w := range per {
				s, err := infer.OpenSession(spec, c)
				if err != nil {
					return res, err
				}
				defer s.Close()
				per[w] = append(per[w], sessionRunner{s})
			}
		default:
			return res, fmt.Errorf("enginebench: mode %q: %s or %s", mode, Shared, PerWorker)
		}
	}
	best, err := runRounds(per, frames, rounds)
	if err != nil {
		return res, err
	}
	res.FramesPerSecond = float64(frames) / best.Seconds()
	res.Engines = map[string]infer.EngineStats{}
	for name, e := range set.Engines() {
		res.Engines[name] = e.Stats()
	}
	return res, nil
}

// runRounds runs the workers (per[w] are worker w's runners, in Models order) and returns the
// best round's time.
func runRounds(per [][]runner, frames, rounds int) (time.Duration, error) {
	workers := len(per)
	var warm, done sync.WaitGroup
	warm.Add(workers)
	done.Add(workers)
	start := make([]chan struct{}, rounds)
	finished := make([]sync.WaitGroup, rounds)
	for r := range start {
		start[r] = make(chan struct{})
		finished[r].Add(workers)
	}
	errs := make(chan error, 2*workers)
	for w := range workers {
		go func() {
			defer done.Done()
			frame := make([]float32, 3*640*640) // the worker's own frame: what it packs from
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range frame {
				frame[i] = rng.Float32()
			}
			var sink float32
			step := func() error {
				for m, r := range per[w] {
					out, err := r.run(Models[m], frame)
					if err != nil {
						return err
					}
					sink += out
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
				errs <- fmt.Errorf("enginebench: worker %d: NaN results", w)
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
	return best, nil
}

// runner runs one model on one item packed from frame and returns a value of its output.
type runner interface {
	run(model string, frame []float32) (float32, error)
}

type engineRunner struct{ e *infer.Engine }

func (r engineRunner) run(model string, frame []float32) (float32, error) {
	l, err := r.e.Claim(1)
	if err != nil {
		return 0, err
	}
	defer l.Release()
	for _, name := range inputs[model] {
		v := l.Input(name, 0)
		v.SetFloat32(0, frame[:v.Len()])
	}
	if err := l.Run(); err != nil {
		return 0, err
	}
	return l.Output(0, 0).Float32()[0], nil
}

type sessionRunner struct{ s *infer.Session }

func (r sessionRunner) run(model string, frame []float32) (float32, error) {
	for _, name := range inputs[model] {
		v := r.s.Input(name).Item(0)
		v.SetFloat32(0, frame[:v.Len()])
	}
	if err := r.s.Run(1); err != nil {
		return 0, err
	}
	return r.s.Outputs()[0].Float32()[0], nil
}
