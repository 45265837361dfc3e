package driver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/join"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/metrics"
	"github.com/facefusion-hpc/facefusion/internal/outpath"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// ReportStages are the stage names of a rank's report, in order: the pipeline's, then the
// driver's own (checkpoint work on every rank; rank 0's join: the segments joined and the
// target's other streams muxed in one ffmpeg run; the rank's share of the output's hash, rank
// 0's whole part of it; the start-up: SetupStages).
var ReportStages = append(append(pipeline.StageNames[:], "checkpoint", "join", "hash"), SetupStages...)

// SetupStages are a rank's start-up, wall times before its first frame: plan is rank 0's (its
// checks, probe, model load, source analysis, job folder claim and fingerprint); load is the
// rank's model load (rank 0's inside its plan, with its analysis of the source; the other
// ranks' while rank 0 plans); setup runs from the start of the job to every rank's agreement
// that it is ready (the longer of plan and load, with the broadcast between).
var SetupStages = []string{"plan", "load", "setup"}

// cpuReason is the report's GPU field when the job asks for no GPU provider.
const cpuReason = "CPU execution: execution_providers names no GPU provider"

// runRecord is rank 0's record of a run, filled in as the run goes and written once, at its
// end, whatever the end: as the run report and the final metrics file.
type runRecord struct {
	cfg     job.Config
	opt     Options
	ranks   int
	start   time.Time
	plan    *Plan
	ck      *checkpointer // nil until the job folder is claimed (never for an image)
	perRank []report.Rank
	outSize int64
	outSum  string
	written bool
}

// rankStats is rank me's share of the attempt for the report: its counts, its stages' busy
// time (checkpoint work included) and its GPU.
func rankStats(me int, m *pipeline.Models, res *Result, began time.Time, gpu rank.GPUStats) report.Rank {
	host, _ := os.Hostname()
	r := report.Rank{Rank: me, Host: host, Frames: res.Frames, Chunks: res.Chunks, Seconds: time.Since(began).Seconds(), GPU: &gpu,
		StageSeconds: make(map[string]float64, len(ReportStages))}
	for _, s := range ReportStages {
		r.StageSeconds[s] = 0
	}
	if m != nil {
		snap := m.Stats().Snapshot()
		for s, v := range snap.Seconds {
			r.StageSeconds[s] = v
		}
		r.FacesFound, r.FacesSwapped, r.FacesEnhanced = snap.FacesFound, snap.FacesSwapped, snap.FacesEnhanced
		r.FacesAgeModified, r.FacesDeepSwapped = snap.FacesAgeModified, snap.FacesDeepSwapped
		r.FacesExpressionRestored = snap.FacesExpressionRestored
		r.FacesEdited = snap.FacesEdited
		r.FacesLipSynced = snap.FacesLipSynced
		r.Identity = m.IdentitySums()
	}
	r.StageSeconds["checkpoint"] = res.CheckpointWork
	if r.Seconds > 0 {
		r.FramesPerSecond = float64(r.Frames) / r.Seconds
	}
	return r
}

// startGPU starts this rank's GPU sampler: over its bound GPU, or nothing when the job runs
// on the CPU or there is no GPU (the stats then say why).
func startGPU(opt Options) *rank.Sampler {
	if opt.GPU == nil {
		return rank.StartSampler(nil, rank.GPUStats{Reason: cpuReason}, time.Second)
	}
	src, base := rank.OpenGPU(*opt.GPU)
	return rank.StartSampler(src, base, time.Second)
}

// report is the run's report for the end err (what Run returns on rank 0).
func (rr *runRecord) report(ctx context.Context, err error) *report.Report {
	cfg := rr.cfg
	outcome := lustre.Complete
	var stopped *Stopped
	switch {
	case errors.As(err, &stopped):
		outcome = lustre.Checkpointed
	case err != nil:
		outcome = lustre.Failed
	}
	var rep *report.Report
	if rr.ck != nil && rr.ck.m != nil {
		rr.ck.mu.Lock()
		rep = report.New(rr.ck.m, cfg.OutputPath, rr.ck.jd.Path, outcome)
		rr.ck.mu.Unlock()
	} else {
		rep = &report.Report{Version: report.Version, Outcome: outcome, Output: cfg.OutputPath, Target: cfg.TargetPath,
			Finished: time.Now().UTC(), Seconds: time.Since(rr.start).Seconds(), LastSeconds: time.Since(rr.start).Seconds()}
		if rr.plan != nil {
			rep.JobDir, rep.FrameStart, rep.FrameEnd, rep.Chunks = rr.plan.JobDir, rr.plan.Frames.Start, rr.plan.Frames.End, len(rr.plan.Chunks)
		}
	}
	rep.ExitStatus = ExitStatus(ctx, err)
	if err != nil {
		rep.Error = err.Error()
	}
	if cfg.ReadsSources() {
		rep.Sources = cfg.SourcePaths
	}
	rep.Slurm = report.SlurmFromEnv(os.Getenv)
	rep.Ranks = rr.ranks
	seen := map[string]bool{}
	for _, r := range rr.perRank {
		if r.Host != "" && !seen[r.Host] {
			seen[r.Host] = true
			rep.Hosts = append(rep.Hosts, r.Host)
		}
	}
	if len(rr.perRank) > 0 {
		rep.PerRank = rr.perRank
		t := report.Rank{Rank: -1, StageSeconds: map[string]float64{}, Seconds: rep.LastSeconds}
		for _, r := range rr.perRank {
			t.Frames += r.Frames
			t.FacesFound += r.FacesFound
			t.FacesSwapped += r.FacesSwapped
			t.FacesEnhanced += r.FacesEnhanced
			t.FacesAgeModified += r.FacesAgeModified
			t.FacesDeepSwapped += r.FacesDeepSwapped
			t.FacesExpressionRestored += r.FacesExpressionRestored
			t.FacesEdited += r.FacesEdited
			t.FacesLipSynced += r.FacesLipSynced
			for s, v := range r.StageSeconds {
				t.StageSeconds[s] += v
			}
			if r.Identity != nil {
				if t.Identity == nil {
					t.Identity = &lustre.IdentitySums{}
				}
				t.Identity.Add(*r.Identity)
			}
		}
		if t.Identity != nil && (rr.ck == nil || rr.ck.m == nil) {
			rep.Identity = report.Means(*t.Identity) // an image's: a video's is its chunks' (below)
		}
		if t.Seconds > 0 {
			t.FramesPerSecond = float64(t.Frames) / t.Seconds
		}
		rep.Totals = &t
	}
	if rr.ck != nil && rr.ck.m != nil {
		rr.ck.mu.Lock()
		if sums, partial := rr.ck.m.DoneIdentity(); sums != nil {
			if rep.Identity = report.Means(*sums); rep.Identity != nil {
				rep.Identity.Partial = partial
			}
		}
		rr.ck.mu.Unlock()
	}
	if outcome == lustre.Complete {
		rep.OutputBytes = rr.outSize
		if rr.outSum != "" {
			rep.OutputBlocksSHA256, rep.OutputHashBlock = rr.outSum, lustre.HashBlockBytes
		} else if st, err := os.Stat(rr.cfg.OutputPath); err == nil { // its hash failed: its size still
			rep.OutputBytes = st.Size()
		}
	}
	return rep
}

// write writes the report and the final metrics file for the end err, once. A run refused as
// busy writes neither (they are the running job's); a failed run never replaces the report of
// a finished output (the output is still there, unchanged). A file that cannot be written is
// one warning: never a second error. recorded is false when a report was due and could not be
// written.
func (rr *runRecord) write(ctx context.Context, err error, log *logging.Logger) (recorded bool) {
	if rr == nil || rr.written || fault.KindOf(err) == fault.Busy && err != nil {
		return true
	}
	rr.written = true
	if outpath.CheckNoInput(rr.cfg) != nil {
		return true // a record would land on an input, the output or a device: the run was refused for it
	}
	recorded = true
	rep := rr.report(ctx, err)
	if id := rep.Identity; id != nil {
		log.Debugf("identity (%s, %d swapped faces of every %dth frame, cosine similarity): output to source %.4f, target to source %.4f (before the swap), output to target %.4f",
			id.Recognizer, id.Faces, id.Every, id.After, id.Before, id.ToTarget)
	}
	path := outpath.ReportFile(rr.cfg)
	switch {
	case err != nil && !isDir(filepath.Dir(path)):
		// A run refused for its output folder (missing, a file): its error line says so already.
	case rep.Outcome == lustre.Complete || report.Replaceable(path):
		if werr := rep.WriteTo(path); werr != nil {
			log.Warnf("the run report %s could not be written: %v", path, werr)
			recorded = false
		}
	}
	if mp := rr.cfg.MetricsPath; mp != "" && (err == nil || isDir(filepath.Dir(mp))) {
		if werr := metrics.Write(rr.cfg.MetricsPath, metrics.Report(metrics.OriginFromEnv(), rep, time.Now()), rr.opt.extraMetrics()); werr != nil {
			log.Warnf("the metrics file %s could not be written: %v", rr.cfg.MetricsPath, werr)
		}
	}
	if err == nil && rr.opt.Done != nil {
		rr.opt.Done(rep)
	}
	return recorded
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// metricsEvery is how often rank 0 rewrites the metrics file while the job runs.
const metricsEvery = 5 * time.Second

// hashOutput records an image output's size and block hash, on rank 0 alone (the other ranks
// have no part in an image).
func (rr *runRecord) hashOutput(log *logging.Logger) { rr.hashOutputAt(rr.cfg.OutputPath, log) }

// hashOutputAt is hashOutput of the file at path.
func (rr *runRecord) hashOutputAt(path string, log *logging.Logger) {
	start := time.Now()
	size, sum, err := lustre.HashFileBlocks(path)
	rr.perRank[0].StageSeconds["hash"] = time.Since(start).Seconds()
	if err != nil {
		log.Warnf("the output is in place, but it could not be hashed for its run report: %v", err)
		return
	}
	rr.outSize, rr.outSum = size, sum
}

// hashShared records the size and block hash of the joined output f, before its rename,
// computed by every rank (join.Coordinator.HashShared), and each rank's time in it. err is a
// collective's failure; a hash that fails is a warning and no hash in the report.
func (rr *runRecord) hashShared(pj *join.Coordinator, f *os.File, log *logging.Logger) error {
	h, err := pj.HashShared(f, log)
	for r := 0; r < len(h.Seconds) && r < len(rr.perRank); r++ {
		rr.perRank[r].StageSeconds["hash"] = h.Seconds[r]
	}
	if h.Failed != "" {
		log.Warnf("the output's hash for its run report could not be computed (the report will have none): %s", h.Failed)
	}
	rr.outSize, rr.outSum = h.Size, h.Sum
	return err
}

// hashedInJoin records the output's size and block hash as the parallel join computed them
// (its ranks' time in it is their stage "join": the hash is part of the copy, and their stage
// "hash" stays 0). Where the chain could not give every block's sum (a rank's message lost),
// rank 0 hashes the open output f itself: the other ranks have gone on.
func (rr *runRecord) hashedInJoin(h join.Hash, f *os.File, log *logging.Logger) {
	if h.Failed == "" {
		rr.outSize, rr.outSum = h.Size, h.Sum
		return
	}
	log.Warnf("output hash: the join's hash is incomplete (%s): rank 0 reads the output to hash it", h.Failed)
	start := time.Now()
	size, sum, err := lustre.HashOpenBlocks(f)
	rr.perRank[0].StageSeconds["hash"] = time.Since(start).Seconds()
	if err != nil {
		log.Warnf("the output could not be hashed for its run report: %v", err)
		return
	}
	rr.outSize, rr.outSum = size, sum
}
