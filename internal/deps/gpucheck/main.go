// Command gpucheck runs FaceFusion-shaped fixture models through ONNX Runtime's CUDA provider
// at batch 1 and batched and prints inferences per second; gpu-check.sh sets it up.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/adapters"
	"github.com/facefusion-hpc/facefusion/infer/catalog"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

func main() {
	lib := flag.String("library", "", "ONNX Runtime core library with the CUDA providers beside it")
	device := flag.Int("device", 0, "CUDA device id")
	seconds := flag.Float64("seconds", 2, "time per measurement")
	blaze := flag.String("blazeface", "", "BlazeFace model (the embedded default's detector)")
	flag.Parse()
	span := time.Duration(*seconds * float64(time.Second))
	if *blaze != "" {
		if err := runBlazeFace(*lib, *blaze, *device, span); err != nil {
			fmt.Fprintln(os.Stderr, "gpu-check:", err)
			os.Exit(1)
		}
	}
	if err := run(*lib, *device, span); err != nil {
		fmt.Fprintln(os.Stderr, "gpu-check:", err)
		os.Exit(1)
	}
}

func run(lib string, device int, span time.Duration) error {
	dir, err := os.MkdirTemp("", "gpucheck")
	if err != nil {
		return err
	}
	defer func() { // the files fixtures.Write writes, then the folder if nothing else is there
		for _, name := range fixtures.Names {
			os.Remove(filepath.Join(dir, name+".onnx"))
			os.Remove(filepath.Join(dir, name+".onnx.part"))
		}
		os.Remove(dir)
	}()
	if err := fixtures.Write(dir); err != nil {
		return err
	}
	ex := infer.Execution{Providers: []string{infer.ProviderCUDA}, DeviceID: device}
	for _, c := range []struct {
		model   string
		batches []int
		dims    map[string][]int64
	}{
		{"yoloface_8n", []int{1}, nil},
		{"arcface_w600k_r50", []int{1, 8, 32}, nil},
		{"inswapper_128", []int{1, 8, 32}, nil},
		{"inswapper_128_fp16", []int{1, 8, 32}, nil},
		{"gfpgan_1.4", []int{1, 4}, nil},
	} {
		for _, b := range c.batches {
			s, err := infer.OpenSession(catalog.Must(c.model).Spec(), infer.SessionConfig{ModelsDir: dir, Library: lib, Execution: ex, MaxBatch: b, Dims: c.dims, Logf: func(string, ...any) {}})
			if err != nil {
				return err
			}
			n := s.MaxBatch()
			if err := s.Run(n); err != nil { // warm-up: CUDA context, kernels
				s.Close()
				return err
			}
			runs := 0
			start := time.Now()
			for time.Since(start) < span {
				if err := s.Run(n); err != nil {
					s.Close()
					return err
				}
				runs++
			}
			el := time.Since(start).Seconds()
			fmt.Printf("%-20s providers %v batch %2d: %8.1f items/s (%.3f ms per run)\n", c.model, s.Providers(), n, float64(runs*n)/el, el/float64(runs)*1e3)
			s.Close()
		}
	}
	return nil
}

// runBlazeFace measures the embedded default's detector on a 1280×720 frame through CUDA.
func runBlazeFace(lib, model string, device int, span time.Duration) error {
	d, err := adapters.NewBlazeFace(model, infer.SessionConfig{Library: lib, Execution: infer.Execution{Providers: []string{infer.ProviderCUDA}, DeviceID: device}})
	if err != nil {
		return err
	}
	defer d.Close()
	frame := raster.New(1280, 720)
	if _, err := d.Detect(frame, 0.5); err != nil {
		return err
	}
	runs, start := 0, time.Now()
	for time.Since(start) < span {
		if _, err := d.Detect(frame, 0.5); err != nil {
			return err
		}
		runs++
	}
	el := time.Since(start).Seconds()
	fmt.Printf("%-20s providers [cuda] batch  1: %8.1f frames/s (%.3f ms per frame, letterbox included)\n", "blazeface_front_128", float64(runs)/el, el/float64(runs)*1e3)
	return nil
}
