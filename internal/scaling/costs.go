package scaling

import (
	"fmt"
	"math"

	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// Default costs and machine, used where neither a report (--costs) nor a flag gives them.

// Measured are the costs of a 2-rank run of the demo clip (150 frames of 1280×720, face swap,
// libx264, 6 chunks of 25, the parallel join) on this project's 2-core CI machine, ranks bound
// one per core, rank 0 loading its models beside its checks, the large buffers on huge pages,
// the hash in the join's copy: the run of median wall time of three (load average 2.0–3.9, the
// loop's own runs the only load), its report through FromReport (docs/cluster.md, "Scaling model", has
// the commands). The join's fixed parts and rates are their own measurements (below).
var Measured = Costs{
	From:          "built-in: a 2-rank run of the demo clip on the 2-core CI machine (docs/cluster.md, Scaling model)",
	FrameSeconds:  12.029 / 150,
	FramePixels:   1280 * 720,
	BytesPerFrame: 2253092.0 / 150,
	Launch:        DefaultLaunch,
	Plan:          0.96,
	Load:          0.59,
	// The serial (one-pass) join's, for outputs other than MP4/MOV: rank 0's join in the
	// earlier built-in run, which joined serially (0.556 s, 6 segments, 2.2 MB).
	JoinFixed:          0.556 - 6*DefaultOnePassPerSegment - 2200803*DefaultOnePassPerByte,
	JoinPerSegment:     DefaultOnePassPerSegment,
	ParallelJoinFixed:  DefaultParallelJoinFixed,
	ParallelPerSegment: DefaultParallelPerSegment,
	PlanPerFrame:       DefaultPlanPerFrame,
	JoinPerByte:        DefaultOnePassPerByte,
	HashFixed:          DefaultHashFixed,
	HashPerByte:        DefaultHashPerByte,
	ChainHop:           DefaultChainHop,
	ChainPerByte:       DefaultChainPerByte,
	OnePass:            true,
}

// Rates a run report cannot separate from the fixed costs (its join is one figure), measured
// here once (docs/cluster.md, "Scaling model": the two-pass join of then, video.Concat and video.Mux, over K copies of the demo's
// segments, medians of 3): the slope between 20 and 320 segments of 1 MB, and between 2 and 20
// segments of 30 MB.
const (
	DefaultJoinPerSegment = 0.023  // seconds per segment ffmpeg's concat demuxer opens
	DefaultJoinPerByte    = 5.2e-9 // seconds per byte through the concat's stream copy (5.2 s/GB)
	DefaultMuxPerByte     = 3.4e-9 // seconds per byte through the mux's stream copy (3.4 s/GB)
	// The one-pass join (video.Join: NUT segments joined and muxed with the target's streams
	// by one ffmpeg), measured the same way: 20 vs 2 segments of 30 MB, and 1920 vs 960 of
	// 0.35 MB (13–23 s for those; 480 segments took 12 s, 240 took 2.8 s, so the per-segment
	// cost is not linear below a thousand segments).
	DefaultOnePassPerSegment = 0.010
	DefaultOnePassPerByte    = 1.4e-9
	// The parallel join (MP4, MOV) a segment: its index read (video.ReadSegment) and its
	// table's encoding and decoding, `go test -bench ReadSegmentIndex ./internal/video/` here:
	// 48–49 µs (three runs of 5000, segments of 25 frames in the page cache). A cluster file
	// system's open is a metadata round trip (about a millisecond on Lustre): still ten times
	// below the concat demuxer's 10 ms.
	DefaultParallelPerSegment = 50e-6
	// DefaultPlanPerFrame is rank 0's own part of the parallel join a frame: every segment's
	// gathered table decoded, the joined samples laid out and their decode times sorted, the
	// index written; `go test -run '^$' -bench PlanOutput -benchtime 10x -count 3
	// ./internal/video/` here over 180000 frames (7200 segments of 25), the boxes sized before
	// they are filled and the sample table built once for the header's two passes: 250, 171 and
	// 250 ns a frame (load average 3; 1.3–1.7 µs before, when every box grew by appends).
	DefaultPlanPerFrame = 0.25e-6
	// DefaultParallelJoinFixed is the parallel join's fixed part (it starts no process: the
	// protocol's collectives, the temp file's creation, the side file's index read): rank 0's
	// join in three 2-rank runs of the demo clip (`--processors none --chunk-frames 25`, 6
	// segments of 1.86 MB in all, load average 10–12): 0.007, 0.020 and 0.033 s; the median
	// less its segments, frames and bytes.
	DefaultParallelJoinFixed = 0.0202 - 3*DefaultParallelPerSegment - 150*DefaultPlanPerFrame - 1864521.0/2*DefaultOnePassPerByte
)

const (
	// DefaultLaunch is `mpirun -np 2 bin/facefusion probe`'s wall time here, median of 3 (1.0 s
	// for 1 rank, 2.7 s for 4 on the 2 cores), under the load of other work: the launcher, the
	// processes' start and MPI_Init. On a quiet machine it is 0.54 s (three runs, 0.536–0.543);
	// kept at 1.3: launching 512 ranks over their nodes takes longer than 2 here.
	DefaultLaunch = 1.3
	// DefaultHashPerByte is one rank's block hash of its share of the output (lustre.HashBlocks)
	// here, `go test -run '^$' -bench HashBlocks -benchtime 5x ./lustre/` over a 256 MiB file in
	// the page cache, one share: 357–594 MB/s, median 432 (four runs, load average 6–12; the
	// whole-file sha256 it replaced, lustre.HashFile, 251–934 MB/s in the same runs: the same
	// SHA-256, within this machine's noise; 690 MB/s quiet).
	DefaultHashPerByte = 2.3e-9
	// DefaultHashFixed is the hash's fixed part: its two collectives, the file's open and rank
	// 0's combine of the blocks' sums: rank 0's hash in the three demo runs above (one block of
	// 1.86 MB: 0.010, 0.010 and 0.015 s), the median less its bytes.
	DefaultHashFixed = 0.0100 - 1864521*DefaultHashPerByte
	// DefaultChainHop is one hop of the parallel join's hash chain (internal/join,
	// chain.go): a rank waiting for the state of a block begun on the rank before it, a
	// point-to-point message waited for with growing sleeps. Under `mpirun -np 3` here (three
	// ranks on two cores), 101 rounds of a block over all three ranks: the last rank's wait
	// 2.4–2.5 ms (median, three runs), two hops.
	DefaultChainHop = 1.2e-3
	// DefaultChainPerByte is the parallel join's hash a byte, in its copy (a rank's bytes
	// given to lustre.RangeHasher in the copy's 32 KiB pieces): `go test -run '^$' -bench
	// RangeHasher -benchtime 10x ./lustre/` here, a range whose first 16 MiB are a head (kept
	// until the earlier state comes: at scale a rank's share is under a block, so most of its
	// bytes are): 494–617 MB/s, median 570 (three runs, load average 8–10; a range from a
	// block's start, 935–1370 MB/s).
	DefaultChainPerByte = 1.75e-9
)

// A machine at scale, as assumed where no flag says otherwise (stated, not measured here).
const (
	DefaultFSBandwidth  = 20e9   // a mid-size Lustre's aggregate read bandwidth, bytes/s
	DefaultClientBW     = 2e9    // one Lustre client's (rank 0's node's) bandwidth, bytes/s
	DefaultRanksPerNode = 4      // a node of 4 GPUs, one rank each
	DefaultNetBW        = 12.5e9 // the nodes' network (EDR InfiniBand, 100 Gb/s), bytes/s
)

// FromReport derives the costs from a finished run's report (written beside its output): the
// ranks' share seconds over their frames, rank 0's plan, the other ranks' load, rank 0's join
// less the built-in per-segment and per-byte rates of the one-pass join (its fixed part), or of
// the parallel join where other ranks had a share in it (its fixed part then), and rank 0's
// hash less its share's bytes (the hash's fixed part; a report before the block hash has none;
// a parallel join's run hashes in the join's copy: its hash stage is 0, its join holds the
// busiest rank's hashing, taken off the join's fixed part).
// A report from before the one-pass join has concat and mux instead: their fixed parts under
// the two-pass rates (or, where its mux took no time, concat under the one-pass rates). pixels
// is the frame size the run encoded; the launch is not in a report and comes from launch.
func FromReport(rep *report.Report, name string, pixels int, launch float64) (Costs, error) {
	c := Measured
	c.From, c.FramePixels, c.Launch = "the run report "+name, pixels, launch
	switch {
	case rep.Outcome != lustre.Complete:
		return c, fmt.Errorf("--costs %s: the run is %s, not complete: give the report of a finished run", name, rep.Outcome)
	case len(rep.PerRank) == 0 || rep.OutputBytes <= 0 || rep.Chunks < 1:
		return c, fmt.Errorf("--costs %s: the report has no per-rank figures, chunks or output size: give the report of a finished video run", name)
	}
	frames, seconds, out := 0, 0.0, float64(rep.OutputBytes)
	c.Load = 0
	for _, r := range rep.PerRank {
		_, joined := r.StageSeconds["join"]
		_, concat := r.StageSeconds["concat"]
		_, mux := r.StageSeconds["mux"]
		for _, st := range []string{"plan", "load", "join"} {
			if _, ok := r.StageSeconds[st]; !ok && (st != "join" || !concat || !mux) {
				return c, fmt.Errorf("--costs %s: rank %d has no %q stage time: the run predates the start-up stages; rerun it with this version", name, r.Rank, st)
			}
		}
		if r.Frames > 0 {
			frames += r.Frames
			seconds += r.Seconds
		}
		if r.Rank == 0 {
			c.Plan = r.StageSeconds["plan"]
			join, muxed := r.StageSeconds["join"], 0.0
			if !joined { // an older report: the concat, and the mux where it was a pass of its own
				join, muxed = r.StageSeconds["concat"], r.StageSeconds["mux"]
			}
			c.OnePass, c.JoinPerSegment, c.JoinPerByte, c.MuxPerByte = true, DefaultOnePassPerSegment, DefaultOnePassPerByte, 0
			if muxed > 0 {
				c.OnePass, c.JoinPerSegment, c.JoinPerByte, c.MuxPerByte = false, DefaultJoinPerSegment, DefaultJoinPerByte, DefaultMuxPerByte
			}
			c.JoinFixed = math.Max(0, join-float64(rep.Chunks)*c.JoinPerSegment-out*c.JoinPerByte)
			c.MuxFixed = math.Max(0, muxed-out*c.MuxPerByte)
			if parallelJoin(rep) { // its join is the parallel join's: that fixed part, the serial one's stays
				c.JoinFixed = Measured.JoinFixed
				ranks := float64(len(rep.PerRank))
				hashed := 0.0 // a report of the hash in the join's copy: its hashing is in the join
				// (a report from before the block hash has no hash stage, and no hashing anywhere)
				if h, ok := r.StageSeconds["hash"]; ok && h == 0 {
					hashed = out / ranks * c.ChainPerByte
				}
				c.ParallelJoinFixed = math.Max(0, join-math.Ceil(float64(rep.Chunks)/ranks)*c.ParallelPerSegment-
					float64(rep.FrameEnd-rep.FrameStart)*c.PlanPerFrame-out/ranks*c.JoinPerByte-hashed)
			}
			if hash, ok := r.StageSeconds["hash"]; ok && hash > 0 { // a report of the block hash
				blocks := math.Ceil(out / lustre.HashBlockBytes)
				share := math.Min(out, math.Ceil(blocks/float64(len(rep.PerRank)))*lustre.HashBlockBytes)
				c.HashFixed = math.Max(0, hash-share*c.HashPerByte)
			}
		} else {
			c.Load = math.Max(c.Load, r.StageSeconds["load"])
		}
	}
	if frames == 0 || seconds <= 0 {
		return c, fmt.Errorf("--costs %s: no rank encoded a frame: give the report of a video run", name)
	}
	if len(rep.PerRank) == 1 { // one rank: its load is inside its plan
		c.Load = rep.PerRank[0].StageSeconds["load"]
	}
	c.FrameSeconds = seconds / float64(frames)
	c.BytesPerFrame = out / float64(frames)
	return c, nil
}

// parallelJoin reports whether rep's run joined its output in parallel: a rank other than 0
// spent time in the join (a 1-rank run's report cannot tell, and is read as serial).
func parallelJoin(rep *report.Report) bool {
	for _, r := range rep.PerRank {
		if r.Rank != 0 && r.StageSeconds["join"] > 0 {
			return true
		}
	}
	return false
}
