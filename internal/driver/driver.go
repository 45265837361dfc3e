// Package driver runs one job across the ranks of a communicator: rank 0 checks the job,
// probes the target and analyses the source once and broadcasts the plan; every rank encodes
// its static share of chunks into segments in the job folder; rank 0 joins the segments,
// muxes the audio and moves the output into place. One rank is the same code with a
// single-process communicator.
package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/face"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/progress"
	"github.com/facefusion-hpc/facefusion/internal/raster"
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

	Info       *video.Info
	Frames     rank.Range
	Chunks     []rank.Range
	Assignment []rank.Range // per rank: a block of chunk indices
	JobDir     string
	Image      bool // an image target: rank 0 alone processes it

	SourceW, SourceH int
	SourcePix        []byte `json:",omitempty"`
	SourceLandmarks  face.Landmarks68
}

// MakePlan cuts frames into chunks and gives each rank a balanced contiguous block.
func MakePlan(frames rank.Range, chunkFrames, ranks int) (chunks, assignment []rank.Range) {
	chunks = rank.Chunks(frames, chunkFrames)
	return chunks, rank.Assign(len(chunks), ranks)
}

// Result is what a rank reports at the end.
type Result struct {
	Rank   int
	Frames int
	Chunks int
	Err    string     `json:",omitempty"`
	Kind   fault.Kind `json:",omitempty"`
}

// Options are the parts of a run that are not in the job config.
type Options struct {
	Log         io.Writer
	NewProgress pipeline.ProgressFunc
}

// Run executes cfg on every rank of comm; all ranks must call it. Rank 0 returns the output
// path. An error that rank 0 reports for the whole job comes back as *RemoteError on the
// other ranks.
func Run(ctx context.Context, comm collective.Comm, cfg job.Config, opt Options) (string, error) {
	me := comm.Rank()
	log := opt.Log
	if log == nil {
		log = io.Discard
	}

	// 1. Rank 0 plans; every rank learns the plan (or the reason there is none).
	var plan Plan
	var models *pipeline.Models
	if me == 0 {
		var err error
		models, err = planJob(ctx, cfg, comm.Size(), &plan)
		if err != nil {
			plan = Plan{Err: err.Error(), Kind: fault.KindOf(err)}
		}
	}
	data, err := json.Marshal(&plan)
	if err != nil {
		return "", err
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
		if me == 0 {
			return "", &fault.Error{Kind: plan.Kind, Err: errors.New(plan.Err)}
		}
		return "", &RemoteError{Kind: plan.Kind}
	}

	// 2. Every rank loads its models once; a failure anywhere stops every rank.
	if me != 0 {
		models, err = loadModels(cfg, &plan)
	}
	if err := agree(comm, err); err != nil {
		return "", err
	}

	// 3. Each rank encodes its chunks.
	jd := &lustre.JobDir{Path: plan.JobDir}
	var res Result
	res.Rank = me
	if plan.Image {
		if me == 0 {
			err = models.RunImage(cfg)
		}
	} else {
		res, err = encodeShare(ctx, comm, cfg, models, &plan, jd, opt)
	}
	if err != nil {
		res.Err, res.Kind = err.Error(), fault.KindOf(err)
		if !plan.Image {
			lustre.WriteAtomic(jd.Failed(), []byte(fmt.Sprintf("rank %d: %s\n", me, err)))
		}
	}

	// 4. Rank 0 gathers the results, joins the segments and muxes the audio.
	rb, _ := json.Marshal(&res)
	all, gerr := comm.Gather(0, rb)
	if gerr != nil {
		return "", fault.AsInternal(fmt.Errorf("gathering results: %w", gerr))
	}
	final := Result{}
	if me == 0 {
		final = finish(ctx, cfg, &plan, jd, all, log)
	}
	fb, _ := json.Marshal(&final)
	if fb, err = collective.BcastBytes(comm, 0, fb); err != nil {
		return "", fault.AsInternal(fmt.Errorf("broadcasting the outcome: %w", err))
	}
	json.Unmarshal(fb, &final)
	if final.Err != "" {
		if me == 0 {
			removeIfNoSegments(jd)
			return "", &fault.Error{Kind: final.Kind, Err: errors.New(final.Err)}
		}
		return "", &RemoteError{Kind: final.Kind}
	}
	return cfg.OutputPath, nil
}

// agree turns one rank's setup error into an error on every rank: the rank that failed
// returns its own error (and reports it); the others return a RemoteError.
func agree(comm collective.Comm, err error) error {
	v := []int64{0}
	if err != nil {
		v[0] = int64(fault.KindOf(err)) + 1
	}
	if aerr := comm.AllreduceInt64(collective.Max, v); aerr != nil {
		return fault.AsInternal(fmt.Errorf("agreeing on setup: %w", aerr))
	}
	if err != nil {
		return err
	}
	if v[0] != 0 {
		return &RemoteError{Kind: fault.Kind(v[0] - 1)}
	}
	return nil
}

// planJob is rank 0's setup: every check that can fail before work starts.
func planJob(ctx context.Context, cfg job.Config, ranks int, p *Plan) (*pipeline.Models, error) {
	if err := pipeline.CheckOutput(cfg.OutputPath, cfg.Force); err != nil {
		return nil, err
	}
	if cfg.Swaps() {
		for _, s := range cfg.SourcePaths {
			if _, err := os.Stat(s); err != nil {
				return nil, fault.AsInput(fmt.Errorf("source %s: no such file: check the path given to -s", s))
			}
		}
	}
	if _, err := os.Stat(cfg.TargetPath); err != nil {
		return nil, fault.AsInput(fmt.Errorf("target %s: no such file: check the path given to -t", cfg.TargetPath))
	}
	p.Image = pipeline.IsImagePath(cfg.TargetPath)
	if !p.Image {
		info, err := video.Probe(ctx, cfg.TargetPath)
		if err != nil {
			return nil, fault.AsInput(err)
		}
		start, end, err := pipeline.FrameRange(cfg, info.Frames)
		if err != nil {
			return nil, fault.AsInput(fmt.Errorf("target %s: %w", cfg.TargetPath, err))
		}
		p.Info = info
		p.Frames = rank.Range{Start: start, End: end}
		p.Chunks, p.Assignment = MakePlan(p.Frames, cfg.ChunkFrames, ranks)
		p.JobDir = cfg.JobDir
		if p.JobDir == "" {
			p.JobDir = lustre.DefaultPath(cfg.OutputPath)
		}
		if _, _, err := lustre.Open(p.JobDir); err != nil {
			return nil, fault.AsInput(err)
		}
		os.Remove((&lustre.JobDir{Path: p.JobDir}).Failed())
	}
	m, err := pipeline.LoadModels(cfg)
	if err != nil {
		return nil, err
	}
	img, lm, err := m.AnalyseSource()
	if err != nil {
		return nil, err
	}
	if img != nil {
		if err := m.UseSource(img, &lm); err != nil {
			return nil, err
		}
		p.SourceW, p.SourceH, p.SourcePix, p.SourceLandmarks = img.W, img.H, img.Bytes(), lm
	}
	return m, nil
}

// loadModels is a non-zero rank's setup: the models, and the source rank 0 analysed.
func loadModels(cfg job.Config, p *Plan) (*pipeline.Models, error) {
	m, err := pipeline.LoadModels(cfg)
	if err != nil {
		return nil, err
	}
	if p.SourcePix != nil {
		if err := m.UseSource(raster.Wrap(p.SourcePix, p.SourceW, p.SourceH), &p.SourceLandmarks); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// encodeShare encodes this rank's block of chunks, one segment file each.
func encodeShare(ctx context.Context, comm collective.Comm, cfg job.Config, m *pipeline.Models, p *Plan, jd *lustre.JobDir, opt Options) (Result, error) {
	me := comm.Rank()
	res := Result{Rank: me}
	block := p.Assignment[me]
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Another rank's failure stops this one within a second, without MPI traffic.
	var stopped sync.WaitGroup
	stopped.Add(1)
	go func() {
		defer stopped.Done()
		watchFailed(ctx, jd, cancel)
	}()
	defer stopped.Wait()
	defer cancel()

	// Progress: rank 0 shows every rank's frames, read from their progress files, so no rank
	// waits for another to report.
	var counter progress.Counter = progress.Nop{}
	var done int64
	var mu sync.Mutex
	stopReport := startReporting(ctx, comm, jd, p, opt, &mu, &done)
	defer stopReport()
	counter = progressFunc(func(n int) { mu.Lock(); done += int64(n); mu.Unlock() })

	if block.Empty() {
		return res, nil
	}
	workers, err := m.Workers(cfg.Threads(comm.LocalSize()))
	if err != nil {
		return res, err
	}
	defer pipeline.CloseWorkers(workers)
	for c := block.Start; c < block.End; c++ {
		ch := p.Chunks[c]
		tmp := jd.SegmentTemp(c, me)
		n, err := pipeline.EncodeRange(ctx, cfg, p.Info, ch.Start, ch.End, tmp, workers, counter)
		if err == nil {
			err = os.Rename(tmp, jd.Segment(c))
		}
		if err != nil {
			os.Remove(tmp)
			if ctx.Err() != nil {
				if _, ferr := os.Stat(jd.Failed()); ferr == nil {
					return res, &RemoteError{Kind: fault.Internal}
				}
			}
			if comm.Size() > 1 {
				return res, fmt.Errorf("rank %d, chunk %d: %w", me, c, err)
			}
			return res, fmt.Errorf("chunk %d: %w", c, err)
		}
		res.Frames += n
		res.Chunks++
	}
	return res, nil
}

type progressFunc func(int)

func (f progressFunc) Add(n int) { f(n) }

func watchFailed(ctx context.Context, jd *lustre.JobDir, cancel func()) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := os.Stat(jd.Failed()); err == nil {
				cancel()
				return
			}
		}
	}
}

// startReporting writes this rank's progress file once a second; on rank 0 it also feeds the
// sum over all ranks into the progress display.
func startReporting(ctx context.Context, comm collective.Comm, jd *lustre.JobDir, p *Plan, opt Options, mu *sync.Mutex, done *int64) func() {
	me := comm.Rank()
	os.MkdirAll(filepath.Dir(jd.Progress(me)), 0o755)
	var show progress.Counter = progress.Nop{}
	closeShow := func() {}
	if me == 0 && opt.NewProgress != nil {
		show, closeShow = opt.NewProgress(p.Frames.Len())
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	shown := int64(0)
	tick := func() {
		mu.Lock()
		mine := *done
		mu.Unlock()
		lustre.WriteAtomic(jd.Progress(me), []byte(strconv.FormatInt(mine, 10)))
		if me != 0 {
			return
		}
		total := mine
		for r := 1; r < comm.Size(); r++ {
			if b, err := os.ReadFile(jd.Progress(r)); err == nil {
				n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
				total += n
			}
		}
		if total > shown {
			show.Add(int(total - shown))
			shown = total
		}
	}
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				tick()
			case <-stop:
				tick()
				return
			}
		}
	}()
	return func() {
		close(stop)
		wg.Wait()
		closeShow()
	}
}

// finish is rank 0's end of the job: check every rank's result, join, mux, commit.
func finish(ctx context.Context, cfg job.Config, p *Plan, jd *lustre.JobDir, all [][]byte, log io.Writer) Result {
	fail := func(err error) Result { return Result{Err: err.Error(), Kind: fault.KindOf(err)} }
	var first *Result // the first real cause; a rank stopped by another's failure is not one
	frames := 0
	for _, b := range all {
		var r Result
		if err := json.Unmarshal(b, &r); err != nil {
			return fail(fault.AsInternal(fmt.Errorf("decoding a rank's result: %w", err)))
		}
		frames += r.Frames
		remote := r.Err == (&RemoteError{}).Error()
		if r.Err != "" && (first == nil || (!remote && first.Err == (&RemoteError{}).Error())) {
			rc := r
			first = &rc
		}
	}
	if first != nil {
		msg := first.Err
		if first.Rank != 0 && !strings.HasPrefix(msg, "rank ") {
			msg = fmt.Sprintf("rank %d: %s", first.Rank, msg)
		}
		return Result{Err: msg, Kind: first.Kind}
	}
	if p.Image {
		return Result{}
	}
	if frames != p.Frames.Len() {
		return fail(fault.AsInternal(fmt.Errorf("the ranks encoded %d frames of %d", frames, p.Frames.Len())))
	}
	segs := make([]string, len(p.Chunks))
	for i := range p.Chunks {
		segs[i] = jd.Segment(i)
	}
	joined := pipeline.TempPath(cfg.OutputPath, "joined") + ".mkv"
	final := pipeline.TempPath(cfg.OutputPath, "part")
	defer os.Remove(joined)
	defer os.Remove(final)
	joinStart := time.Now() // the serial tail of a run: the benchmark reports its share
	if err := video.Concat(ctx, segs, joined); err != nil {
		return fail(fault.AsInternal(err))
	}
	if err := video.Mux(ctx, joined, cfg.TargetPath, video.FrameSpan(p.Frames.Start, p.Frames.End, p.Info.FPS), final); err != nil {
		return fail(fault.AsInternal(err))
	}
	if err := pipeline.Commit(final, cfg.OutputPath, cfg.Force); err != nil {
		return fail(err)
	}
	fmt.Fprintf(log, "facefusion: %d frames in %d chunks joined into %s (concat and mux %.2f s)\n", frames, len(p.Chunks), cfg.OutputPath, time.Since(joinStart).Seconds())
	os.RemoveAll(jd.Path)
	return Result{}
}

// removeIfNoSegments deletes a failed job's folder when it holds no finished segment: nothing
// would be lost, and nothing is left for the user to clean up.
func removeIfNoSegments(jd *lustre.JobDir) {
	if jd.Path == "" {
		return
	}
	if segs, _ := filepath.Glob(filepath.Join(jd.Path, "seg-*.mkv")); len(segs) == 0 {
		os.RemoveAll(jd.Path)
	}
}
