package driver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/audio"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
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

// planJob is rank 0's setup: every check that can fail before work starts. The job folder is
// claimed before anything in it is read or changed: a run refused as busy or as another job
// touches nothing of another attempt's.
func (c *coordinator) planJob(modelsRead <-chan struct{}) (*pipeline.Models, *checkpointer, error) {
	ctx, cfg, ranks, p, log := c.ctx, c.cfg, c.comm.Size(), &c.plan, c.log
	testPause(ctx, "plan", log)
	m, note, err := c.planSetup(modelsRead)
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
	ck, created, err := claim(cfg, p, ranks, log)
	if err != nil {
		return nil, nil, err
	}
	prepStart := time.Now() // fingerprinting and verifying count as checkpoint work too
	ck.m, err = prepareCheckpoint(ctx, cfg, p, ranks, ck.me.Token, log)
	if err != nil {
		// The folder goes again only when this run made it: another job's folder, or one whose
		// job could not even be fingerprinted, is left as it was.
		ck.sameJob = created
		ck.end(true, log)
		return nil, nil, err
	}
	if _, err := os.Lstat(cfg.OutputPath); err == nil && c.opt.SkipDone {
		// Another run of this job finished between the first look and the claim.
		if err := sameJobDone(cfg, ck.m.Fingerprint); err != nil {
			ck.sameJob = created
			ck.end(true, log)
			return nil, nil, err
		}
	}
	ck.sameJob, ck.attemptID = true, p.AttemptID
	logStripe(ck.jd, log)
	saveVoice(ck.jd, p, log)
	ck.last, ck.work = time.Now(), time.Since(prepStart)
	planned = true
	return m, ck, nil
}

// noLFS says "lfs not found" once per process: a file system that is not Lustre is the usual
// case off a cluster, and a batch would say it for every target.
var noLFS sync.Once

// logStripe stripes the job folder where Lustre's lfs is installed and says what happened.
func logStripe(jd *lustre.JobDir, log *logging.Logger) {
	note, err := jd.Stripe()
	switch {
	case errors.Is(err, lustre.ErrNoLFS):
		noLFS.Do(func() { log.Debugf("%v: job folders keep the file system's default layout", err) })
	case err != nil:
		log.Warnf("%v", err)
	default:
		log.Infof("%s", note)
	}
}

// claim makes or finds the plan's job folder and claims it; created says this run made it.
// The heartbeat starts at once: fingerprinting a large target and verifying a resumed job's
// segments may take longer than a newcomer on another node waits for a heartbeat.
func claim(cfg job.Config, p *Plan, ranks int, log *logging.Logger) (ck *checkpointer, created bool, err error) {
	jd, created, err := lustre.Create(p.JobDir)
	if err != nil {
		return nil, false, fault.AsNoRoom(fault.AsUsage(err), filepath.Dir(p.JobDir))
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
			return nil, false, fault.AsBusy(err)
		}
		if errors.Is(err, fs.ErrNotExist) {
			// Made or found a moment ago, gone now: another run of this job finished it (and
			// removed it with its segments), or gave it up. Not this run's to redo blindly.
			return nil, false, fault.AsBusy(fmt.Errorf("job folder %s was removed while this run claimed it: another run of the same job has just finished or given it up; run again (an output in place is then found done)", jd.Path))
		}
		return nil, false, fault.AsNoRoom(fault.AsInternal(err), jd.Path)
	}
	if prev != nil {
		log.Warnf("took over %s from a dead run (%s): %s", jd.Path, prev.Describe(), why)
	}
	ck = &checkpointer{jd: jd, ranks: ranks, interval: time.Duration(cfg.CheckpointInterval) * time.Second, me: me}
	ck.stopBeat = jd.Heartbeat(&ck.me, lustre.HeartbeatInterval, func(err error) {
		ck.lost.Store(true)
		log.Warnf("%v: this run will not join, commit or remove anything there", err)
	})
	return ck, created, nil
}

// release ends rank 0's hold on a job folder that did not finish: the claim goes, and so does
// the folder when it holds no finished segment (nothing is lost, nothing is left to clean up),
// is the program's own and holds this job (mine: this run made it, or matched its fingerprint);
// never while another run holds it.
func release(jd *lustre.JobDir, me *lustre.Holder, mine bool) {
	if !jd.Holds(me) {
		return
	}
	if mine && !holdsSegments(jd) && !holdsVoice(jd) {
		if left, err := jd.Remove(); err == nil && len(left) == 0 {
			return
		}
	}
	jd.ReleaseClaim(me)
}

// holdsVoice reports whether the job folder holds rank 0's voice analysis (the minutes of a
// long voice's), which a resume reuses: kept like a finished segment.
func holdsVoice(jd *lustre.JobDir) bool {
	st, err := os.Lstat(jd.Voice())
	return err == nil && st.Mode().IsRegular()
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

// planSetup is planJob's checks, the target's probe, the models' load and the source's
// analysis: everything before the job folder. cfg is rank 0's own copy: the codecs chosen
// here are used on it at once.
func (c *coordinator) planSetup(modelsRead <-chan struct{}) (m *pipeline.Models, note string, err error) {
	ctx, cfg, p, log := c.ctx, c.cfg, &c.plan, c.log
	planStart := time.Now()
	p.Settings = cfg.Settings()
	doneCheck, err := checkJob(cfg, c.opt.SkipDone)
	if err != nil {
		return nil, "", err
	}
	// The models load while the target is probed and the codecs and the output format are
	// checked (ffmpeg and ffprobe runs, a file system's round trips): the plan costs the longer
	// of the two, not their sum. Not for a job that may be done already: a skipped target loads
	// nothing. A refusal below leaves the load to close what it opened (discard).
	load := &earlyLoad{}
	if !doneCheck && ctx.Err() == nil {
		load = startLoad(ctx, cfg, modelsRead, log)
	}
	defer func() {
		if err != nil {
			load.discard()
		}
	}()
	p.Image = video.IsImagePath(cfg.TargetPath)
	if err := cfg.CheckWorkflowMode(p.Image); err != nil {
		return nil, "", fault.AsUsage(err)
	}
	if !p.Image {
		if note, err = c.probeTarget(cfg); err != nil {
			return nil, "", err
		}
		p.Spec.UseDecoder()
		if doneCheck {
			if err := c.doneAlready(cfg); err != nil {
				return nil, "", err
			}
		}
	}
	// ffmpeg refuses an output format only when it writes: ask it now, not after the last frame.
	if err := spec.CheckFormat(ctx, cfg, p.Spec, p.Info); err != nil {
		return nil, "", err
	}
	// Models and the source are checked before the job folder exists: a job refused for its
	// models leaves nothing behind.
	if !load.started() {
		load = startLoad(ctx, cfg, modelsRead, log)
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
		log.Debugf("checks %.2f s; model load %.2f s beside them (after %.2f s for the files' read), waited for %.2f s; source analysed in %.2f s",
			checked.Seconds(), load.took.Seconds(), load.readWait.Seconds(), load.waited.Seconds(), time.Since(analyseStart).Seconds())
	}()
	if cfg.LipSyncs() && p.Spec != nil {
		if p.voiceFP, err = fingerprint(ctx, cfg, p); err != nil {
			return nil, "", err
		}
		if !cfg.Fresh {
			if err := sameJobFolder(jobDir(cfg, p), p.voiceFP); err != nil {
				return nil, "", err
			}
			reuseVoice(jobDir(cfg, p).Voice(), p.voiceFP, p, log)
		}
	}
	if cfg.LipSyncs() && p.Spec != nil && p.voice == nil {
		// Minutes for a long voice with no line of progress: said, so that a quiet rank 0 is
		// not taken for a hung one.
		p.analysing = true
		log.Infof("lip_syncer: %s's voice is separated (%s) and resampled before the first frame: a long track takes minutes",
			cfg.SourceAudio(), cfg.VoiceExtractorModel)
	}
	if err := analyse(ctx, m, p); err != nil {
		return nil, "", err
	}
	p.analysing = false
	return m, note, nil
}

// sameJobFolder refuses, before the voice analysis (minutes for a long voice), a job folder
// whose manifest holds another job (another voice, say), as prepareCheckpoint would once the
// folder is claimed. Read unclaimed, as resumedFolder reads it: the manifest is replaced whole,
// and the claimed check still follows; a manifest that cannot be read is left to that check.
func sameJobFolder(jd *lustre.JobDir, fp map[string]string) error {
	m, ok, err := jd.ReadManifest()
	if err != nil || !ok {
		return nil
	}
	if err := jd.SameJob(m, fp); err != nil {
		return fault.AsUsage(err)
	}
	return nil
}

// checkJob is the plan's first checks, on paths alone: the temp folder, the output, the
// sources and the target. doneCheck: the output exists and may be this job's, done (skipDone);
// that is known once the target is probed and the job fingerprinted.
func checkJob(cfg job.Config, skipDone bool) (doneCheck bool, err error) {
	if err := cfg.CheckTempDir(); err != nil {
		if cfg.TempPath == "" { // $TMPDIR or /tmp: the machine's, not the command's
			return false, fault.AsEnvironment(err)
		}
		return false, fault.AsUsage(err)
	}
	if err := outpath.CheckNoInput(cfg); err != nil { // before "exists: pass --force"
		return false, err
	}
	_, statErr := os.Lstat(cfg.OutputPath)
	doneCheck = skipDone && statErr == nil && !video.IsImagePath(cfg.TargetPath)
	if !doneCheck {
		if err := outpath.Check(cfg); err != nil {
			return false, err
		}
	}
	if cfg.ReadsSources() {
		for _, s := range cfg.SourcePaths {
			if _, err := os.Stat(s); err != nil {
				return false, fault.AsInput(fmt.Errorf("source %s: no such file: check the path given to -s", s))
			}
			// A FIFO or device would hold every reader (ffprobe, the decoder) forever.
			if err := safefs.Regular(s, "source"); err != nil {
				return false, fault.AsInput(fmt.Errorf("%w: give -s a photo file", err))
			}
		}
	}
	if _, err := os.Stat(cfg.TargetPath); err != nil {
		return false, fault.AsInput(fmt.Errorf("target %s: no such file: check the path given to -t", cfg.TargetPath))
	}
	if err := safefs.Regular(cfg.TargetPath, "target"); err != nil {
		return false, fault.AsInput(fmt.Errorf("%w: give -t a video or image file", err))
	}
	return doneCheck, nil
}

// probeTarget probes a video target and plans its frames, chunks, job folder and codecs; note
// is the job folder's line.
func (c *coordinator) probeTarget(cfg job.Config) (note string, err error) {
	ctx, p, log := c.ctx, &c.plan, c.log
	// The fingerprint's ffmpeg line, asked while the checks below run (an image target has no
	// job folder, so no fingerprint).
	video.PrefetchVersion()
	info, err := video.Probe(ctx, cfg.TargetPath)
	if err != nil {
		return "", fault.AsInput(err)
	}
	if planHooks.probed != nil {
		planHooks.probed()
	}
	if p.Spec, err = spec.Resolve(cfg, info); err != nil {
		return "", err
	}
	if cfg.Tracks() && p.Spec.Map.Resampled() {
		log.Warnf("face_tracker_score with output_video_fps %v: the tracker's window counts the output's frames; FaceFusion's counts the target's, so where a face drops out the refill may differ from FaceFusion's", cfg.OutputVideoFPS)
	}
	p.Info = info
	start, end := p.Spec.Map.Output()
	p.Frames = rank.Range{Start: start, End: end}
	p.Chunks = rank.Chunks(p.Frames, cfg.ChunkFrames)
	if p.JobDir, note, err = lustre.Resolve(cfg.JobDir, cfg.OutputPath); err != nil {
		return "", fault.AsUsage(err)
	}
	files := append([]string{cfg.OutputPath, cfg.TargetPath}, cfg.SourcePaths...)
	if err := lustre.Outside(p.JobDir, files...); err != nil {
		return "", fault.AsUsage(err)
	}
	// The codecs before the output check, which must see the encoder the segments are written
	// with; a resumed job's folder says which that is.
	codecs, said, err := spec.ChooseCodecs(ctx, cfg, info, resumedFolder(cfg, p.JobDir))
	if err != nil {
		return "", err
	}
	p.Spec, p.codecsNote = p.Spec.WithCodecs(codecs), said
	return note, nil
}

// doneAlready is errAlreadyDone when the output in place is this job's, done. Only "done" is
// final here: an output without its report yet may be another run's between its output's
// rename and its report's write; that is decided once the job folder is claimed (busy while
// the other run holds it), in planJob.
func (c *coordinator) doneAlready(cfg job.Config) error {
	fp, err := fingerprint(c.ctx, cfg, &c.plan)
	if err != nil {
		return err
	}
	if err := sameJobDone(cfg, fp); errors.Is(err, errAlreadyDone) {
		return err
	}
	if cfg.Force {
		if err := outpath.Check(cfg); err != nil { // the folder is writable
			return err
		}
	}
	return nil
}

// analyse has rank 0's models analyse the source and puts what the other ranks need of it
// into the plan.
func analyse(ctx context.Context, m *pipeline.Models, p *Plan) error {
	img, lm, err := m.Analyse(ctx, p.Info)
	if err != nil {
		m.Close() // Analyse opened engines: a refused target keeps none (batch-run goes on)
		return err
	}
	if img != nil {
		p.SourceW, p.SourceH, p.SourcePix, p.SourceLandmarks = img.W, img.H, img.Bytes(), lm
	} else if f, five := m.SourceFrame(); f != nil {
		p.SourceW, p.SourceH, p.SourcePix, p.SourceFive = f.W, f.H, f.Bytes(), &five
	}
	p.SourceEmbedding, p.ReferenceEmbedding = m.Embeddings()
	p.SourceClass = m.SourceClass()
	return analyseVoice(ctx, m, p)
}

// analyseVoice puts lip_syncer's voice features of the output's frames into the plan (a video
// target's; an image's frame takes FaceFusion's empty window).
func analyseVoice(ctx context.Context, m *pipeline.Models, p *Plan) error {
	if p.Spec == nil || p.voice != nil { // none, or an earlier attempt's (reuseVoice)
		return nil
	}
	t, err := m.AnalyseVoice(ctx, p.Info)
	if err != nil || t == nil {
		return err
	}
	part := t.Part(0, p.Frames.Len())
	if fm := p.Spec.Map; fm.Out.Float() > fm.In.Float() {
		// A higher output rate repeats frames: FaceFusion cuts the windows at the target's
		// rate (audio.FeatureRate), syncs the target's frames and repeats them when it merges,
		// so an output frame takes the window of the target frame it shows.
		src := make([]int, p.Frames.Len())
		for k := range src {
			src[k] = fm.Source(fm.Start+k) - fm.Start
		}
		part = t.Remap(src)
	}
	p.voice = part // cut into the ranks' parts once the work is shared (voiceParts)
	return nil
}

// voiceParts is each rank's part of p's voice features, the frames of its Work alone (from
// the first to the last: a rank's pieces are one run of frames), with their sizes in
// p.VoiceParts. nil without a voice.
func voiceParts(p *Plan) ([][]byte, error) {
	if p.voice == nil {
		return nil, nil
	}
	parts := make([][]byte, len(p.Work))
	p.VoiceParts = make([]int, len(p.Work))
	for r, pieces := range p.Work {
		lo, hi := 0, 0
		for i, pc := range pieces {
			if i == 0 || pc.Frames.Start < lo {
				lo = pc.Frames.Start
			}
			hi = max(hi, pc.Frames.End)
		}
		// The pieces count the target's frames from the trim start's; the track counts the
		// output's from 0, as the workers' frame indices do.
		b, err := p.voice.Part(lo-p.Frames.Start, hi-p.Frames.Start).MarshalBinary()
		if err != nil {
			return nil, err
		}
		parts[r], p.VoiceParts[r] = b, len(b)
	}
	return parts, nil
}

// useVoice gives the models the voice features of the plan, if any.
func useVoice(m *pipeline.Models, p *Plan) error {
	if p.Voice == nil {
		return nil
	}
	var t audio.Track
	if err := t.UnmarshalBinary(p.Voice); err != nil {
		return err
	}
	m.SetVoice(&t)
	return nil
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
func loadModels(ctx context.Context, cfg job.Config, log *logging.Logger) (*pipeline.Models, error) {
	m, err := pipeline.LoadModels(cfg, log)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil { // a stop: the engines are not opened for nothing
		m.Close()
		return nil, err
	}
	if !video.IsImagePath(cfg.TargetPath) {
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
	if err := useVoice(m, p); err != nil {
		return err
	}
	if p.SourcePix != nil && p.SourceFive != nil {
		m.SetSourceFrame(raster.Wrap(p.SourcePix, p.SourceW, p.SourceH), *p.SourceFive)
		return nil
	}
	if p.SourcePix != nil {
		return m.UseSource(raster.Wrap(p.SourcePix, p.SourceW, p.SourceH), &p.SourceLandmarks)
	}
	return nil
}
