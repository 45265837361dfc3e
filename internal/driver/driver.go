// Package driver runs one job across the ranks of a communicator: rank 0 checks the job,
// probes the target and analyses the source once and broadcasts the plan; every rank encodes
// its static share of chunks into segments in the job folder; rank 0 joins the segments,
// muxes the audio and moves the output into place. Finished chunks are checkpointed, so a
// rerun of the same job (with any rank count) does only what is missing, and a signal stops
// every rank with its finished work recorded. One rank is the same code with a single-process
// communicator.
package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/geom"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/join"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/outpath"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/raster"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// RemoteError is an error another rank (or rank 0) already reported; this rank exits with its
// kind without printing it again.
type RemoteError struct{ Kind fault.Kind }

func (e *RemoteError) Error() string { return "reported by another rank" }

// Plan is what rank 0 decides and every rank needs.
type Plan struct {
	Err  string     `json:",omitempty"`
	Kind fault.Kind `json:",omitempty"`
	Stop Next       `json:",omitempty"` // Err is a stop: a signal reached rank 0 before its plan was made

	Info *video.Info
	// Spec is the video output as rank 0 resolved it (nil for an image target): its frame map
	// (Frames, Chunks and every record of the job count the output's frames, numbered from the
	// trim start, so every rank cuts the same frames whatever its share), its times, sizes and
	// audio, the codecs every rank runs (hardware_codecs, decided on rank 0's node) and what it
	// keeps of the target's other streams (rank 0's output check).
	Spec       *spec.Spec
	codecsNote string // rank 0's line on what it chose and why
	Frames     rank.Range
	Chunks     []rank.Range
	JobDir     string
	Attempt    int    // 1 for a first run, then one more per resume
	AttemptID  string // the attempt for good (lustre.AttemptID): what stragglers compare
	// Work is, per rank, its even share of the frames of the chunks not yet verified
	// (rank.Split): the chunks it encodes, and its parts of chunks shared with the ranks beside it.
	Work  [][]rank.Piece
	Image bool // an image target: rank 0 alone processes it
	// AlreadyDone: the output exists, written by this same job (Options.SkipDone): nothing to do.
	AlreadyDone bool `json:",omitempty"`

	SourceW, SourceH int
	SourcePix        []byte `json:",omitempty"`
	SourceLandmarks  face.Landmarks68
	// SourceFive is set for the face swappers that take the source face as a crop (blendswap,
	// uniface): SourcePix is then FaceFusion's first source image and SourceFive its face.
	SourceFive *[5]geom.Pt `json:",omitempty"`
	// FaceFusion's models: the source identity and the reference face.
	SourceEmbedding, ReferenceEmbedding *face.Embedding `json:",omitempty"`
	SourceClass                         *face.Class     `json:",omitempty"` // the largest source face's, for face_selector_gender/race auto

	// Settings are rank 0's job settings (job.Config.Settings: every one that can change the
	// output): every rank must run the same job.
	Settings map[string]string `json:",omitempty"`

	loaded time.Duration // rank 0's model load and source analysis, for its report (not sent)
	// readDelay is how long rank 0's plan waited for its read of the model files it
	// broadcasts (through its load), for its report (not sent).
	readDelay time.Duration
	// jobDirID is the job folder lustre.Create made or found, rank 0's (not sent): every
	// JobDir of the plan checks that the folder at JobDir is still it.
	jobDirID lustre.FolderID
}

// MakePlan cuts frames into chunks and gives each rank an even share of their frames, as a
// first attempt does.
func MakePlan(frames rank.Range, chunkFrames, ranks int) (chunks []rank.Range, split [][]rank.Piece) {
	chunks = rank.Chunks(frames, chunkFrames)
	all := make([]int, len(chunks))
	for i := range all {
		all[i] = i
	}
	return chunks, rank.Split(chunks, all, ranks)
}

// Result is what a rank reports at the end.
type Result struct {
	Rank   int
	Frames int
	Chunks int
	Err    string     `json:",omitempty"`
	Kind   fault.Kind `json:",omitempty"`

	Done           []lustre.Chunk `json:",omitempty"` // the chunks this rank finished this attempt
	Stopped        bool           `json:",omitempty"` // a signal stopped it; its chunk in flight was discarded
	CheckpointWork float64        // seconds spent hashing segments and writing journals/manifest
	Stats          report.Rank    // the rank's share for the run report: counts, stage times, GPU

	// Rank 0's decision for a stopped job, broadcast so that every rank exits with one code.
	StopReason string `json:",omitempty"` // JOB_DIR/STOP: "rank N: SIGUSR1", "deadline", …
	NewChunks  int    `json:",omitempty"` // chunks finished in this attempt, over every rank
	Next       Next   `json:",omitempty"`
	StopWords  string `json:",omitempty"` // the stop as the manifest and status tell it
}

// Options are the parts of a run that are not in the job config.
type Options struct {
	Log         *logging.Logger // nil: nothing is logged
	NewProgress pipeline.ProgressFunc
	// Done, when set, receives rank 0's run report once the output is in place.
	Done func(*report.Report)
	// GPU is this rank's GPU binding (rank.Identify), sampled through NVML for the run report;
	// nil when the job runs on CPU providers.
	GPU *rank.Binding
	// ExtraMetrics, when set, adds families to every write of rank 0's metrics file
	// (metrics_path): a caller's own gauges, such as a batch's targets done.
	ExtraMetrics func() []*dto.MetricFamily
	// SkipDone: an existing output whose run report records this same job (same fingerprint) is
	// not an error but the job done: Run returns *AlreadyDone (batch-run's idempotence). It is
	// checked again once the job folder is claimed, so of two runs racing for one job, the later
	// never redoes the earlier's work.
	SkipDone bool
}

func (o Options) extraMetrics() []*dto.MetricFamily {
	if o.ExtraMetrics == nil {
		return nil
	}
	return o.ExtraMetrics()
}

// AlreadyDone is Run's answer (on every rank) when Options.SkipDone found the job's output in
// place, written by the same job.
type AlreadyDone struct{ Output string }

func (e *AlreadyDone) Error() string {
	return fmt.Sprintf("output %s exists, written by this same job (its run report has the same fingerprint)", e.Output)
}

// capNote says a capped execution_thread_count once a process: a batch runs many targets.
var capNote sync.Once

// Run executes cfg on every rank of comm; all ranks must call it. Rank 0 returns the output
// path. An error that rank 0 reports for the whole job comes back as *RemoteError on the
// other ranks.
func Run(ctx context.Context, comm collective.Comm, cfg job.Config, opt Options) (string, error) {
	me := comm.Rank()
	log := opt.Log
	// The rank's CPU budget: its workers and every ffmpeg it starts follow it.
	cpus := rank.DecideCPUs(rank.ReadCPUFacts(cfg.ExecutionThreadCount, comm.LocalSize(), os.Getenv))
	video.SetThreads(cpus.FFmpegThreads)
	if note := cpus.CapNote(); note != "" && me == 0 {
		capNote.Do(func() { log.Warnf("%s", note) })
	}
	log.Debugf("rank %d: %v", me, cpus)

	// 0. Rank 0 reads the model files once and broadcasts them (model_broadcast): the ranks
	// below load from its bytes, not from the shared file system. A receive error is this
	// rank's setup error, told at the agreement like a load's. Rank 0 reads and sends while
	// it plans (its load waits for the read alone), and waits for the broadcast's end before
	// its next collective, the plan's.
	setupStart := time.Now()
	var cast *modelCast
	var castErr error
	modelsRead, castDone := make(chan struct{}), make(chan struct{})
	if me == 0 {
		go func() {
			defer close(castDone)
			cast, _ = shareModels(ctx, comm, cfg, opt.SkipDone, log, modelsRead) // its errors are the others' too
		}()
	} else {
		cast, castErr = shareModels(ctx, comm, cfg, opt.SkipDone, log, modelsRead)
		close(castDone)
	}
	defer func() { // whatever way Run ends; a video job's once its workers are made
		<-castDone
		cast.drop()
	}()

	// 1. Rank 0 plans while every other rank loads its models (with its own settings, checked
	// against rank 0's once the plan comes): start-up costs the longer of the two, not their
	// sum. Every rank learns the plan (or the reason there is none).
	planStart := time.Now()
	var plan Plan
	var models *pipeline.Models
	var ck *checkpointer
	var rec *runRecord // rank 0's: the run report and the final metrics
	var loadErr error  // a rank other than 0: its load's, told once the plan is in
	var planned, loaded time.Duration
	if me == 0 {
		rec = &runRecord{cfg: cfg, opt: opt, ranks: comm.Size(), start: time.Now(), plan: &plan}
		var err error
		models, ck, err = planJob(ctx, cfg, comm.Size(), &plan, log, opt.SkipDone, modelsRead)
		// The plan's own time: not its wait for the model read (the scaling model counts that
		// on its own, as rank 0's read), nor for the broadcast's end below.
		planned, loaded = time.Since(planStart)-plan.readDelay, plan.loaded
		<-castDone
		defer models.Close() // whatever way Run ends from here (Close is idempotent)
		if errors.Is(err, errAlreadyDone) {
			plan, err = Plan{AlreadyDone: true}, nil
		}
		if err != nil {
			plan = Plan{Err: err.Error(), Kind: fault.KindOf(err), JobDir: plan.JobDir, Frames: plan.Frames, Chunks: plan.Chunks}
			if ctx.Err() != nil { // a signal came first: what failed after it (a cancelled ffprobe) failed because of it
				st := setupStop(cfg, "rank 0: "+signalName(ctx), &plan, nil)
				plan.Err, plan.Stop = st.Msg, st.Next
			}
		}
		rec.ck = ck
		// Whatever way Run ends, the claim is given back and the heartbeat stops; the normal
		// ends do it first (end is idempotent), with the right verdict on the folder.
		defer ck.end(true, log)
	} else {
		testPause(ctx, "load", log)
		// A job that may be done already (batch-run's rerun: its output is there) loads after
		// the plan, as rank 0 finds that out before its own load: a skipped target costs none.
		if castErr != nil {
			loadErr = castErr
		} else if _, err := os.Lstat(cfg.OutputPath); (!opt.SkipDone || err != nil) && !pipeline.IsImagePath(cfg.TargetPath) {
			// (An image is rank 0's alone: the other ranks read no model file for it.)
			// Its codec trials too (a GPU job's only), beside the load: Check, once the plan
			// says what rank 0 chose, finds their answers cached.
			tried := make(chan struct{})
			go func() { defer close(tried); pipeline.Pretry(ctx, cfg) }()
			models, loadErr = loadModels(ctx, cfg)
			loaded = time.Since(planStart)
			<-tried
		}
		defer func() { models.Close() }() // a refused plan included: the sessions go with Run
	}
	data, err := json.Marshal(&plan)
	if err != nil {
		return "", err
	}
	printed := me == 0 && plan.Err != "" && (ctx.Err() == nil || plan.Stop != 0) && say(opt, plan.Err)
	var planErr error
	if me == 0 && plan.Err != "" {
		// Written before the broadcast: a launcher kills rank 0 once another rank exits non-zero.
		planErr = reported(printed, &fault.Error{Kind: plan.Kind, Err: errors.New(plan.Err)})
		if plan.Stop != 0 {
			planErr = &Stopped{Msg: plan.Err, Remote: printed, Next: plan.Stop}
		}
		rec.write(ctx, planErr, log)
	}
	if data, err = collective.BcastBytes(comm, 0, data); err != nil {
		return "", fault.AsInternal(fmt.Errorf("broadcasting the plan: %w", err))
	}
	if me != 0 {
		if err := json.Unmarshal(data, &plan); err != nil {
			return "", fault.AsInternal(fmt.Errorf("decoding the plan: %w", err))
		}
	}
	if plan.Err != "" {
		switch {
		case me == 0:
			return "", planErr
		case plan.Stop != 0:
			return "", &Stopped{Msg: plan.Err, Remote: true, Next: plan.Stop}
		}
		return "", &RemoteError{Kind: plan.Kind}
	}
	if plan.AlreadyDone {
		return "", &AlreadyDone{Output: cfg.OutputPath}
	}

	// 2. Every rank has its models, and the source rank 0 analysed; a failure anywhere stops
	// every rank. A rank whose settings are not rank 0's (other flags, another facefusion.ini
	// in its working folder) would encode another job's frames into this one: that is its
	// error, before its load's (which followed its own settings).
	if me != 0 {
		if err = sameSettings(me, cfg, plan.Settings); err == nil {
			if models == nil && loadErr == nil && !plan.Image { // not loaded during the plan
				start := time.Now()
				models, loadErr = loadModels(ctx, cfg)
				loaded = time.Since(start)
			}
			var mfe *pipeline.ModelFileError
			if err = loadErr; err == nil && !plan.Image {
				err = useSource(models, &plan)
			} else if errors.As(err, &mfe) && cast == nil {
				// Rank 0 loaded the same job's model files: this node sees other ones.
				host, _ := os.Hostname()
				err = fmt.Errorf("rank %d on %s: %w (rank 0 has them: --model-broadcast on sends it its files)", me, host, err)
			} else if err != nil {
				host, _ := os.Hostname()
				err = fmt.Errorf("rank %d on %s: %w", me, host, err)
			}
			if err == nil && !plan.Image {
				err = plan.Spec.Codecs.Check(ctx, me, plan.Info) // this node runs rank 0's choice
			}
		}
	}
	if plan.Image {
		cast.drop() // rank 0 alone processes it, from the files
	}
	plan.Spec.UseDecoder() // the encoder is the spec's: the settings check compared the settings as given
	if me == 0 && err != nil {
		rec.write(ctx, err, log) // before agree lets the other ranks exit
	}
	// The rank that failed says why before agree lets the others exit: a launcher kills the
	// remaining ranks as soon as one exits non-zero, and the line would be lost with them.
	printedSetup := err != nil && ctx.Err() == nil && say(opt, err.Error())
	if reason, err := agree(ctx, comm, err); reason != "" {
		// A signal reached a rank before every rank was ready: the job stops as it would later,
		// whatever failed after the signal (a cancelled ffprobe, ffmpeg or load) because of it.
		st := setupStop(cfg, reason, &plan, ck)
		if me == 0 {
			st.Remote = say(opt, st.Msg)
			rec.write(ctx, st, log)
			ck.end(false, log)
		} else {
			st.Remote = true
		}
		// Rank 0's report is written before any rank exits: a launcher kills the others then.
		if berr := comm.Barrier(); berr != nil {
			return "", fault.AsInternal(fmt.Errorf("agreeing on setup: %w", berr))
		}
		return "", st
	} else if err != nil {
		rec.write(ctx, err, log) // another rank's: its line is in the log, not here
		ck.end(true, log)
		// As above: rank 0's report before any rank exits (every rank is here: agree said so).
		_ = comm.Barrier()
		var remote *RemoteError
		if !errors.As(err, &remote) {
			return "", reported(printedSetup, err)
		}
		return "", err
	}
	setup := time.Since(setupStart)

	// 3. Each rank encodes its chunks; rank 0's ffmpeg writes the parallel join's side file
	// meanwhile.
	jd := jobDir(cfg, &plan)
	var pj *join.Coordinator
	if me == 0 {
		pj = join.Start(ctx, comm, joinOutput(cfg, &plan), jd.Side(plan.Attempt, filepath.Ext(cfg.OutputPath)))
		defer pj.Remove()
	}
	stopWatch := watchStops(ctx, cfg, me, &plan, jd, log)
	ctl := startControl(ctx, comm, cfg, &plan, jd, opt, ck)
	var res Result
	res.Rank = me
	began, gpu := time.Now(), startGPU(opt)
	if plan.Image {
		if me == 0 {
			// A signal here, or to another rank (the rounds bring it), stops the image before
			// its output is in place.
			img, stopImage := context.WithCancelCause(ctx)
			ctl.encode(stopImage)
			testPause(img, "image", log)
			var line string
			if line, err = models.RunImage(img, cfg); line != "" && img.Err() == nil {
				logFaces(log, line)
			}
			if err != nil && img.Err() != nil {
				res.Stopped, res.StopReason, err = true, ctl.stopReason(), nil
				if ctx.Err() != nil {
					res.StopReason = "rank 0: " + signalName(ctx)
				}
			}
			stopImage(nil)
		}
	} else {
		// The batch-1 models run at most one run a CPU at once, however many workers.
		models.LimitRuns(cpus.CPUs)
		res, err = encodeShare(ctx, comm, cfg, models, &plan, jd, opt, ctl, cpus.Workers, cast.drop)
	}
	if plan.Image && me == 0 && err == nil && !res.Stopped {
		res.Frames = 1
	}
	res.Stats = rankStats(me, models, &res, began, gpu.Stop())
	res.Stats.CPU = &cpus
	if cast != nil {
		res.Stats.ModelBroadcast = cast.stats
	}
	res.Stats.StageSeconds["plan"], res.Stats.StageSeconds["load"], res.Stats.StageSeconds["setup"] = planned.Seconds(), loaded.Seconds(), setup.Seconds()
	if err != nil {
		res.Err, res.Kind = err.Error(), fault.KindOf(err)
		if !plan.Image && jd.CurrentAttemptID() == plan.AttemptID { // a straggler must not fail a newer attempt
			lustre.WriteAtomic(jd.Failed(), []byte(fmt.Sprintf("rank %d: %s\n", me, err)))
		}
	}

	// 4. Every rank leaves the control rounds in the same round; rank 0 gathers the results,
	// joins the segments and muxes the audio.
	if err := ctl.leave(err); err != nil {
		stopWatch()
		return "", err
	}
	rb, _ := json.Marshal(&res)
	all, gerr := comm.Gather(0, rb)
	stopWatch()
	if gerr != nil {
		return "", fault.AsInternal(fmt.Errorf("gathering results: %w", gerr))
	}
	final := Result{}
	var endErr error // rank 0's: what Run returns there
	if me == 0 {
		final = finish(ctx, cfg, &plan, jd, all, log, ck, rec, pj)
		if err := pj.Release(); err != nil {
			return "", fault.AsInternal(err)
		}
		printed = final.Err != "" && (final.Stopped || ctx.Err() == nil) && say(opt, final.Err)
		switch {
		case final.Stopped:
			endErr = &Stopped{Msg: final.Err, Remote: printed, Next: final.Next}
		case final.Err != "":
			endErr = reported(printed, &fault.Error{Kind: final.Kind, Err: errors.New(final.Err)})
		}
		rec.write(ctx, endErr, log) // before the broadcast lets the other ranks exit
	}
	if me != 0 {
		if err := join.Serve(ctx, comm, log); err != nil {
			return "", fault.AsInternal(err)
		}
	}
	ck.end(final.Err != "" && !final.Stopped, log)
	fb, _ := json.Marshal(&final)
	if fb, err = collective.BcastBytes(comm, 0, fb); err != nil {
		return "", fault.AsInternal(fmt.Errorf("broadcasting the outcome: %w", err))
	}
	json.Unmarshal(fb, &final)
	if me == 0 {
		if endErr != nil {
			return "", endErr
		}
		return cfg.OutputPath, nil
	}
	if final.Stopped {
		return "", &Stopped{Msg: final.Err, Remote: true, Next: final.Next}
	}
	if final.Err != "" {
		return "", &RemoteError{Kind: final.Kind}
	}
	return cfg.OutputPath, nil
}

// Reported is an error rank 0 has already printed to Options.Log: it prints the job's error
// before the broadcast that lets the other ranks exit, because a launcher kills the remaining
// ranks as soon as one exits non-zero. main exits with its kind without printing it again.
type Reported struct{ Err error }

func (e *Reported) Error() string { return e.Err.Error() }
func (e *Reported) Unwrap() error { return e.Err }

func reported(printed bool, err error) error {
	if printed {
		return &Reported{Err: err}
	}
	return err
}

// say prints rank 0's one-line report of the job's error, unless a signal came first (main
// then says so instead) or there is no log.
func say(opt Options, msg string) bool {
	if opt.Log == nil {
		return false
	}
	opt.Log.Errorf("%s", msg)
	return true
}

// logFaces logs the count of frames with a face: a warning when there was none.
func logFaces(log *logging.Logger, line string) {
	if strings.HasPrefix(line, pipeline.FaceWarning) {
		log.Warnf("%s", line)
		return
	}
	log.Infof("%s", line)
}

// agree turns one rank's setup error into an error on every rank: the rank that failed
// returns its own error (and reports it); the others return a RemoteError. A signal to any rank
// (ctx, cancelled by main) comes first: every rank gets the stop's reason, "rank N: SIGTERM" for
// the lowest rank signalled, as the control rounds name it, and no error.
func agree(ctx context.Context, comm collective.Comm, err error) (stop string, _ error) {
	// [0] the largest error kind + 1; [1+r] the name of the signal that stopped rank r.
	v := make([]int64, 1+comm.Size())
	if err != nil {
		v[0] = int64(fault.KindOf(err)) + 1
	}
	if ctx.Err() != nil {
		v[1+comm.Rank()] = packName(signalName(ctx))
	}
	if aerr := comm.AllreduceInt64(collective.Max, v); aerr != nil {
		return "", fault.AsInternal(fmt.Errorf("agreeing on setup: %w", aerr))
	}
	for r, name := range v[1:] {
		if name != 0 {
			return fmt.Sprintf("rank %d: %s", r, unpackName(name)), nil
		}
	}
	if err != nil {
		return "", err
	}
	if v[0] != 0 {
		return "", &RemoteError{Kind: fault.Kind(v[0] - 1)}
	}
	return "", nil
}

// planJob is rank 0's setup: every check that can fail before work starts. The job folder is
// claimed before anything in it is read or changed: a run refused as busy or as another job
// touches nothing of another attempt's.
func planJob(ctx context.Context, cfg job.Config, ranks int, p *Plan, log *logging.Logger, skipDone bool, modelsRead <-chan struct{}) (*pipeline.Models, *checkpointer, error) {
	testPause(ctx, "plan", log)
	m, note, err := planSetup(ctx, cfg, ranks, p, skipDone, modelsRead, log)
	if err != nil || p.Image {
		return m, nil, err
	}
	planned := false
	defer func() {
		if !planned {
			m.Close() // every refusal below: the engines go with it
		}
	}()
	if line := p.Spec.PixelFormatNote(); line != "" {
		log.Warnf("%s", line) // an output some players cannot play
	}
	if line := p.Spec.Carried.Note(cfg.OutputPath); line != "" {
		log.Warnf("%s", line) // decided before the first frame, said once
	}
	p.Spec.UseDecoder() // as planSetup decided
	if p.codecsNote != "" {
		log.Infof("%s", p.codecsNote)
	}
	if note != "" {
		log.Infof("%s", note)
	}
	jd, created, err := lustre.Create(p.JobDir)
	if err != nil {
		return nil, nil, fault.AsNoRoom(fault.AsUsage(err), filepath.Dir(p.JobDir))
	}
	// The job's container, as its segments are named: release looks for them before it removes
	// a failed attempt's folder.
	jd.SegmentExt = jobDir(cfg, p).SegmentExt
	p.jobDirID = jd.ID // every JobDir of the plan checks it is still this folder
	me := lustre.Me()
	prev, why, err := jd.TakeClaim(me)
	if err != nil {
		var busy *lustre.BusyError
		if errors.As(err, &busy) {
			return nil, nil, fault.AsBusy(err)
		}
		if errors.Is(err, fs.ErrNotExist) {
			// Made or found a moment ago, gone now: another run of this job finished it (and
			// removed it with its segments), or gave it up. Not this run's to redo blindly.
			return nil, nil, fault.AsBusy(fmt.Errorf("job folder %s was removed while this run claimed it: another run of the same job has just finished or given it up; run again (an output in place is then found done)", jd.Path))
		}
		return nil, nil, fault.AsNoRoom(fault.AsInternal(err), jd.Path)
	}
	if prev != nil {
		log.Warnf("took over %s from a dead run (%s): %s", jd.Path, prev.Describe(), why)
	}
	// Beating starts at once: fingerprinting a large target and verifying a resumed job's
	// segments may take longer than a newcomer on another node waits for a heartbeat.
	ck := &checkpointer{jd: jd, ranks: ranks, interval: time.Duration(cfg.CheckpointInterval) * time.Second, me: me}
	ck.stopBeat = jd.Heartbeat(&ck.me, lustre.HeartbeatInterval, func(err error) {
		ck.lost.Store(true)
		log.Warnf("%v: this run will not join, commit or remove anything there", err)
	})
	prepStart := time.Now() // fingerprinting and verifying count as checkpoint work too
	ck.m, err = prepareCheckpoint(ctx, cfg, p, ranks, ck.me.Token, log)
	if err != nil {
		// The folder goes again only when this run made it: another job's folder, or one whose
		// job could not even be fingerprinted, is left as it was.
		ck.sameJob = created
		ck.end(true, log)
		return nil, nil, err
	}
	if _, err := os.Lstat(cfg.OutputPath); err == nil && skipDone {
		// Another run of this job finished between the first look and the claim.
		if err := sameJobDone(cfg, ck.m.Fingerprint); err != nil {
			ck.sameJob = created
			ck.end(true, log)
			return nil, nil, err
		}
	}
	ck.sameJob, ck.attemptID = true, p.AttemptID
	stripe := jd.Stripe()
	if ranks > 1 || !strings.HasPrefix(stripe, "lfs not found") {
		// Striping matters to a job spread over nodes; a single rank on a laptop is spared it.
		if strings.HasPrefix(stripe, "lfs ") { // not found, or setstripe failed
			log.Warnf("%s", stripe)
		} else {
			log.Infof("%s", stripe)
		}
	}
	ck.last, ck.work = time.Now(), time.Since(prepStart)
	planned = true
	return m, ck, nil
}

// release ends rank 0's hold on a job folder that did not finish: the claim goes, and so does
// the folder when it holds no finished segment (nothing is lost, nothing is left to clean up),
// is the program's own and holds this job (mine: this run made it, or matched its fingerprint);
// never while another run holds it.
func release(jd *lustre.JobDir, me *lustre.Holder, mine bool) {
	if !jd.Holds(me) {
		return
	}
	if mine && !holdsSegments(jd) {
		if left, err := jd.Remove(); err == nil && len(left) == 0 {
			return
		}
	}
	jd.ReleaseClaim(me)
}

// holdsSegments reports whether the job folder holds a finished segment, in any container the
// job's segments are written in: finished work is never removed with a failed attempt's folder.
func holdsSegments(jd *lustre.JobDir) bool {
	if len(jd.Segments()) > 0 {
		return true
	}
	for _, ext := range video.SegmentExts {
		if len((&lustre.JobDir{Path: jd.Path, SegmentExt: ext}).Segments()) > 0 {
			return true
		}
	}
	return false
}

// resumedFolder is what the job folder at path says about the codecs of a resume, read before
// the folder is claimed: prepareCheckpoint checks the manifest's encoder again under the claim.
func resumedFolder(cfg job.Config, path string) spec.Folder {
	f := spec.Folder{Path: path}
	if cfg.Fresh {
		return f // its segments go
	}
	if m, ok, err := (&lustre.JobDir{Path: path}).ReadManifest(); err == nil && ok {
		f.Encoder = m.Encoder
	}
	return f
}

// errAlreadyDone is planJob's answer when the output exists from this same job (skipDone).
var errAlreadyDone = errors.New("already done")

// sameJobDone says whether the existing output was written by the job whose fingerprint is fp:
// errAlreadyDone when its run report records fp, else why not, as the usage error of an output
// that exists (none with --force, which overwrites it).
func sameJobDone(cfg job.Config, fp map[string]string) error {
	rep, ok, err := report.Read(cfg.OutputPath)
	why := "it has no run report " + report.Path(cfg.OutputPath)
	switch {
	case err != nil:
		why = err.Error()
	case ok && rep.Outcome == lustre.Complete:
		if why = (&lustre.Manifest{Fingerprint: rep.Fingerprint}).Changed(fp); why == "" {
			return errAlreadyDone
		}
	case ok:
		why = fmt.Sprintf("its run report says %s", rep.Outcome)
	}
	if cfg.Force {
		return nil
	}
	return fault.AsUsage(fmt.Errorf("output %s already exists, and not from this job (%s): pass --force to overwrite it, or choose another output", cfg.OutputPath, why))
}

func planSetup(ctx context.Context, cfg job.Config, ranks int, p *Plan, skipDone bool, modelsRead <-chan struct{}, log *logging.Logger) (m *pipeline.Models, note string, err error) {
	planStart := time.Now()
	p.Settings = cfg.Settings()
	if err := cfg.CheckTempDir(); err != nil {
		if cfg.TempPath == "" { // $TMPDIR or /tmp: the machine's, not the command's
			return nil, "", fault.AsEnvironment(err)
		}
		return nil, "", fault.AsUsage(err)
	}
	if err := outpath.CheckNoInput(cfg); err != nil { // before "exists: pass --force"
		return nil, "", err
	}
	// With skipDone an existing video output may be this job's, done: that is known once the
	// target is probed and the job fingerprinted, below.
	_, statErr := os.Lstat(cfg.OutputPath)
	doneCheck := skipDone && statErr == nil && !pipeline.IsImagePath(cfg.TargetPath)
	if !doneCheck {
		if err := outpath.Check(cfg); err != nil {
			return nil, "", err
		}
	}
	if cfg.ReadsSources() {
		for _, s := range cfg.SourcePaths {
			if _, err := os.Stat(s); err != nil {
				return nil, "", fault.AsInput(fmt.Errorf("source %s: no such file: check the path given to -s", s))
			}
			// A FIFO or device would hold every reader (ffprobe, the decoder) forever.
			if err := safefs.Regular(s, "source"); err != nil {
				return nil, "", fault.AsInput(fmt.Errorf("%w: give -s a photo file", err))
			}
		}
	}
	if _, err := os.Stat(cfg.TargetPath); err != nil {
		return nil, "", fault.AsInput(fmt.Errorf("target %s: no such file: check the path given to -t", cfg.TargetPath))
	}
	if err := safefs.Regular(cfg.TargetPath, "target"); err != nil {
		return nil, "", fault.AsInput(fmt.Errorf("%w: give -t a video or image file", err))
	}
	// The models load while the target is probed and the codecs and the output format are
	// checked (ffmpeg and ffprobe runs, a file system's round trips): the plan costs the longer
	// of the two, not their sum. Not for a job that may be done already: a skipped target loads
	// nothing. A refusal below leaves the load to close what it opened (discard).
	load := &earlyLoad{}
	if !doneCheck && ctx.Err() == nil {
		load = startLoad(ctx, cfg, modelsRead)
	}
	defer func() {
		if err != nil {
			load.discard()
		}
	}()
	p.Image = pipeline.IsImagePath(cfg.TargetPath)
	if err := cfg.CheckWorkflowMode(p.Image); err != nil {
		return nil, "", fault.AsUsage(err)
	}
	if !p.Image {
		// The fingerprint's ffmpeg line, asked while the checks below run (an image target
		// has no job folder, so no fingerprint).
		video.PrefetchVersion()
		info, err := video.Probe(ctx, cfg.TargetPath)
		if err != nil {
			return nil, "", fault.AsInput(err)
		}
		if planHooks.probed != nil {
			planHooks.probed()
		}
		if p.Spec, err = spec.Resolve(cfg, info); err != nil {
			return nil, "", err
		}
		if cfg.Tracks() && p.Spec.Map.Resampled() {
			log.Warnf("face_tracker_score with output_video_fps %v: the tracker's window counts the output's frames; FaceFusion's counts the target's, so where a face drops out the refill may differ from FaceFusion's", cfg.OutputVideoFPS)
		}
		p.Info = info
		start, end := p.Spec.Map.Output()
		p.Frames = rank.Range{Start: start, End: end}
		p.Chunks = rank.Chunks(p.Frames, cfg.ChunkFrames)
		if p.JobDir, note, err = lustre.Resolve(cfg.JobDir, cfg.OutputPath); err != nil {
			return nil, "", fault.AsUsage(err)
		}
		files := append([]string{cfg.OutputPath, cfg.TargetPath}, cfg.SourcePaths...)
		if err := lustre.Outside(p.JobDir, files...); err != nil {
			return nil, "", fault.AsUsage(err)
		}
		// The codecs before the output check, which must see the encoder the segments are
		// written with; a resumed job's folder says which that is.
		codecs, said, err := spec.ChooseCodecs(ctx, cfg, info, resumedFolder(cfg, p.JobDir))
		if err != nil {
			return nil, "", err
		}
		p.Spec, p.codecsNote = p.Spec.WithCodecs(codecs), said
		p.Spec.UseDecoder()
		if doneCheck {
			fp, err := fingerprint(ctx, cfg, p)
			if err != nil {
				return nil, "", err
			}
			// Only "done" is final here: an output without its report yet may be another run's
			// between its output's rename and its report's write; that is decided once the job
			// folder is claimed (busy while the other run holds it), in planJob.
			if err := sameJobDone(cfg, fp); errors.Is(err, errAlreadyDone) {
				return nil, "", err
			}
			if cfg.Force {
				if err := outpath.Check(cfg); err != nil { // the folder is writable
					return nil, "", err
				}
			}
		}
	}
	// ffmpeg refuses an output format only when it writes: ask it now, not after the last frame.
	carried, err := pipeline.CheckOutputFormat(ctx, cfg, p.Spec, p.Info)
	if err != nil {
		return nil, "", err
	}
	if p.Spec != nil {
		p.Spec.Carried = carried
	}
	// Models and the source are checked before the job folder exists: a job refused for its
	// models leaves nothing behind.
	if !load.started() {
		load = startLoad(ctx, cfg, modelsRead)
	}
	checked := time.Since(planStart)
	m, err = load.wait()
	if err != nil {
		return nil, "", err
	}
	analyseStart := time.Now()
	p.readDelay = load.readDelay()
	defer func() {
		p.loaded = load.took + time.Since(analyseStart)
		log.Debugf("rank 0: checks %.2f s; model load %.2f s beside them (after %.2f s for the files' read), waited for %.2f s; source analysed in %.2f s",
			checked.Seconds(), load.took.Seconds(), load.readWait.Seconds(), load.waited.Seconds(), time.Since(analyseStart).Seconds())
	}()
	img, lm, err := m.Analyse(ctx, p.Info)
	if err != nil {
		m.Close() // Analyse opened engines: a refused target keeps none (batch-run goes on)
		return nil, "", err
	}
	if img != nil {
		p.SourceW, p.SourceH, p.SourcePix, p.SourceLandmarks = img.W, img.H, img.Bytes(), lm
	} else if f, five := m.SourceFrame(); f != nil {
		p.SourceW, p.SourceH, p.SourcePix, p.SourceFive = f.W, f.H, f.Bytes(), &five
	}
	p.SourceEmbedding, p.ReferenceEmbedding = m.Embeddings()
	p.SourceClass = m.SourceClass()
	return m, note, nil
}

// sameSettings says which setting rank me has other than rank 0 (rank0: its Settings).
func sameSettings(me int, cfg job.Config, rank0 map[string]string) error {
	mine := cfg.Settings()
	keys := make([]string, 0, len(mine)+len(rank0))
	for k := range mine {
		keys = append(keys, k)
	}
	for k := range rank0 {
		if _, ok := mine[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if mine[k] != rank0[k] {
			return fault.AsUsage(fmt.Errorf("rank %d runs another job than rank 0: %s is %q here and %q on rank 0; give every rank the same flags, job file and facefusion.ini (it is read from each rank's working folder)", me, k, mine[k], rank0[k]))
		}
	}
	return nil
}

// loadModels is a rank's load: the models, their sessions opened (an image target's are not:
// rank 0 alone processes it, opening what it runs). A non-zero rank's runs while rank 0 plans,
// rank 0's beside its plan's checks (earlyLoad).
func loadModels(ctx context.Context, cfg job.Config) (*pipeline.Models, error) {
	m, err := pipeline.LoadModels(cfg)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil { // a stop: the engines are not opened for nothing
		m.Close()
		return nil, err
	}
	if !pipeline.IsImagePath(cfg.TargetPath) {
		if err := m.Open(); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}

// useSource gives a non-zero rank's models the source and reference rank 0 analysed.
func useSource(m *pipeline.Models, p *Plan) error {
	m.SetEmbeddings(p.SourceEmbedding, p.ReferenceEmbedding)
	m.SetSourceClass(p.SourceClass)
	if p.SourcePix != nil && p.SourceFive != nil {
		m.SetSourceFrame(raster.Wrap(p.SourcePix, p.SourceW, p.SourceH), *p.SourceFive)
		return nil
	}
	if p.SourcePix != nil {
		return m.UseSource(raster.Wrap(p.SourcePix, p.SourceW, p.SourceH), &p.SourceLandmarks)
	}
	return nil
}

// encodeShare encodes this rank's chunks of the attempt with workerCount workers, one segment
// file each, and records each finished chunk in this rank's journal at once, in order. A stop
// (a signal here, or the job's stop from the rounds) ends the frames and discards the chunk
// being encoded, but the chunks whose frames are all written are finished and recorded first;
// a failure or a takeover discards every chunk not yet recorded. Its share's first frames may
// be of a chunk another rank encodes: they are sent there (share.go); its last chunk may be
// completed by frames other ranks send. modelsOpen is called once its workers are made (or it has
// none to make): the model broadcast's bytes go then.
func encodeShare(ctx context.Context, comm collective.Comm, cfg job.Config, m *pipeline.Models, p *Plan, jd *lustre.JobDir, opt Options, ctl *control, workerCount int, modelsOpen func()) (res Result, err error) {
	me := comm.Rank()
	pieces := p.Work[me]
	// The sharing first, whatever happens next: a sender always ends its part, an owner always
	// takes every sender's (share.go).
	pw, ph := p.Spec.ProcessSize()
	var snd *sender
	if len(pieces) > 0 && pieces[0].Owner != me {
		snd = newSender(comm, pieces[0].Owner, pw*ph*3)
		defer func() {
			if serr := snd.end(msgDiscarded); serr != nil && err == nil {
				err = serr
			}
		}()
	}
	rcv, err := startReceiver(comm, p.Work, me, pw*ph*3, cfg.TempDir())
	if err != nil {
		return Result{Rank: me}, err
	}
	defer func() {
		if rerr := rcv.wait(); rerr != nil && err == nil && !res.Stopped {
			err = rerr
		}
	}()
	return encodePieces(ctx, comm, cfg, m, p, jd, opt, ctl, workerCount, snd, rcv, modelsOpen)
}

// encodePieces is encodeShare's work, once the sharing has started.
func encodePieces(ctx context.Context, comm collective.Comm, cfg job.Config, m *pipeline.Models, p *Plan, jd *lustre.JobDir, opt Options, ctl *control, workerCount int, snd *sender, rcv *receiver, modelsOpen func()) (Result, error) {
	me := comm.Rank()
	res := Result{Rank: me}
	signalled := ctx
	// kill ends the encode at once (a failure, a takeover); stop, also ended by kill, only ends
	// its frames (a signal, the job's stop).
	kill, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	stop, endFrames := context.WithCancelCause(kill)
	defer endFrames(nil)
	defer context.AfterFunc(signalled, func() { endFrames(context.Cause(signalled)) })()
	log := opt.Log

	// The job's stop, failure or takeover reaches this rank within a round (control.go), and
	// its frames go into the rounds' progress.
	rounds := ctl.encode(func(cause error) {
		if cause == errStopRequested {
			endFrames(cause)
		} else {
			cancel(cause)
		}
	})
	written := 0
	counter := progressFunc(func(n int) {
		rounds(n)
		written += n
		testPause(stop, fmt.Sprintf("frames-%d", written), log)
		testPause(stop, fmt.Sprintf("rank-%d-frames-%d", me, written), log) // one rank's (a sender's)
	})

	work := p.Work[me]
	if len(work) == 0 {
		modelsOpen()
		return res, nil
	}
	// The workers read their models' signatures and open their sessions (rank 0 its first of
	// some, a swapper) from the broadcast's bytes; then the bytes go.
	workers, err := m.Workers(workerCount)
	modelsOpen()
	if err != nil {
		return res, err
	}
	defer pipeline.CloseWorkers(workers)
	for i := 0; i < len(work); { // one decode and one Stream for each run of consecutive chunks
		run := work[i : i+1]
		for i+len(run) < len(work) && work[i+len(run)].Frames.Start == run[len(run)-1].Frames.End {
			run = work[i : i+len(run)+1]
		}
		i += len(run)
		segs := make([]pipeline.Segment, len(run))
		for k, pc := range run {
			c, ch := pc.Chunk, p.Chunks[pc.Chunk]
			segs[k] = pipeline.Segment{Start: ch.Start, End: ch.End, Path: jd.SegmentTemp(c, me, p.Attempt)}
			switch {
			case pc.Owner != me: // this rank's frames of another's chunk go there
				segs[k] = pipeline.Segment{Start: pc.Frames.Start, End: pc.Frames.End, Send: snd}
			case pc.Frames.End < ch.End: // the others' frames of this chunk come from them
				segs[k].Local, segs[k].Rest = pc.Frames.End, rcv.rest(endFrames)
			}
		}
		began := time.Now()
		// Each chunk, once its encoder has finished, is renamed into place and recorded here,
		// in order, while the next ones are encoded; at a stop too.
		finished := func(k, n, faces int, id *lustre.IdentitySums) error {
			c, ch := run[k].Chunk, p.Chunks[run[k].Chunk]
			if run[k].Owner != me {
				res.Frames += n
				log.Debugf("rank %d: frames %v of chunk %d, %d with a face, sent to rank %d in %.2f s", me, run[k].Frames, c, faces, run[k].Owner, time.Since(began).Seconds())
				began = time.Now()
				return nil
			}
			testPause(stop, fmt.Sprintf("chunk-%d", c), log)
			if err := kill.Err(); err != nil {
				return context.Cause(kill)
			}
			if jd.CurrentAttemptID() != p.AttemptID {
				// A straggler's segment and journal would land in a newer attempt's folder: rank
				// 0's control round sees it within a second, this check before every rename at once.
				err := takenOver(jd, p.AttemptID)
				cancel(err)
				return err
			}
			if err := os.Rename(segs[k].Path, jd.Segment(c)); err != nil {
				return err
			}
			if err := record(jd, me, p.Attempt, c, ch, n, faces, id, &res); err != nil {
				return err
			}
			res.Frames += run[k].Frames.Len() // a shared chunk's other frames are the others' in the report
			res.Chunks++
			log.Debugf("rank %d: chunk %d, frames %v: %d frame(s), %d with a face swapped or enhanced, in %.2f s", me, c, ch, n, faces, time.Since(began).Seconds())
			began = time.Now()
			return nil
		}
		c := run[0].Chunk // the chunk an error is reported in
		src, err := pipeline.OpenFrames(stop, p.Spec, p.Info, segs[0].Start, run[len(run)-1].Frames.End)
		if err == nil {
			err = pipeline.EncodeSegments(kill, stop, p.Spec, src, segs, workers, counter, finished)
			src.Close()
		}
		var se *pipeline.SegmentError
		if errors.As(err, &se) {
			c = run[se.Index].Chunk
		}
		if err != nil {
			if stop.Err() != nil && kill.Err() == nil {
				// Tell the others (a signal may have reached this rank alone) and stop.
				if signalled.Err() != nil {
					writeStop(jd, p.AttemptID, fmt.Sprintf("rank %d: %s", me, signalName(signalled)))
				}
				res.Stopped = true
				return res, nil
			}
			if cause := context.Cause(kill); kill.Err() != nil && cause != context.Canceled {
				if _, ferr := os.Stat(jd.Failed()); ferr == nil && cause == errRemoteFailed {
					return res, &RemoteError{Kind: fault.Internal}
				}
				return res, cause // rank 0's checkpoint write failed
			}
			if comm.Size() > 1 {
				return res, fmt.Errorf("rank %d, chunk %d: %w", me, c, err)
			}
			return res, fmt.Errorf("chunk %d: %w", c, err)
		}
	}
	if stop.Err() != nil && kill.Err() == nil {
		// The stop came once every frame was written: the chunks are kept, and the job still
		// stops as asked (a cancel is never followed by a join).
		if signalled.Err() != nil {
			writeStop(jd, p.AttemptID, fmt.Sprintf("rank %d: %s", me, signalName(signalled)))
		}
		res.Stopped = true
	}
	return res, nil
}

// record hashes chunk c's fresh segment and rewrites this rank's journal with it.
func record(jd *lustre.JobDir, me, attempt, c int, ch rank.Range, n, faces int, id *lustre.IdentitySums, res *Result) error {
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
		Rank: me, Attempt: attempt, Done: time.Now().UTC().Format(time.RFC3339), Faces: faces})
	if id != nil {
		res.Done[len(res.Done)-1].Identity = *id
	}
	if err := jd.WriteJournal(me, res.Done); err != nil {
		return checkpointError(err)
	}
	return nil
}

type progressFunc func(int)

func (f progressFunc) Add(n int) { f(n) }

// newer names what replaced this attempt in the job folder.
func newer(n int) string {
	if n == 0 {
		return "another attempt (its ATTEMPT file is gone: finished, or deleted)"
	}
	return fmt.Sprintf("attempt %d", n)
}

// takenOver is the error of an attempt whose job folder a newer attempt took over.
func takenOver(jd *lustre.JobDir, attempt string) error {
	n, _, _ := strings.Cut(attempt, " ")
	return fault.AsInternal(fmt.Errorf("job folder %s was taken over by %s: this attempt (%s) stops; run one attempt of a job at a time", jd.Path, newer(jd.CurrentAttempt()), n))
}

// finish is rank 0's end of an attempt: check every rank's result, checkpoint what they
// finished, and, when every chunk is done, join, mux and commit.
func finish(ctx context.Context, cfg job.Config, p *Plan, jd *lustre.JobDir, all [][]byte, log *logging.Logger, ck *checkpointer, rec *runRecord, pj *join.Coordinator) Result {
	var first *Result // the first real cause; a rank stopped by another's failure is not one
	var recs []lustre.Chunk
	stopped, imageStop := false, ""
	work := 0.0
	for _, b := range all {
		var r Result
		if err := json.Unmarshal(b, &r); err != nil {
			return fail(fault.AsInternal(fmt.Errorf("decoding a rank's result: %w", err)))
		}
		recs = append(recs, r.Done...)
		rec.perRank = append(rec.perRank, r.Stats)
		stopped = stopped || r.Stopped
		if r.Stopped && p.Image {
			imageStop = r.StopReason
		}
		work += r.CheckpointWork
		remote := r.Err == (&RemoteError{}).Error()
		if r.Err != "" && (first == nil || (!remote && first.Err == (&RemoteError{}).Error())) {
			rc := r
			first = &rc
		}
	}
	if p.Image {
		if first != nil {
			return Result{Err: first.Err, Kind: first.Kind}
		}
		if stopped {
			return stopResult(cfg, imageStop, 0, 0, 0, 0, 0, "")
		}
		rec.hashOutput(log)
		return Result{}
	}
	// The checkpoint round of the attempt's end: what the ranks gathered goes into the manifest.
	outcome := lustre.Running
	switch {
	case first != nil:
		outcome = lustre.Failed
	case stopped || ctx.Err() != nil:
		outcome = lustre.Checkpointed
	}
	cerr := ck.save(recs, outcome)
	if first != nil {
		msg := first.Err
		if first.Rank != 0 && !strings.HasPrefix(msg, "rank ") {
			msg = fmt.Sprintf("rank %d: %s", first.Rank, msg)
		}
		return Result{Err: msg, Kind: first.Kind}
	}
	if cerr != nil {
		return fail(cerr)
	}
	stop := func() Result {
		r := stopResult(cfg, stopReason(ctx, jd), len(recs), len(ck.m.Done), len(p.Chunks), ck.m.DoneFrames(), p.Frames.Len(), jd.Path)
		ck.m.Attempts[len(ck.m.Attempts)-1].Stop = r.StopWords
		ck.save(nil, lustre.Checkpointed)
		return r
	}
	if outcome == lustre.Checkpointed {
		return stop()
	}
	frames := ck.m.DoneFrames()
	if len(ck.m.Done) != len(p.Chunks) || frames != p.Frames.Len() {
		return fail(fault.AsInternal(fmt.Errorf("the manifest %s holds %d of %d chunks (%d of %d frames) after every rank finished", jd.Manifest(), len(ck.m.Done), len(p.Chunks), frames, p.Frames.Len())))
	}
	log.Infof("checkpoint: %d chunk(s) recorded this attempt, %d manifest write(s), %.3f s of checkpoint work (hashing, journals, manifest)",
		len(recs), ck.writes, work+ck.work.Seconds())
	// Every chunk's count, this attempt's and earlier ones', is in the manifest. A job that
	// must not end without a face fails here, before the join writes anything.
	faceLine, ferr := pipeline.FaceReport(cfg, ck.m.DoneFaces(), frames)
	if ferr != nil {
		return fail(ferr)
	}
	if faceLine != "" {
		logFaces(log, faceLine)
	}
	if line := identityCoverage(ck.m); line != "" {
		log.Warnf("%s", line)
	}
	testPause(ctx, "concat", log)
	if ctx.Err() != nil {
		return stop()
	}
	// Still this attempt's folder, and the segments still the recorded files (a straggler's
	// rename would change a size): a stat each, no rereading.
	if err := ck.stillMine(p); err != nil {
		return fail(err)
	}
	segs := make([]string, len(p.Chunks))
	for _, c := range ck.m.Done {
		segs[c.Chunk] = jd.Segment(c.Chunk)
		// Lstat: the join opens segments by name, and a link in their place (a group member's,
		// where FACEFUSION_GROUP_WRITABLE trusts the group) is not what was recorded.
		if st, err := os.Lstat(segs[c.Chunk]); err != nil || !st.Mode().IsRegular() || !safefs.Mine(st) || st.Size() != c.Size {
			return fail(fault.AsInternal(fmt.Errorf("segment %s changed after it was recorded (size, presence, or no longer a file of yours): rerun the same command to verify and redo it", segs[c.Chunk])))
		}
	}
	j := &joinEnd{ctx: ctx, cfg: cfg, p: p, jd: jd, log: log, ck: ck, rec: rec, pj: pj, frames: frames, stop: stop}
	return j.run(segs)
}

// joinEnd is the end of an attempt that finished every chunk: the segments joined into the
// output's temp file, checked whole, hashed, committed, reported, and the job folder's end.
type joinEnd struct {
	ctx    context.Context
	cfg    job.Config
	p      *Plan
	jd     *lustre.JobDir
	log    *logging.Logger
	ck     *checkpointer
	rec    *runRecord
	pj     *join.Coordinator
	frames int           // the job's frames, every chunk's
	stop   func() Result // the end of an attempt stopped by a signal
	out    string        // the output, absolute
	temp   *outpath.Temp
}

func fail(err error) Result { return Result{Err: err.Error(), Kind: fault.KindOf(err)} }

// run joins segs (every chunk's, in order) and commits the output.
func (j *joinEnd) run(segs []string) Result {
	ctx, cfg, p, log, ck, rec := j.ctx, j.cfg, j.p, j.log, j.ck, j.rec
	if r, ok := j.createTemp(); !ok {
		return r
	}
	defer j.temp.Remove()
	temp := j.temp
	joinStart := time.Now() // the serial tail of a run: the benchmark reports its share
	hash, err := j.join(segs)
	rec.perRank[0].StageSeconds["join"] = time.Since(joinStart).Seconds()
	if err != nil {
		if ctx.Err() != nil {
			return j.stop()
		}
		return j.failed(err)
	}
	// Committed only once checked whole, whatever ffmpeg's exit code said; and only the file
	// made is read for that.
	if err := temp.Check(); err != nil {
		return fail(err)
	}
	w, h := p.Spec.OutputSize()
	if err := video.CheckWholeFile(ctx, temp.File, video.Whole{Frames: j.frames, Width: w, Height: h, Carried: p.Spec.Carried.Keep}); err != nil {
		if ctx.Err() != nil {
			return j.stop()
		}
		return j.failed(err)
	}
	// Still the file made: nothing else is hashed, read or committed.
	if err := temp.Check(); err != nil {
		return fail(err)
	}
	// The output's bytes are final: the parallel join hashed them as it wrote them; otherwise
	// every rank hashes its share of them for the run report.
	if hash.InJoin {
		rec.hashedInJoin(hash, temp.File, log)
	} else if err := rec.hashShared(j.pj, temp.File, log); err != nil {
		return j.failed(err)
	}
	testPause(ctx, "commit", log)
	if err := ck.stillMine(p); err != nil {
		return fail(err)
	}
	if err := outpath.Commit(temp, cfg.OutputPath, cfg.Force); err != nil {
		return j.failed(err)
	}
	log.Infof("%d frames in %d chunks joined into %s (join %.2f s)", j.frames, len(p.Chunks), cfg.OutputPath, time.Since(joinStart).Seconds())
	return j.committed()
}

// createTemp records, then creates, the output's temp file; ok is false with the failure.
func (j *joinEnd) createTemp() (r Result, ok bool) {
	// The temp file beside the output is as large as the output: recorded first, with the
	// output it is for (absolute: a rerun may spell -o another way), so that the next attempt
	// removes it if this one is killed while joining.
	out, err := filepath.Abs(j.cfg.OutputPath)
	if err != nil {
		return fail(fault.AsInternal(err)), false
	}
	j.out = out
	// An unpredictable name, created exclusively after it is recorded: nothing another user
	// planted beside the output is ever written through.
	tempPath := outpath.TempPath(out, "part")
	if err := j.jd.RecordJoin(out, tempPath); err != nil {
		return fail(checkpointError(err)), false
	}
	if j.temp, err = outpath.CreateTemp(tempPath); err != nil {
		// No room for one more file (a full disk, an inode quota) is the environment's; a name
		// taken under the unpredictable one is another user's doing.
		if fault.NoRoom(err) {
			return fail(fault.AsNoRoom(err, filepath.Dir(out))), false
		}
		return fail(fault.AsInput(fmt.Errorf("%w: make sure only you can write into %s, or choose another -o", err, filepath.Dir(out)))), false
	}
	return Result{}, true
}

// join writes segs into the temp file: in parallel by every rank, or by rank 0's ffmpeg. One
// pass over the output's bytes: the segments joined and the target's other streams muxed.
func (j *joinEnd) join(segs []string) (join.Hash, error) {
	p := j.p
	times := p.Spec.Times()
	joins := make([]video.JoinSegment, len(segs))
	for i, s := range segs {
		joins[i] = video.JoinSegment{Path: s, Start: times.At(p.Chunks[i].Start - p.Spec.Map.Start)}
	}
	res, err := j.pj.Parallel(j.ctx, joins, j.ck.m.Done, p.Attempt, j.temp.File, j.log)
	for r := 1; r < len(res.Seconds) && r < len(j.rec.perRank); r++ {
		j.rec.perRank[r].StageSeconds["join"] = res.Seconds[r]
	}
	if err != nil || !res.Serial {
		return res.Hash, err
	}
	return res.Hash, j.pj.Serial(j.ctx, joins, j.temp.File)
}

// failed ends a join that failed: every finished segment and the manifest are kept, its
// outcome failed, so that the same command joins them again once the cause (a full disk) is
// gone; the error says how much room the output needs.
func (j *joinEnd) failed(err error) Result {
	// The temp output goes first, closed too (its room comes back only then): on a full disk
	// the manifest beside it needs that room.
	j.temp.Remove()
	if j.ck.stillMine(j.p) == nil {
		if serr := j.ck.save(nil, lustre.Failed); serr != nil {
			j.log.Warnf("%v", serr)
		}
	}
	if fault.KindOf(err) == fault.Usage { // the output appeared meanwhile: Commit says so
		return fail(err)
	}
	j.log.Debugf("join: %v", err)
	dir, aerr := filepath.Abs(j.jd.Path)
	if aerr != nil {
		dir = j.jd.Path
	}
	return fail(j.pj.KeptError(j.ctx, err, j.out, j.ck.m.Done, dir))
}

// committed is the end of a job whose output is in place: its report, then the job folder
// removed (or kept, with --keep-segments or as the job's only record).
func (j *joinEnd) committed() Result {
	cfg, jd, log, ck := j.cfg, j.jd, j.log, j.ck
	// The report right after the rename, before the job folder (and its claim) goes: a run of
	// this job that claims the folder next finds the output with its report (batch-run's
	// "already done"). Nothing after the rename can fail the job.
	recorded := j.rec.write(j.ctx, nil, log)
	if cfg.KeepSegments || !recorded {
		if err := ck.save(nil, lustre.Complete); err != nil {
			log.Warnf("%v", err)
		}
		if !recorded { // the job folder is then the job's only record: status reads it
			log.Warnf("the job folder %s is kept as the job's record (its run report could not be written); remove it once you no longer need it", jd.Path)
		} else {
			log.Infof("segments and manifest kept in %s (--keep-segments)", jd.Path)
		}
		return Result{}
	}
	if err := ck.stillMine(j.p); err != nil {
		log.Warnf("the output is in place; %v", err)
		return Result{}
	}
	ck.stopHeartbeat() // a late beat must not bring CLAIM back into a folder being removed
	if left, err := jd.Remove(); err != nil {
		log.Warnf("%v", err)
	} else if len(left) > 0 {
		log.Infof("job folder %s kept: it holds files facefusion did not write (%s)", jd.Path, strings.Join(left, ", "))
	}
	return Result{}
}

// identityCoverage is the warning for a job whose chunks were not all measured (an attempt ran
// with the identity measure off, or without its recognizer's file): the report's identity block
// is then the measured chunks' alone ("partial"). "" when every chunk or none was measured.
func identityCoverage(m *lustre.Manifest) string {
	measured := 0
	for _, c := range m.Done {
		if c.Identity.Recognizer != "" {
			measured++
		}
	}
	if measured == 0 || measured == len(m.Done) {
		return ""
	}
	return fmt.Sprintf("the identity measure covers %d of the job's %d chunks (the others were done by an attempt that did not measure: identity_measure off, or its recognizer's file refused): the run report's identity is theirs alone (\"partial\": true); rerun with --fresh for a whole measure", measured, len(m.Done))
}
