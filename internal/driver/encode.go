package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/join"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// encode is the phase where each rank encodes its chunks (rank 0 alone an image), rank 0's
// ffmpeg writing the parallel join's side file meanwhile, and every rank leaves the control
// rounds in the same round. The rank's own failure is in its Result; the error is a
// collective's.
func (a *attempt) encode() (Result, error) {
	a.jd = jobDir(a.cfg, &a.plan)
	if c := a.coord; c != nil {
		c.pj = join.Start(a.ctx, a.comm, joinOutput(a.cfg, &a.plan), a.jd.Side(a.plan.Attempt, filepath.Ext(a.cfg.OutputPath)))
	}
	stopWatch, clock := watchStops(a.ctx, a.cfg, a.me, &a.plan, a.jd, a.log)
	a.stopWatch, a.margin = stopWatch, clock.margin
	ctl := startControl(a.ctx, a.comm, a.cfg, &a.plan, a.jd, a.opt, a.ck(), clock)
	res := Result{Rank: a.me}
	var err error
	began, gpu := time.Now(), startGPU(a.opt)
	if !a.plan.Image {
		// The batch-1 models run at most one run a CPU at once, however many workers.
		a.models.LimitRuns(a.cpus.CPUs)
		res, err = a.encodeShare(ctl)
	} else if a.coord != nil {
		res, err = a.coord.encodeImage(ctl)
	}
	a.account(&res, err, began, gpu.Stop())
	if err := ctl.leave(err); err != nil {
		a.stopWatch()
		return Result{}, err
	}
	return res, nil
}

// account completes the rank's result: its share of the run report, and its error, which it
// writes into JOB_DIR/FAILED for the others' rounds.
func (a *attempt) account(res *Result, err error, began time.Time, gpu rank.GPUStats) {
	if a.plan.Image && a.me == 0 && err == nil && !res.Stopped {
		res.Frames = 1
	}
	res.Stats = rankStats(a.me, a.models, res, began, gpu)
	cpus := a.cpus
	res.Stats.CPU = &cpus
	if a.cast != nil {
		res.Stats.ModelBroadcast = a.cast.stats
	}
	res.Stats.StageSeconds["plan"], res.Stats.StageSeconds["load"], res.Stats.StageSeconds["setup"] = a.planned.Seconds(), a.loaded.Seconds(), a.setup.Seconds()
	if err == nil {
		return
	}
	// Compared by type, not wrapped: a rank that reports another's failure as its own
	// (errors.As would see through a wrapper) has a cause of its own.
	_, remote := err.(*RemoteError)
	var ce *chunkError
	res.Err, res.Kind, res.Remote, res.Named = err.Error(), fault.KindOf(err), remote, errors.As(err, &ce) && ce.ranks > 1
	if !a.plan.Image && a.jd.CurrentAttemptID() == a.plan.AttemptID { // a straggler must not fail a newer attempt
		lustre.WriteAtomic(a.jd.Failed(), []byte(fmt.Sprintf("rank %d: %s\n", a.me, err)))
	}
}

// encodeImage is rank 0's processing of an image target. A signal here, or to another rank
// (the rounds bring it), stops the image before its output is in place.
func (c *coordinator) encodeImage(ctl *control) (res Result, err error) {
	img, stopImage := context.WithCancelCause(c.ctx)
	ctl.encode(stopImage)
	testPause(img, "image", c.log)
	var line string
	if line, err = c.models.RunImage(img, c.cfg); line != "" && img.Err() == nil {
		logFaces(c.log, line)
	}
	if err != nil && img.Err() != nil {
		res.Stopped, res.StopReason, err = true, ctl.stopReason(), nil
		if c.ctx.Err() != nil {
			res.StopReason = "rank 0: " + signalName(c.ctx)
		}
	}
	stopImage(nil)
	return res, err
}

// encodeShare encodes this rank's chunks of the attempt with its workers, one segment file
// each, and records each finished chunk in this rank's journal at once, in order. A stop (a
// signal here, or the job's stop from the rounds) ends the frames: at once, discarding the
// chunk being encoded, or once that chunk's frames are written where they fit in the time the
// stop leaves (stop.go); the chunks whose frames are all written are finished and recorded
// first. A failure or a takeover discards every chunk not yet recorded. Its share's first frames
// may be of a chunk another rank encodes: they are sent there (share.go); its last chunk may be
// completed by frames other ranks send. Both parts are encoded after the chunks it holds whole
// (rank.EncodeOrder).
func (a *attempt) encodeShare(ctl *control) (res Result, err error) {
	cfg, p, me := a.cfg, &a.plan, a.me
	pieces := p.Work[me]
	// The sharing first, whatever happens next: a sender always ends its part, an owner always
	// takes every sender's (share.go).
	pw, ph := p.Spec.EncodedFrameSize() // the processed frames are sent: frame_enhancer's are larger
	var snd *sender
	if len(pieces) > 0 && pieces[0].Owner != me {
		snd = newSender(a.comm, pieces[0].Owner, pw*ph*3)
		defer func() {
			if serr := snd.end(msgDiscarded); serr != nil && err == nil {
				err = serr
			}
		}()
	}
	rcv, err := startReceiver(a.comm, p.Work, me, pw*ph*3, cfg.TempDir())
	if err != nil {
		return Result{Rank: me}, err
	}
	defer func() {
		if rerr := rcv.wait(); rerr != nil && err == nil && !res.Stopped {
			err = rerr
		}
	}()
	e := &shareEncode{attempt: a, ctl: ctl, snd: snd, rcv: rcv, res: Result{Rank: me}, work: rank.EncodeOrder(pieces, me, p.Chunks)}
	defer e.watch()()
	return e.encode()
}

// watch sets up the encode's contexts and the stops that end them, until end is called: kill
// ends the encode at once (a failure, a takeover); stop, also ended by kill, only ends its
// frames (a signal, the job's stop), when askStop says.
func (e *shareEncode) watch() (end func()) {
	e.kill, e.cancel = context.WithCancelCause(context.WithoutCancel(e.ctx))
	e.stop, e.endFrames = context.WithCancelCause(e.kill)
	e.asked, e.ask = context.WithCancel(e.kill)
	e.stopAt.Store(-1)
	endSignal := context.AfterFunc(e.ctx, func() { e.askStop(signalName(e.ctx)) })
	endLater := e.hearLater()
	return func() {
		endLater()
		endSignal()
		e.endTimer()
		e.ask()
		e.endFrames(nil)
		e.cancel(nil)
	}
}

// shareEncode is one rank's encode of its share, once the sharing has started.
type shareEncode struct {
	*attempt  // its ctx is the signalled one: a signal to this rank cancels it
	ctl       *control
	snd       *sender
	rcv       *receiver
	kill      context.Context // ends the encode at once
	cancel    context.CancelCauseFunc
	stop      context.Context // ends the frames
	endFrames context.CancelCauseFunc
	workers   []pipeline.Worker
	work      []rank.Piece // the share's pieces in the order they are encoded (rank.EncodeOrder)
	res       Result
	began     time.Time // of the chunk (or the part of one) being encoded, for its log line

	// The stop under way (stop.go): asked ends when a stop reaches this rank, stop when its
	// frames end, at once or once the frames counted reach stopAt (-1: none), or at the latest
	// when timer fires.
	asked   context.Context
	ask     context.CancelFunc
	stopAt  atomic.Int64
	written atomic.Int64 // this rank's frames written this attempt
	t0      time.Time    // when its workers were ready: the rate is measured from then
	mu      sync.Mutex
	level   int         // the urgency of the stop under way (0: none)
	timer   *time.Timer // ends the frames when the finish's time is up
}

// encode runs the share in its order: one decode and one Stream for each run of consecutive
// pieces.
func (e *shareEncode) encode() (Result, error) {
	// The job's stop, failure or takeover reaches this rank within a round (control.go), and
	// its frames go into the rounds' progress.
	rounds := e.ctl.encode(func(cause error) {
		if cause == errStopRequested {
			sig, _ := e.ctl.stopSignal()
			e.askStop(sig)
		} else {
			e.cancel(cause)
		}
	})
	counter := progressFunc(func(n int) {
		rounds(n)
		written := e.counted(n)
		testPause(e.asked, fmt.Sprintf("frames-%d", written), e.log)
		testPause(e.asked, fmt.Sprintf("rank-%d-frames-%d", e.me, written), e.log) // one rank's (a sender's)
	})

	work := e.work
	if len(work) == 0 {
		e.cast.drop()
		return e.res, nil
	}
	// The workers read their models' signatures and open their sessions (rank 0 its first of
	// some, a swapper) from the broadcast's bytes; then the bytes go.
	var err error
	e.workers, err = e.models.Workers(e.cpus.Workers)
	e.cast.drop()
	if err != nil {
		return e.res, err
	}
	defer pipeline.CloseWorkers(e.workers)
	e.mu.Lock()
	e.t0 = time.Now()
	e.mu.Unlock()
	for i := 0; i < len(work); {
		run := work[i : i+1]
		for i+len(run) < len(work) && work[i+len(run)].Frames.Start == run[len(run)-1].Frames.End {
			run = work[i : i+len(run)+1]
		}
		i += len(run)
		if err := e.encodeRun(run, counter); err != nil {
			return e.ended(err, run)
		}
	}
	if e.asked.Err() != nil && e.kill.Err() == nil {
		// The stop came once every frame was written, or was finishing the last chunk: the
		// chunks are kept, and the job still stops as asked (a cancel is never followed by a
		// join).
		e.stopped()
	}
	return e.res, nil
}

// encodeRun encodes run, consecutive pieces of the share, from one decode.
func (e *shareEncode) encodeRun(run []rank.Piece, counter progressFunc) error {
	segs := make([]pipeline.Segment, len(run))
	for k, pc := range run {
		c, ch := pc.Chunk, e.plan.Chunks[pc.Chunk]
		segs[k] = pipeline.Segment{Start: ch.Start, End: ch.End, Path: e.jd.SegmentTemp(c, e.me, e.plan.Attempt)}
		switch {
		case pc.Owner != e.me: // this rank's frames of another's chunk go there
			segs[k] = pipeline.Segment{Start: pc.Frames.Start, End: pc.Frames.End, Send: e.snd}
		case pc.Frames.End < ch.End: // the others' frames of this chunk come from them
			segs[k].Local, segs[k].Rest = pc.Frames.End, e.rcv.rest(e.endFrames)
		}
	}
	e.began = time.Now()
	p := &e.plan
	src, err := pipeline.OpenFrames(e.stop, p.Spec, p.Info, segs[0].Start, run[len(run)-1].Frames.End)
	if err == nil {
		err = pipeline.EncodeSegments(e.kill, e.stop, p.Spec, src, segs, e.workers, counter, e.finisher(run, segs))
		src.Close()
	}
	return err
}

// finisher is what the encode calls as each piece of run is done: each chunk, once its
// encoder has finished, is renamed into place and recorded here, in order, while the next
// ones are encoded; at a stop too.
func (e *shareEncode) finisher(run []rank.Piece, segs []pipeline.Segment) pipeline.SegmentDone {
	return func(k, n, faces int, id *lustre.IdentitySums) error {
		c, ch := run[k].Chunk, e.plan.Chunks[run[k].Chunk]
		if run[k].Owner != e.me {
			e.res.Frames += n
			e.log.Debugf("rank %d: frames %v of chunk %d, %d with a face, sent to rank %d in %.2f s", e.me, run[k].Frames, c, faces, run[k].Owner, time.Since(e.began).Seconds())
			e.began = time.Now()
			return nil
		}
		testPause(e.asked, fmt.Sprintf("chunk-%d", c), e.log)
		if err := e.kill.Err(); err != nil {
			return context.Cause(e.kill)
		}
		if e.jd.CurrentAttemptID() != e.plan.AttemptID {
			// A straggler's segment and journal would land in a newer attempt's folder: rank
			// 0's control round sees it within a second, this check before every rename at once.
			err := takenOver(e.jd, e.plan.AttemptID)
			e.cancel(err)
			return err
		}
		if err := os.Rename(segs[k].Path, e.jd.Segment(c)); err != nil {
			return err
		}
		if err := e.record(c, ch, n, faces, id); err != nil {
			return err
		}
		e.res.Frames += run[k].Frames.Len() // a shared chunk's other frames are the others' in the report
		e.res.Chunks++
		e.log.Debugf("rank %d: chunk %d, frames %v: %d frame(s), %d with a face swapped or enhanced, in %.2f s", e.me, c, ch, n, faces, time.Since(e.began).Seconds())
		e.began = time.Now()
		return nil
	}
}

// ended is the end of a share whose run failed with err: a stop, the job's failure or
// takeover, or this rank's own failure, told in the chunk it happened in.
func (e *shareEncode) ended(err error, run []rank.Piece) (Result, error) {
	if e.asked.Err() != nil && e.kill.Err() == nil {
		// Tell the others (a signal may have reached this rank alone) and stop. A failure while
		// a stop finishes the chunk in flight is the stop's too (an ffmpeg child the step's
		// signal reached where it could not be shielded, video.shielded): the chunk is
		// discarded as any stop's was.
		if e.stop.Err() == nil {
			e.log.Debugf("rank %d: the chunk in flight could not be finished after the stop: %v", e.me, err)
		}
		e.stopped()
		return e.res, nil
	}
	if cause := context.Cause(e.kill); e.kill.Err() != nil && cause != context.Canceled {
		if _, ferr := os.Stat(e.jd.Failed()); ferr == nil && cause == errRemoteFailed {
			return e.res, &RemoteError{Kind: fault.Internal}
		}
		return e.res, cause // rank 0's checkpoint write failed
	}
	c := run[0].Chunk // the chunk an error is reported in
	var se *pipeline.SegmentError
	if errors.As(err, &se) {
		c = run[se.Index].Chunk
	}
	return e.res, &chunkError{rank: e.me, ranks: e.comm.Size(), chunk: c, err: err}
}

// chunkError is a rank's failure in one of its chunks; with more than one rank, it names the
// rank too.
type chunkError struct {
	rank, ranks, chunk int
	err                error
}

func (e *chunkError) Error() string {
	if e.ranks > 1 {
		return fmt.Sprintf("rank %d, chunk %d: %v", e.rank, e.chunk, e.err)
	}
	return fmt.Sprintf("chunk %d: %v", e.chunk, e.err)
}

func (e *chunkError) Unwrap() error { return e.err }

// stopped marks the share stopped, and tells the other ranks when a signal stopped this one.
func (e *shareEncode) stopped() {
	if e.ctx.Err() != nil {
		writeStop(e.jd, e.plan.AttemptID, fmt.Sprintf("rank %d: %s", e.me, signalName(e.ctx)))
	}
	e.res.Stopped = true
}

// record hashes chunk c's fresh segment and rewrites this rank's journal with it.
func (e *shareEncode) record(c int, ch rank.Range, n, faces int, id *lustre.IdentitySums) error {
	jd, res := e.jd, &e.res
	start := time.Now()
	defer func() { res.CheckpointWork += time.Since(start).Seconds() }()
	if n != ch.Len() {
		return fmt.Errorf("segment %s holds %d frames, want %d", jd.Segment(c), n, ch.Len())
	}
	size, sum, err := lustre.HashFile(jd.Segment(c))
	if err != nil {
		return err
	}
	res.Done = append(res.Done, lustre.Chunk{Chunk: c, Start: ch.Start, End: ch.End, Frames: n, Size: size, SHA256: sum,
		Rank: e.me, Attempt: e.plan.Attempt, Done: time.Now().UTC().Format(time.RFC3339), Faces: faces})
	if id != nil {
		res.Done[len(res.Done)-1].Identity = *id
	}
	if err := jd.WriteJournal(e.me, res.Done); err != nil {
		return checkpointError(err)
	}
	return nil
}

// askStop is a stop by sig reaching this rank (its own signal, a later one, or the rounds'; ""
// for the job's own clock or an operator's STOP): it finishes the chunk in flight when that
// fits in the time the stop leaves, else ends the frames now. A stop under way is only ever
// shortened, by a more urgent signal.
func (e *shareEncode) askStop(sig string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.level >= urgency(sig) {
		return
	}
	e.level = urgency(sig)
	// Asked ends once the stop is decided: what waits on it (a test's pause) then finds the
	// frames already ended when the chunk in flight is discarded.
	defer e.ask()
	now := time.Now()
	_, clock := e.ctl.stopSignal()
	window := stopWindow(sig, now, clock)
	written := int(e.written.Load())
	k, left, ok := inFlight(e.work, written)
	rate := 0.0
	if !e.t0.IsZero() && now.After(e.t0) {
		rate = float64(written) / now.Sub(e.t0).Seconds()
	}
	switch {
	case !ok: // at a chunk's start, or done: nothing in flight to lose
		left = 0
	case !wholly(e.work[k], e.me, e.plan.Chunks) || !fits(left, rate, window):
		e.log.Debugf("stop by %s: the %d frame(s) left of chunk %d are discarded (%.2f frames/s, %s left)", stopName(sig), left, e.work[k].Chunk, rate, window.Round(time.Second))
		e.endFrames(e.stopCause())
		return
	default:
		e.log.Infof("stop by %s: finishing chunk %d first, %d frame(s) left at %.2f frames/s, %s left", stopName(sig), e.work[k].Chunk, left, rate, window.Round(time.Second))
	}
	// A stop that is shortened keeps the earlier target: only the time to reach it shrinks.
	if at := e.stopAt.Load(); at < 0 || int64(written+left) < at {
		e.stopAt.Store(int64(written + left))
	}
	if left == 0 || int(e.written.Load()) >= written+left {
		e.endFrames(e.stopCause())
		return
	}
	if e.timer != nil {
		e.timer.Stop()
	}
	e.timer = time.AfterFunc(finishBudget(window), func() {
		e.log.Infof("rank %d: the chunk in flight did not finish in the time the stop leaves: discarded", e.me)
		e.endFrames(e.stopCause())
	})
}

// counted adds n frames written, and ends the frames when a finishing stop's chunk is done.
func (e *shareEncode) counted(n int) (written int) {
	written = int(e.written.Add(int64(n)))
	if at := e.stopAt.Load(); at >= 0 && int64(written) >= at {
		e.endFrames(e.stopCause())
	}
	return written
}

// stopCause is what ends the frames at a stop: this rank's signal, else the job's stop.
func (e *shareEncode) stopCause() error {
	if e.ctx.Err() != nil {
		return context.Cause(e.ctx)
	}
	return errStopRequested
}

// stopName names a stop's signal in a log line.
func stopName(sig string) string {
	if sig == "" {
		return "the job folder's STOP (its own clock, or an operator)"
	}
	return sig
}

// hearLater passes the signals main reports after the first (WithLaterSignals) to this
// rank's stop and the rounds, until the returned func is called.
func (e *shareEncode) hearLater() (end func()) {
	later := laterSignals(e.ctx)
	if later == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-later:
				e.ctl.signal(string(s))
				e.askStop(string(s))
			case <-done:
				return
			}
		}
	}()
	return func() { close(done) }
}

// endTimer stops the finish's timer, once the encode has returned.
func (e *shareEncode) endTimer() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timer != nil {
		e.timer.Stop()
	}
}
