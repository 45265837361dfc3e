package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/outpath"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// Checkpoint cadence. No checkpoint is collective while chunks are being encoded: each rank
// records a finished chunk in its own journal at once (one small atomic write, no waiting for
// anyone), and rank 0 merges the journals into the manifest every checkpoint_interval seconds
// from its progress goroutine. The ranks meet only where they meet anyway, at the end of an
// attempt (finished or stopped by a signal): there they gather their chunk records to rank 0,
// which writes the manifest. A rank that is killed outright leaves its journal, which the next
// attempt merges after verifying each segment.

// ErrCheckpointed is what every rank returns when a signal stopped the job after its finished
// chunks were checkpointed: rerunning the same command resumes it.
var ErrCheckpointed = errors.New("stopped and checkpointed")

// Stopped is the error of a job a signal or its own clock stopped. Remote is set on the ranks
// that should not print it (rank 0 does). Next is rank 0's decision, the same on every rank:
// main exits with the code it stands for.
type Stopped struct {
	Msg    string
	Remote bool
	Next   Next
}

func (e *Stopped) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrCheckpointed) true.
func (e *Stopped) Is(target error) bool { return target == ErrCheckpointed }

// PauseEnv names the test-only hook that holds one rank at a named point so that a test can
// kill or signal it there: FACEFUSION_TEST_PAUSE_AT=POINT[,MARKER] where POINT is chunk-N (after
// chunk N is encoded, before its segment is renamed into place: a stop there keeps it),
// frames-N (once the rank wrote N frames this attempt, before the next: a stop there discards
// the chunk being written unless it fits in the time the stop leaves, stop.go), concat (rank 0, before it
// joins the segments), commit (rank 0, the joined and muxed output beside its final path,
// before the rename), plan (rank 0, before its checks and probe: a signal there fails them),
// load (every other rank, before its load during rank 0's plan) or image (rank 0, before it
// processes an image target). With MARKER, the pause happens only
// while the file MARKER does not exist and creates it, so a rerun (or a Slurm requeue) of the
// same command does not pause again; removing MARKER while the rank is held lets it go on (a
// test changes the files under a live run). A paused rank waits for its own signal: signal the
// rank that pauses (or the launcher, which passes it on to every rank), not only another one,
// which then waits for the paused rank at their next collective.
const PauseEnv = "FACEFUSION_TEST_PAUSE_AT"

// testPause blocks at point until ctx ends when the hook asks for it.
func testPause(ctx context.Context, point string, log *logging.Logger) {
	spec := os.Getenv(PauseEnv)
	if spec == "" {
		return
	}
	at, marker, _ := strings.Cut(spec, ",")
	if at != point {
		return
	}
	if marker != "" {
		f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return // paused once already
		}
		f.Close()
	}
	log.Infof("test pause at %s (pid %d)", point, os.Getpid())
	if marker == "" {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := os.Lstat(marker); errors.Is(err, os.ErrNotExist) {
				return
			}
		}
	}
}

// prepareCheckpoint is rank 0's start of an attempt: clear what a killed attempt left, refuse
// another job's folder, verify every recorded segment, and plan only the chunks still to do,
// spread over the ranks of this attempt (any number).
func prepareCheckpoint(ctx context.Context, cfg job.Config, p *Plan, ranks int, token string, log *logging.Logger) (*lustre.Manifest, error) {
	jd := jobDir(cfg, p)
	if cfg.Fresh {
		if n := jd.Discard(); n > 0 {
			log.Infof("--fresh: discarded %d finished segment(s) in %s", n, jd.Path)
		}
	}
	fp, err := fingerprint(ctx, cfg, p)
	if err != nil {
		return nil, err
	}
	m, ok, err := jd.ReadManifest()
	if err != nil {
		return nil, fault.AsUsage(err)
	}
	if ok {
		if err := jd.SameJob(m, fp); err != nil {
			return nil, fault.AsUsage(err)
		}
		if m.Encoder != p.Spec.Codecs.Encoder { // planSetup chose it from the manifest it read then
			return nil, fault.AsUsage(fmt.Errorf("job folder %s's segments were written with %q, not with %s, which this run chose from its manifest when it started: the folder changed meanwhile (another run of the job?): rerun", jd.Path, m.Encoder, p.Spec.Codecs.Encoder))
		}
	} else {
		m = &lustre.Manifest{Fingerprint: fp, Encoder: p.Spec.Codecs.Encoder}
	}
	// The job is this one: what a dead attempt of it left (a chunk in flight, the join's temp
	// file beside the output, flags, progress counters) goes now, and only that.
	removed, kept := jd.CleanStale(outpath.IsTemp)
	for _, f := range removed {
		log.Infof("removed %s, left by a killed attempt of this job", f)
	}
	for _, f := range kept {
		log.Warnf("left %s: facefusion removes only the temp files it made", f)
	}
	m.Target, m.FrameStart, m.FrameEnd = cfg.TargetPath, p.Frames.Start, p.Frames.End
	m.ChunkFrames, m.NumChunks = cfg.ChunkFrames, len(p.Chunks)
	if ok {
		// Chunks a killed attempt finished after rank 0's last merge.
		recs, err := jd.Journals()
		if err != nil {
			log.Warnf("%v: its chunks are redone", err)
		}
		m.Merge(recs)
	}

	todo, err := verifyDone(jd, m, p, log)
	if err != nil {
		return nil, err
	}
	if len(m.Attempts) > 0 {
		log.Infof("resuming %s: %d of %d chunk(s) verified, %d to do (attempt %d)", jd.Path, len(m.Done), len(p.Chunks), len(todo), len(m.Attempts)+1)
	}
	restarts, _ := strconv.Atoi(os.Getenv("SLURM_RESTART_COUNT"))
	now := time.Now().UTC()
	m.Attempts = append(m.Attempts, lustre.Attempt{Started: now, Updated: now, Ranks: ranks, RestartCount: restarts,
		SlurmJob: os.Getenv("SLURM_JOB_ID"), Planned: len(todo), Outcome: lustre.Running})
	if err := jd.WriteManifest(m); err != nil {
		return nil, checkpointError(err)
	}
	p.AttemptID = lustre.AttemptID(len(m.Attempts), token)
	if err := jd.WriteAttempt(p.AttemptID); err != nil {
		return nil, checkpointError(err)
	}
	// The manifest now holds every journal's verified records; the new attempt starts empty ones.
	jd.ClearJournals()

	p.Attempt = len(m.Attempts)
	p.Work = rank.Split(p.Chunks, todo, ranks)
	return m, nil
}

// verifyDone keeps in m the recorded chunks whose segments are verified (a chunk that is not,
// its segment goes, is redone) and returns the chunks still to do.
func verifyDone(jd *lustre.JobDir, m *lustre.Manifest, p *Plan, log *logging.Logger) (todo []int, err error) {
	// Trust nothing unverified: the segment files are the truth.
	verified := m.Done[:0]
	for _, c := range m.Done {
		var bad error
		switch {
		case c.Chunk < 0 || c.Chunk >= len(p.Chunks):
			bad = fmt.Errorf("not a chunk of this job")
		case p.Chunks[c.Chunk] != (rank.Range{Start: c.Start, End: c.End}) || c.Frames != c.End-c.Start:
			bad = fmt.Errorf("recorded frames [%d,%d) are not the chunk's", c.Start, c.End)
		default:
			bad = jd.Verify(c)
		}
		if bad != nil {
			log.Warnf("chunk %d: %v: redoing it", c.Chunk, bad)
			os.Remove(jd.Segment(c.Chunk))
			continue
		}
		verified = append(verified, c)
	}
	m.Done = verified
	have := make([]bool, len(p.Chunks))
	for _, c := range m.Done {
		have[c.Chunk] = true
	}
	for i := range p.Chunks {
		if have[i] {
			continue
		}
		// Something the program did not write in the chunk's place (a folder, a link) would
		// fail its rename after its frames were encoded, on every rerun: say so now.
		if st, err := os.Lstat(jd.Segment(i)); err == nil && !st.Mode().IsRegular() {
			return nil, fault.AsInput(fmt.Errorf("%s is in the way of chunk %d's segment (it is a %s, which facefusion did not write and will not remove): move it away and rerun", jd.Segment(i), i, kind(st.Mode())))
		}
		todo = append(todo, i)
	}
	return todo, nil
}

func checkpointError(err error) error {
	if fault.NoRoom(err) { // the environment's, not the target's (batch-run holds it against none)
		return fault.AsEnvironment(fmt.Errorf("checkpoint: %v: free room on the job folder's file system (or raise the quota, or choose another --job-dir) and rerun the same command to resume", err))
	}
	return fault.AsInternal(fmt.Errorf("checkpoint: %v: rerun the same command to resume from the last checkpoint (or choose another --job-dir if the folder cannot be written)", err))
}

// checkpointer is rank 0's manifest between the start and the end of an attempt.
type checkpointer struct {
	mu       sync.Mutex
	jd       *lustre.JobDir
	m        *lustre.Manifest
	ranks    int
	interval time.Duration
	last     time.Time
	writes   int
	work     time.Duration // time spent merging and writing, for the overhead report

	savedStop string // the attempt's Stop as last written

	me        lustre.Holder // rank 0's claim on the job folder
	attemptID string        // this attempt's id in JOB_DIR/ATTEMPT
	lost      atomic.Bool   // the heartbeat found the claim in another run's hands
	sameJob   bool          // the folder holds this job: made by this run, or its fingerprint matched
	ended     bool          // end ran
	stopBeat  func()
}

// end stops the heartbeat and gives the job folder back: a failed attempt's folder goes when it
// holds no finished segment; a stopped one keeps its checkpoint; a finished one was removed.
func (c *checkpointer) end(failed bool, log *logging.Logger) {
	if c == nil || c.ended {
		return
	}
	c.ended = true
	c.stopHeartbeat()
	if failed {
		release(c.jd, &c.me, c.sameJob)
		return
	}
	c.jd.ReleaseClaim(&c.me)
}

// stopHeartbeat stops rank 0's heartbeat (once).
func (c *checkpointer) stopHeartbeat() {
	if c != nil && c.stopBeat != nil {
		c.stopBeat()
		c.stopBeat = nil
	}
}

// stillMine reports whether this attempt still owns the job folder: its claim is the folder's
// and its attempt the current one. Checked before each step that changes what another run of
// the job would rely on (the join record, the output, the folder's removal): a run whose claim
// was taken over while it was suspended or cut off must not touch the new run's files.
func (c *checkpointer) stillMine(p *Plan) error {
	// The folder itself first: a copy put in its place holds this attempt's claim too.
	if err := c.jd.Same(); err != nil {
		var re *lustre.ReplacedError
		if errors.As(err, &re) && re.Own { // another run of the job, as a takeover is
			return fault.AsInternal(err)
		}
		return fault.AsUsage(err)
	}
	if !c.lost.Load() && c.jd.Holds(&c.me) && c.jd.CurrentAttemptID() == p.AttemptID {
		return nil
	}
	return fault.AsInternal(fmt.Errorf("job folder %s was taken over by %s: this attempt (%d) stops without joining, committing or removing anything", c.jd.Path, newer(c.jd.CurrentAttempt()), p.Attempt))
}

// tick merges the journals into the manifest when the interval has passed.
func (c *checkpointer) tick() error {
	if c == nil || c.interval <= 0 || time.Since(c.last) < c.interval {
		return nil
	}
	c.last = time.Now()
	var recs []lustre.Chunk
	for r := 0; r < c.ranks; r++ {
		j, err := c.jd.ReadJournal(r)
		if err != nil {
			continue // a journal mid-rename is read next time; the end gathers everything anyway
		}
		recs = append(recs, j...)
	}
	return c.save(recs, lustre.Running)
}

// save merges recs and writes the manifest with the attempt's outcome.
func (c *checkpointer) save(recs []lustre.Chunk, outcome string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := time.Now()
	defer func() { c.work += time.Since(start) }()
	at := &c.m.Attempts[len(c.m.Attempts)-1]
	if err := c.jd.Same(); err != nil {
		return fault.AsUsage(err) // nothing is written into another's folder
	}
	if c.jd.CurrentAttemptID() != c.attemptID {
		return fault.AsInternal(fmt.Errorf("job folder %s was taken over by %s: this attempt (%d) leaves its manifest alone; run one attempt of a job at a time", c.jd.Path, newer(c.jd.CurrentAttempt()), len(c.m.Attempts)))
	}
	if c.m.Merge(recs) == 0 && at.Outcome == outcome && at.Stop == c.savedStop {
		return nil
	}
	at.Outcome, at.Updated = outcome, time.Now().UTC()
	c.writes++
	if err := c.jd.WriteManifest(c.m); err != nil {
		return checkpointError(err)
	}
	c.savedStop = at.Stop
	return nil
}

// kind names a file mode for a user.
func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "folder"
	case m&os.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}
