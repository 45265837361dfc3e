package driver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/metrics"
	"github.com/facefusion-hpc/facefusion/internal/progress"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// The control rounds. While the ranks encode, stop, failure, takeover and progress travel over
// MPI, not through the job folder: about once a second every rank adds its frames and its flags
// to a non-blocking allreduce and goes on encoding while the others catch up, so no rank is held
// in lockstep, and every rank learns the result, the same on all, within one round. Only rank 0
// watches the file system (ATTEMPT, and STOP, which the ranks' signals, the job's own clock and
// an operator write) and writes the job's one progress file: the metadata server's load does
// not grow with the ranks. The rounds end on every rank in the same round, the first that finds
// every rank done, before the results are gathered: no request is left in flight.

// roundEvery is the rounds' cadence: how late a stop or a failure reaches the other ranks, and
// how fresh the progress is. An image's rounds carry only stops, for the second or so rank 0
// takes, and touch no file: they come oftener, so that the others learn its end soon.
const roundEvery, imageRoundEvery = time.Second, 100 * time.Millisecond

// A round's values, summed over the ranks: [0,n) the frames each rank encoded this attempt,
// [n,2n) the name of the most urgent signal that reached each rank (packName; 0: none), then
// the flags and rank 0's slurmClock.
const (
	slotRunning   = iota // ranks whose encode still runs: 0 ends the rounds
	slotFailed           // ranks whose encode failed
	slotStopFile         // rank 0 found JOB_DIR/STOP (a signal, the job's own clock, an operator)
	slotTakenOver        // rank 0 found a newer attempt in ATTEMPT
	slotLimit            // rank 0's: the job's time limit, Unix seconds (0: none known)
	slotKillWait         // rank 0's: Slurm's KillWait, milliseconds (0: unknown)
	flagSlots
)

// errStopRequested is the cancel cause when another rank's signal stopped the job.
var errStopRequested = errors.New("another rank was stopped by a signal")

// errRemoteFailed is the cancel cause when another rank failed: an error another rank reports,
// so that the rank it stops is never taken for the job's cause.
var errRemoteFailed error = &RemoteError{Kind: fault.Internal}

// control is one rank's side of the rounds, from the plan to the gathering of the results.
type control struct {
	comm      collective.Comm
	me, n     int
	p         *Plan
	jd        *lustre.JobDir
	signalled context.Context // Run's: a signal to this rank cancels it
	frames    atomic.Int64    // this rank's frames encoded
	wake      chan struct{}   // a round at once: this rank finished
	ended     chan struct{}   // closed when the rounds end
	err       error           // the MPI error that ended them, if one did

	mu      sync.Mutex
	cancel  context.CancelCauseFunc // the encode's, while it runs
	cause   error                   // the job's decision, once made
	stopBy  string                  // the first stop's reason from the rounds: "rank N: SIGTERM"
	urgent  string                  // the most urgent signal of any rank, from the rounds ("": none)
	mine    string                  // the most urgent signal to this rank after its first
	clock   slurmClock              // rank 0's, from the rounds (rank 0's own from the start)
	running bool
	failed  bool

	// Rank 0's: the job's checkpoint cadence, the progress display and the live metrics.
	ck        *checkpointer
	show      progress.Counter
	closeShow func()
	shown     int64
	written   []int64 // the progress file's frames
	live      func([]int64)
}

// startControl starts this rank's rounds; nil (no rounds) for a video with no job folder. An
// image has no job folder and rank 0 alone processes it: its rounds carry only the ranks'
// signals, to rank 0's image and from it. Every rank must call it, then leave. clock is rank
// 0's slurmClock (zero on the others: the rounds bring it).
func startControl(ctx context.Context, comm collective.Comm, cfg job.Config, p *Plan, jd *lustre.JobDir, opt Options, ck *checkpointer, clock slurmClock) *control {
	if !p.Image && p.JobDir == "" {
		return nil
	}
	c := &control{comm: comm, me: comm.Rank(), n: comm.Size(), p: p, jd: jd, signalled: ctx, running: true, clock: clock,
		wake: make(chan struct{}, 1), ended: make(chan struct{}), ck: ck, show: progress.Nop{}, closeShow: func() {}}
	if c.me == 0 && !p.Image {
		c.startDisplay(cfg, opt)
	}
	go c.rounds()
	return c
}

// startDisplay is rank 0's progress bar (or log lines) and its metrics file while the job runs.
func (c *control) startDisplay(cfg job.Config, opt Options) {
	if opt.NewProgress != nil {
		// This attempt's frames only: frames verified by earlier attempts are not counted, or
		// the rate and the ETA after a resume would be flattered by work done long ago.
		todo := 0
		for _, w := range c.p.Work {
			todo += rank.Frames(w)
		}
		if earlier := c.p.Frames.Len() - todo; earlier > 0 {
			opt.Log.Infof("%d of %d frames were done by earlier attempts; %d to do", earlier, c.p.Frames.Len(), todo)
		}
		c.show, c.closeShow = opt.NewProgress(todo)
	}
	if cfg.MetricsPath == "" {
		return
	}
	// The metrics file while the job runs: every rank's frames, from the rounds, every few
	// seconds. A write that fails is one warning.
	var last time.Time
	warned := false
	c.live = func(frames []int64) {
		if time.Since(last) < metricsEvery {
			return
		}
		last = time.Now()
		err := metrics.Write(cfg.MetricsPath, metrics.Progress(metrics.OriginFromEnv(), metrics.OutputLabel(cfg.OutputPath), c.p.Frames.Len(), frames, last), opt.extraMetrics())
		if err != nil && !warned {
			warned = true
			opt.Log.Warnf("the metrics file %s could not be written: %v", cfg.MetricsPath, err)
		}
	}
}

// encode ties this rank's encode to the rounds: the job's stop, failure or takeover cancels it
// with cancel (at once when already decided), and the returned counter counts its frames.
func (c *control) encode(cancel context.CancelCauseFunc) progressFunc {
	if c == nil {
		return func(int) {}
	}
	c.mu.Lock()
	c.cancel = cancel
	cause := c.cause
	c.mu.Unlock()
	if cause != nil {
		cancel(cause)
	}
	return func(n int) { c.frames.Add(int64(n)) }
}

// leave says this rank's encode ended with err and waits until every rank's has: the rounds
// end together on every rank. A real failure (not one another rank reported) stops the others
// within a round. The error is MPI's, when a round could not be made.
func (c *control) leave(err error) error {
	if c == nil {
		return nil
	}
	var remote *RemoteError
	c.mu.Lock()
	c.running, c.cancel = false, nil
	c.failed = err != nil && !errors.As(err, &remote)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.ended
	c.closeShow()
	if c.err != nil {
		return fault.AsInternal(fmt.Errorf("the ranks' control round: %w", c.err))
	}
	return nil
}

// rounds posts a round, waits for it without holding the MPI thread, applies it, and posts the
// next a second after the last (at once when this rank just finished), until a round finds
// every rank done.
func (c *control) rounds() {
	defer close(c.ended)
	vals := make([]int64, 2*c.n+flagSlots)
	every := roundEvery
	if c.p.Image {
		every = imageRoundEvery
	}
	for {
		posted := time.Now()
		clear(vals)
		c.contribute(vals)
		req, err := c.comm.IallreduceInt64(collective.Sum, vals)
		if err == nil {
			err = settle(req)
		}
		if err != nil {
			c.err = err
			c.decide(err)
			return
		}
		if c.apply(vals) {
			return
		}
		t := time.NewTimer(time.Until(posted.Add(every)))
		select {
		case <-t.C:
		case <-c.wake:
		}
		t.Stop()
	}
}

// settle waits for a round. A round waits up to a second for the last rank to post it, so its
// tests back off to 10 ms, not Wait's 2 ms: fewer MPI calls for nothing, a round that ends at
// most 10 ms late.
func settle(req collective.Request) error {
	d := 100 * time.Microsecond
	for {
		done, err := req.Test()
		if err != nil || done {
			return err
		}
		time.Sleep(d)
		if d < 10*time.Millisecond {
			d *= 2
		}
	}
}

// contribute fills this rank's part of a round.
func (c *control) contribute(vals []int64) {
	c.mu.Lock()
	running, failed, decided, mine, clock := c.running, c.failed, c.cause != nil, c.mine, c.clock
	c.mu.Unlock()
	vals[c.me] = c.frames.Load()
	if c.signalled.Err() != nil {
		if first := signalName(c.signalled); urgency(first) >= urgency(mine) {
			mine = first
		}
		vals[c.n+c.me] = packName(mine)
	}
	flags := vals[2*c.n:]
	if c.me == 0 {
		if !clock.limit.IsZero() {
			flags[slotLimit] = clock.limit.Unix()
		}
		flags[slotKillWait] = clock.killWait.Milliseconds()
	}
	if running {
		flags[slotRunning] = 1
	}
	if failed {
		flags[slotFailed] = 1
	}
	if c.me != 0 || decided || c.p.Image {
		return
	}
	// Rank 0 alone looks at the job folder: one stat and one read a round, whatever the ranks.
	if _, err := os.Stat(c.jd.Stop()); err == nil {
		flags[slotStopFile] = 1
	}
	if c.jd.CurrentAttemptID() != c.p.AttemptID {
		flags[slotTakenOver] = 1
	}
}

// apply acts on a round's sums, the same on every rank; it reports whether the rounds end.
func (c *control) apply(vals []int64) (last bool) {
	flags := vals[2*c.n:]
	who, sig, urgent := -1, "", ""
	for r := 0; r < c.n; r++ {
		v := vals[c.n+r]
		if v == 0 {
			continue
		}
		if who < 0 {
			who, sig = r, unpackName(v)
		}
		if s := unpackName(v); urgent == "" || urgency(s) > urgency(urgent) {
			urgent = s
		}
	}
	c.mu.Lock()
	if urgent != "" && urgency(urgent) > urgency(c.urgent) || c.urgent == "" {
		c.urgent = urgent
	}
	if c.me != 0 {
		c.clock = slurmClock{killWait: time.Duration(flags[slotKillWait]) * time.Millisecond}
		if flags[slotLimit] != 0 {
			c.clock.limit = time.Unix(flags[slotLimit], 0)
		}
	}
	c.mu.Unlock()
	// The first decision stands, in this order: a failure, then a stop, then a takeover.
	switch {
	case flags[slotFailed] > 0:
		c.decide(errRemoteFailed)
	case who >= 0 || flags[slotStopFile] > 0:
		c.mu.Lock()
		if c.stopBy == "" && who >= 0 {
			c.stopBy = fmt.Sprintf("rank %d: %s", who, sig)
		}
		c.mu.Unlock()
		if c.me == 0 && who >= 0 && !c.p.Image {
			// The reason is in STOP before rank 0 decides from it: the signalled rank's own
			// write (watchStops) may still be on its way. The first reason there stays.
			writeStop(c.jd, c.p.AttemptID, fmt.Sprintf("rank %d: %s", who, sig))
		}
		c.decide(errStopRequested)
	case flags[slotTakenOver] > 0:
		c.decide(takenOver(c.jd, c.p.AttemptID))
	}
	if c.me == 0 && !c.p.Image {
		c.report(vals[:c.n])
	}
	return flags[slotRunning] == 0
}

// stopReason is the first stop's reason the rounds brought ("rank N: SIGTERM"), "" when none did.
func (c *control) stopReason() string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopBy
}

// stopSignal is the most urgent signal the rounds brought from any rank ("" when the stop came
// from the job folder alone: the job's own clock, an operator), and rank 0's slurmClock.
func (c *control) stopSignal() (string, slurmClock) {
	if c == nil {
		return "", slurmClock{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.urgent, c.clock
}

// signal records a signal to this rank after its first (WithLaterSignals), for the next round.
func (c *control) signal(sig string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if urgency(sig) > urgency(c.mine) || c.mine == "" {
		c.mine = sig
	}
	c.mu.Unlock()
}

// decide records the job's decision and cancels this rank's encode with it.
func (c *control) decide(cause error) {
	c.mu.Lock()
	if c.cause == nil {
		c.cause = cause
	}
	cancel, first := c.cancel, c.cause
	c.mu.Unlock()
	if cancel != nil {
		cancel(first)
	}
}

// report is rank 0's use of a round's frames: the job's progress file, the display, the live
// metrics, and, while rank 0 encodes, the checkpoint cadence (a failed checkpoint write stops
// rank 0's encode, and through the rounds the job).
func (c *control) report(frames []int64) {
	frames = append([]int64(nil), frames...)
	if !slices.Equal(frames, c.written) { // a held or idle job costs the file system nothing
		c.written = frames
		c.jd.WriteProgress(frames) // advisory: a failed write costs status one second of news
	}
	c.mu.Lock()
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		if err := c.ck.tick(); err != nil {
			cancel(err)
		}
	}
	if c.live != nil {
		c.live(frames)
	}
	total := int64(0)
	for _, f := range frames {
		total += f
	}
	if total > c.shown {
		c.show.Add(int(total - c.shown))
		c.shown = total
	}
}

// packName packs a signal's name ("SIGUSR1", "a signal": ASCII, at most 8 bytes, longer ones
// cut) into one positive round value, so that it travels without a second table of signals.
func packName(name string) int64 {
	if name == "" || name[0] >= 0x80 {
		name = "a signal"
	}
	var b [8]byte
	copy(b[:], name)
	return int64(binary.BigEndian.Uint64(b[:]))
}

func unpackName(v int64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(v))
	return strings.TrimRight(string(b[:]), "\x00")
}
