package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/join"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/internal/wire"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// attempt is one rank's run of a job, from its set-up to its end: what every phase needs.
// Every rank is a worker (it loads its models and encodes its share); rank 0 is the
// coordinator too (coord), with the state no other rank has.
type attempt struct {
	ctx  context.Context // main's: a signal to this rank cancels it
	comm collective.Comm
	cfg  job.Config
	opt  Options
	log  *logging.Logger
	me   int
	cpus rank.CPUBudget // the rank's CPU budget: its workers and every ffmpeg it starts follow it
	plan Plan
	jd   *lustre.JobDir // the job folder, from the agreement on

	models   *pipeline.Models
	cast     *modelCast    // the model broadcast's bytes (nil: none)
	castDone chan struct{} // closed once this rank's part of the broadcast ended
	castErr  error         // a worker's receive of the broadcast: its setup error
	loadErr  error         // a worker's load during the plan: told once the plan is in

	setupStart             time.Time
	planned, loaded, setup time.Duration // the report's setup stages
	stopWatch              func()        // ends watchStops, once the results are gathered
	margin                 time.Duration // rank 0's own clock's stop margin, as used (0: none)
	coord                  *coordinator  // rank 0's; nil on the other ranks
}

// coordinator is rank 0's part of an attempt: the plan, the job folder's claim and checkpoint,
// the run record, and the join (with its side file).
type coordinator struct {
	*attempt
	ck  *checkpointer     // nil until the job folder is claimed (never for an image)
	rec *runRecord        // the run report and the final metrics
	pj  *join.Coordinator // the parallel join's and the output hash's protocol, from the encode on
}

// Run executes cfg on every rank of comm; all ranks must call it. Rank 0 returns the output
// path. An error that rank 0 reports for the whole job comes back as *RemoteError on the
// other ranks.
func Run(ctx context.Context, comm collective.Comm, cfg job.Config, opt Options) (string, error) {
	a := newAttempt(ctx, comm, cfg, opt)
	defer a.close() // whatever way Run ends
	if err := a.setUp(); err != nil {
		return "", err
	}
	if err := a.agree(); err != nil {
		return "", err
	}
	res, err := a.encode()
	if err != nil {
		return "", err
	}
	all, err := a.gather(res)
	if err != nil {
		return "", err
	}
	final, err := a.join(all)
	if err != nil {
		return "", err
	}
	return a.end(final)
}

// capNote says a capped execution_thread_count once a process: a batch runs many targets.
var capNote sync.Once

// newAttempt decides the rank's CPU budget; rank 0 becomes the coordinator.
func newAttempt(ctx context.Context, comm collective.Comm, cfg job.Config, opt Options) *attempt {
	a := &attempt{ctx: ctx, comm: comm, cfg: cfg, opt: opt, log: opt.Log, me: comm.Rank(),
		castDone: make(chan struct{}), stopWatch: func() {}}
	a.cpus = rank.DecideCPUs(rank.ReadCPUFacts(cfg.ExecutionThreadCount, comm.LocalSize(), os.Getenv))
	video.SetThreads(a.cpus.FFmpegThreads)
	if note := a.cpus.CapNote(); note != "" && a.me == 0 {
		capNote.Do(func() { a.log.Warnf("%s", note) })
	}
	a.log.Debugf("CPUs: %v", a.cpus)
	if a.me == 0 {
		a.coord = &coordinator{attempt: a}
	}
	return a
}

// close is the end of Run, whatever way it ends: rank 0's side file goes, its claim is given
// back and its heartbeat stops (the normal ends did it first, with the right verdict on the
// folder), the sessions close, and the model broadcast's bytes go once it has ended.
func (a *attempt) close() {
	if c := a.coord; c != nil {
		c.pj.Remove()
		c.ck.end(true, a.log)
	}
	a.models.Close()
	<-a.castDone
	a.cast.drop()
}

// ck is rank 0's checkpointer; nil on the other ranks and before the job folder is claimed.
func (a *attempt) ck() *checkpointer {
	if a.coord == nil {
		return nil
	}
	return a.coord.ck
}

// record writes rank 0's run report for err; nothing on the other ranks.
func (c *coordinator) record(err error) {
	if c != nil {
		c.rec.write(c.ctx, err, c.log)
	}
}

// setUp is the phase before the ranks agree: rank 0 reads the model files once and
// broadcasts them (model_broadcast), then plans while every other rank loads its models (with
// its own settings, checked against rank 0's once the plan comes): start-up costs the longer of
// the two, not their sum. Every rank learns the plan (or the reason there is none).
func (a *attempt) setUp() error {
	a.setupStart = time.Now()
	modelsRead := make(chan struct{})
	a.startCast(modelsRead)
	planStart := time.Now()
	if a.coord != nil {
		a.coord.makePlan(planStart, modelsRead)
	} else {
		a.loadEarly(planStart)
	}
	return a.sharePlan()
}

// startCast starts this rank's part of the model broadcast. The ranks below rank 0 load from
// its bytes, not from the shared file system; a receive error is their setup error, told at the
// agreement like a load's. Rank 0 reads and sends while it plans (its load waits for the read
// alone), and waits for the broadcast's end before its next collective, the plan's.
func (a *attempt) startCast(modelsRead chan struct{}) {
	if a.me == 0 {
		go func() {
			defer close(a.castDone)
			a.cast, _ = shareModels(a.ctx, a.comm, a.cfg, a.opt.SkipDone, a.log, modelsRead) // its errors are the others' too
		}()
		return
	}
	a.cast, a.castErr = shareModels(a.ctx, a.comm, a.cfg, a.opt.SkipDone, a.log, modelsRead)
	close(a.castDone)
}

// makePlan is rank 0's plan: every check that can fail before work starts. A failure (or a
// signal first) becomes the plan's error, which every rank returns.
func (c *coordinator) makePlan(planStart time.Time, modelsRead <-chan struct{}) {
	c.rec = &runRecord{cfg: c.cfg, opt: c.opt, ranks: c.comm.Size(), start: time.Now(), plan: &c.plan}
	models, ck, err := c.planJob(modelsRead)
	// The plan's own time: not its wait for the model read (the scaling model counts that on
	// its own, as rank 0's read), nor for the broadcast's end below.
	c.planned, c.loaded = time.Since(planStart)-c.plan.readDelay, c.plan.loaded
	<-c.castDone
	c.models = models
	if errors.Is(err, errAlreadyDone) {
		c.plan, err = Plan{AlreadyDone: true}, nil
	}
	if err != nil {
		plan := &c.plan
		*plan = Plan{Err: err.Error(), Kind: fault.KindOf(err), JobDir: plan.JobDir, Frames: plan.Frames, Chunks: plan.Chunks, analysing: plan.analysing}
		if c.ctx.Err() != nil { // a signal came first: what failed after it (a cancelled ffprobe) failed because of it
			st := setupStop(c.cfg, "rank 0: "+signalName(c.ctx), plan, nil)
			plan.Err, plan.Stop = st.Msg, st.Next
		}
	}
	c.ck, c.rec.ck = ck, ck
}

// loadEarly is a worker's load while rank 0 plans. A job that may be done already (batch-run's
// rerun: its output is there) loads after the plan, as rank 0 finds that out before its own
// load: a skipped target costs none. An image is rank 0's alone: the others read no model file.
func (a *attempt) loadEarly(planStart time.Time) {
	testPause(a.ctx, "load", a.log)
	if a.castErr != nil {
		a.loadErr = a.castErr
		return
	}
	if _, err := os.Lstat(a.cfg.OutputPath); (a.opt.SkipDone && err == nil) || video.IsImagePath(a.cfg.TargetPath) {
		return
	}
	// Its codec trials too (a GPU job's only), beside the load: Check, once the plan says what
	// rank 0 chose, finds their answers cached.
	tried := make(chan struct{})
	go func() { defer close(tried); pipeline.Pretry(a.ctx, a.cfg) }()
	a.models, a.loadErr = loadModels(a.ctx, a.cfg, a.log)
	a.loaded = time.Since(planStart)
	<-tried
}

// sharePlan broadcasts rank 0's plan. Rank 0 says its error and writes its report first: a
// launcher kills rank 0 once another rank exits non-zero.
func (a *attempt) sharePlan() error {
	parts, err := voiceParts(&a.plan)
	if err != nil {
		return err
	}
	data, err := encodePlan(&a.plan)
	if err != nil {
		return err
	}
	if a.coord != nil && a.plan.Err != "" {
		a.plan.Printed = (a.ctx.Err() == nil || a.plan.Stop != 0) && say(a.opt, a.plan.Err)
		a.coord.record(a.plan.err(true))
	}
	if data, err = collective.BcastBytes(a.comm, 0, data); err != nil {
		return fault.AsInternal(fmt.Errorf("broadcasting the plan: %w", err))
	}
	if a.me != 0 {
		if err := decodePlan(data, &a.plan); err != nil {
			return fault.AsInternal(fmt.Errorf("decoding the plan: %w", err))
		}
	}
	if a.plan.Err != "" {
		return a.plan.err(a.me == 0)
	}
	if a.plan.AlreadyDone {
		return &AlreadyDone{Output: a.cfg.OutputPath}
	}
	return a.shareVoice(parts)
}

// shareVoice gives every rank its part of the voice features (rank 0's parts, by rank): rank 0
// sends each other rank its own, which it waits for, and keeps its own part; a rank learns its
// part's size from the plan. A rank whose models are loaded later takes its part then
// (useSource).
func (a *attempt) shareVoice(parts [][]byte) error {
	sizes := a.plan.VoiceParts
	if len(sizes) == 0 {
		return nil
	}
	if a.me != 0 {
		buf := make([]byte, sizes[a.me])
		req, err := a.comm.Irecv(0, wire.VoiceTag, buf)
		if err == nil {
			err = req.Wait()
		}
		if err != nil {
			return fault.AsInternal(fmt.Errorf("receiving the voice features from rank 0: %w", err))
		}
		a.plan.Voice = buf
		return nil
	}
	var reqs []collective.Request
	for r := 1; r < len(parts); r++ {
		req, err := a.comm.Isend(r, wire.VoiceTag, parts[r])
		if err != nil {
			return fault.AsInternal(fmt.Errorf("sending rank %d its voice features: %w", r, err))
		}
		reqs = append(reqs, req)
	}
	for _, req := range reqs {
		if err := req.Wait(); err != nil {
			return fault.AsInternal(fmt.Errorf("sending the voice features: %w", err))
		}
	}
	a.plan.Voice, a.plan.voice = parts[0], nil
	if a.models == nil {
		return nil
	}
	return useVoice(a.models, &a.plan) // rank 0's windows from bytes as the others'
}

// agree is the phase where every rank has its models, and the source rank 0 analysed: a
// failure anywhere stops every rank, and a signal to any rank stops the job.
func (a *attempt) agree() error {
	var err error
	if a.coord == nil {
		err = a.ready()
	}
	if a.plan.Image {
		a.cast.drop() // rank 0 alone processes it, from the files
	}
	a.plan.Spec.UseDecoder() // after the settings check, which compares the settings as given
	if err != nil {
		a.coord.record(err) // before agree lets the other ranks exit
	}
	// The rank that failed says why before agree lets the others exit: a launcher kills the
	// remaining ranks as soon as one exits non-zero, and the line would be lost with them.
	printed := err != nil && a.ctx.Err() == nil && say(a.opt, err.Error())
	reason, err := agree(a.ctx, a.comm, err)
	switch {
	case reason != "":
		return a.stopInSetup(reason)
	case err != nil:
		return a.failInSetup(err, printed)
	}
	a.setup = time.Since(a.setupStart)
	return nil
}

// ready is a worker's side of the agreement: its settings, its models (loaded now if the plan
// came first), rank 0's source given to them, and rank 0's codecs. A rank whose settings are
// not rank 0's (other flags, another facefusion.ini in its working folder) would encode another
// job's frames into this one: that is its error, before its load's (which followed its own).
func (a *attempt) ready() error {
	if err := sameSettings(a.me, a.cfg, a.plan.Settings); err != nil {
		return err
	}
	if a.models == nil && a.loadErr == nil && !a.plan.Image { // not loaded during the plan
		start := time.Now()
		a.models, a.loadErr = loadModels(a.ctx, a.cfg, a.log)
		a.loaded = time.Since(start)
	}
	var mfe *pipeline.ModelFileError
	err := a.loadErr
	if err == nil && !a.plan.Image {
		err = useSource(a.models, &a.plan)
	} else if errors.As(err, &mfe) && a.cast == nil {
		// Rank 0 loaded the same job's model files: this node sees other ones.
		host, _ := os.Hostname()
		err = fmt.Errorf("rank %d on %s: %w (rank 0 has them: --model-broadcast on sends it its files)", a.me, host, err)
	} else if err != nil {
		host, _ := os.Hostname()
		err = fmt.Errorf("rank %d on %s: %w", a.me, host, err)
	}
	if err == nil && !a.plan.Image {
		err = a.plan.Spec.Codecs.Check(a.ctx, a.me, a.plan.Info) // this node runs rank 0's choice
	}
	return err
}

// stopInSetup ends an attempt a signal reached before every rank was ready: the job stops as
// it would later, whatever failed after the signal (a cancelled ffprobe, ffmpeg or load)
// because of it.
func (a *attempt) stopInSetup(reason string) error {
	st := setupStop(a.cfg, reason, &a.plan, a.ck())
	if c := a.coord; c != nil {
		st.Remote = say(a.opt, st.Msg)
		c.record(st)
		c.ck.end(false, a.log)
	} else {
		st.Remote = true
	}
	// Rank 0's report is written before any rank exits: a launcher kills the others then.
	if berr := a.comm.Barrier(); berr != nil {
		return fault.AsInternal(fmt.Errorf("agreeing on setup: %w", berr))
	}
	return st
}

// failInSetup ends an attempt a rank failed to set up: err is this rank's own (printed says
// whether it said it) or another rank's.
func (a *attempt) failInSetup(err error, printed bool) error {
	a.coord.record(err) // another rank's: its line is in the log, not here
	a.ck().end(true, a.log)
	// As above: rank 0's report before any rank exits (every rank is here: agree said so).
	_ = a.comm.Barrier()
	var remote *RemoteError
	if !errors.As(err, &remote) {
		return reported(printed, err)
	}
	return err
}

// agree turns one rank's setup error into an error on every rank: the rank that failed
// returns its own error (and reports it); the others return a RemoteError. A signal to any rank
// (ctx, cancelled by main) comes first: every rank gets the stop's reason, "rank N: SIGTERM" for
// the lowest rank signalled, as the control rounds name it, and no error.
func agree(ctx context.Context, comm collective.Comm, err error) (stop string, _ error) {
	signal := ""
	if ctx.Err() != nil {
		signal = signalName(ctx)
	}
	v := agreeVector(comm.Size(), comm.Rank(), err, signal)
	if aerr := comm.AllreduceInt64(collective.Max, v); aerr != nil {
		return "", fault.AsInternal(fmt.Errorf("agreeing on setup: %w", aerr))
	}
	stop, failed, kind := readAgreement(v)
	switch {
	case stop != "":
		return stop, nil
	case err != nil:
		return "", err
	case failed:
		return "", &RemoteError{Kind: kind}
	}
	return "", nil
}
