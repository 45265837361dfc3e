package driver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/join"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/outpath"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// gather is the phase where rank 0 gathers every rank's result (all, on rank 0 alone).
func (a *attempt) gather(res Result) ([][]byte, error) {
	all, gerr := a.comm.Gather(0, encodeResult(&res))
	a.stopWatch()
	if gerr != nil {
		return nil, fault.AsInternal(fmt.Errorf("gathering results: %w", gerr))
	}
	return all, nil
}

// join is the phase where rank 0 checks the results, checkpoints them and, when every chunk is
// done, joins the segments and muxes the audio, with every rank's part in the parallel join and
// the output's hash. The Result is rank 0's outcome (the zero value on the other ranks).
func (a *attempt) join(all [][]byte) (Result, error) {
	if a.coord != nil {
		return a.coord.conclude(all)
	}
	if err := join.Serve(a.ctx, a.comm, a.log); err != nil {
		return Result{}, fault.AsInternal(err)
	}
	return Result{}, nil
}

// end is the phase where every rank learns rank 0's outcome and returns it as its own.
func (a *attempt) end(final Result) (string, error) {
	a.ck().end(final.Err != "" && !final.Stopped, a.log)
	fb, err := collective.BcastBytes(a.comm, 0, encodeResult(&final))
	if err != nil {
		return "", fault.AsInternal(fmt.Errorf("broadcasting the outcome: %w", err))
	}
	decodeResult(fb, &final)
	if err := final.err(a.me == 0); err != nil {
		return "", err
	}
	return a.cfg.OutputPath, nil
}

// conclude is rank 0's end of the attempt: the outcome, said and recorded before the
// broadcast lets the other ranks exit. The other ranks leave the join's and the hash's
// protocols however the attempt ended.
func (c *coordinator) conclude(all [][]byte) (Result, error) {
	final := c.finish(all)
	if err := c.pj.Release(); err != nil {
		return Result{}, fault.AsInternal(err)
	}
	final.Printed = final.Err != "" && (final.Stopped || c.ctx.Err() == nil) && say(c.opt, final.Err)
	c.record(final.err(true)) // before the broadcast lets the other ranks exit
	return final, nil
}

// gathered is what rank 0 makes of the ranks' results.
type gathered struct {
	first     *Result // the first real cause; a rank stopped by another's failure is not one
	recs      []lustre.Chunk
	stats     []report.Rank
	stopped   bool
	imageStop string // the stop's reason, an image's
	work      float64
}

// collect decodes the ranks' results. A rank's failure is the job's cause unless it is
// another's failure as that rank saw it (Remote) and a rank reported a real one. On a result
// that cannot be decoded, what came before it is kept for the report.
func collect(all [][]byte) (g gathered, err error) {
	for _, b := range all {
		var r Result
		if err := decodeResult(b, &r); err != nil {
			return g, fault.AsInternal(fmt.Errorf("decoding a rank's result: %w", err))
		}
		g.recs = append(g.recs, r.Done...)
		g.stats = append(g.stats, r.Stats)
		g.stopped = g.stopped || r.Stopped
		if r.Stopped {
			g.imageStop = r.StopReason
		}
		g.work += r.CheckpointWork
		if r.Err != "" && (g.first == nil || (!r.Remote && g.first.Remote)) {
			rc := r
			g.first = &rc
		}
	}
	return g, nil
}

// cause is the job's error from the rank that failed first, named by its rank.
func (r *Result) cause() Result {
	msg := r.Err
	if r.Rank != 0 && !r.Named {
		msg = fmt.Sprintf("rank %d: %s", r.Rank, msg)
	}
	return Result{Err: msg, Kind: r.Kind}
}

// finish checks every rank's result, checkpoints what they finished, and, when every chunk is
// done, joins, muxes and commits.
func (c *coordinator) finish(all [][]byte) Result {
	g, err := collect(all)
	c.rec.perRank = append(c.rec.perRank, g.stats...)
	if err != nil {
		return fail(err)
	}
	if c.plan.Image {
		return c.finishImage(g)
	}
	// The checkpoint round of the attempt's end: what the ranks gathered goes into the manifest.
	outcome := lustre.Running
	switch {
	case g.first != nil:
		outcome = lustre.Failed
	case g.stopped || c.ctx.Err() != nil:
		outcome = lustre.Checkpointed
	}
	cerr := c.ck.save(g.recs, outcome)
	if g.first != nil {
		return g.first.cause()
	}
	if cerr != nil {
		return fail(cerr)
	}
	if outcome == lustre.Checkpointed {
		return c.stopAt(len(g.recs))
	}
	return c.joinAll(g)
}

// finishImage is the end of an image: its output is in place unless a rank failed or stopped.
func (c *coordinator) finishImage(g gathered) Result {
	if g.first != nil {
		return Result{Err: g.first.Err, Kind: g.first.Kind}
	}
	if g.stopped {
		return stopResult(c.cfg, 0, g.imageStop, kept{})
	}
	c.rec.hashOutput(c.log)
	return Result{}
}

// stopAt is the end of an attempt stopped by a signal (or the job's clock) after its ranks
// finished newChunks chunks: the manifest records the stop.
func (c *coordinator) stopAt(newChunks int) Result {
	ck, p, jd := c.ck, &c.plan, c.jd
	r := stopResult(c.cfg, c.margin, stopReason(c.ctx, jd), kept{newChunks, len(ck.m.Done), len(p.Chunks), ck.m.DoneFrames(), p.Frames.Len(), jd.Path, false, p.voiceSaved, jd.Voice()})
	ck.m.Attempts[len(ck.m.Attempts)-1].Stop = r.StopWords
	ck.save(nil, lustre.Checkpointed)
	return r
}

// joinAll is the end of an attempt that finished every chunk: the counts checked and said,
// the segments checked, then the join.
func (c *coordinator) joinAll(g gathered) Result {
	ctx, cfg, p, jd, ck, log := c.ctx, c.cfg, &c.plan, c.jd, c.ck, c.log
	stop := func() Result { return c.stopAt(len(g.recs)) }
	frames := ck.m.DoneFrames()
	if len(ck.m.Done) != len(p.Chunks) || frames != p.Frames.Len() {
		return fail(fault.AsInternal(fmt.Errorf("the manifest %s holds %d of %d chunks (%d of %d frames) after every rank finished", jd.Manifest(), len(ck.m.Done), len(p.Chunks), frames, p.Frames.Len())))
	}
	log.Infof("checkpoint: %d chunk(s) recorded this attempt, %d manifest write(s), %.3f s of checkpoint work (hashing, journals, manifest)",
		len(g.recs), ck.writes, g.work+ck.work.Seconds())
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
	j := &joinEnd{ctx: ctx, cfg: cfg, p: p, jd: jd, log: log, ck: ck, rec: c.rec, pj: c.pj, frames: frames, stop: stop}
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
	if err := video.CheckWholeFile(ctx, temp.File, video.Whole{Frames: j.frames, Width: w, Height: h, Carried: p.Spec.Carried.Keep, Audio: p.Spec.Audio.Source != ""}); err != nil {
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
