package pipeline

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// upscaleWorker is an upscaler like frame_enhancer's worker: it writes each frame, 3 times its
// size, into the buffer the stream gave it, marking the copy with the frame's number and its
// own size, and hands that back.
type upscaleWorker struct {
	rng    *rand.Rand
	outs   []*raster.Image
	frames []*raster.Image
	fresh  int // outputs it had to make itself (none: the stream's buffers fit)
}

func (w *upscaleWorker) FrameScale() int                 { return 3 }
func (w *upscaleWorker) setOutputs(outs []*raster.Image) { w.outs = outs }
func (w *upscaleWorker) Frame(k int) *raster.Image       { return w.frames[k] }
func (w *upscaleWorker) Process(img *raster.Image) error { return w.ProcessBatch([]*raster.Image{img}) }
func (w *upscaleWorker) BatchSize() int                  { return 2 }
func (w *upscaleWorker) ProcessBatch(fs []*raster.Image) error {
	w.frames = w.frames[:0]
	for k, f := range fs {
		out := w.outs[k]
		if out == nil || out.W != 3*f.W || out.H != 3*f.H {
			out = raster.New(3*f.W, 3*f.H)
			w.fresh++
		}
		time.Sleep(time.Duration(w.rng.Intn(200)) * time.Microsecond)
		copy(out.Pix[:3], f.Pix[:3])
		out.Pix[2] = byte(out.W) // the sink sees the upscaled frame, not the decoded one
		w.frames = append(w.frames, out)
	}
	w.outs = nil
	return nil
}

// sizeSink records each frame's number and length.
type sizeSink struct{ got, sizes []int }

func (s *sizeSink) Write(f []byte) error {
	s.got, s.sizes = append(s.got, int(f[0])|int(f[1])<<8), append(s.sizes, len(f))
	return nil
}

// The stream writes what an upscaling worker hands back, in order, in the buffers it gave it
// (allocated once per slot, never per frame).
func TestStreamWritesUpscaledFrames(t *testing.T) {
	src := &countingSource{n: 300}
	sink := &sizeSink{}
	ws := []Worker{&upscaleWorker{rng: rand.New(rand.NewSource(1))}, &upscaleWorker{rng: rand.New(rand.NewSource(2))}}
	n, err := Stream(context.Background(), 4, 2, src, sink, ws, nil)
	if err != nil || n != 300 {
		t.Fatalf("n %d err %v", n, err)
	}
	for i := range sink.got {
		if sink.got[i] != i || sink.sizes[i] != 12*6*3 {
			t.Fatalf("position %d: frame %d of %d bytes, want frame %d of %d", i, sink.got[i], sink.sizes[i], i, 12*6*3)
		}
	}
	for i, w := range ws {
		if f := w.(*upscaleWorker).fresh; f != 0 {
			t.Errorf("worker %d made %d outputs itself: the stream's buffers did not reach it", i, f)
		}
	}
}

// The upscaled buffers a stream holds stay within upscaledBudget, down to the frames it needs.
func TestUpscaledDepth(t *testing.T) {
	if d := upscaledDepth(34, 2, 3840, 2160, 4); d*3840*2160*3*16 > upscaledBudget || d < 2 {
		t.Errorf("4K at ×4, 16 workers: depth %d", d)
	}
	if d := upscaledDepth(34, 30, 3840, 2160, 4); d != 30 {
		t.Errorf("depth %d, want the 30 the stream needs", d)
	}
	if d := upscaledDepth(6, 2, 640, 360, 4); d != 6 {
		t.Errorf("small frames: depth %d, want 6", d)
	}
	if d := upscaledDepth(6, 2, 3840, 2160, 1); d != 6 {
		t.Errorf("no upscale: depth %d, want 6", d)
	}
}
