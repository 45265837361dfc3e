package pipeline

import (
	"context"
	"errors"
	"io"
	"math/rand"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// countingSource yields n frames whose first byte is the frame number.
type countingSource struct{ i, n int }

func (s *countingSource) Next(buf []byte) error {
	if s.i == s.n {
		return io.EOF
	}
	buf[0], buf[1], buf[2] = byte(s.i), byte(s.i>>8), 0 // a decoder overwrites the whole frame
	s.i++
	return nil
}

type recordingSink struct{ got []int }

func (s *recordingSink) Write(f []byte) error {
	s.got = append(s.got, int(f[0])|int(f[1])<<8|int(f[2])<<16)
	return nil
}

// jitterWorker marks a frame and takes a random time, so frames finish out of order.
type jitterWorker struct{ rng *rand.Rand }

func (w jitterWorker) Process(img *raster.Image) error {
	time.Sleep(time.Duration(w.rng.Intn(300)) * time.Microsecond)
	img.Pix[2]++ // the sink sees that every frame went through a worker exactly once
	return nil
}

func TestStreamKeepsOrder(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 7} {
		src := &countingSource{n: 500}
		sink := &recordingSink{}
		ws := make([]Worker, workers)
		for i := range ws {
			ws[i] = jitterWorker{rand.New(rand.NewSource(int64(i)))}
		}
		n, err := Stream(context.Background(), 4, 2, src, sink, ws, nil)
		if err != nil || n != 500 {
			t.Fatalf("workers %d: n %d err %v", workers, n, err)
		}
		for i, v := range sink.got {
			if v&0xffff != i || v>>16 != 1 {
				t.Fatalf("workers %d: position %d holds frame %d processed %d times", workers, i, v&0xffff, v>>16)
			}
		}
	}
}

type failAt struct{ at int }

func (f *failAt) Process(img *raster.Image) error {
	if int(img.Pix[0])|int(img.Pix[1])<<8 == f.at {
		return errors.New("boom")
	}
	return nil
}

func TestStreamStopsOnError(t *testing.T) {
	src := &countingSource{n: 1000}
	sink := &recordingSink{}
	_, err := Stream(context.Background(), 4, 2, src, sink, []Worker{&failAt{300}, &failAt{300}}, nil)
	if err == nil || len(sink.got) >= 1000 {
		t.Fatalf("err %v after %d frames: want the worker's error and an early stop", err, len(sink.got))
	}
	if want := "frame 300: boom"; err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}

func TestStreamDoesNotAllocatePerFrame(t *testing.T) {
	run := func(n int) float64 {
		src := &countingSource{n: n}
		sink := &nopSink{}
		return testing.AllocsPerRun(3, func() {
			src.i = 0
			if _, err := Stream(context.Background(), 64, 64, src, sink, []Worker{passWorker{}, passWorker{}}, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := run(10), run(1000)
	if large > small+5 {
		t.Fatalf("allocations grow with frames: %v for 10 frames, %v for 1000", small, large)
	}
}

type nopSink struct{}

func (nopSink) Write([]byte) error { return nil }

// batchJitter takes up to 5 frames at once and finishes them out of order with other workers.
type batchJitter struct{ jitterWorker }

func (b batchJitter) BatchSize() int { return 5 }
func (b batchJitter) ProcessBatch(fs []*raster.Image) error {
	for _, f := range fs {
		if err := b.Process(f); err != nil {
			return err
		}
	}
	return nil
}

func TestStreamBatchesKeepOrder(t *testing.T) {
	src := &countingSource{n: 400}
	sink := &recordingSink{}
	ws := []Worker{batchJitter{jitterWorker{rand.New(rand.NewSource(7))}}, batchJitter{jitterWorker{rand.New(rand.NewSource(8))}}}
	n, err := Stream(context.Background(), 4, 2, src, sink, ws, nil)
	if err != nil || n != 400 {
		t.Fatalf("n %d err %v", n, err)
	}
	for i, v := range sink.got {
		if v&0xffff != i || v>>16 != 1 {
			t.Fatalf("position %d holds frame %d processed %d times", i, v&0xffff, v>>16)
		}
	}
}
