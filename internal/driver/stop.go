package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/internal/slurm"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// How a stopped job ends. A stop is decided for the whole job, not per process: the first rank
// that is signalled (or rank 0's own clock) writes the reason into JOB_DIR/STOP, every rank
// learns of the stop in the next control round (control.go: the signal's name travels in it, and
// rank 0 writes it into STOP if it is not there yet) and stops, and rank 0 decides from that
// reason and the chunks the attempt finished what comes next, and broadcasts it, so that every
// rank exits with the same code.

// Signal is the cause main cancels a run's context with when a signal stops this process; its
// name ("SIGUSR1", "SIGTERM", "SIGINT") is the stop's reason.
type Signal string

func (s Signal) Error() string { return "stopped by " + string(s) }

// ReasonDeadline is the stop's reason when rank 0's own clock stopped the job: stop_margin
// seconds before the Slurm job's time limit.
const ReasonDeadline = "deadline"

// Next is what should follow a stopped attempt; main turns it into the exit code.
type Next int

const (
	// Requeue: stopped by a warning (USR1, or the job's own clock) after finishing at least
	// one new chunk, or keeping rank 0's voice analysis, with restarts left: the batch script
	// requeues the job (exit 75).
	Requeue Next = iota + 1
	// NoRequeue: stopped by a warning, but a requeue would not help: the attempt finished no
	// new chunk and kept nothing else, or max_restarts is reached (exit 76).
	NoRequeue
	// Cancelled: stopped by SIGTERM or SIGINT (scancel, scontrol requeue, preemption, Ctrl-C):
	// the user or Slurm decides whether the job comes back, never the batch script (exit 130).
	Cancelled
)

// Decide is what follows a stop with reason (as in JOB_DIR/STOP) after an attempt that
// finished newChunks chunks, restarted restarts times (SLURM_RESTART_COUNT) under a cap of
// maxRestarts. keptVoice: the attempt saved rank 0's voice analysis (JOB_DIR/voice.bin), which
// the next attempt reuses instead of spending its time on it: progress, as a chunk is. The next
// attempt reads it rather than saving it, so one that then finishes no chunk is not requeued:
// no requeue follows one without progress. For NoRequeue, why says why and what to do instead.
func Decide(reason string, newChunks int, keptVoice bool, restarts, maxRestarts int) (next Next, why string) {
	if !warning(reason) {
		// SIGTERM, SIGINT, or a reason this program did not write: requeueing on a guess
		// could bring back a job someone cancelled.
		return Cancelled, ""
	}
	if newChunks == 0 && !keptVoice {
		fit := "give the job more --time or lower chunk_frames so that chunks finish in it"
		if reason == ReasonDeadline {
			fit = "give the job more --time, or lower chunk_frames or stop_margin so that chunks finish in it"
		}
		return NoRequeue, "this attempt finished no new chunk, so a requeue would stop the same way: " + fit + ", or rerun the same command by hand"
	}
	if restarts >= maxRestarts {
		done := fmt.Sprintf("the job was already restarted %d time(s)", restarts)
		if maxRestarts == 0 {
			done = "requeues are off"
		}
		return NoRequeue, fmt.Sprintf("%s (max_restarts %d): rerun the same command by hand, or raise max_restarts or the job's --time", done, maxRestarts)
	}
	return Requeue, ""
}

// warning reports whether reason is a "checkpoint and come back" stop: Slurm's early warning
// or the job's own clock.
func warning(reason string) bool {
	return reason == ReasonDeadline || strings.HasSuffix(reason, ": SIGUSR1")
}

// signalName is the name of the signal that cancelled ctx ("a signal" when main gave none).
func signalName(ctx context.Context) string {
	var s Signal
	if errors.As(context.Cause(ctx), &s) {
		return string(s)
	}
	return "a signal"
}

// writeStop records why the job stops in JOB_DIR/STOP unless a reason is there already: the
// first signal wins. A rank of an older attempt leaves a newer attempt's folder alone.
func writeStop(jd *lustre.JobDir, attempt string, reason string) {
	if jd.CurrentAttemptID() != attempt {
		return
	}
	// A complete temp file linked into place: a reader never sees a half-written reason, and
	// the link fails when another rank's reason is there first.
	f, err := os.CreateTemp(jd.Path, "."+filepath.Base(jd.Stop())+".tmp-*")
	if err != nil {
		return
	}
	_, err = f.WriteString(reason + "\n")
	if cerr := f.Close(); err == nil && cerr == nil {
		os.Link(f.Name(), jd.Stop())
	}
	os.Remove(f.Name())
}

// stopReason is the job's stop reason: JOB_DIR/STOP, else rank 0's own signal.
func stopReason(ctx context.Context, jd *lustre.JobDir) string {
	// Another rank wrote it, a line: anything else in its place (a FIFO, a link) is no reason.
	if b, err := safefs.ReadOwnFile(jd.Stop(), safefs.SmallLimit, "stop file"); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return safefs.Clip(strings.TrimSpace(string(b)))
	}
	if ctx.Err() != nil {
		return "rank 0: " + signalName(ctx)
	}
	return ""
}

// kept is what a stopped attempt leaves in the job folder: the chunks it finished (newChunks),
// the chunks and frames done of the job's, and the folder ("" for an image, or a stop before
// the folder was claimed).
type kept struct {
	newChunks, done, chunks, doneFrames, frames int
	jobDir                                      string
	// analysing: the stop came during rank 0's voice analysis, which a requeue starts over;
	// keptVoice: this attempt saved that analysis in the job folder (voiceFile), which a
	// requeue reuses.
	analysing, keptVoice bool
	voiceFile            string
}

// stopResult is rank 0's outcome of a stopped attempt: the decision and the one line that
// says what was kept and what happens next. margin is the stop margin rank 0's own clock used
// (shrunk where the job's time is shorter than stop_margin; 0: no clock of its own).
func stopResult(cfg job.Config, margin time.Duration, reason string, k kept) Result {
	restarts, _ := strconv.Atoi(os.Getenv("SLURM_RESTART_COUNT"))
	newChunks := k.newChunks
	next, why := Decide(reason, newChunks, k.keptVoice, restarts, cfg.MaxRestarts)
	if next == NoRequeue && k.analysing {
		// Not the chunks' time: the voice analysis's, which is kept only once it is done.
		why = "rank 0 was still analysing lip_syncer's voice, which a requeue would start over: give the job more --time so that the analysis finishes in one attempt (it is kept in the job folder once done, and a resume reuses it), or rerun the same command by hand"
	}
	by := "a signal"
	if who, sig, ok := strings.Cut(reason, ": "); ok {
		by = fmt.Sprintf("%s (%s)", sig, who)
	} else if reason == ReasonDeadline {
		by = fmt.Sprintf("its own clock (stop_margin %d s before the Slurm job's time limit)", cfg.StopMargin)
		if margin > 0 && margin != time.Duration(cfg.StopMargin)*time.Second {
			by = fmt.Sprintf("its own clock (%s before the Slurm job's time limit: stop_margin %d s, shrunk to fit the job's time)", margin.Round(time.Second), cfg.StopMargin)
		}
	}
	verb := "stopped"
	if next == Cancelled {
		verb = "cancelled"
	}
	said := fmt.Sprintf("%d of %d chunk(s) (%d of %d frames) are checkpointed in %s, %d of them finished in this attempt; ",
		k.done, k.chunks, k.doneFrames, k.frames, k.jobDir, newChunks)
	if k.jobDir == "" { // an image, or a stop before the job folder was claimed
		said = ""
	}
	msg := fmt.Sprintf("%s by %s: %snothing was written to the output path; ", verb, by, said)
	inSlurm := os.Getenv("SLURM_JOB_ID") != ""
	switch {
	case next == Requeue && newChunks == 0 && inSlurm:
		// Progress all the same: the requeue starts on the chunks at once.
		msg += fmt.Sprintf("lip_syncer's voice analysis is kept in %s, which the next attempt reuses: the batch script requeues the job (restart %d of at most %d); by hand: rerun the same command", k.voiceFile, restarts+1, cfg.MaxRestarts)
	case next == Requeue && newChunks == 0:
		msg += fmt.Sprintf("lip_syncer's voice analysis is kept in %s, which a resume reuses: rerun the same command to resume", k.voiceFile)
	case next == Requeue && inSlurm:
		msg += fmt.Sprintf("the batch script requeues the job (restart %d of at most %d); by hand: rerun the same command", restarts+1, cfg.MaxRestarts)
	case next == NoRequeue:
		msg += "not requeued: " + why
	case next == Cancelled && inSlurm && strings.HasSuffix(reason, "SIGTERM"):
		msg += "if Slurm requeues the job (scontrol requeue, preemption) it resumes by itself; otherwise rerun the same command to resume"
	default:
		msg += "rerun the same command to resume"
	}
	return Result{Stopped: true, Err: msg, StopReason: reason, NewChunks: newChunks, Next: next,
		StopWords: fmt.Sprintf("%s by %s: %s", verb, by, next.words())}
}

// setupStop is the job's stop when a signal (reason, as in JOB_DIR/STOP) reached a rank before
// every rank was ready, or rank 0's image was written: decided and told as a stop later in the
// run is (stopResult), with no chunk finished in this attempt. ck is rank 0's claim of the job
// folder (nil before it is claimed, and on the other ranks): its manifest records the stop.
func setupStop(cfg job.Config, reason string, p *Plan, ck *checkpointer) *Stopped {
	if ck == nil || ck.m == nil {
		r := stopResult(cfg, 0, reason, kept{analysing: p.analysing})
		return &Stopped{Msg: r.Err, Next: r.Next}
	}
	r := stopResult(cfg, 0, reason, kept{0, len(ck.m.Done), len(p.Chunks), ck.m.DoneFrames(), p.Frames.Len(), ck.jd.Path, false, p.voiceSaved, ck.jd.Voice()})
	ck.m.Attempts[len(ck.m.Attempts)-1].Stop = r.StopWords
	ck.save(nil, lustre.Checkpointed)
	return &Stopped{Msg: r.Err, Next: r.Next}
}

// ExitCode is the exit code of a stop followed by n, from fault's one table.
func (n Next) ExitCode() int {
	switch n {
	case Requeue:
		return fault.ExitCheckpointed
	case NoRequeue:
		return fault.ExitNoRequeue
	}
	return fault.ExitCancelled
}

// ExitStatus is the exit code of a process whose Run (or command) ended with err under ctx (the
// context main cancels with a Signal): main exits with it and rank 0's run report records it.
// A signal that came first decides the code of a failure after it; where rank 0 could not decide
// for the job (in setup), there is no count of new chunks to say a requeue would help, so
// SIGUSR1 gives 76, never 75.
func ExitStatus(ctx context.Context, err error) int {
	if err == nil {
		return fault.ExitOK
	}
	var stopped *Stopped
	if errors.As(err, &stopped) {
		return stopped.Next.ExitCode()
	}
	var printed *Reported
	if errors.As(err, &printed) {
		return fault.ExitCode(fault.KindOf(printed.Err))
	}
	if ctx.Err() != nil {
		if signalName(ctx) == "SIGUSR1" {
			return fault.ExitNoRequeue
		}
		return fault.ExitCancelled
	}
	var remote *RemoteError
	if errors.As(err, &remote) {
		return fault.ExitCode(remote.Kind)
	}
	return fault.ExitCode(fault.KindOf(err))
}

// words are what the README's exit-code table, the log and status call each outcome
// (ExitCode maps them to exit codes).
func (n Next) words() string {
	switch n {
	case Requeue:
		return "requeue wanted"
	case NoRequeue:
		return "not requeued"
	case Cancelled:
		return "cancelled"
	}
	return "unknown"
}

// slurmClock is what rank 0 reads from Slurm once at start for the job's stops, and the rounds
// bring to every rank: when the job's time limit comes (zero: none known) and how long Slurm
// waits between a SIGTERM and its SIGKILL (0: unknown).
type slurmClock struct {
	limit    time.Time
	killWait time.Duration
	margin   time.Duration // rank 0's alone: how long before limit its own clock stops the job
}

// readClock reads the job's slurmClock and when rank 0 stops the job on its own clock:
// stop_margin seconds before the time limit, shrunk to fit a limit closer than that. The
// deadline is zero when there is none: not in a Slurm job, no time limit, stop_margin 0, or
// squeue did not answer (one log line; Slurm's USR1 warning is then the only one).
func readClock(ctx context.Context, cfg job.Config, log *logging.Logger) (clock slurmClock, deadline time.Time) {
	id := os.Getenv("SLURM_JOB_ID")
	if id == "" {
		return slurmClock{}, time.Time{}
	}
	now := time.Now()
	if kw, err := slurm.KillWait(ctx); err != nil {
		log.Warnf("%v: a SIGTERM stops the job at once, discarding the chunks in flight", err)
	} else {
		clock.killWait = kw
	}
	left, limited, err := slurm.TimeLeft(ctx, slurm.FromEnv().Query())
	if err != nil {
		log.Warnf("%v: no stop of its own before the time limit, and a stop keeps no chunk in flight; Slurm's USR1 warning (sbatch --signal) is the only one", err)
		return clock, time.Time{}
	}
	if !limited {
		return clock, time.Time{}
	}
	clock.limit = now.Add(left)
	if cfg.StopMargin == 0 {
		return clock, time.Time{}
	}
	margin, shrunk := stopMargin(time.Duration(cfg.StopMargin)*time.Second, left)
	clock.margin = margin
	if shrunk {
		log.Infof("stop_margin %d s is not less than the %s the Slurm job has left: it stops by itself %s before its limit instead, %s from now",
			cfg.StopMargin, left, margin, left-margin)
		return clock, now.Add(left - margin)
	}
	log.Infof("Slurm job %s has %s left: it stops by itself %s from now, stop_margin %d s before the limit",
		id, left, left-margin, cfg.StopMargin)
	return clock, now.Add(left - margin)
}

// stopMargin is how long before the time limit, left away, the job stops on its own clock:
// margin, or a quarter of left where margin would stop it before it began (--time=1 under the
// default 90 s): a short job still works most of its time and keeps it.
func stopMargin(margin, left time.Duration) (time.Duration, bool) {
	if margin < left {
		return margin, false
	}
	return left / 4, true
}

// watchDeadline writes STOP (reason "deadline") when the deadline passes, which stops every
// rank like Slurm's USR1 does. It returns when ctx ends or stop is called.
func watchDeadline(ctx context.Context, jd *lustre.JobDir, attempt string, deadline time.Time, log *logging.Logger) (stop func()) {
	if deadline.IsZero() {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			log.Infof("the job's own clock ran out (stop_margin before the time limit): stopping every rank")
			writeStop(jd, attempt, ReasonDeadline)
		}
	}()
	return func() { cancel(); <-done }
}

// watchStops, from the plan to the gathering of the results, turns a signal on this rank into
// JOB_DIR/STOP at once, wherever the rank is (encoding, or done and waiting for the others),
// and on rank 0 stops the job on its own clock. The returned func ends both; clock is rank 0's
// slurmClock, for the rounds.
func watchStops(ctx context.Context, cfg job.Config, me int, p *Plan, jd *lustre.JobDir, log *logging.Logger) (stop func(), clock slurmClock) {
	if p.Image || p.JobDir == "" {
		return func() {}, clock
	}
	onSignal := context.AfterFunc(ctx, func() {
		writeStop(jd, p.AttemptID, fmt.Sprintf("rank %d: %s", me, signalName(ctx)))
	})
	endClock := func() {}
	if me == 0 {
		var deadline time.Time
		clock, deadline = readClock(ctx, cfg, log)
		endClock = watchDeadline(ctx, jd, p.AttemptID, deadline, log)
	}
	return func() {
		onSignal()
		endClock()
	}, clock
}

// A stop keeps the chunk in flight when it fits. Each rank, when a stop reaches it, looks at
// the chunk it is writing: when its own measured rate says the frames left end in the time the
// stop leaves, with a margin, it finishes that chunk, and only then ends its frames; else it
// discards it at once, as every stop did before. A SIGUSR1 or the job's own clock leaves the
// time to the job's limit; a SIGTERM (scancel, scontrol requeue, preemption, the limit itself)
// Slurm's KillWait, the least any of them waits before SIGKILL; a SIGINT (a person at the
// terminal) nothing. A later, more urgent signal shortens a stop already under way. Only a
// chunk the rank writes whole is finished: a chunk shared with another rank is kept only when
// both ranks' frames of it are written, and the two ranks' rates and positions differ, so
// finishing one part would mostly be work the other part's discard throws away.

// finishMargin is the most a finishing rank keeps in hand after the last frame of its chunk:
// its encoder's end, the journal, the others' last round, the manifest and the exit.
const finishMargin = 15 * time.Second

// urgency orders the stops' signals: a more urgent one shortens a stop under way. "" is a stop
// from the job folder (the job's own clock, an operator's STOP), a warning like SIGUSR1.
func urgency(sig string) int {
	switch sig {
	case "SIGINT":
		return 3
	case "SIGTERM":
		return 2
	}
	return 1
}

// stopWindow is how long a stop by sig, reaching this rank at now, leaves the job before it is
// killed or its limit comes: 0 when it must stop at once (SIGINT, an unknown signal or time).
func stopWindow(sig string, now time.Time, clock slurmClock) time.Duration {
	switch sig {
	case "SIGINT", "a signal":
		return 0
	case "SIGTERM":
		// The rank that got it told the others within a round: the window began up to then.
		return max(0, clock.killWait-roundEvery)
	}
	if clock.limit.IsZero() {
		return 0
	}
	return max(0, clock.limit.Sub(now))
}

// finishBudget is how long, of window, a rank may take to finish its chunk in flight: the
// window less finishMargin, or less a third of it when the window is short (a KillWait of 30 s
// leaves 20 s).
func finishBudget(window time.Duration) time.Duration {
	return window - min(finishMargin, window/3)
}

// fits reports whether frames left at rate frames/s end within window's finishBudget.
func fits(left int, rate float64, window time.Duration) bool {
	if left <= 0 {
		return true
	}
	if rate <= 0 || window <= 0 {
		return false
	}
	return time.Duration(float64(left)/rate*float64(time.Second)) <= finishBudget(window)
}

// inFlight is the piece of work (this rank's pieces, in order) that frame number written of
// the rank's frames falls in, and the frames of it left; ok is false when written is at a
// piece's start or past the last (nothing in flight: a stop there discards nothing).
func inFlight(work []rank.Piece, written int) (k, left int, ok bool) {
	pos := 0
	for k, pc := range work {
		end := pos + pc.Frames.Len()
		if written < end {
			return k, end - written, written > pos
		}
		pos = end
	}
	return 0, 0, false
}

// wholly reports whether this rank writes every frame of pc's chunk itself.
func wholly(pc rank.Piece, me int, chunks []rank.Range) bool {
	return pc.Owner == me && pc.Frames == chunks[pc.Chunk]
}

// laterKey is the context key of the signals after the first.
type laterKey struct{}

// WithLaterSignals is how main passes the signals after the first (which cancels the run's
// context) on to the run: a SIGINT or SIGTERM after a SIGUSR1 shortens the stop under way.
// tell never blocks; a signal beyond a few unread ones is dropped (the first of each kind is
// what counts).
func WithLaterSignals(ctx context.Context) (_ context.Context, tell func(Signal)) {
	ch := make(chan Signal, 4)
	return context.WithValue(ctx, laterKey{}, (<-chan Signal)(ch)), func(s Signal) {
		select {
		case ch <- s:
		default:
		}
	}
}

// laterSignals is the channel of WithLaterSignals, nil when main gave none.
func laterSignals(ctx context.Context) <-chan Signal {
	ch, _ := ctx.Value(laterKey{}).(<-chan Signal)
	return ch
}
