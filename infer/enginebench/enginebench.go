// Package enginebench runs a frame's model path (a detector, a swapper and an enhancer of
// FaceFusion's sizes, fixture files written at run time) through a rank's models the way the
// pipeline's workers do, and measures it: frames per second, and each engine's batching. The
// memory benchmark (make bench) and the GPU check (make gpu-check) both run it.
package enginebench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
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
	return fixtures.WriteFile(filepath.Join(dir, "yoloface_8n.onnx"), yolo)
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

// Options size a Run.
type Options struct {
	// Workers share the models; each round's Frames are split among them; the best of Rounds
	// counts.
	Workers, Frames, Rounds int
	// Faces is the number of faces a frame holds (0 means 1): each worker claims that many
	// swapper and enhancer items per frame (the detector runs once a frame), so a run can reach
	// a batch size larger than the number of workers.
	Faces int
	// AfterWarmup, when set, is called once every worker has warmed up, before the first round
	// (the memory benchmark resets the process's peak RSS there).
	AfterWarmup func()
	// AfterRounds, when set, is called after the last round, while the models are still open
	// (the memory benchmark reads the resident memory there).
	AfterRounds func()
}

// Run opens the path's models from cfg.ModelsDir (at cfg.MaxBatch, on cfg's providers) for
// o.Workers, and runs rounds of frames through them: every worker warms up on one frame, then
// the workers share each round's frames. The best round counts: other load on the machine only
// ever slows a round down. cfg.Engines is ignored: Shared makes its own set.
func Run(mode Mode, cfg infer.SessionConfig, o Options) (Result, error) {
	workers, faces := max(o.Workers, 1), max(o.Faces, 1)
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
				per[w] = append(per[w], engineRunner{e, faces})
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
				per[w] = append(per[w], sessionRunner{s, faces})
			}
		default:
			return res, fmt.Errorf("enginebench: mode %q: %s or %s", mode, Shared, PerWorker)
		}
	}
	best, err := runRounds(per, o.Frames, max(o.Rounds, 1), o.AfterWarmup)
	if err != nil {
		return res, err
	}
	if o.AfterRounds != nil {
		o.AfterRounds()
	}
	res.FramesPerSecond = float64(o.Frames) / best.Seconds()
	res.Engines = map[string]infer.EngineStats{}
	for name, e := range set.Engines() {
		res.Engines[name] = e.Stats()
	}
	return res, nil
}

// runRounds runs the workers (per[w] are worker w's runners, in Models order) and returns the
// best round's time.
func runRounds(per [][]runner, frames, rounds int, afterWarmup func()) (time.Duration, error) {
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
	if afterWarmup != nil {
		afterWarmup()
	}
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

// runner runs one model on a frame's items (one for the detector, a face each for the others)
// packed from frame and returns a value of its outputs.
type runner interface {
	run(model string, frame []float32) (float32, error)
}

// itemsOf is how many items model has in a frame of faces.
func itemsOf(model string, faces int) int {
	if model == Models[0] {
		return 1
	}
	return faces
}

type engineRunner struct {
	e     *infer.Engine
	faces int
}

func (r engineRunner) run(model string, frame []float32) (float32, error) {
	var sum float32
	for left := itemsOf(model, r.faces); left > 0; {
		n := min(left, r.e.MaxBatch())
		left -= n
		l, err := r.e.Claim(n)
		if err != nil {
			return 0, err
		}
		for i := range n {
			for _, name := range inputs[model] {
				v := l.Input(name, i)
				v.SetFloat32(0, frame[i:i+v.Len()]) // each face its own crop
			}
		}
		if err := l.Run(); err != nil {
			l.Release()
			return 0, err
		}
		for i := range n {
			sum += l.Output(0, i).Float32()[0]
		}
		l.Release()
	}
	return sum, nil
}

type sessionRunner struct {
	s     *infer.Session
	faces int
}

func (r sessionRunner) run(model string, frame []float32) (float32, error) {
	var sum float32
	for left := itemsOf(model, r.faces); left > 0; {
		n := min(left, r.s.MaxBatch())
		left -= n
		for i := range n {
			for _, name := range inputs[model] {
				v := r.s.Input(name).Item(i)
				v.SetFloat32(0, frame[i:i+v.Len()])
			}
		}
		if err := r.s.Run(n); err != nil {
			return 0, err
		}
		for i := range n {
			sum += r.s.Outputs()[0].Item(i).Float32()[0]
		}
	}
	return sum, nil
}

// Compare runs items random inputs through the swapper and the enhancer of dir (as WriteModels
// writes them) alone at batch 1 and together at batch (in claims of up to batch items), and
// returns, per model, how many items' outputs differ from batch 1's in any byte. On the CPU
// none does (TestEngineMatchesBatchOne); a GPU provider chooses kernels by shape, and
// make gpu-check prints what it finds there.
func Compare(cfg infer.SessionConfig, batch, items int) (map[string]int, error) {
	out := map[string]int{}
	cfg.Engines = nil
	for _, name := range Models[1:] {
		var results [2][][]byte
		for k, b := range []int{1, batch} {
			c := cfg
			c.MaxBatch = b
			e, err := infer.OpenEngine(catalog.Must(name).Spec(), c)
			if err != nil {
				return nil, err
			}
			results[k], err = runItems(e, name, items)
			e.Close()
			if err != nil {
				return nil, err
			}
		}
		for i := range items {
			if string(results[0][i]) != string(results[1][i]) {
				out[name]++
			}
		}
	}
	return out, nil
}

// runItems runs items seeded inputs through e in claims of MaxBatch and returns each item's
// first output's bytes.
func runItems(e *infer.Engine, model string, items int) ([][]byte, error) {
	res := make([][]byte, 0, items)
	for lo := 0; lo < items; lo += e.MaxBatch() {
		n := min(items-lo, e.MaxBatch())
		l, err := e.Claim(n)
		if err != nil {
			return nil, err
		}
		for i := range n {
			rng := rand.New(rand.NewPCG(uint64(lo+i), 2))
			for _, name := range inputs[model] {
				v := l.Input(name, i).Float32()
				for k := range v {
					v[k] = rng.Float32()
				}
			}
		}
		if err := l.Run(); err != nil {
			l.Release()
			return nil, err
		}
		for i := range n {
			res = append(res, append([]byte(nil), l.Output(0, i).Bytes()...))
		}
		l.Release()
	}
	return res, nil
}
