package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/progress"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// Segment is one chunk of a rank's consecutive output frames: the frames [Start, End),
// encoded from their own start (a keyframe first, a fresh encoder) to the file Path.
//
// A chunk shared with other ranks (their stretches of frames begin or end inside it) is one of
// two kinds of segment. Send set: another rank encodes it, and [Start, End) are this rank's
// frames of it, which go to Send instead of an encoder (Path unused); only the first segment
// of an EncodeSegments may be one. Rest set: this rank encodes it but processes only [Start,
// Local); once those are written, Rest writes [Local, End), the frames the other ranks sent;
// only the last segment may be one.
type Segment struct {
	Start, End int
	Path       string
	Send       FrameSender
	Local      int
	Rest       RestFrames
}

// Len is the segment's frame count.
func (s Segment) Len() int { return s.End - s.Start }

// local is the end of the frames this rank processes.
func (s Segment) local() int {
	if s.Rest != nil {
		return s.Local
	}
	return s.End
}

// FrameSender takes this rank's processed frames of a chunk another rank encodes, each with its
// face flag and identity sums (what the chunk's record counts).
type FrameSender interface {
	MarkedSink
	// Close says every frame of the part was written, once they are all sent. It is not called
	// for a part that is discarded (a stop or a failure before its last frame).
	Close() error
}

// RestFrames writes, in order, a segment's frames processed by other ranks into w. ctx's end
// (a stop, or a failure) ends it with an error: the segment is then discarded.
type RestFrames func(ctx context.Context, w MarkedSink) error

// SegmentDone is told, in segment order, that segment i's file is complete: frames frames,
// faces of them with a face selected, id the identity measure's sums of its frames (nil when
// the workers measure none). It moves the file into place and records it; once it returns nil
// the segment is the caller's. An error stops EncodeSegments.
type SegmentDone func(i, frames, faces int, id *lustre.IdentitySums) error

// SegmentError is EncodeSegments' failure and the index of the segment it happened in.
type SegmentError struct {
	Index int
	Err   error
}

func (e *SegmentError) Error() string { return e.Err.Error() }
func (e *SegmentError) Unwrap() error { return e.Err }

// segmentsAhead is how many complete segments may wait for their encoder to finish and for
// done, while the next ones are encoded. A failure discards them, the one being written and the
// one started ahead; a stop discards only the last two.
const segmentsAhead = 2

// stopGrace bounds how long a stop waits for the encoders of complete segments to finish: one
// flushes what it holds (its lookahead, well under a second at 480p) and exits. Then the ones
// still running are killed and their segments discarded, well inside Slurm's default KillWait
// of 30 s between TERM and KILL. A variable for the tests.
var stopGrace = 10 * time.Second

// errGraceOver is the kill's cause when a stop's grace ran out.
var errGraceOver = errors.New("the encoders of complete segments were still running")

// EncodeSegments runs the workers over the consecutive segments segs of src in one Stream (the
// workers never drain at a segment's border) and encodes each segment with its own ffmpeg, as
// the job's spec s says: the next segment's encoder is started while the current one is
// written, and a complete segment's encoder finishes in the background. Each complete segment
// goes to done in order.
//
// ctx's end is a failure (or a takeover): every ffmpeg is killed at once. So is an error here.
// stop's end (a stop, which keeps finished work) ends only the frames: no frame is written after
// it, the segment being written and the one started ahead are discarded, but the segments whose
// frames are all written are finished (their encoders get stopGrace) and go to done in order;
// then the error is stop's cause, unless every segment was done. Every segment not accepted by
// done is discarded (its file removed), and the error is a *SegmentError naming the segment.
// src must be at segs[0].Start (less its halo frames) and its decode must reach the last
// segment's end. With face_landmark_smoothing the faces are smoothed over time (StreamWindow),
// the halo frames src decodes around the segments feeding the windows at their ends.
func EncodeSegments(ctx, stop context.Context, s *spec.Spec, src *Frames, segs []Segment, workers []Worker, prog progress.Counter, done SegmentDone) error {
	if len(segs) == 0 {
		return nil
	}
	if err := checkSegments(segs, src); err != nil {
		return err
	}
	ctx, kill := context.WithCancelCause(ctx)
	defer kill(nil)
	g, gctx := errgroup.WithContext(ctx) // every encoder's: an error kills them all
	feed, endFeed := context.WithCancel(gctx)
	defer endFeed()
	r := &segmentRun{ctx: ctx, stop: stop, gctx: gctx, feed: feed, kill: kill, grace: stopGrace,
		spec: s, src: src, segs: segs, workers: workers, prog: prog, done: done}
	watched := make(chan struct{})
	go r.watchStop(endFeed, watched)
	r.sink = &segmentSink{ctx: gctx, feed: feed, stop: stop, segs: segs, st: statsOf(workers), finished: make(chan *segmentEncoder, segmentsAhead), open: r.openSegment}
	g.Go(r.frames)
	g.Go(r.finish)
	err := g.Wait()
	<-watched // Wait ended gctx
	return r.end(err)
}

// checkSegments refuses segments that do not follow one another, parts sent or received
// other than first or last, and a decode that is not where the segments start.
func checkSegments(segs []Segment, src *Frames) error {
	start, end := segs[0].Start, segs[len(segs)-1].local()
	for i, s := range segs {
		if s.Len() <= 0 || i > 0 && s.Start != segs[i-1].End {
			return fault.AsInternal(fmt.Errorf("segment %d, frames [%d, %d), does not follow the one before it", i, s.Start, s.End))
		}
		if s.Send != nil && (i > 0 || s.Rest != nil) || s.Rest != nil && (i < len(segs)-1 || s.Local <= s.Start || s.Local >= s.End) {
			return fault.AsInternal(fmt.Errorf("segment %d, frames [%d, %d): a part sent can only be the first segment, a part received the last, within it", i, s.Start, s.End))
		}
	}
	if src.Next()+src.before != start || end > src.end {
		return fault.AsInternal(fmt.Errorf("encoding frames [%d, %d) from a decode at frame %d (%d halo frames before) of [%d, %d)", start, end, src.Next(), src.before, src.start, src.end))
	}
	return nil
}

// segmentRun is one EncodeSegments: its contexts, what it encodes, and how far done took it.
type segmentRun struct {
	ctx, stop  context.Context         // the failure's (cancelled by kill), the stop's
	gctx, feed context.Context         // the encoders' (an error ends them all), the frames'
	kill       context.CancelCauseFunc // kills every ffmpeg still running
	grace      time.Duration           // how long a stop waits for the complete segments' encoders
	spec       *spec.Spec
	src        *Frames
	segs       []Segment
	workers    []Worker
	prog       progress.Counter
	done       SegmentDone
	sink       *segmentSink
	accepted   int // segments done took
}

// watchStop ends the frames at stop's end, and the encoders still running after the grace.
func (r *segmentRun) watchStop(endFeed context.CancelFunc, watched chan<- struct{}) {
	defer close(watched)
	select {
	case <-r.stop.Done():
	case <-r.gctx.Done():
		return
	}
	endFeed()
	t := time.NewTimer(r.grace)
	defer t.Stop()
	select {
	case <-t.C:
		r.kill(errGraceOver)
	case <-r.gctx.Done():
	}
}

// openSegment starts segment s's encoder, which stamps its frames with their own output times
// from its start; a part sent goes to its sender instead.
func (r *segmentRun) openSegment(s Segment) (*segmentEncoder, error) {
	if s.Send != nil {
		return &segmentEncoder{send: s.Send, kill: func() {}}, nil
	}
	ectx, cancel := context.WithCancel(r.gctx) // its own, to kill only it at a stop
	enc, err := video.CreateEncoder(ectx, s.Path, r.spec.SegmentOptions(s.Start))
	if err != nil {
		cancel()
		return nil, err
	}
	return &segmentEncoder{enc: enc, kill: cancel}, nil
}

// frames runs the workers over the segments' frames into the sink, in one Stream.
func (r *segmentRun) frames() error {
	defer close(r.sink.finished)
	segs, src, win := r.segs, r.src, r.spec.Window
	start, end := segs[0].Start, segs[len(segs)-1].local()
	pw, ph := r.spec.ProcessSize()
	for _, w := range r.workers { // they count frames from the output's first (the identity measure's positions)
		if fx, ok := w.(frameIndexed); ok {
			fx.setFirstFrame(start - r.spec.Map.Start)
		}
		if o, ok := w.(outputSized); ok {
			o.setOutputFrames(r.spec.Map.Frames())
		}
	}
	// The halo after the run: the window's frames, or those the decode has up to the job's end.
	in := timedSource{inputSource{r.feed, upTo{src, min(end+win.Halo(), src.end+src.after)}}, r.sink.st}
	var n int
	var err error
	if win.K > 0 || win.Tracks {
		w := Window{K: win.K, Still: win.Still, Covers: win.Covers, Before: src.before, Count: end - start}
		if win.Tracks {
			w.Track = win.TrackScore
		}
		n, err = StreamWindow(r.feed, pw, ph, in, r.sink, r.workers, r.prog, w)
	} else {
		n, err = Stream(r.feed, pw, ph, in, r.sink, r.workers, r.prog)
	}
	if r.stop.Err() != nil && (r.gctx.Err() == nil || context.Cause(r.ctx) == errGraceOver) {
		if n != end-start {
			// The segment being written and the one started ahead go; the complete ones finish.
			r.sink.drop()
		}
		// Every frame written, a stop that came with the last (a stop finishing the run's last
		// segment) may still have cut the decode's own end (the decoder's context is the
		// stop's): no frame was lost to it.
		return nil
	}
	if err != nil {
		return segmentError(r.spec.Target, segs, r.sink.at, err)
	}
	if n != end-start {
		return segmentError(r.spec.Target, segs, r.sink.at, fault.AsInput(fmt.Errorf("decoded %d frames of [%d, %d): the file may be truncated", n, start, end)))
	}
	return nil
}

// finish ends each complete segment's encoder, then gives it to done, in segment order.
func (r *segmentRun) finish() error {
	for e := range r.sink.finished {
		s := r.segs[e.index]
		var err error
		if e.send != nil {
			err = e.send.Close()
		} else {
			err = e.enc.Close()
		}
		e.kill()
		if err != nil && context.Cause(r.ctx) == errGraceOver {
			return nil // a stop's: this one and those after it are discarded
		}
		if err != nil {
			if e.send != nil {
				return &SegmentError{e.index, fmt.Errorf("sending frames [%d, %d): %w", s.Start, s.End, err)}
			}
			return &SegmentError{e.index, fmt.Errorf("encoding frames [%d, %d) to %s: %w", s.Start, s.End, s.Path, err)}
		}
		var id *lustre.IdentitySums
		if e.id.Recognizer != "" {
			id = &e.id
		}
		if err := r.done(e.index, e.frames, e.faces, id); err != nil {
			return &SegmentError{e.index, err}
		}
		r.accepted = e.index + 1
	}
	return nil
}

// end is the run's error once both halves returned err: a stop's when it ended the run before
// every segment was done; then every ffmpeg still running is killed and the files of the
// segments done did not take are removed.
func (r *segmentRun) end(err error) error {
	if err == nil && r.accepted < len(r.segs) {
		// Only a stop ends the Stream early without an error, or its grace the encoders.
		err = &SegmentError{r.accepted, context.Cause(r.stop)}
		if context.Cause(r.ctx) == errGraceOver {
			err = &SegmentError{r.accepted, fmt.Errorf("%w (%w %s after it: discarded)", context.Cause(r.stop), errGraceOver, r.grace)}
		}
	}
	if err == nil {
		return nil
	}
	r.kill(err) // every ffmpeg still running is killed; then its file is removed
	r.sink.abort()
	for _, s := range r.segs[r.accepted:r.sink.opened] {
		os.Remove(s.Path)
	}
	return err
}

// segmentError names the segment of a Stream error: a worker's frames, else the segment
// being written when it happened. Frame numbers become the target's output frames.
func segmentError(target string, segs []Segment, at int, err error) error {
	var se *SegmentError
	if errors.As(err, &se) {
		at, err = se.Index, se.Err
	}
	var fe *FrameError
	if errors.As(err, &fe) {
		first, last := fe.First+segs[0].Start, fe.Last+segs[0].Start
		err = &FrameError{First: first, Last: last, Err: fe.Err}
		for i, s := range segs {
			if first >= s.Start && first < s.End {
				at = i
			}
		}
	}
	at = min(at, len(segs)-1)
	return &SegmentError{at, fmt.Errorf("target %s, frames [%d, %d): %w", target, segs[at].Start, segs[at].End, err)}
}

// segmentEncoder is one segment's ffmpeg (or, for a part sent, its sender) and what was
// written to it.
type segmentEncoder struct {
	index, frames, faces int
	id                   lustre.IdentitySums // its frames' identity measure (zero Recognizer: none)
	enc                  *video.Encoder
	send                 FrameSender
	kill                 context.CancelFunc // kills this ffmpeg alone
}

// put writes one frame to e and counts it.
func (e *segmentEncoder) put(frame []byte, faced bool, id lustre.IdentitySums) error {
	var err error
	if e.send != nil {
		err = e.send.WriteMarked(frame, faced, id)
	} else {
		err = e.enc.Write(frame)
	}
	if err != nil {
		return err
	}
	e.frames++
	if faced {
		e.faces++
	}
	if id.Recognizer != "" {
		e.id.Add(id)
	}
	return nil
}

// restSink is a segment's encoder as RestFrames writes into it.
type restSink struct{ e *segmentEncoder }

func (r restSink) Write(frame []byte) error { return r.e.put(frame, false, lustre.IdentitySums{}) }
func (r restSink) WriteMarked(frame []byte, faced bool, id lustre.IdentitySums) error {
	return r.e.put(frame, faced, id)
}

// segmentSink routes each frame of a Stream to its segment's encoder and hands a complete
// segment's encoder to finished. It is used by Stream's one encode goroutine.
type segmentSink struct {
	ctx       context.Context // the encoders': its end is a failure
	feed      context.Context // the frames': its end (a stop, or a failure) writes no more
	stop      context.Context // the stop's, which ends feed a moment later: a frame after it is not written
	segs      []Segment
	open      func(Segment) (*segmentEncoder, error)
	st        *Stats
	at        int             // the segment being written
	cur, next *segmentEncoder // its encoder; the next segment's, started ahead
	opened    int             // segments whose encoder was started: segs[:opened] may have a file
	finished  chan *segmentEncoder
}

func (s *segmentSink) Write(frame []byte) error {
	return s.WriteMarked(frame, false, lustre.IdentitySums{})
}

func (s *segmentSink) WriteMarked(frame []byte, faced bool, id lustre.IdentitySums) error {
	if err := s.feed.Err(); err != nil {
		return err // a stop: the frames already processed are not written either
	}
	if err := s.stop.Err(); err != nil {
		return err
	}
	if s.cur == nil {
		if s.at == len(s.segs) {
			return fault.AsInternal(fmt.Errorf("a frame after the last segment, [%d, %d)", s.segs[0].Start, s.segs[len(s.segs)-1].End))
		}
		s.cur, s.next = s.next, nil
		if s.cur == nil {
			if err := s.start(&s.cur, s.at); err != nil {
				return err
			}
		}
		// ffmpeg takes a good part of a second of CPU to load: the next segment's loads now,
		// while this one is written.
		if s.at+1 < len(s.segs) {
			if err := s.start(&s.next, s.at+1); err != nil {
				return err
			}
		}
	}
	begin := time.Now()
	err := s.cur.put(frame, faced, id)
	s.st.since(StageEncode, begin)
	if err != nil {
		return &SegmentError{s.at, err}
	}
	if seg := s.segs[s.at]; seg.Rest != nil && s.cur.frames == seg.Local-seg.Start {
		// This rank's frames of the segment are in: the other ranks' follow.
		if err := seg.Rest(s.feed, restSink{s.cur}); err != nil {
			return &SegmentError{s.at, err}
		}
	}
	if s.cur.frames < s.segs[s.at].Len() {
		return nil
	}
	// A complete segment is handed over even at a stop: only a failure discards it.
	select {
	case s.finished <- s.cur:
	case <-s.ctx.Done():
		return s.ctx.Err() // abort closes it
	}
	s.cur = nil
	s.at++
	return nil
}

// start starts segment i's encoder into *e.
func (s *segmentSink) start(e **segmentEncoder, i int) error {
	s.opened = max(s.opened, i+1)
	enc, err := s.open(s.segs[i])
	if err != nil {
		return &SegmentError{i, fault.AsUsage(err)}
	}
	enc.index = i
	*e = enc
	return nil
}

// drop kills the encoders of the segment being written and of the one started ahead, once the
// Stream has returned: a stop discards them.
func (s *segmentSink) drop() {
	for _, e := range []*segmentEncoder{s.cur, s.next} {
		if e != nil && e.send == nil {
			e.kill()
			e.enc.Close()
		}
	}
	s.cur, s.next = nil, nil
}

// abort ends every encoder not handed to done (its context is cancelled: ffmpeg is killed),
// once the Stream has returned and closed finished.
func (s *segmentSink) abort() {
	s.drop()
	for e := range s.finished {
		if e.send == nil {
			e.enc.Close()
		}
	}
}
