package join

import (
	"context"
	"os"

	"github.com/facefusion-hpc/facefusion/internal/video"
)

// Side is rank 0's side file (video.WriteSide: the target's other streams, metadata and
// chapters, muxed by ffmpeg), written in the background from the start of the frame work.
type Side struct {
	path   string
	why    string // why the output is joined serially ("" when the side file is written)
	done   chan struct{}
	err    error
	cancel context.CancelFunc // stops its ffmpeg: no join follows, or the join is done
}

// startSide starts the side file of out at path when out can be joined in parallel; otherwise
// the returned Side says why not.
func startSide(ctx context.Context, out Output, path string) *Side {
	if out.Image {
		return &Side{why: "an image"}
	}
	times := out.Mux.Times
	if !times.Valid() {
		return &Side{why: "the target's frame times are not known"}
	}
	if ok, why := video.ParallelJoin(out.Path, out.Encoder, times); !ok {
		return &Side{why: why}
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Side{path: path, done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(s.done)
		s.err = video.WriteSide(ctx, out.Mux, out.Path, out.Encoder, s.path)
	}()
	return s
}

// remove stops the side file's ffmpeg if it still runs (the attempt failed or stopped before
// the join: its exit must not wait for a whole mux), waits for it, and removes the file.
func (s *Side) remove() {
	if s == nil || s.done == nil {
		return
	}
	s.cancel()
	<-s.done
	os.Remove(s.path)
}
