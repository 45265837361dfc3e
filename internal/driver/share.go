package driver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/wire"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// A chunk whose frames fall on several ranks (rank.Split) is encoded by its owner, the rank
// holding its first frame; every other rank holding some of its frames processes them and sends
// them to the owner, one message a frame, then one message that ends its part: complete, or
// discarded (it stopped or failed first). Every sender sends that end whatever happens, and the
// owner receives until every sender's end has come, whatever happens to it: so neither ever
// waits for the other forever, and every request is complete before Finalize. Both ranks do
// their parts once their whole chunks are done (rank.EncodeOrder: a stop then has thrown away
// no part done early), the sender its part before the one it owns: the owner, which reaches
// the chunk at the end of its stretch, finds the frames waiting in a spill file on its node's
// temp folder, not in memory.

// What a message is (its first byte).
const (
	msgFrame     byte = iota // a frame and its per-frame data
	msgComplete              // every frame of the part was sent
	msgDiscarded             // the part ends early: the chunk stays pending
)

// The message header: kind, face flag, the identity sums (five int64 and the recognizer's name,
// at most 255 bytes); a frame follows it.
const (
	hdrIdentity   = 2
	hdrRecognizer = hdrIdentity + 5*8
	headerSize    = hdrRecognizer + 1 + 255
)

// errPartDiscarded is an owner's stop when a rank sharing its last chunk discarded its part (it
// stopped or failed): the chunk is not recorded, the next attempt does it.
var errPartDiscarded = errors.New("a rank sharing this rank's last chunk stopped before sending its frames of it")

func putHeader(b []byte, kind byte, faced bool, id lustre.IdentitySums) error {
	if len(id.Recognizer) > 255 {
		return fmt.Errorf("recognizer name %q is over 255 bytes", id.Recognizer)
	}
	b[0], b[1] = kind, 0
	if faced {
		b[1] = 1
	}
	for i, v := range []int64{int64(id.Every), int64(id.Faces), id.After, id.Before, id.ToTarget} {
		binary.LittleEndian.PutUint64(b[hdrIdentity+8*i:], uint64(v))
	}
	b[hdrRecognizer] = byte(len(id.Recognizer))
	copy(b[hdrRecognizer+1:headerSize], id.Recognizer)
	return nil
}

func readHeader(b []byte) (kind byte, faced bool, id lustre.IdentitySums) {
	v := make([]int64, 5)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[hdrIdentity+8*i:]))
	}
	n := int(b[hdrRecognizer])
	id = lustre.IdentitySums{Recognizer: string(b[hdrRecognizer+1 : hdrRecognizer+1+n]), Every: int(v[0]), Faces: int(v[1]),
		After: v[2], Before: v[3], ToTarget: v[4]}
	return b[0], b[1] == 1, id
}

// sendWindow is how many frames a sender has in flight at most: memory stays a few frames.
const sendWindow = 4

// sender is a rank's part of a chunk another rank owns (pipeline.FrameSender).
type sender struct {
	comm     collective.Comm
	owner    int
	msg      []byte
	inflight []collective.Request
	ended    bool
}

func newSender(comm collective.Comm, owner, frameSize int) *sender {
	return &sender{comm: comm, owner: owner, msg: make([]byte, headerSize+frameSize)}
}

func (s *sender) Write(frame []byte) error {
	return s.WriteMarked(frame, false, lustre.IdentitySums{})
}

func (s *sender) WriteMarked(frame []byte, faced bool, id lustre.IdentitySums) error {
	if len(frame) != len(s.msg)-headerSize {
		return fmt.Errorf("a frame of %d bytes, want %d", len(frame), len(s.msg)-headerSize)
	}
	if err := putHeader(s.msg, msgFrame, faced, id); err != nil {
		return err
	}
	copy(s.msg[headerSize:], frame)
	return s.send(s.msg)
}

// send posts one message (Isend copies it), waiting first for the oldest when the window is full.
func (s *sender) send(msg []byte) error {
	if len(s.inflight) == sendWindow {
		if err := s.inflight[0].Wait(); err != nil {
			return fmt.Errorf("sending frames to rank %d: %w", s.owner, err)
		}
		s.inflight = s.inflight[1:]
	}
	r, err := s.comm.Isend(s.owner, wire.ShareTag, msg)
	if err != nil {
		return fmt.Errorf("sending frames to rank %d: %w", s.owner, err)
	}
	s.inflight = append(s.inflight, r)
	return nil
}

// Close ends the part as complete, once every frame was written.
func (s *sender) Close() error { return s.end(msgComplete) }

// end sends the part's end (only the first call does) and waits for every message to be taken.
func (s *sender) end(kind byte) error {
	if s.ended {
		return nil
	}
	s.ended = true
	var err error
	if err = putHeader(s.msg, kind, false, lustre.IdentitySums{}); err == nil {
		err = s.send(s.msg[:headerSize])
	}
	for _, r := range s.inflight {
		if werr := r.Wait(); werr != nil && err == nil {
			err = fmt.Errorf("sending frames to rank %d: %w", s.owner, werr)
		}
	}
	s.inflight = nil
	return err
}

// receiver is an owner's end of its last chunk's sharing: it takes every sender's frames into
// a spill file as they come, until every sender has ended its part.
type receiver struct {
	comm    collective.Comm
	from    map[int]rank.Range // each sender's frames
	tail    rank.Range         // the frames the senders hold, together
	msgSize int
	spill   *os.File

	done     chan struct{}
	err      error // a failure: MPI's, the spill file's, a message out of place
	complete bool  // every sender's part is in
}

// startReceiver starts receiving the frames of rank me's last chunk from its senders (nil when
// it has none), in a spill file under dir.
func startReceiver(comm collective.Comm, split [][]rank.Piece, me, frameSize int, dir string) (*receiver, error) {
	senders := rank.Senders(split, me)
	if len(senders) == 0 {
		return nil, nil
	}
	r := &receiver{comm: comm, from: map[int]rank.Range{}, msgSize: headerSize + frameSize, done: make(chan struct{})}
	for _, s := range senders {
		r.from[s] = split[s][0].Frames
	}
	r.tail = rank.Range{Start: r.from[senders[0]].Start, End: r.from[senders[len(senders)-1]].End}
	f, err := os.CreateTemp(dir, "facefusion-shared-*.frames")
	if err == nil {
		os.Remove(f.Name()) // unnamed: gone with the process, however it ends
		r.spill = f
	}
	// The senders are drained even when there is no spill file: they must not wait forever.
	go r.run(err)
	return r, nil
}

func (r *receiver) run(spillErr error) {
	defer close(r.done)
	if spillErr != nil {
		r.err = fmt.Errorf("a spill file for the frames of a shared chunk: %w: free space in --temp-path or choose another", spillErr)
	}
	next := map[int]int{}
	for s, fr := range r.from {
		next[s] = fr.Start
	}
	buf := make([]byte, r.msgSize)
	complete := 0
	for left := len(r.from); left > 0; {
		req, err := r.comm.Irecv(collective.AnySource, wire.ShareTag, buf)
		if err == nil {
			err = req.Wait()
		}
		if err != nil {
			r.err = fmt.Errorf("receiving the frames of a shared chunk: %w", err) // MPI's: no draining after that
			return
		}
		src, n := req.Message()
		fr, ok := r.from[src]
		switch {
		case !ok || n < headerSize:
			r.fail(fmt.Errorf("a message of %d bytes from rank %d, which shares no frame of this chunk", n, src))
		case buf[0] == msgFrame && (n != r.msgSize || next[src] >= fr.End):
			r.fail(fmt.Errorf("rank %d sent a frame of %d bytes past its frames %v", src, n-headerSize, fr))
		case buf[0] == msgFrame:
			if r.err == nil {
				if _, err := r.spill.WriteAt(buf, int64(next[src]-r.tail.Start)*int64(r.msgSize)); err != nil {
					r.fail(fmt.Errorf("spilling a shared chunk's frames: %w: free space in --temp-path or choose another", err))
				}
			}
			next[src]++
		default:
			left--
			if buf[0] == msgComplete && next[src] == fr.End {
				complete++
			}
		}
	}
	r.complete = complete == len(r.from) && r.err == nil
}

func (r *receiver) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// rest writes the senders' frames, in order, once every sender has ended its part
// (pipeline.RestFrames). A part discarded stops this rank (stop), the chunk not recorded.
func (r *receiver) rest(stop context.CancelCauseFunc) pipeline.RestFrames {
	return func(ctx context.Context, w pipeline.MarkedSink) error {
		select {
		case <-r.done:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		if r.err != nil {
			return r.err
		}
		if !r.complete {
			stop(errPartDiscarded)
			return errPartDiscarded
		}
		buf := make([]byte, r.msgSize)
		for f := r.tail.Start; f < r.tail.End; f++ {
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx)
			}
			if _, err := r.spill.ReadAt(buf, int64(f-r.tail.Start)*int64(r.msgSize)); err != nil {
				return fmt.Errorf("reading back a shared chunk's frame %d: %w", f, err)
			}
			_, faced, id := readHeader(buf)
			if err := w.WriteMarked(buf[headerSize:], faced, id); err != nil {
				return err
			}
		}
		return nil
	}
}

// wait waits until every sender has ended its part, and drops the spill file.
func (r *receiver) wait() error {
	if r == nil {
		return nil
	}
	<-r.done
	if r.spill != nil {
		r.spill.Close()
	}
	return r.err
}
