package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/facefusion-hpc/facefusion/infer"
	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/models/adapters"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/models/facemodel"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// compareTolerance is the largest difference from the CPU's output, relative to the output's
// own scale, that is not flagged: CUDA's kernels sum in another order (and convolutions may
// run in TF32), so outputs differ in their last bits, not by more.
const compareTolerance = 1e-2

// compare runs every catalog model's stand-in (infer/fixtures) and the embedded default's
// recognizer and detector (real files, in modelsDir) on the providers of ex and on the CPU,
// on the same inputs, and prints each model's largest difference. Without CUDA it rehearses
// the same path with the CPU on both sides.
func (c *check) compare(ex infer.Execution, used []string, modelsDir, image string) error {
	cpu := infer.Execution{Providers: []string{infer.ProviderCPU}}
	against := "cuda against cpu"
	if used[0] != infer.ProviderCUDA {
		against = "cpu against cpu (a rehearsal: no CUDA provider)"
	}
	dir, err := os.MkdirTemp("", "gpucheck-standins")
	if err != nil {
		return err
	}
	defer func() { // the stand-ins written below, then the folder
		for _, name := range fixtures.Names {
			os.Remove(filepath.Join(dir, name+".onnx"))
		}
		os.Remove(dir)
	}()
	if err := fixtures.Write(dir); err != nil {
		return err
	}
	var worst float64
	var failed []string
	for _, name := range fixtures.Names {
		d, err := c.compareModel(catalog.Must(name), dir, ex, cpu)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", name, err))
			continue
		}
		fmt.Printf("stand-in %-26s max abs %.3g (%s)\n", name, d, against)
		worst = max(worst, d)
	}
	if len(failed) > 0 {
		c.not("%d stand-ins not compared: %v", len(failed), failed)
	}
	c.ok("%d of %d catalog stand-ins %s, largest relative difference %.3g", len(fixtures.Names)-len(failed), len(fixtures.Names), against, worst)

	// The embedded default: fr_feature's real file, and BlazeFace through its adapter.
	if _, err := os.Stat(filepath.Join(modelsDir, "fr_feature.onnx")); err == nil {
		d, err := c.compareModel(catalog.Must("fr_feature"), modelsDir, ex, cpu)
		if err != nil {
			c.not("fr_feature (the embedded default's recognizer) %s: %v", against, err)
		} else {
			fmt.Printf("embedded   %-26s max abs %.3g (%s)\n", "fr_feature", d, against)
			c.ok("the embedded default's fr_feature %s: relative difference %.3g", against, d)
		}
	}
	if err := c.compareBlazeFace(filepath.Join(modelsDir, "blazeface_front_128.onnx"), image, ex, cpu, against); err != nil {
		c.not("BlazeFace (the embedded default's detector) %s: %v", against, err)
	}
	return nil
}

// compareModel runs model m from dir on ex and on cpu at batch 1 and returns the largest
// difference between their outputs, relative to the largest CPU output (at least 1); a
// difference over compareTolerance is flagged.
func (c *check) compareModel(m *catalog.Model, dir string, ex, cpu infer.Execution) (float64, error) {
	var outs [2][][]float64
	for i, e := range []infer.Execution{ex, cpu} {
		cfg := infer.SessionConfig{ModelsDir: dir, Execution: e, MaxBatch: 1, Logf: func(string, ...any) {}}
		if m.Kind == catalog.Detector {
			if err := detectorDims(m, &cfg); err != nil {
				return 0, err
			}
		}
		s, err := infer.OpenSession(m.Spec(), cfg)
		if err != nil {
			return 0, err
		}
		for k, in := range s.Inputs() {
			fill(in, k)
		}
		err = s.Run(1)
		if err == nil {
			for _, o := range s.Outputs() {
				outs[i] = append(outs[i], values(o))
			}
		}
		s.Close()
		if err != nil {
			return 0, err
		}
	}
	var diff, scale float64 = 0, 1
	for k := range outs[1] {
		for j, v := range outs[1][k] {
			diff = max(diff, math.Abs(outs[0][k][j]-v))
			scale = max(scale, math.Abs(v))
		}
	}
	if d := diff / scale; d > compareTolerance || math.IsNaN(diff) {
		c.flagged = append(c.flagged, fmt.Sprintf("%s: outputs differ from the CPU's by %.3g (relative %.3g), over %g", m.Name, diff, d, compareTolerance))
	}
	return diff / scale, nil
}

// detectorDims fixes a detector's dynamic axes at its default size, as the face detector's
// adapter does: the input, and the anchor outputs' lengths.
func detectorDims(m *catalog.Model, cfg *infer.SessionConfig) error {
	proc, err := facemodel.NewDetector(m, m.Size)
	if err != nil {
		return err
	}
	cfg.Dims = map[string][]int64{"input": {1, 3, int64(m.Size), int64(m.Size)}}
	sig, err := infer.ReadSignature(filepath.Join(cfg.ModelsDir, m.File))
	if err != nil {
		return err
	}
	lens := proc.OutputLens()
	for i, o := range sig.Outputs {
		if i >= len(lens) || i >= len(m.Want.Outputs) {
			break
		}
		want := m.Want.Outputs[i].Shape
		switch {
		case len(o.Shape) == 2 && len(want) == 2:
			cfg.Dims[o.Name] = []int64{int64(lens[i]) / want[1], want[1]}
		case len(o.Shape) == 3 && len(want) == 3 && want[2] > 0:
			cfg.Dims[o.Name] = []int64{1, int64(lens[i]) / want[2], want[2]}
		case len(o.Shape) == 3 && len(want) == 3:
			cfg.Dims[o.Name] = []int64{1, want[1], int64(lens[i]) / want[1]}
		}
	}
	return nil
}

// fill writes input k a fixed pattern in [0, 1): the same on both providers.
func fill(b *infer.Buffer, k int) {
	n := b.Len()
	switch b.Type {
	case infer.Float32:
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(0.5 + 0.5*math.Sin(float64(i)*0.37+float64(k)))
		}
		b.SetFloat32(0, v)
	case infer.Float16:
		h := b.Float16()
		for i := range h {
			h[i] = infer.F16(float32(0.5 + 0.5*math.Sin(float64(i)*0.37+float64(k))))
		}
	default: // integer inputs (none in the catalog today): ones
		raw := b.Bytes()
		for i := 0; i < len(raw); i += b.Type.Size() {
			raw[i] = 1
		}
	}
}

// values is an output as float64s, whatever its element type.
func values(b *infer.Buffer) []float64 {
	var out []float64
	switch b.Type {
	case infer.Float32:
		for _, v := range b.Float32() {
			out = append(out, float64(v))
		}
	case infer.Float16:
		for _, h := range b.Float16() {
			out = append(out, float64(infer.F32From16(h)))
		}
	case infer.Float64:
		out = append(out, b.Float64()...)
	default:
		for _, v := range b.Bytes() {
			out = append(out, float64(v))
		}
	}
	return out
}

// compareBlazeFace detects the faces of image with BlazeFace on ex and on cpu and compares the
// boxes, scores and key points.
func (c *check) compareBlazeFace(model, image string, ex, cpu infer.Execution, against string) error {
	img, err := raster.Load(image)
	if err != nil {
		return err
	}
	var got [2][]float64
	for i, e := range []infer.Execution{ex, cpu} {
		d, err := adapters.NewBlazeFace(model, infer.SessionConfig{Execution: e, MaxBatch: 1, Logf: func(string, ...any) {}})
		if err != nil {
			return err
		}
		dets, err := d.Detect(img, 0.5)
		d.Close()
		if err != nil {
			return err
		}
		for _, det := range dets {
			got[i] = append(got[i], det.Score, det.Box.X0, det.Box.Y0, det.Box.X1, det.Box.Y1)
		}
	}
	if len(got[0]) != len(got[1]) || len(got[1]) == 0 {
		c.flagged = append(c.flagged, fmt.Sprintf("BlazeFace found %d faces in %s on %s, %d on the CPU", len(got[0])/5, image, ex.Providers, len(got[1])/5))
		return nil
	}
	var diff float64
	for j := range got[1] {
		diff = max(diff, math.Abs(got[0][j]-got[1][j]))
	}
	fmt.Printf("embedded   %-26s max abs %.3g over %d faces' boxes and scores, in pixels (%s)\n", "blazeface_front_128", diff, len(got[1])/5, against)
	if diff > 1 {
		c.flagged = append(c.flagged, fmt.Sprintf("BlazeFace's boxes differ from the CPU's by %.3g pixels", diff))
	}
	c.ok("the embedded default's BlazeFace %s: %d faces, boxes within %.3g pixels", against, len(got[1])/5, diff)
	return nil
}
