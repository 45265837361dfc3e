// Command gpucheck checks what a rank needs on a GPU node and measures the shared engines there:
// the GPU as a rank binds it and its NVML telemetry (the run report's), page-locked buffers
// through the node's CUDA runtime, ONNX Runtime's CUDA provider, and the frames per second of
// the model path (package enginebench: a detector, a 554 MB swapper and a 340 MB enhancer, one
// engine each shared by the workers) at batch 1, 8 and 32 with 1 and 8 workers, with the GPU
// memory the rank takes; every catalog model's stand-in and the embedded default's models on the
// CUDA provider against the CPU; NVENC and NVDEC through the node's ffmpeg. gpu-check.sh builds
// it where Go is and bundles it with ONNX Runtime, make fetch-gpu's provider libraries (the CUDA
// provider as a plugin library, --execution-provider-library) and the embedded default's
// models, in parts; on the node it needs no Go or network. What the node lacks it
// names, runs the rest (on the CPU when there is no CUDA provider, with smaller weights) and
// exits 2; 0 means everything was verified on a GPU, 1 a failure.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/enginebench"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/rank"
)

func main() {
	exe, _ := os.Executable()
	here := filepath.Dir(exe)
	var o options
	flag.StringVar(&o.lib, "library", filepath.Join(here, "lib", "libonnxruntime.so.1"), "ONNX Runtime core library")
	flag.StringVar(&o.providers, "execution-provider-library", defaultProviders(here), "the GPU providers' plugin libraries: a folder holding libonnxruntime_providers_{cuda,tensorrt}.so (make fetch-gpu's) or a provider library file, as the binary's --execution-provider-library; default FACEFUSION_EXECUTION_PROVIDER_LIBRARY, else the bundle's lib folder")
	flag.StringVar(&o.device, "device", "auto", "GPU as a rank picks it: auto, cpu or a visible device number")
	batches := flag.String("batches", "1,8,32", "execution batch sizes to measure")
	workers := flag.String("workers", "1,8", "worker counts to measure")
	flag.IntVar(&o.frames, "frames", 96, "frames per round (best of -rounds)")
	flag.IntVar(&o.rounds, "rounds", 2, "rounds per measurement")
	flag.StringVar(&o.models, "models", filepath.Join(here, "models"), "the embedded default's model files (blazeface_front_128.onnx, fr_feature.onnx); empty skips them")
	flag.StringVar(&o.image, "image", filepath.Join(here, "grace_hopper.png"), "an image with a face, for the embedded default's detector")
	flag.StringVar(&o.clip, "clip", filepath.Join(here, "target.mp4"), "an H.264 clip for the NVDEC trial; empty skips it")
	flag.Parse()
	o.batches, o.workers = ints(*batches), ints(*workers)
	c := &check{}
	code := c.run(o)
	fmt.Println()
	for _, line := range c.verified {
		fmt.Println("verified:     " + line)
	}
	for _, line := range c.missing {
		fmt.Println("not verified: " + line)
	}
	for _, line := range c.flagged {
		fmt.Println("flagged:      " + line)
	}
	os.Exit(code)
}

// options are the check's flags.
type options struct {
	lib, providers, device, models, image, clip string
	batches, workers                            []int
	frames, rounds                              int
}

// defaultProviders is FACEFUSION_EXECUTION_PROVIDER_LIBRARY, else the bundle's lib folder (the
// runtime's) when it holds the CUDA provider.
func defaultProviders(here string) string {
	if p := os.Getenv("FACEFUSION_EXECUTION_PROVIDER_LIBRARY"); p != "" {
		return p
	}
	if _, err := os.Stat(filepath.Join(here, "lib", "libonnxruntime_providers_cuda.so")); err == nil {
		return filepath.Join(here, "lib")
	}
	return ""
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// check collects what was verified, what could not be, and what a measurement flagged, each in
// one line.
type check struct {
	verified, missing, flagged []string
}

func (c *check) ok(format string, args ...any) {
	c.verified = append(c.verified, fmt.Sprintf(format, args...))
}
func (c *check) not(format string, args ...any) {
	c.missing = append(c.missing, fmt.Sprintf(format, args...))
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "gpu-check:", err)
	return 1
}

func (c *check) run(o options) int {
	// 1. The GPU, as a rank binds it, and its telemetry as the run report samples it.
	g, err := c.bindGPU(o.device)
	if err != nil {
		return fail(err)
	}
	// 2. The runtime, its CUDA provider (a plugin library), and pinning through the node's
	// libcudart.
	if err := useProviderLibrary(o.providers); err != nil {
		c.not("the GPU providers' plugin libraries: %v", err)
	}
	ex, used, err := c.runtime(o.lib, o.providers, g.b)
	if err != nil {
		return fail(err)
	}
	onGPU := used[0] == infer.ProviderCUDA
	swapperBytes, enhancerBytes, frames := int64(enginebench.SwapperBytes), int64(enginebench.EnhancerBytes), o.frames
	if !onGPU {
		// A CPU rehearsal: the same code at an eighth of the weights, a quarter of the frames.
		swapperBytes, enhancerBytes, frames = swapperBytes/8, enhancerBytes/8, max(8, frames/4)
		fmt.Printf("gpu-check: no CUDA provider: a CPU rehearsal with %d MB and %d MB of weights\n", swapperBytes>>20, enhancerBytes>>20)
	}
	dir, err := os.MkdirTemp("", "gpucheck")
	if err != nil {
		return fail(err)
	}
	defer func() { // the fixtures written below, then the folder
		for _, name := range enginebench.Models {
			os.Remove(filepath.Join(dir, name+".onnx"))
		}
		os.Remove(dir)
	}()
	if err := enginebench.WriteModels(dir, swapperBytes, enhancerBytes); err != nil {
		return fail(err)
	}
	cfg, err := c.pinning(dir, o.lib, ex)
	if err != nil {
		return fail(err)
	}

	// 3. Every catalog stand-in and the embedded default, on these providers against the CPU.
	if err := c.compare(ex, used, o.models, o.image); err != nil {
		return fail(err)
	}

	// 4. The model path through shared engines: frames/s, batching, GPU memory per rank.
	fmt.Printf("gpu-check: model path (yoloface_8n, inswapper_128 %d MB, gfpgan_1.4 %d MB), providers %v, best of %d rounds of %d frames\n",
		swapperBytes>>20, enhancerBytes>>20, used, o.rounds, frames)
	if err := c.measure(&cfg, g, used, o.batches, o.workers, frames, o.rounds); err != nil {
		return fail(err)
	}
	if err := c.identical(cfg, used, o.batches); err != nil {
		return fail(err)
	}
	if onGPU {
		c.ok("shared engines on the GPU at batch %v with %v workers", o.batches, o.workers)
	} else {
		c.ok("shared engines on the CPU at batch %v with %v workers (the GPU's numbers need the CUDA provider)", o.batches, o.workers)
	}

	// 5. The embedded default's detector's speed, through its engine; NVENC and NVDEC.
	if o.models != "" {
		if err := c.blazeFace(filepath.Join(o.models, "blazeface_front_128.onnx"), cfg, used); err != nil {
			return fail(err)
		}
	}
	c.hardwareCodecs(o.clip)
	if len(c.missing) > 0 {
		return 2
	}
	return 0
}

// boundGPU is the GPU a rank binds, with its telemetry (src nil without NVML) and the memory in
// use before the first session.
type boundGPU struct {
	b        rank.Binding
	src      rank.GPUSource
	stats    rank.GPUStats
	baseline uint64
}

// bindGPU binds the GPU as a rank does and opens its telemetry as the run report samples it.
func (c *check) bindGPU(device string) (boundGPU, error) {
	id, err := rank.Identify(0, 1, 0, 1, rank.Options{Device: device})
	if err != nil {
		return boundGPU{}, err
	}
	g := boundGPU{b: id.GPU}
	fmt.Println("gpu-check: rank binding:", g.b)
	g.src, g.stats = rank.OpenGPU(g.b)
	if g.src == nil {
		c.not("NVML telemetry and GPU memory per rank (%s)", g.stats.Reason)
	} else if r, err := g.src.Read(); err != nil {
		c.not("NVML telemetry: %v", err)
		g.src = nil
	} else {
		g.baseline = r.MemoryUsedBytes
		c.ok("NVML: %s, %.1f GiB, %.1f GiB in use before the first session", g.stats.Name, gib(g.stats.MemoryTotalBytes), gib(g.baseline))
	}
	return g, nil
}

// runtime loads ONNX Runtime from lib and resolves the providers a rank bound to b uses: CUDA
// then the CPU, or the CPU alone; providers is where the CUDA provider's library was named.
func (c *check) runtime(lib, providers string, b rank.Binding) (ex infer.Execution, used []string, err error) {
	if err := infer.Init(lib); err != nil {
		return ex, nil, err
	}
	for _, l := range infer.ProviderLibraries() {
		fmt.Printf("gpu-check: %s provider library: %s\n", l.Provider, l)
	}
	built := providerVersion(providers)
	fmt.Printf("gpu-check: ONNX Runtime core %s (%s); GPU provider libraries %q, built for ONNX Runtime %q\n", infer.RuntimeVersion(), lib, providers, built)
	ex = infer.Execution{Providers: []string{infer.ProviderCUDA, infer.ProviderCPU}, DeviceID: max(b.Device, 0)}
	if b.CPU() {
		ex.Providers = []string{infer.ProviderCPU}
	}
	used, err = infer.ResolveProviders(ex)
	if err != nil {
		return ex, nil, err
	}
	if used[0] == infer.ProviderCUDA {
		c.ok("ONNX Runtime %s's CUDA provider (%s, built for %s) on device %d", infer.RuntimeVersion(), providers, built, ex.DeviceID)
		return ex, used, nil
	}
	a, err := infer.AvailableProviders()
	why := a.Why()
	if err != nil {
		why = err.Error()
	}
	if b.CPU() {
		why = "the rank is bound to no GPU; " + why
	}
	c.not("ONNX Runtime's CUDA provider (%s); the engines run on the CPU here", why)
	return ex, used, nil
}

// pinning makes the sessions' config for the models in dir and checks, on one session, that
// its tensor buffers are page-locked.
func (c *check) pinning(dir, lib string, ex infer.Execution) (infer.SessionConfig, error) {
	var pinNote string
	cfg := infer.SessionConfig{ModelsDir: dir, Library: lib, Execution: ex, Logf: func(format string, args ...any) {
		if line := fmt.Sprintf(format, args...); strings.HasPrefix(line, infer.UnpinnedNote) {
			pinNote = line
		}
	}}
	s, err := infer.OpenSession(catalog.Must("yoloface_8n").Spec(), cfg)
	if err != nil {
		return cfg, err
	}
	pinned := s.Inputs()[0].Pinned()
	s.Close()
	if pinned {
		c.ok("page-locked tensor buffers (cudaHostRegister through the node's libcudart)")
	} else {
		c.not("page-locked tensor buffers (%s)", pinNote)
	}
	return cfg, nil
}

// measure prints a row per worker count and batch size: frames/s, how full the swapper's runs
// were, and the GPU memory and utilization; cfg is left at the last batch size.
func (c *check) measure(cfg *infer.SessionConfig, g boundGPU, used []string, batches, workers []int, frames, rounds int) error {
	onGPU := used[0] == infer.ProviderCUDA
	for _, w := range workers {
		for _, batch := range batches {
			cfg.MaxBatch = batch
			// Each worker claims faces items a frame, so that the workers together can fill a
			// batch (one item each would never fill 32 with 8 workers, nor batch at all with 1).
			faces := (batch + w - 1) / w
			sampler := rank.StartSampler(g.src, g.stats, 50*time.Millisecond)
			rowFrames := frames
			if !onGPU { // the rehearsal: about as many items a row as at one face a frame
				rowFrames = max(4, frames/faces)
			}
			res, err := enginebench.Run(enginebench.Shared, *cfg, enginebench.Options{Workers: w, Frames: rowFrames, Rounds: rounds, Faces: faces})
			st := sampler.Stop()
			if err != nil {
				return fmt.Errorf("workers %d, batch %d: %w", w, batch, err)
			}
			sw := res.Engines["inswapper_128"]
			mean := float64(sw.Items) / float64(max(sw.Runs, 1))
			line := fmt.Sprintf("workers %d batch %2d: %8.1f frames/s of %d faces (%.1f faces/s); swapper: %.2f items per run (%d runs, %d sealed by the deadline), %d in flight at most",
				w, batch, res.FramesPerSecond, faces, res.FramesPerSecond*float64(faces), mean, sw.Runs, sw.Expired, sw.MaxInFlight)
			if mean < float64(batch) {
				line += fmt.Sprintf(" [FLAG: below batch %d]", batch)
				c.flagged = append(c.flagged, fmt.Sprintf("workers %d batch %d: the swapper's runs held %.2f items on average, below the batch size: the row measures smaller batches", w, batch, mean))
			}
			if g.src != nil {
				line += fmt.Sprintf("; GPU memory +%.2f GiB over the baseline, utilization max %.0f%%", gib(st.MemoryUsedMaxBytes-min(g.baseline, st.MemoryUsedMaxBytes)), 100*st.UtilizationMax)
			}
			fmt.Println(line + fmt.Sprintf("; host RSS %.2f GiB", gib(rss())))
		}
	}
	return nil
}

// identical compares each batch size's outputs with batch 1's, byte for byte, on these
// providers.
func (c *check) identical(cfg infer.SessionConfig, used []string, batches []int) error {
	var same []int
	for _, batch := range batches {
		if batch == 1 {
			continue
		}
		diff, err := enginebench.Compare(cfg, batch, batch)
		if err != nil {
			return fmt.Errorf("comparing batch %d with batch 1: %w", batch, err)
		}
		line := fmt.Sprintf("batch %d against batch 1, %d items byte for byte, providers %v:", batch, batch, used)
		for _, name := range enginebench.Models[1:] {
			if n := diff[name]; n > 0 {
				line += fmt.Sprintf(" %s differs in %d of %d items;", name, n, batch)
			} else {
				line += fmt.Sprintf(" %s identical;", name)
			}
		}
		fmt.Println(strings.TrimSuffix(line, ";"))
		if len(diff) > 0 {
			c.not("bit-identity to batch 1 at batch %d on providers %v: %v items differ (execution_batch_size then changes a job's frames)", batch, used, diff)
		} else {
			same = append(same, batch)
		}
	}
	if len(same) > 0 {
		c.ok("batch %v bit-identical to batch 1 on providers %v", same, used)
	}
	return nil
}

// blazeFace measures BlazeFace on a 1280×720 frame for two seconds.
func (c *check) blazeFace(model string, cfg infer.SessionConfig, used []string) error {
	cfg.MaxBatch, cfg.Engines = 1, nil
	d, err := adapters.NewBlazeFace(model, cfg)
	if err != nil {
		return err
	}
	defer d.Close()
	frame := raster.New(1280, 720)
	if _, err := d.Detect(frame, 0.5); err != nil {
		return err
	}
	runs, start := 0, time.Now()
	for time.Since(start) < 2*time.Second {
		if _, err := d.Detect(frame, 0.5); err != nil {
			return err
		}
		runs++
	}
	el := time.Since(start).Seconds()
	fmt.Printf("blazeface_front_128, providers %v: %.1f frames/s (%.3f ms per 720p frame, letterbox included)\n", used, float64(runs)/el, el/float64(runs)*1e3)
	c.ok("BlazeFace on providers %v", used)
	return nil
}

func gib(b uint64) float64 { return float64(b) / (1 << 30) }

// rss is this process's resident memory now (not its peak).
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(syscall.Getpagesize())
}
