package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/facefusion-hpc/facefusion/internal/driver"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/models/catalog"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/internal/scaling"
	"github.com/facefusion-hpc/facefusion/internal/spec"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

const planUsage = `usage: facefusion plan -t TARGET --ranks N [model flags] [run flags]
       facefusion plan --frames F --ranks N [model flags] [run flags]

Prints how a run over N ranks would split TARGET: the trimmed frame range, the chunks (one
segment file each), each rank's even share of the frames (no rank more than one frame over
another), the chunks it encodes and the chunks it shares with the ranks beside it. It takes run's
flags (--chunk-frames, --trim-frame-start, --trim-frame-end, --output-video-fps,
--output-video-scale, --config FILE, --config-path INI, …) with run's precedence: FaceFusion's
facefusion.ini from the working folder (or --config-path), then the job file, then the flags.
With --output-video-fps the frames are the output's, resampled from the trimmed range before
they are split. Nothing is decoded or written; only ffprobe runs.

Then it models the run (docs/cluster.md, "Scaling model"): the expected wall time, the parallel
efficiency and the serial share (start-up, join, mux, output hash), from measured costs. With
--frames F instead of -t, a target of F frames is modelled without a file.

model flags:
  --costs REPORT            a finished run's report (OUTPUT.report.json): its per-frame cost,
                            plan, model load, join and mux per byte, bytes per frame; default:
                            a 2-rank run of the demo clip on the CI machine (built in)
  --frame-size WxH          the frame size at scale; default: the output's (-t), else the
                            measured run's. The per-frame cost and bytes scale with pixels
  --frame-seconds S         a rank's seconds per frame measured at scale (a GPU node's),
                            instead of the measured cost scaled by pixels
  --bytes-per-frame B       output bytes per frame at scale; default: measured, scaled by pixels
  --model-bytes B           the model files every node reads at start-up (rank 0 alone with
                            the broadcast); default: the job's, each file's size here, else
                            FaceFusion's published size
  --fs-bandwidth GB/s       the shared file system's aggregate read bandwidth (default 20)
  --client-bandwidth GB/s   rank 0's node's bandwidth to it, for the join and mux (default 2)
  --ranks-per-node K        ranks sharing a node's page cache (default 4)
  --network-bandwidth GB/s  the nodes' network, for the model broadcast (default 12.5)
  --slots K                 ranks that run at once without sharing cores or a GPU (default: all)
  --launch S                launcher and MPI start-up seconds (default 1.3, measured here)
`

// planFlags are plan's own flags, taken out before run's parser sees the rest.
var planFlags = []string{"ranks", "frames", "costs", "frame-size", "frame-seconds", "bytes-per-frame", "model-bytes",
	"fs-bandwidth", "client-bandwidth", "ranks-per-node", "network-bandwidth", "slots", "launch"}

// The largest job plan models: a row per rank and per chunk is kept, so absurd values must be
// refused rather than exhaust the memory. Ranks and frames are bounded as a job folder's files
// are (lustre), so that a plan the model takes is one a run can record.
const (
	planMaxRanks  = lustre.MaxRanks
	planMaxFrames = lustre.MaxFrames
	planMaxChunks = 1 << 24
)

// cmdPlan is `facefusion plan`: the static partition a run would use, without running it.
// Its flags are run's (one flag table, one parser), plus --ranks.
func cmdPlan(ctx context.Context, args []string, w io.Writer) error {
	own, rest, err := takeFlags(args, planFlags)
	if err != nil {
		return fault.AsUsage(fmt.Errorf("plan: %v (see facefusion plan --help)", err))
	}
	ranks, err := own.int("ranks", 0)
	if err != nil {
		return fault.AsUsage(fmt.Errorf("plan: %v", err))
	}
	cfg, err := job.ParseLoose(rest)
	if errors.Is(err, job.ErrHelp) {
		fmt.Fprint(os.Stderr, planUsage)
		return nil
	}
	if err != nil {
		return fault.AsUsage(fmt.Errorf("plan: %w", err))
	}
	_, byFrames := own["frames"]
	switch { // every value was checked as run checks it; what plan needs besides
	case cfg.TargetPath == "" && !byFrames:
		return fault.AsUsage(errors.New("plan: give the target video (-t FILE) or its frame count (--frames F)"))
	case cfg.TargetPath != "" && byFrames:
		return fault.AsUsage(errors.New("plan: give -t FILE or --frames F, not both (with -t the frames are the target's)"))
	case ranks < 1:
		return fault.AsUsage(fmt.Errorf("plan: --ranks %d: give the number of ranks the run will have (at least 1)", ranks))
	case ranks > planMaxRanks:
		return fault.AsUsage(fmt.Errorf("plan: --ranks %d: at most %d (the model keeps a row per rank)", ranks, planMaxRanks))
	}
	if byFrames {
		n, err := own.int("frames", 0)
		switch {
		case err != nil:
		case n < 1:
			err = fmt.Errorf("--frames %d: give the target's frame count (at least 1)", n)
		case n > planMaxFrames:
			err = fmt.Errorf("--frames %d: at most %d (over 2 years of video at 25 fps)", n, planMaxFrames)
		case (n+cfg.ChunkFrames-1)/cfg.ChunkFrames > planMaxChunks:
			err = fmt.Errorf("--frames %d in chunks of %d is over %d chunks (the model keeps a row per chunk): raise --chunk-frames", n, cfg.ChunkFrames, planMaxChunks)
		}
		if err != nil {
			return fault.AsUsage(fmt.Errorf("plan: %v", err))
		}
		frames := rank.Range{Start: 0, End: n}
		chunks, split := driver.MakePlan(frames, cfg.ChunkFrames, ranks)
		model, err := modelRun(ctx, cfg, own, shares(split), len(chunks), [2]int{}, spec.ParallelContainer(cfg))
		if err != nil {
			return err
		}
		writeFrames(w, frames, cfg.ChunkFrames, chunks, split)
		model(w)
		return nil
	}
	if _, err := os.Stat(cfg.TargetPath); err != nil {
		return fault.AsInput(fmt.Errorf("target %s: no such file: check the path given to -t", cfg.TargetPath))
	}
	if video.IsImagePath(cfg.TargetPath) {
		fmt.Fprintf(w, "target  %s: an image; rank 0 processes it alone and the other %d rank(s) idle\n", cfg.TargetPath, ranks-1)
		return nil
	}
	info, err := video.Probe(ctx, cfg.TargetPath)
	if err != nil {
		return fault.AsInput(err)
	}
	sp, err := spec.Resolve(cfg, info)
	if err != nil {
		return err
	}
	m := sp.Map
	start, end := m.Output()
	frames := rank.Range{Start: start, End: end}
	chunks, split := driver.MakePlan(frames, cfg.ChunkFrames, ranks)
	output := ""
	ow, oh := sp.OutputSize()
	if m.Resampled() || cfg.OutputVideoScale != 1 || cfg.FrameScale() != 1 {
		output = fmt.Sprintf("%d frames, %dx%d, %v fps", m.Frames(), ow, oh, m.Out)
		if m.Resampled() {
			output += fmt.Sprintf(": the target's frames [%d,%d) resampled; frame numbers below count the output's frames from %d", m.Start, m.End, m.Start)
		}
		if s := cfg.FrameScale(); s != 1 {
			pw, ph := sp.ProcessSize()
			ew, eh := sp.EncodedFrameSize()
			output += fmt.Sprintf("; frame_enhancer upscales the %dx%d frames to %dx%d (×%d), which the encoder scales to the output's size", pw, ph, ew, eh, s)
		}
	}
	parallel, _ := sp.ParallelJoin()
	ew, eh := sp.EncodedFrameSize()
	model, err := modelRun(ctx, cfg, own, shares(split), len(chunks), [2]int{ow * oh, ew * eh}, parallel)
	if err != nil {
		return err
	}
	writePlan(w, cfg.TargetPath, info, frames, cfg.ChunkFrames, chunks, split, output)
	fmt.Fprintln(w)
	model(w)
	return nil
}

// ownFlags are plan's own flags' values, by name without the dashes.
type ownFlags map[string]string

// takeFlags takes the flags named (--name V or --name=V) out of args.
func takeFlags(args, names []string) (ownFlags, []string, error) {
	own, rest := ownFlags{}, make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a, taken := args[i], false
		for _, n := range names {
			switch {
			case a == "--"+n || a == "-"+n:
				if i+1 >= len(args) {
					return nil, nil, fmt.Errorf("--%s needs a value", n)
				}
				own[n], taken = args[i+1], true
				i++
			case strings.HasPrefix(a, "--"+n+"="):
				own[n], taken = strings.TrimPrefix(a, "--"+n+"="), true
			}
			if taken {
				break
			}
		}
		if !taken {
			rest = append(rest, a)
		}
	}
	return own, rest, nil
}

// int is flag name as a whole number; def when it is not given.
func (f ownFlags) int(name string, def int) (int, error) {
	v, ok := f[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("--%s %q is not a whole number", name, v)
	}
	return n, nil
}

// float is flag name as a number; def when it is not given.
func (f ownFlags) float(name string, def float64) (float64, error) {
	v, ok := f[name]
	if !ok {
		return def, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("--%s %q is not a number", name, v)
	}
	return x, nil
}

// shares are the frames each rank gets under the run's partition.
func shares(split [][]rank.Piece) []int {
	out := make([]int, len(split))
	for r, pieces := range split {
		out[r] = rank.Frames(pieces)
	}
	return out
}

// writePlan prints the plan as two aligned tables: per rank, then per chunk. The rank table
// comes first because it is what a user sizing a job looks at; the chunk table names the
// segment files a rerun or a failure message refers to. output describes an output resampled
// or scaled from the target ("": the target's rate and size).
func writePlan(w io.Writer, target string, info *video.Info, frames rank.Range, chunkFrames int, chunks []rank.Range, split [][]rank.Piece, output string) {
	audio := "no audio"
	if info.HasAudio {
		audio = "audio"
	}
	fmt.Fprintf(w, "target  %s: %d frames, %dx%d, %v fps, %s\n", target, info.Frames, info.Width, info.Height, info.FPS, audio)
	if output != "" {
		fmt.Fprintf(w, "output  %s\n", output)
	}
	writeFrames(w, frames, chunkFrames, chunks, split)
	fmt.Fprintln(w)

	// Per rank: its frames, the chunks it encodes, and the chunks it shares: a chunk whose
	// frames fall on several ranks is encoded by the rank holding its first frame, which the
	// others send their frames of it.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tframes\tcount\tencodes\tshared")
	sharers := make([][]int, len(chunks)) // per chunk: every rank with frames of it
	for r, pieces := range split {
		if len(pieces) == 0 {
			fmt.Fprintf(tw, "%d\t-\t0\t-\t-\n", r)
			continue
		}
		span := rank.Range{Start: pieces[0].Frames.Start, End: pieces[len(pieces)-1].Frames.End}
		enc := rank.Range{Start: -1}
		var shared []string
		for _, pc := range pieces {
			sharers[pc.Chunk] = append(sharers[pc.Chunk], r)
			if pc.Owner == r {
				if enc.Start < 0 {
					enc.Start = pc.Chunk
				}
				enc.End = pc.Chunk + 1
			}
			switch {
			case pc.Owner != r:
				shared = append(shared, fmt.Sprintf("sends %d of chunk %d to rank %d", pc.Frames.Len(), pc.Chunk, pc.Owner))
			case pc.Shared(chunks):
				shared = append(shared, fmt.Sprintf("takes %d of chunk %d from rank(s) after it", chunks[pc.Chunk].Len()-pc.Frames.Len(), pc.Chunk))
			}
		}
		encodes, sh := "-", "-"
		if enc.Start >= 0 {
			encodes = fmt.Sprintf("chunks %v", enc)
		}
		if len(shared) > 0 {
			sh = strings.Join(shared, "; ")
		}
		fmt.Fprintf(tw, "%d\t%v\t%d\t%s\t%s\n", r, span, rank.Frames(pieces), encodes, sh)
	}
	tw.Flush()
	fmt.Fprintln(w)

	fmt.Fprintln(tw, "chunk\tframes\tcount\trank\tshared with")
	for c, ch := range chunks {
		with := "-"
		if len(sharers[c]) > 1 {
			with = fmt.Sprint(sharers[c][1:])
		}
		fmt.Fprintf(tw, "%d\t%v\t%d\t%d\t%s\n", c, ch, ch.Len(), sharers[c][0], with)
	}
	tw.Flush()
}

// writeFrames prints the frames line of both forms of plan (-t and --frames) and, under it, how
// many ranks the split leaves without a frame.
func writeFrames(w io.Writer, frames rank.Range, chunkFrames int, chunks []rank.Range, split [][]rank.Piece) {
	fmt.Fprintf(w, "frames  %v: %d frames in %d chunk(s) of %d, over %d rank(s)\n", frames, frames.Len(), len(chunks), chunkFrames, len(split))
	idle := 0
	for _, pieces := range split {
		if len(pieces) == 0 {
			idle++
		}
	}
	if idle > 0 {
		fmt.Fprintf(w, "note    %d rank(s) get no frame: they take part in the run but process nothing; use fewer ranks\n", idle)
	}
}

// modelRun models a run whose ranks get shares frames, in segments chunks, and returns what
// prints it; pixels are the output's frame size (0: none known, the measured run's unless
// --frame-size says) and the size the frames are worked at (0: the same), parallel whether the output is joined in parallel (the spec's answer).
// Every model flag is checked here, before anything is printed.
func modelRun(ctx context.Context, cfg job.Config, own ownFlags, shares []int, segments int, pixels [2]int, parallel bool) (func(io.Writer), error) {
	bad := func(err error) error { return fault.AsUsage(fmt.Errorf("plan: %v", err)) }
	launch, err := own.float("launch", -1)
	if err != nil {
		return nil, bad(err)
	}
	costs := scaling.Measured
	if path, ok := own["costs"]; ok {
		if costs, err = readCosts(ctx, path, launch); err != nil {
			return nil, err
		}
	}
	// pixels: the output's frame size, and the size the frames are worked at (larger with
	// frame_enhancer's upscale, whose model the measured costs do not hold: --frame-seconds).
	s := scaling.Scale{Ranks: len(shares), Shares: shares, Segments: segments, Pixels: pixels[0], WorkPixels: pixels[1], Launch: launch, ParallelJoin: parallel}
	if v, ok := own["frame-size"]; ok {
		fw, fh, ok := parseSize(v)
		if !ok {
			return nil, bad(fmt.Errorf("--frame-size %q: give WIDTHxHEIGHT, such as 1920x1080", v))
		}
		s.Pixels = fw * fh
	}
	num := func(name string, def float64) float64 {
		v, ferr := own.float(name, def)
		if err == nil {
			err = ferr
		}
		return v
	}
	whole := func(name string, def int) int {
		v, ferr := own.int(name, def)
		if err == nil {
			err = ferr
		}
		return v
	}
	s.FSBandwidth = num("fs-bandwidth", scaling.DefaultFSBandwidth/1e9) * 1e9
	s.ClientBW = num("client-bandwidth", scaling.DefaultClientBW/1e9) * 1e9
	s.BytesPerFrame = num("bytes-per-frame", 0)
	s.FrameSeconds = num("frame-seconds", 0)
	s.ModelBytes = int64(num("model-bytes", float64(jobModelBytes(cfg))))
	s.RanksPerNode = whole("ranks-per-node", scaling.DefaultRanksPerNode)
	s.NetBW = num("network-bandwidth", scaling.DefaultNetBW/1e9) * 1e9
	s.Broadcast = s.Broadcasts(cfg.ModelBroadcast)
	s.Slots = whole("slots", 0)
	if err == nil {
		err = s.Check(costs)
	}
	if err != nil {
		return nil, bad(err)
	}
	e := scaling.Model(costs, s)
	return func(w io.Writer) { printModel(w, costs, s, e) }, nil
}

// readCosts derives the costs from the run report at path (--costs): the frame size is its
// output's, probed.
func readCosts(ctx context.Context, path string, launch float64) (scaling.Costs, error) {
	// A FIFO or device is refused before it is read, and a file over the report's limit too.
	data, err := safefs.ReadFile(path, safefs.ReportLimit, "run report")
	var kind *safefs.KindError
	var limit *safefs.LimitError
	switch {
	case errors.As(err, &kind) || errors.As(err, &limit):
		return scaling.Costs{}, fault.AsInput(fmt.Errorf("plan: --costs: %v; give a run report (OUTPUT.report.json)", err))
	case err != nil:
		return scaling.Costs{}, fault.AsInput(fmt.Errorf("plan: --costs %s: %v: give a run report (OUTPUT.report.json)", path, err))
	}
	rep, err := report.Decode(data, path)
	if err != nil {
		return scaling.Costs{}, fault.AsInput(fmt.Errorf("plan: --costs: %v", err))
	}
	// ffprobe would wait on a FIFO named as the output: refused before it runs.
	var info *video.Info
	if err = safefs.Regular(rep.Output, "output"); err == nil {
		info, err = video.Probe(ctx, rep.Output)
	}
	if err != nil {
		return scaling.Costs{}, fault.AsInput(fmt.Errorf("plan: --costs %s: its output %s gives the frame size the costs are at, and cannot be probed: %v", path, safefs.Name(rep.Output, safefs.PathLen), err))
	}
	if launch < 0 {
		launch = scaling.DefaultLaunch
	}
	c, err := scaling.FromReport(rep, path, info.Width*info.Height, launch)
	if err != nil {
		return c, fault.AsInput(fmt.Errorf("plan: %v", err))
	}
	return c, nil
}

// jobModelBytes is what the job reads of model files at start-up (every node, or rank 0 for the
// broadcast): its files (pipeline.ReadFiles, the broadcast's list), each at its size here, else
// FaceFusion's published size.
func jobModelBytes(cfg job.Config) int64 {
	if !cfg.RunsModels() {
		return 0
	}
	published := map[string]int64{}
	names := pipeline.ModelNames(cfg)
	if r := pipeline.MeasureRecognizer(cfg); r != "" {
		names = append(names, r)
	}
	for _, name := range names {
		if m, err := catalog.Lookup(name); err == nil {
			published[m.File] = m.Published.Bytes
		}
	}
	files, _ := pipeline.ReadFiles(cfg)
	var n int64
	for _, f := range files {
		if st, err := os.Stat(f.Path); err == nil {
			n += st.Size()
		} else {
			n += published[filepath.Base(f.Path)]
		}
	}
	return n
}

func parseSize(v string) (int, int, bool) {
	a, b, ok := strings.Cut(strings.ToLower(v), "x")
	wd, err1 := strconv.Atoi(a)
	ht, err2 := strconv.Atoi(b)
	return wd, ht, ok && err1 == nil && err2 == nil && wd > 0 && ht > 0
}

// printModel prints the estimate, every term with where it comes from.
func printModel(w io.Writer, c scaling.Costs, s scaling.Scale, e scaling.Estimate) {
	pct := func(v float64) string { return fmt.Sprintf("%.1f %%", 100*v/e.Wall) }
	gbytes := func(v float64) string { return fmt.Sprintf("%.3g GB", v/1e9) }
	over := 0.0
	if e.Mean > 0 {
		over = 100 * (float64(e.Busiest)/e.Mean - 1)
	}
	fmt.Fprintf(w, "model   costs from %s\n", c.From)
	fmt.Fprintf(w, "model   %d rank(s), %d frames; the busiest rank has %d (%.1f %% over the mean), %.4f s a frame\n", e.Ranks, e.Frames, e.Busiest, over, e.FrameSeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "term\tseconds\tshare\tfrom")
	read := fmt.Sprintf("%d node(s) × %s at %s/s", (s.Ranks+s.RanksPerNode-1)/s.RanksPerNode, gbytes(float64(s.ModelBytes)), gbytes(s.FSBandwidth))
	if s.Broadcast && s.Ranks > 1 {
		read = fmt.Sprintf("rank 0 reads %s at %s/s and broadcasts it: twice at %s/s (model_broadcast)", gbytes(float64(s.ModelBytes)), gbytes(math.Min(s.ClientBW, s.FSBandwidth)), gbytes(s.NetBW))
	}
	if e.Cast > 0 {
		fmt.Fprintf(tw, "start-up\t%.2f\t%s\tlaunch %.2f + rank 0's model read %.2f + max(its plan %.2f, the broadcast %.2f + load %.2f) (rank 0 reads %s at %s/s, and plans while the bytes go twice at %s/s (model_broadcast))\n",
			e.Startup, pct(e.Startup), e.Launch, e.ReadRank0, c.Plan, e.Cast, c.Load, gbytes(float64(s.ModelBytes)), gbytes(math.Min(s.ClientBW, s.FSBandwidth)), gbytes(s.NetBW))
	} else {
		fmt.Fprintf(tw, "start-up\t%.2f\t%s\tlaunch %.2f + max(plan %.2f, load %.2f) + model read %.2f (%s)\n",
			e.Startup, pct(e.Startup), e.Launch, c.Plan, c.Load, e.Read, read)
	}
	fmt.Fprintf(tw, "frames\t%.2f\t%s\t%d frames × %.4f s (the busiest rank; parallel)\n", e.Work, pct(e.Work), e.Busiest, e.FrameSeconds)
	perGB := func(measured float64, passes int) string {
		return fmt.Sprintf("%s × max(%.2f s/GB measured, %d pass(es) at %s/s)", gbytes(e.OutputBytes), measured*1e9, passes, gbytes(math.Min(s.ClientBW, s.FSBandwidth)))
	}
	if s.ParallelJoin {
		nodes := float64((s.Ranks + s.RanksPerNode - 1) / s.RanksPerNode)
		fmt.Fprintf(tw, "join\t%.2f\t%s\t%.3f + %d segments a rank × %.5f + rank 0's %d frames × %.2f µs + max(busiest rank's %s × %.2f s/GB, %s once at %s/s) (every rank the segments it wrote, from its page cache, at their offset; rank 0 the index)\n",
			e.Join, pct(e.Join), c.ParallelJoinFixed, (s.Segments+s.Ranks-1)/s.Ranks, c.ParallelPerSegment, e.Frames, c.PlanPerFrame*1e6,
			gbytes(e.OutputBytes*float64(e.Busiest)/float64(max(1, e.Frames))), c.JoinPerByte*1e9,
			gbytes(e.OutputBytes), gbytes(math.Min(nodes*s.ClientBW, s.FSBandwidth)))
	} else {
		fmt.Fprintf(tw, "join\t%.2f\t%s\t%.2f + %d segments × %.3f + %s (rank 0, serial)\n", e.Join, pct(e.Join), c.JoinFixed, s.Segments, c.JoinPerSegment, perGB(c.JoinPerByte, 2))
	}
	if s.ParallelJoin {
		fmt.Fprintf(tw, "mux\t0\t0 %%\trank 0's side file, written during the frames\n")
	} else if c.OnePass {
		fmt.Fprintf(tw, "mux\t0\t0 %%\tin the join's pass (one ffmpeg run)\n")
	} else {
		fmt.Fprintf(tw, "mux\t%.2f\t%s\t%.2f + %s\n", e.Mux, pct(e.Mux), c.MuxFixed, perGB(c.MuxPerByte, 2))
	}
	if s.ParallelJoin {
		fmt.Fprintf(tw, "hash\t%.2f\t%s\t%.0f hop(s) × %.4f + busiest rank's %s × %.2f s/GB (the run report's block hash, in the join's copy: no read of the output; a %d MiB block's state passed from rank to rank)\n",
			e.Hash, pct(e.Hash), e.HashHops, c.ChainHop, gbytes(e.HashShare), c.ChainPerByte*1e9, lustre.HashBlockBytes>>20)
	} else {
		fmt.Fprintf(tw, "hash\t%.2f\t%s\t%.3f + max(busiest rank's %s × %.2f s/GB, %s once at %s/s) (the run report's block hash: every rank its share of the %d MiB blocks)\n",
			e.Hash, pct(e.Hash), c.HashFixed, gbytes(e.HashShare), c.HashPerByte*1e9, gbytes(e.OutputBytes),
			gbytes(math.Min(float64((s.Ranks+s.RanksPerNode-1)/s.RanksPerNode)*s.ClientBW, s.FSBandwidth)), lustre.HashBlockBytes>>20)
	}
	tw.Flush()
	fmt.Fprintf(w, "wall          %.2f s (one rank: %.2f s)\n", e.Wall, e.OneRank)
	fmt.Fprintf(w, "efficiency    %.1f %% (one rank's wall over %d × this wall)\n", 100*e.Efficiency, e.Ranks)
	met := "met"
	if e.SerialShare > scaling.Goal {
		met = "NOT met"
	}
	fmt.Fprintf(w, "serial share  %.1f %% (start-up %s, join %s, mux %s, hash %s): the goal of %.0f %% is %s; the largest serial term is %s\n",
		100*e.SerialShare, pct(e.Startup), pct(e.Join), pct(e.Mux), pct(e.Hash), 100*scaling.Goal, met, e.Dominant)
	fmt.Fprintf(w, "              %.0f %% holds once a rank's frame costs %.4f s or more (the frames term ≥ %.0f× the serial part)\n",
		100*scaling.Goal, e.GoalFrameSeconds(), (1-scaling.Goal)/scaling.Goal)
	if !s.ParallelJoin {
		fmt.Fprintf(w, "              %.1f %% were the join and mux parallel (%.2f s: each node writes its segments at their offset, %s at %s/s)\n",
			100*e.ParallelShare, e.ParallelJoin, gbytes(e.OutputBytes), gbytes(math.Min(float64((s.Ranks+s.RanksPerNode-1)/s.RanksPerNode)*s.ClientBW, s.FSBandwidth)))
	}
	if e.Ranks > 1 {
		fmt.Fprintf(w, "start-up      %.2f s had the other ranks loaded their models only after the plan\n", e.SerialStartWithoutOverlap)
	}
}
