package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/facefusion-hpc/facefusion/internal/progress"
	"github.com/facefusion-hpc/facefusion/internal/raster"
)

// FrameSource yields packed RGB frames into buf; io.EOF after the last (video.Decoder).
type FrameSource interface {
	Next(buf []byte) error
}

// FrameSink takes packed RGB frames in order (video.Encoder).
type FrameSink interface {
	Write(frame []byte) error
}

// MarkedSink is a FrameSink that is also told, with each frame, whether a worker selected a
// face in it: the count then follows the frames (a segment's own), not a worker's running total.
type MarkedSink interface {
	FrameSink
	WriteMarked(frame []byte, faced bool) error
}

// FrameError is a worker's failure on frames [First, Last] of a Stream (numbered from 0).
type FrameError struct {
	First, Last int
	Err         error
}

func (e *FrameError) Error() string {
	if e.First == e.Last {
		return fmt.Sprintf("frame %d: %v", e.First, e.Err)
	}
	return fmt.Sprintf("frames %d–%d: %v", e.First, e.Last, e.Err)
}

func (e *FrameError) Unwrap() error { return e.Err }

// Worker changes one frame in place. Each worker is used by one goroutine.
type Worker interface {
	Process(img *raster.Image) error
}

// BatchWorker takes several consecutive frames at once, so that a model runs on the faces
// of all of them in one batch.
type BatchWorker interface {
	Worker
	BatchSize() int
	ProcessBatch(frames []*raster.Image) error
}

type slot struct {
	index int
	img   *raster.Image
	faced bool // a worker selected a face in it (faceMarker)
}

// Stream moves every frame of src through the workers into sink, in order. Decoding,
// processing (one goroutine per worker) and encoding overlap; at most 2·workers+2 frames are
// in flight, in buffers allocated once. It returns the number of frames written.
func Stream(ctx context.Context, w, h int, src FrameSource, sink FrameSink, workers []Worker, prog progress.Counter) (int, error) {
	if len(workers) == 0 {
		return 0, errors.New("pipeline: no workers")
	}
	if prog == nil {
		prog = progress.Nop{}
	}
	batch := 1
	for _, w := range workers {
		if bw, ok := w.(BatchWorker); ok {
			batch = max(batch, bw.BatchSize())
		}
	}
	depth := 2*len(workers)*batch + 2
	free := make(chan *slot, depth)
	for i := 0; i < depth; i++ {
		free <- &slot{img: raster.New(w, h)}
	}
	todo := make(chan *slot, depth)
	done := make(chan *slot, depth)
	g, ctx := errgroup.WithContext(ctx)

	g.Go(func() error { // decode
		defer close(todo)
		for i := 0; ; i++ {
			var s *slot
			select {
			case s = <-free:
			case <-ctx.Done():
				return ctx.Err()
			}
			if err := src.Next(s.img.Bytes()); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
			s.index = i
			select {
			case todo <- s:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})

	var working sync.WaitGroup // done closes when the last worker returns
	for _, wk := range workers {
		working.Add(1)
		g.Go(func() error { // process
			defer working.Done()
			size, process := 1, func(imgs []*raster.Image) error { return wk.Process(imgs[0]) }
			if bw, ok := wk.(BatchWorker); ok {
				size, process = bw.BatchSize(), bw.ProcessBatch
			}
			marker, _ := wk.(faceMarker)
			indexed, _ := wk.(frameIndexed)
			var at []int
			var slots []*slot
			var imgs []*raster.Image
			for s := range todo {
				slots, imgs = append(slots[:0], s), append(imgs[:0], s.img)
			more: // take what is already decoded, up to the batch size; never wait for more
				for len(slots) < size {
					select {
					case s2, ok := <-todo:
						if !ok {
							break more
						}
						slots, imgs = append(slots, s2), append(imgs, s2.img)
					default:
						break more
					}
				}
				if indexed != nil {
					at = at[:0]
					for _, s := range slots {
						at = append(at, s.index)
					}
					indexed.setIndices(at)
				}
				if err := process(imgs); err != nil {
					return &FrameError{First: slots[0].index, Last: slots[len(slots)-1].index, Err: err}
				}
				for i, s := range slots {
					s.faced = marker != nil && marker.facedIn(i)
					select {
					case done <- s:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
			}
			return nil
		})
	}
	go func() {
		working.Wait()
		close(done)
	}()

	written := 0
	write := func(s *slot) error { return sink.Write(s.img.Bytes()) }
	if ms, ok := sink.(MarkedSink); ok {
		write = func(s *slot) error { return ms.WriteMarked(s.img.Bytes(), s.faced) }
	}
	g.Go(func() error { // encode, in frame order: a ring indexed by frame number
		ring := make([]*slot, depth)
		for s := range done {
			ring[s.index%depth] = s
			for ring[written%depth] != nil && ring[written%depth].index == written {
				r := ring[written%depth]
				ring[written%depth] = nil
				if err := write(r); err != nil {
					return err
				}
				written++
				prog.Add(1)
				free <- r
			}
		}
		return nil
	})
	err := g.Wait()
	return written, err
}
