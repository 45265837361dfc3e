package frameenhancer_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/facefusion-hpc/facefusion/infer/fixtures"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/processors"
	"github.com/facefusion-hpc/facefusion/internal/processors/frameenhancer"
	"github.com/facefusion-hpc/facefusion/internal/processors/processortest"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

func frame(seed uint64, w, h int) *raster.Image {
	rng := rand.New(rand.NewPCG(seed, 9))
	f := raster.New(w, h)
	for i := range f.Pix {
		f.Pix[i] = uint8(rng.IntN(256))
	}
	return f
}

// enhanceFrames runs frame_enhancer with model at batch maxBatch on copies of frames, in one
// batch, and returns the frames it leaves.
func enhanceFrames(t *testing.T, model string, blend, maxBatch int, frames ...*raster.Image) []*raster.Image {
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorFrameEnhance}
	cfg.FrameEnhancerModel, cfg.FrameEnhancerBlend = model, blend
	ch := processortest.Open(t, cfg, model, maxBatch, processors.Source{}, processortest.Count{})
	var in []*raster.Image
	for _, f := range frames {
		in = append(in, f.Clone())
	}
	b := &processors.Batch{Frames: in, Indices: make([]int, len(in))}
	for _, p := range ch.Steps() {
		if err := processors.Run(p, b); err != nil {
			t.Fatal(err)
		}
	}
	return b.Frames
}

// The processor on the stand-in upscales by the model's scale, and each pixel is the
// stand-in's arithmetic at its place in its tile (within the one level the float32 model and
// the float64 formula may round apart), blended at 100: the model's colour order, tile cut,
// overlap and scale as FaceFusion's.
func TestEnhancesLikeTheStandIn(t *testing.T) {
	const model = "real_web_photo_x4" // 64-pixel tiles: several on a small frame
	m := catalog.Must(model)
	f := frame(1, 90, 70)
	out := enhanceFrames(t, model, 100, 4, f)[0]
	s := m.Scale
	if out.W != f.W*s || out.H != f.H*s {
		t.Fatalf("output %dx%d, want %dx%d", out.W, out.H, f.W*s, f.H*s)
	}
	g := frameenhancer.NewGrid(m.Tile, f.W, f.H)
	keep, cut, pad := g.Step*s, m.Tile.Overlap*s, m.Tile.Pad*s
	worst := 0.0
	for Y := range out.H {
		for X := range out.W {
			// The tile this output pixel comes from, and its place there.
			ty, tx := (Y+pad)%keep+cut, (X+pad)%keep+cut
			fx, fy := X/s, Y/s
			r, g8, b := f.At(fx, fy)
			x := [3]float64{float64(r) / 255, float64(g8) / 255, float64(b) / 255}
			got := [3]uint8{}
			got[0], got[1], got[2] = out.At(X, Y)
			for c := range 3 {
				v := min(255, max(0, fixtures.FrameEnhancerOut(m, c, tx, ty, x)*255))
				if d := abs(float64(got[c]) - float64(int(v))); d > worst {
					worst = d
				}
			}
		}
	}
	if worst > 1 {
		t.Errorf("max abs difference from the stand-in's arithmetic %g levels, want at most 1", worst)
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// The bytes do not depend on the batch the tiles go through, nor on which frames share a
// call: three frames at batch 1 one by one equal the three in one call at batch 5.
func TestBatchDoesNotChangeBytes(t *testing.T) {
	const model = "span_kendata_x4"
	frames := []*raster.Image{frame(2, 150, 100), frame(3, 150, 100), frame(4, 97, 41)}
	together := enhanceFrames(t, model, 80, 5, frames...)
	for k, f := range frames {
		alone := enhanceFrames(t, model, 80, 1, f)[0]
		if !bytes.Equal(alone.Pix, together[k].Pix) {
			t.Errorf("frame %d: batch 5 with the others differs from batch 1 alone", k)
		}
	}
}

// FrameScale is the model's factor with frame_enhancer, 1 without it.
func TestFrameScale(t *testing.T) {
	cfg := job.Default()
	if s := cfg.FrameScale(); s != 1 {
		t.Errorf("without frame_enhancer: scale %d", s)
	}
	cfg.Processors = []string{job.ProcessorSwap, job.ProcessorFrameEnhance}
	cfg.FrameEnhancerModel = "real_esrgan_x8"
	if s := cfg.FrameScale(); s != 8 {
		t.Errorf("real_esrgan_x8: scale %d", s)
	}
}

// BenchmarkEnhance640x360 is frame_enhancer's frames per second on one worker for a 640×360
// frame with span_kendata_x4's stand-in at batch 8 (its tiles: 4 rows of 7), the output
// 2560×1440: it measures the tiling, the blend and the session's packing around a model that
// costs next to nothing, not a real model's convolutions.
func BenchmarkEnhance640x360(b *testing.B) {
	cfg := job.Default()
	cfg.Processors = []string{job.ProcessorFrameEnhance}
	ch := processortest.Open(b, cfg, cfg.FrameEnhancerModel, 8, processors.Source{}, processortest.Count{})
	f := frame(5, 640, 360)
	out := raster.New(640*4, 360*4)
	b.ReportAllocs()
	for b.Loop() {
		batch := &processors.Batch{Frames: []*raster.Image{f}, Indices: []int{0}, Out: []*raster.Image{out}}
		for _, p := range ch.Steps() {
			if err := processors.Run(p, batch); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}
