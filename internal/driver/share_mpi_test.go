package driver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/ranktest"
	"github.com/facefusion-hpc/facefusion/internal/wire"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// shareRanksEnv marks this test binary started by TestShareReceiver under mpirun: each rank runs
// its part of the cases instead of launching them.
const shareRanksEnv = "FACEFUSION_TEST_SHARE_RANKS"

// shareDone is the line rank 0 prints once every case ran: without it, a run that ran no case
// (a test filter that matched nothing) would pass.
const shareDone = "share receiver: every case ran"

// An owner's receiver, on 3 real MPI ranks (MPI point-to-point has no single-process stand-in):
// chunk [0,10) is rank 0's, which holds [0,4) and takes [4,7) from rank 1 and [7,10) from rank 2.
// Frames are 64 KiB, over OpenMPI's eager limit, so a sender's Close returns only once the owner
// has taken every message: a receiver that stopped draining would hang its senders (the guard
// fails the test). The cases: every frame in order with its marks; no spill file (each sender
// still drained, and the rest refused with the reason); a message from a rank that sends no frame
// of the chunk; and a frame past a sender's range.
func TestShareReceiver(t *testing.T) {
	if os.Getenv(shareRanksEnv) != "" {
		shareRanks(t)
		return
	}
	ranktest.Run(t, 3, shareRanksEnv+"=1", shareDone, "a sender never drained?")
}

// frameSink keeps the frames and marks rest writes.
type frameSink struct {
	frames [][]byte
	faced  []bool
	ids    []lustre.IdentitySums
}

func (s *frameSink) Write(frame []byte) error {
	return s.WriteMarked(frame, false, lustre.IdentitySums{})
}

func (s *frameSink) WriteMarked(frame []byte, faced bool, id lustre.IdentitySums) error {
	s.frames = append(s.frames, bytes.Clone(frame))
	s.faced, s.ids = append(s.faced, faced), append(s.ids, id)
	return nil
}

// shareRanks is one rank's part of TestShareReceiver's cases.
func shareRanks(t *testing.T) {
	comm := ranktest.Comm(t, 3)
	const frameSize = 64 << 10
	split := [][]rank.Piece{
		{{Chunk: 0, Frames: rank.Range{Start: 0, End: 4}, Owner: 0}},
		{{Chunk: 0, Frames: rank.Range{Start: 4, End: 7}, Owner: 0}},
		{{Chunk: 0, Frames: rank.Range{Start: 7, End: 10}, Owner: 0}},
	}
	me := comm.Rank()
	frame := func(f int) ([]byte, bool, lustre.IdentitySums) {
		return bytes.Repeat([]byte{byte(f)}, frameSize), f%2 == 0, lustre.IdentitySums{Recognizer: "r", Every: f, After: int64(-f)}
	}
	// send is a sender's part: its frames, extra more past its range, then the end.
	send := func(what string, extra int) {
		s := newSender(comm, 0, frameSize)
		fr := split[me][0].Frames
		for f := fr.Start; f < fr.End+extra; f++ {
			if err := s.WriteMarked(frame(f)); err != nil {
				t.Errorf("%s: rank %d, frame %d: %v", what, me, f, err)
			}
		}
		if err := s.Close(); err != nil {
			t.Errorf("%s: rank %d's end: %v", what, me, err)
		}
	}
	// receive starts the owner's receiver in dir and lets the senders go; before lets rank 0 post
	// a message first.
	receive := func(dir string, before func()) *receiver {
		r, err := startReceiver(comm, split, 0, frameSize, dir)
		if err != nil || r == nil {
			t.Fatalf("startReceiver: %v, %v", r, err)
		}
		if before != nil {
			before()
		}
		if err := comm.Barrier(); err != nil {
			t.Fatal(err)
		}
		return r
	}
	// wantRefused checks that rest refuses the chunk, writing nothing, with the error wait
	// ends with, which names want.
	wantRefused := func(what string, r *receiver, want string) {
		var sink frameSink
		rerr := r.rest(func(error) {})(context.Background(), &sink)
		err := r.wait()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: the receiver ended with %v, want an error naming %q", what, err, want)
		}
		if rerr == nil || err == nil || rerr.Error() != err.Error() || len(sink.frames) != 0 {
			t.Errorf("%s: rest wrote %d frame(s) and said %v, want none and %v", what, len(sink.frames), rerr, err)
		}
	}

	// Every frame, in order, with its marks.
	if me == 0 {
		r := receive(t.TempDir(), nil)
		var sink frameSink
		err := r.rest(func(error) {})(context.Background(), &sink)
		if werr := r.wait(); err == nil {
			err = werr
		}
		if err != nil || len(sink.frames) != 6 {
			t.Fatalf("whole: %d frame(s), %v; want frames 4 to 9", len(sink.frames), err)
		}
		for i, got := range sink.frames {
			want, faced, id := frame(4 + i)
			if !bytes.Equal(got, want) || sink.faced[i] != faced || sink.ids[i] != id {
				t.Errorf("whole: frame %d came back as another frame or with other marks (%v, %+v)", 4+i, sink.faced[i], sink.ids[i])
			}
		}
	} else {
		comm.Barrier()
		send("whole", 0)
	}

	// No spill file: the senders are drained all the same, and the reason is the answer.
	if me == 0 {
		r := receive(filepath.Join(t.TempDir(), "missing"), nil)
		wantRefused("no spill file", r, "a spill file for the frames of a shared chunk")
	} else {
		comm.Barrier()
		send("no spill file", 0)
	}

	// A message from a rank that holds no frame of the chunk: rank 0 itself, posted before the
	// senders start, so it is taken before their ends (a third rank's could come after them).
	if me == 0 {
		var stray collective.Request
		r := receive(t.TempDir(), func() {
			msg := make([]byte, headerSize)
			var perr error
			if stray, perr = comm.Isend(0, wire.ShareTag, msg); perr != nil {
				t.Fatal(perr)
			}
		})
		wantRefused("not a sender", r, "from rank 0, which shares no frame of this chunk")
		if err := stray.Wait(); err != nil {
			t.Error(err)
		}
	} else {
		comm.Barrier()
		send("not a sender", 0)
	}

	// A frame past a sender's range: rank 1 sends 4 frames of its 3.
	if me == 0 {
		r := receive(t.TempDir(), nil)
		wantRefused("past its frames", r, "rank 1 sent a frame of 65536 bytes past its frames [4,7)")
	} else {
		comm.Barrier()
		send("past its frames", map[int]int{1: 1}[me])
	}

	if err := comm.Barrier(); err != nil {
		t.Fatal(err)
	}
	if me == 0 && !t.Failed() {
		t.Log(shareDone)
	}
}
