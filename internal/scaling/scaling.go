// Package scaling models a run's wall time over N ranks from measured costs: the frames are
// parallel (the busiest rank's share decides); the start-up, the join and mux, and the output's
// hash are the serial part (the parallel join and the hash shared among the ranks, still at
// the end of the run). It says what share of the wall the serial part takes and which term
// dominates; `facefusion plan --ranks N --frames F` prints it.
//
// The model, term by term (README, "Scaling model"):
//
//	wall(N)   = startup(N) + frames(N) + join + mux + hash
//	startup   = launch + max(plan, load) + nodes(N) × model bytes / file-system bandwidth
//	            (model_broadcast: launch + model bytes / client bandwidth + max(plan, 2 × model
//	            bytes / network bandwidth + load): rank 0 plans while its read's bytes travel,
//	            the other ranks load once they have them)
//	frames    = busiest rank's frames × frame seconds × pixels/measured pixels × max(1, N/slots)
//	join      = join fixed + segments × per segment + bytes × max(per byte, 2 / client bandwidth)
//	mux       = mux fixed + bytes × max(per byte, 2 / client bandwidth)   (0 in a one-pass join)
//	parallel join (MP4, MOV: Scale.ParallelJoin), every rank its run of segments:
//	join      = parallel join fixed + segments/N × parallel per segment + frames × rank 0's plan per frame
//	            + max(busiest share's bytes × per byte, bytes × 2 / min(nodes × client bandwidth, file system))
//	mux       = 0 (rank 0's side file of the other streams is written during the frames)
//	hash      = hash fixed (collectives, rank 0's combine) + max(busiest rank's blocks' bytes × per byte,
//	            bytes / min(nodes × client bandwidth, file system))   (every rank its share of the blocks)
//	parallel join: every rank hashes the bytes it copies (no read of the output):
//	hash      = hops × chain hop + busiest share's bytes × chain per byte   (hops = min(N−1, ⌈block / busiest share's bytes⌉))
//	efficiency   = wall(1) / (N × wall(N)); serial share = (wall − frames) / wall
//
// It also gives the serial share were the join and mux parallel (Estimate.ParallelJoin).
//
// Every input is a measured cost (Costs, from a run report or the defaults measured here) or a
// stated property of the machine at scale (Scale); nothing else enters.
package scaling

import (
	"fmt"
	"math"

	"github.com/facefusion-hpc/facefusion/lustre"
)

// Costs are what one run measured, per unit, at its frame size.
type Costs struct {
	From string // where the numbers come from, for the printout

	FrameSeconds float64 // a rank's wall seconds per frame of its share (decode, process, encode)
	FramePixels  int     // the frame size (width × height) FrameSeconds and BytesPerFrame are at
	// BytesPerFrame is the output's bytes per frame: what goes through rank 0's join and mux.
	BytesPerFrame float64

	Launch float64 // seconds from the launch to the job's start on every rank (launcher, MPI_Init)
	Plan   float64 // rank 0's plan: checks, probe, its own model load, the source, claim, fingerprint
	Load   float64 // another rank's model load, from a warm local file system (overlaps the plan)

	// Rank 0's concat of the segments: ffmpeg's start, then each segment's open, then each byte.
	JoinFixed, JoinPerSegment, JoinPerByte float64
	// The parallel join (MP4, MOV): its fixed part (no process: the protocol's collectives and
	// rank 0's side file index), its cost a segment (its index read by its rank and its sample
	// table's trip to rank 0; no concat demuxer), and rank 0's a frame (every table decoded, the
	// frames' times sorted, the index written).
	ParallelJoinFixed, ParallelPerSegment, PlanPerFrame float64
	MuxFixed, MuxPerByte                                float64 // its mux of the joined video with the audio
	// The run report's output hash, every rank its share of the blocks: the fixed part (its
	// collectives, rank 0's combine) and a rank's seconds a byte of its share.
	HashFixed, HashPerByte float64
	// The parallel join's hash, in its copy: a hop of its chain (a rank's wait for the hash
	// state of a block begun on the rank before it), and a rank's seconds a byte it hashes.
	ChainHop, ChainPerByte float64
	// OnePass: the join and the mux are one ffmpeg run (the join's rates are that run's): no
	// mux term.
	OnePass bool
}

// Scale is what differs at scale: the job and the machine it runs on.
type Scale struct {
	Ranks    int
	Shares   []int // frames per rank under the run's partition (len Ranks)
	Segments int   // segment files rank 0 joins (the chunks)
	Pixels   int   // frame size (width × height) at scale; 0: Costs.FramePixels
	// WorkPixels, when above Pixels, is the size the frames are processed and handed to the
	// encoder at (frame_enhancer's upscale, which the encoder scales to Pixels): the frame's
	// seconds follow it, its bytes Pixels.
	WorkPixels int

	// BytesPerFrame at scale; 0: Costs.BytesPerFrame × Pixels / Costs.FramePixels.
	BytesPerFrame float64
	ModelBytes    int64   // the job's model files, read by every node at start-up
	FSBandwidth   float64 // the shared file system's aggregate read bandwidth, bytes/s
	ClientBW      float64 // rank 0's node's bandwidth to the file system, bytes/s
	RanksPerNode  int     // ranks on one node: they read the model once through its page cache
	// Broadcast: rank 0 reads the model files once and broadcasts them (model_broadcast), at
	// NetBW, the network's bandwidth in bytes/s; otherwise every node reads them itself.
	Broadcast bool
	NetBW     float64
	// Slots is how many ranks run at once without sharing a core or GPU (0: every rank has its
	// own): beyond it a rank's frames take proportionally longer (an oversubscribed node).
	Slots  int
	Launch float64 // seconds; <0: Costs.Launch
	// FrameSeconds, when above 0, is a rank's seconds per frame at scale, as measured there
	// (a GPU node's): it replaces Costs.FrameSeconds scaled by pixels.
	FrameSeconds float64
	// ParallelJoin: the output's container is joined by every rank (MP4, MOV; see the model).
	ParallelJoin bool
}

// Estimate is the model's answer for one Scale.
type Estimate struct {
	Ranks                   int
	Frames, Busiest         int     // all frames; the busiest rank's
	Mean                    float64 // frames per rank
	FrameSeconds            float64 // a rank's seconds per frame at scale
	OutputBytes             float64
	Launch, SetupWait, Read float64 // start-up: launch, max(plan, load), the model read
	// With the model broadcast: Read is rank 0's read (ReadRank0, before both its load and the
	// broadcast) and the broadcast (Cast, beside rank 0's plan, before the other ranks' load):
	// SetupWait is max(plan, Cast + load).
	ReadRank0, Cast         float64
	Startup, Work           float64
	Join, Mux, Hash         float64
	HashShare               float64 // the busiest rank's bytes of the output's hash (whole blocks; its join share in a parallel join)
	HashHops                float64 // the parallel join's chain: hops waited in turn
	Wall, OneRank           float64 // wall(N), wall(1)
	Efficiency, SerialShare float64
	Dominant                string // the largest serial term: start-up, join, mux or hash
	// ParallelJoin is the join and mux were they parallel (the MPI_Exscan design: every
	// node writes its segments' bytes at their offset, rank 0 only what the container needs
	// once), their bytes at the nodes' or the file system's bandwidth, whichever is lower; and
	// ParallelShare the serial share then.
	ParallelJoin, ParallelShare float64
	SerialStartWithoutOverlap   float64 // start-up had the other ranks loaded after the plan
}

// Goal is the bound on the serial share at scale.
const Goal = 0.05

// GoalFrameSeconds is the seconds a rank's frame must cost for the serial share to be Goal:
// the frames term then is (1−Goal)/Goal times the serial part.
func (e Estimate) GoalFrameSeconds() float64 {
	if e.Busiest == 0 {
		return math.Inf(1)
	}
	return (1 - Goal) / Goal * e.Serial() / float64(e.Busiest)
}

// Serial is the start-up, join, mux and hash: the part that does not shrink with ranks.
func (e Estimate) Serial() float64 { return e.Startup + e.Join + e.Mux + e.Hash }

// Broadcasts says whether a job of model_broadcast mode (auto, on, off) broadcasts its model
// files at s: auto does once the ranks span more than one node (more than RanksPerNode).
func (s Scale) Broadcasts(mode string) bool {
	return mode == "on" || mode == "auto" && s.Ranks > s.RanksPerNode
}

// Check says what is wrong with s for c, in one line naming the flag; nil when usable.
func (s Scale) Check(c Costs) error {
	switch {
	case s.Ranks < 1:
		return fmt.Errorf("--ranks %d: give at least 1", s.Ranks)
	case len(s.Shares) != s.Ranks:
		return fmt.Errorf("the partition has %d shares for %d ranks", len(s.Shares), s.Ranks)
	case c.FrameSeconds <= 0 || c.FramePixels <= 0:
		return fmt.Errorf("the costs (%s) have no frame cost or frame size", c.From)
	case !(s.FSBandwidth > 0) || !(s.ClientBW > 0) || math.IsInf(s.FSBandwidth, 0) || math.IsInf(s.ClientBW, 0):
		return fmt.Errorf("--fs-bandwidth and --client-bandwidth must be above 0 and finite")
	case s.Broadcast && !(s.NetBW > 0) || math.IsInf(s.NetBW, 0):
		return fmt.Errorf("--network-bandwidth must be above 0 and finite")
	case s.RanksPerNode < 1:
		return fmt.Errorf("--ranks-per-node %d: give at least 1", s.RanksPerNode)
	case s.Segments < 1:
		return fmt.Errorf("the partition has no segment")
	case s.ModelBytes < 0 || s.Pixels < 0 || s.BytesPerFrame < 0 || s.Slots < 0 || s.FrameSeconds < 0:
		return fmt.Errorf("--model-bytes, --frame-size, --bytes-per-frame, --slots and --frame-seconds cannot be negative")
	}
	return nil
}

// Model estimates the wall time of s from c (Check(s, c) must hold).
func Model(c Costs, s Scale) Estimate {
	e := model(c, s)
	one := s
	one.Ranks, one.Shares = 1, []int{e.Frames}
	e.OneRank = model(c, one).Wall
	e.Efficiency = e.OneRank / (float64(s.Ranks) * e.Wall)
	return e
}

func model(c Costs, s Scale) Estimate {
	e := Estimate{Ranks: s.Ranks}
	for _, f := range s.Shares {
		e.Frames += f
		e.Busiest = max(e.Busiest, f)
	}
	e.Mean = float64(e.Frames) / float64(s.Ranks)

	pixels := float64(c.FramePixels)
	if s.Pixels > 0 {
		pixels = float64(s.Pixels)
	}
	scale := pixels / float64(c.FramePixels) // decode, encode and the frame's kernels follow pixels
	share := 1.0
	if s.Slots > 0 && s.Ranks > s.Slots {
		share = float64(s.Ranks) / float64(s.Slots)
	}
	e.FrameSeconds = c.FrameSeconds * max(scale, float64(s.WorkPixels)/float64(c.FramePixels))
	if s.FrameSeconds > 0 {
		e.FrameSeconds = s.FrameSeconds
	}
	e.FrameSeconds *= share
	e.Work = float64(e.Busiest) * e.FrameSeconds

	e.Launch = c.Launch
	if s.Launch >= 0 {
		e.Launch = s.Launch
	}
	nodes := math.Ceil(float64(s.Ranks) / float64(s.RanksPerNode))
	e.Read = nodes * float64(s.ModelBytes) / s.FSBandwidth
	if s.Broadcast && s.Ranks > 1 {
		// One read through rank 0's node, then the broadcast: for large messages Open MPI
		// scatters and allgathers (or pipelines), so each byte crosses a link about twice,
		// whatever the node count.
		e.Read = float64(s.ModelBytes)*io(s) + 2*float64(s.ModelBytes)/s.NetBW
	}
	e.SetupWait = math.Max(c.Plan, c.Load)
	e.Startup = e.Launch + e.SetupWait + e.Read
	if s.Broadcast && s.Ranks > 1 {
		// Rank 0 reads, then plans (its load waits for the read) while the bytes travel; the
		// other ranks load once they have them.
		e.ReadRank0, e.Cast = float64(s.ModelBytes)*io(s), 2*float64(s.ModelBytes)/s.NetBW
		e.SetupWait = math.Max(c.Plan, e.Cast+c.Load)
		e.Startup = e.Launch + e.ReadRank0 + e.SetupWait
	}
	// Had the other ranks loaded only after the plan: rank 0 reads the model alone in its plan,
	// every other node after it.
	e.SerialStartWithoutOverlap = e.Startup
	if s.Ranks > 1 {
		e.SerialStartWithoutOverlap = e.Launch + c.Plan + float64(s.ModelBytes)*io(s) + c.Load + e.Read
		if e.Cast > 0 { // rank 0's read and the broadcast, then the plan, then the loads
			e.SerialStartWithoutOverlap = e.Launch + e.ReadRank0 + e.Cast + c.Plan + c.Load
		}
	}

	bpf := c.BytesPerFrame * scale
	if s.BytesPerFrame > 0 {
		bpf = s.BytesPerFrame
	}
	e.OutputBytes = bpf * float64(e.Frames)
	perByte := io(s)
	e.Join = c.JoinFixed + float64(s.Segments)*c.JoinPerSegment +
		e.OutputBytes*math.Max(c.JoinPerByte, 2*perByte) // read the segments, write the join
	busiest := e.OutputBytes * float64(e.Busiest) / math.Max(1, float64(e.Frames))
	if s.ParallelJoin {
		// Every rank reads the segments it wrote (its node's page cache holds them: a fresh
		// run's split, driver.joinBounds) and writes them at their offset: the busiest rank's
		// bytes at its own rate, or all bytes once through the nodes' links (the writes).
		e.Join = c.ParallelJoinFixed + math.Ceil(float64(s.Segments)/float64(s.Ranks))*c.ParallelPerSegment +
			float64(e.Frames)*c.PlanPerFrame +
			math.Max(busiest*c.JoinPerByte, e.OutputBytes/math.Min(nodes*s.ClientBW, s.FSBandwidth))
	} else if !c.OnePass {
		e.Mux = c.MuxFixed + e.OutputBytes*math.Max(c.MuxPerByte, 2*perByte) // read the join, write the output
	}
	// Every rank hashes its even share of the blocks at once: the busiest rank's whole blocks at
	// its own rate, or every byte once through the nodes' links; then rank 0 combines the sums.
	blocks := math.Ceil(e.OutputBytes / lustre.HashBlockBytes)
	e.HashShare = math.Min(e.OutputBytes, math.Ceil(blocks/float64(s.Ranks))*lustre.HashBlockBytes)
	e.Hash = c.HashFixed + math.Max(e.HashShare*c.HashPerByte, e.OutputBytes/math.Min(nodes*s.ClientBW, s.FSBandwidth))
	if s.ParallelJoin {
		// The parallel join's ranks hash what they copy, on their CPUs: nothing is read back.
		// A block spans ⌈block / share⌉ + 1 ranks at most; its state goes from rank to rank,
		// one wait a hop, every other message at once.
		e.HashShare = busiest
		if s.Ranks > 1 {
			e.HashHops = math.Min(float64(s.Ranks-1), math.Ceil(lustre.HashBlockBytes/math.Max(1, busiest)))
		}
		e.Hash = e.HashHops*c.ChainHop + busiest*c.ChainPerByte
	}

	e.Wall = e.Startup + e.Work + e.Join + e.Mux + e.Hash
	e.SerialShare = e.Serial() / e.Wall
	e.ParallelJoin = c.JoinFixed + c.MuxFixed + e.OutputBytes/math.Min(nodes*s.ClientBW, s.FSBandwidth)
	rest := e.Startup + e.ParallelJoin + e.Hash
	e.ParallelShare = rest / (rest + e.Work)
	e.Dominant, _ = e.largest()
	return e
}

// io is rank 0's seconds per byte moved to or from the file system: its node's bandwidth, or
// the file system's when that is lower.
func io(s Scale) float64 { return 1 / math.Min(s.ClientBW, s.FSBandwidth) }

// largest is the largest serial term and its seconds.
func (e Estimate) largest() (string, float64) {
	name, v := "start-up", e.Startup
	for _, t := range []struct {
		name string
		v    float64
	}{{"join", e.Join}, {"mux", e.Mux}, {"hash", e.Hash}} {
		if t.v > v {
			name, v = t.name, t.v
		}
	}
	return name, v
}
