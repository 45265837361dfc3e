package scaling

import (
	"math"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// Every term by hand, with inputs chosen so that dropping or misweighting any one changes the
// wall: each max picks the other side in one term, the busiest rank is not the mean, the nodes
// are fewer than the ranks and the ranks more than the slots.
func TestModelArithmetic(t *testing.T) {
	c := Costs{FrameSeconds: 0.5, FramePixels: 100, BytesPerFrame: 10, Launch: 1, Plan: 4, Load: 3,
		JoinFixed: 0.25, JoinPerSegment: 0.125, ParallelJoinFixed: 0.03125, ParallelPerSegment: 0.0625, PlanPerFrame: 0.015625,
		JoinPerByte: 0.01, MuxFixed: 0.5, MuxPerByte: 0.05, HashFixed: 0.375, HashPerByte: 0.001, ChainHop: 0.5, ChainPerByte: 0.002}
	s := Scale{Ranks: 4, Shares: []int{3, 3, 2, 2}, Segments: 4, Pixels: 200, ModelBytes: 1000,
		FSBandwidth: 100, ClientBW: 50, RanksPerNode: 2, Slots: 2, Launch: -1}
	if err := s.Check(c); err != nil {
		t.Fatal(err)
	}
	e := Model(c, s)
	// frames: 0.5 s × 2 (pixels) × 2 (4 ranks on 2 slots) = 2 s a frame, 3 frames on the busiest
	// start-up: launch 1 + max(plan 4, load 3) + 2 nodes × 1000 B / 100 B/s = 25
	// bytes: 10 frames × 10 B × 2 (pixels) = 200; rank 0 moves 1/50 s a byte
	// join: 0.25 + 4 × 0.125 + 200 × max(0.01, 2/50) = 8.75; mux: 0.5 + 200 × max(0.05, 2/50) = 10.5
	// hash: 0.375 + max(one block of 200 B × 0.001, 200 B at min(2 nodes × 50, 100) B/s) = 2.375
	want := map[string][2]float64{
		"frame seconds": {e.FrameSeconds, 2}, "frames": {e.Work, 6}, "read": {e.Read, 20}, "start-up": {e.Startup, 25},
		"bytes": {e.OutputBytes, 200}, "join": {e.Join, 8.75}, "mux": {e.Mux, 10.5}, "hash": {e.Hash, 2.375},
		"hash share": {e.HashShare, 200},
		"wall":       {e.Wall, 52.625}, "serial share": {e.SerialShare, 46.625 / 52.625},
		// one rank: 1 s a frame × 10, start-up 1 + 4 + 1 node's read 10, the same join and mux,
		// the hash through one node: 0.375 + 200 B at 50 B/s
		"one rank": {e.OneRank, 15 + 10 + 8.75 + 10.5 + 4.375}, "efficiency": {e.Efficiency, 48.625 / (4 * 52.625)},
		// without the overlap: launch, plan, rank 0's own read (1000/50), the load, every node's read
		"start-up without overlap": {e.SerialStartWithoutOverlap, 1 + 4 + 20 + 3 + 20},
		"goal frame seconds":       {e.GoalFrameSeconds(), 19 * 46.625 / 3},
		// a parallel join: the fixed parts, and 200 B at min(2 nodes × 50, 100) B/s
		"parallel join": {e.ParallelJoin, 0.25 + 0.5 + 2}, "parallel share": {e.ParallelShare, (25 + 2.75 + 2.375) / (25 + 6 + 2.75 + 2.375)},
	}
	for name, v := range want {
		if math.Abs(v[0]-v[1]) > 1e-9 {
			t.Errorf("%s: %g, want %g", name, v[0], v[1])
		}
	}
	if e.Busiest != 3 || e.Frames != 10 || e.Dominant != "start-up" {
		t.Errorf("busiest %d of %d frames, dominant %q; want 3 of 10, start-up", e.Busiest, e.Frames, e.Dominant)
	}

	// The model broadcast (model_broadcast): rank 0's one read of 1000 B at min(50, 100) B/s
	// and the bytes twice at the network's 400 B/s, in place of 2 nodes' reads at 100 B/s; one
	// rank reads alone. Rank 0 plans (4) while the bytes travel (5), the others load (3) after
	// them: launch 1 + read 20 + max(4, 5 + 3).
	b := s
	b.Broadcast, b.NetBW = true, 400
	if err := b.Check(c); err != nil {
		t.Fatal(err)
	}
	if e := Model(c, b); e.Read != 20+5 || e.Startup != 1+20+5+3 || e.OneRank != 15+10+8.75+10.5+4.375 {
		t.Errorf("broadcast: read %g, start-up %g, one rank %g; want 25, 29 and the same one rank", e.Read, e.Startup, e.OneRank)
	}
	// A plan longer than the broadcast and the load: the broadcast is hidden behind it.
	long := c
	long.Plan = 12
	if e := Model(long, b); e.Startup != 1+20+12 {
		t.Errorf("broadcast beside a plan of 12: start-up %g, want 33", e.Startup)
	}
	if !s.Broadcasts("auto") || s.Broadcasts("off") || !s.Broadcasts("on") {
		t.Error("4 ranks of 2 a node: auto and on broadcast, off does not")
	}
	if one := (Scale{Ranks: 2, RanksPerNode: 4}); one.Broadcasts("auto") || !one.Broadcasts("on") {
		t.Error("2 ranks on one node: auto does not broadcast, on does")
	}
	if inf := b; func() bool { inf.NetBW = math.Inf(1); return inf.Check(c) == nil }() {
		t.Error("a network of infinite bandwidth passed the check")
	}
	if b.NetBW = 0; b.Check(c) == nil {
		t.Error("a broadcast over a network of 0 B/s passed the check")
	}

	// Measured at scale (--frame-seconds) replaces the pixel scaling, not the oversubscription;
	// a launch given replaces the measured one.
	s.FrameSeconds, s.Launch = 0.25, 7
	if e := Model(c, s); e.FrameSeconds != 0.5 || e.Startup != 31 {
		t.Errorf("frame seconds %g, start-up %g; want 0.5 and 31", e.FrameSeconds, e.Startup)
	}

	// The parallel join (an MP4 output): its own fixed 0.03125, ceil(4 segments / 4 ranks) ×
	// its own 0.0625 a segment, rank 0's 10 frames × 0.015625, and max(the busiest rank's 3/10
	// of 200 B × 0.01, 200 B once (each rank reads the segments it wrote from its page cache)
	// at min(2 × 50, 100) B/s) = 2; no mux. Its hash is in the copy, nothing read back: the one
	// block spans all 4 ranks (3 hops of 0.5), and the busiest rank hashes its 60 B at 0.002.
	s.FrameSeconds, s.Launch, s.ParallelJoin = 0, -1, true
	if e := Model(c, s); e.Join != 0.03125+0.0625+0.15625+2 || e.Mux != 0 || math.Abs(e.Hash-(1.5+0.12)) > 1e-12 ||
		e.HashShare != 60 || math.Abs(e.Wall-(25+6+2.25+1.62)) > 1e-12 {
		t.Errorf("parallel join: join %g, mux %g, hash %g of %g B, wall %g; want %g, 0, 1.62 of 60 B, %g", e.Join, e.Mux, e.Hash, e.HashShare, e.Wall, 0.03125+0.0625+0.15625+2, 25+6+2.25+1.62)
	}
	c.JoinPerByte = 1 // a slow copy: the busiest rank's 60 B decide
	if e := Model(c, s); e.Join != 0.03125+0.0625+0.15625+60 {
		t.Errorf("parallel join, slow copy: join %g, want %g", e.Join, 0.03125+0.0625+0.15625+60)
	}
	c.JoinPerByte, s.ParallelJoin = 0.01, false

	// A one-pass join (the mux in the join's run) has no mux term.
	s.FrameSeconds, s.Launch = 0, -1
	c.OnePass = true
	if e := Model(c, s); e.Mux != 0 || e.Wall != 52.625-10.5 || e.Join != 8.75 {
		t.Errorf("one pass: mux %g, join %g, wall %g; want 0, 8.75, %g", e.Mux, e.Join, e.Wall, 52.625-10.5)
	}

	// The hash over several blocks: 8.5 blocks are 9, 3 for the busiest of 4 ranks, hashed at
	// 1 µs a byte against every byte at min(2 nodes × 1 GB/s, 1 GB/s); then the other side.
	const block = 16 << 20
	big := s
	big.BytesPerFrame, big.ClientBW, big.FSBandwidth = 0.85*block, 1e9, 1e9
	c.HashPerByte = 1e-6
	if e := Model(c, big); e.HashShare != 3*block || math.Abs(e.Hash-(0.375+3*block*1e-6)) > 1e-9 {
		t.Errorf("hash of 8.5 blocks on 4 ranks: share %g B, %g s; want 3 blocks, %g s", e.HashShare, e.Hash, 0.375+3*block*1e-6)
	}
	c.HashPerByte = 1e-12 // a fast hash: the file system's read of every byte decides
	if e := Model(c, big); math.Abs(e.Hash-(0.375+8.5*block/1e9)) > 1e-9 {
		t.Errorf("hash of 8.5 blocks, file system bound: %g s, want %g", e.Hash, 0.375+8.5*block/1e9)
	}
	// Joined in parallel, the busiest rank's 3 frames are 2.55 blocks: a block spans 2 ranks
	// at most (one hop), and no file system term (nothing is read back).
	big.ParallelJoin = true
	c.ChainPerByte = 1e-12
	if e := Model(c, big); e.HashHops != 1 || math.Abs(e.Hash-(0.5+2.55*block*1e-12)) > 1e-9 {
		t.Errorf("hash of 8.5 blocks in the parallel join: %g hops, %g s; want 1, %g", e.HashHops, e.Hash, 0.5+2.55*block*1e-12)
	}
	one := big
	one.Ranks, one.Shares = 1, []int{10}
	if e := Model(c, one); e.HashHops != 0 || math.Abs(e.Hash-8.5*block*1e-12) > 1e-9 {
		t.Errorf("one rank's parallel join: %g hops, hash %g s; want no hop", e.HashHops, e.Hash)
	}

	s.Segments = 0
	if err := s.Check(c); err == nil {
		t.Error("a partition without segments passed the check")
	}
}

// The costs from a report: share seconds over frames, rank 0's plan, the largest other load, the
// join's fixed part once the one-pass join's built-in rates are taken out; and from a report of
// the two-pass join (concat, then mux), both fixed parts under that join's rates.
func TestFromReport(t *testing.T) {
	st := func(plan, load, join float64) map[string]float64 {
		return map[string]float64{"plan": plan, "load": load, "join": join}
	}
	rep := &report.Report{Outcome: lustre.Complete, Chunks: 3, OutputBytes: 1e6, PerRank: []report.Rank{
		{Rank: 0, Frames: 60, Seconds: 4, StageSeconds: st(2.5, 0.8, 0.5)},
		{Rank: 1, Frames: 30, Seconds: 3, StageSeconds: st(0, 1.5, 0)},
		{Rank: 2, Frames: 10, Seconds: 1, StageSeconds: st(0, 1.2, 0)},
	}}
	c, err := FromReport(rep, "r.json", 640*360, 0.7)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{
		"frame seconds": {c.FrameSeconds, 8.0 / 100}, "bytes per frame": {c.BytesPerFrame, 1e4},
		"plan": {c.Plan, 2.5}, "load": {c.Load, 1.5}, "launch": {c.Launch, 0.7},
		"join fixed":       {c.JoinFixed, 0.5 - 3*DefaultOnePassPerSegment - 1e6*DefaultOnePassPerByte},
		"join per segment": {c.JoinPerSegment, DefaultOnePassPerSegment}, "join per byte": {c.JoinPerByte, DefaultOnePassPerByte},
		"parallel join per segment": {c.ParallelPerSegment, DefaultParallelPerSegment},
		"parallel join fixed":       {c.ParallelJoinFixed, DefaultParallelJoinFixed}, "plan per frame": {c.PlanPerFrame, DefaultPlanPerFrame},
		"hash fixed": {c.HashFixed, DefaultHashFixed}, "hash per byte": {c.HashPerByte, DefaultHashPerByte},
		"mux fixed": {c.MuxFixed, 0}, "mux per byte": {c.MuxPerByte, 0},
	}
	for name, v := range want {
		if math.Abs(v[0]-v[1]) > 1e-12 {
			t.Errorf("%s: %g, want %g", name, v[0], v[1])
		}
	}
	if c.FramePixels != 640*360 || !c.OnePass {
		t.Errorf("frame pixels %d, one pass %v; want %d, a one-pass join", c.FramePixels, c.OnePass, 640*360)
	}

	// A parallel join's report (rank 1 had a share of it) and the block hash's: their fixed
	// parts; the serial join's stays the built-in one.
	rep.FrameEnd = 100
	rep.PerRank[1].StageSeconds["join"] = 0.01
	rep.PerRank[0].StageSeconds["hash"] = 0.125
	if c, err = FromReport(rep, "r.json", 1, 0); err != nil || c.JoinFixed != Measured.JoinFixed ||
		math.Abs(c.ParallelJoinFixed-(0.5-1*DefaultParallelPerSegment-100*DefaultPlanPerFrame-1e6/3*DefaultOnePassPerByte)) > 1e-12 ||
		math.Abs(c.HashFixed-(0.125-1e6*DefaultHashPerByte)) > 1e-12 {
		t.Errorf("a parallel join's report: join fixed %g, parallel join fixed %g, hash fixed %g, %v", c.JoinFixed, c.ParallelJoinFixed, c.HashFixed, err)
	}
	// A parallel join that hashed in its copy (no hash stage): its join holds a rank's share of
	// the hashing, taken off its fixed part; the read-back hash's fixed part stays built in.
	rep.PerRank[0].StageSeconds["hash"] = 0
	if c, err = FromReport(rep, "r.json", 1, 0); err != nil || c.HashFixed != DefaultHashFixed ||
		math.Abs(c.ParallelJoinFixed-(0.5-1*DefaultParallelPerSegment-100*DefaultPlanPerFrame-1e6/3*DefaultOnePassPerByte-1e6/3*DefaultChainPerByte)) > 1e-12 {
		t.Errorf("a parallel join's report, hashed in the join: parallel join fixed %g, hash fixed %g, %v", c.ParallelJoinFixed, c.HashFixed, err)
	}
	// A parallel join's report from before the block hash (no hash stage at all): nothing of
	// its join was hashing.
	delete(rep.PerRank[0].StageSeconds, "hash")
	if c, err = FromReport(rep, "r.json", 1, 0); err != nil ||
		math.Abs(c.ParallelJoinFixed-(0.5-1*DefaultParallelPerSegment-100*DefaultPlanPerFrame-1e6/3*DefaultOnePassPerByte)) > 1e-12 {
		t.Errorf("a parallel join's report before the block hash: parallel join fixed %g, %v", c.ParallelJoinFixed, err)
	}
	rep.PerRank[1].StageSeconds["join"] = 0

	// An older report: concat, then a mux of its own (two passes, their rates).
	old := func(concat, mux float64) {
		for i := range rep.PerRank {
			s := rep.PerRank[i].StageSeconds
			delete(s, "join")
			s["concat"], s["mux"] = 0, 0
		}
		rep.PerRank[0].StageSeconds["concat"], rep.PerRank[0].StageSeconds["mux"] = concat, mux
	}
	old(0.5, 0.4)
	if c, err = FromReport(rep, "r.json", 1, 0); err != nil || c.OnePass ||
		math.Abs(c.JoinFixed-(0.5-3*DefaultJoinPerSegment-1e6*DefaultJoinPerByte)) > 1e-12 || c.JoinPerSegment != DefaultJoinPerSegment ||
		math.Abs(c.MuxFixed-(0.4-1e6*DefaultMuxPerByte)) > 1e-12 || c.MuxPerByte != DefaultMuxPerByte {
		t.Errorf("two passes: %+v, %v", c, err)
	}
	// An older report of the one-pass join (its time under concat, no mux time): that pass's rates.
	old(0.5, 0)
	if c, err = FromReport(rep, "r.json", 1, 0); err != nil || !c.OnePass || c.MuxFixed != 0 || c.MuxPerByte != 0 ||
		math.Abs(c.JoinFixed-(0.5-3*DefaultOnePassPerSegment-1e6*DefaultOnePassPerByte)) > 1e-12 {
		t.Errorf("one pass under concat: %+v, %v", c, err)
	}
	delete(rep.PerRank[2].StageSeconds, "mux")
	if _, err := FromReport(rep, "r.json", 1, 0); err == nil || !strings.Contains(err.Error(), `rank 2 has no "join"`) {
		t.Errorf("a report with neither a join nor a concat and mux: %v", err)
	}
	delete(rep.PerRank[1].StageSeconds, "load")
	if _, err := FromReport(rep, "r.json", 1, 0); err == nil || !strings.Contains(err.Error(), `rank 1 has no "load"`) {
		t.Errorf("a report without the start-up stages: %v", err)
	}
	rep.Outcome = lustre.Failed
	if _, err := FromReport(rep, "r.json", 1, 0); err == nil || !strings.Contains(err.Error(), "not complete") {
		t.Errorf("a failed run's report: %v", err)
	}
}

// WorkPixels (frame_enhancer's upscale, scaled back to the output by the encoder) moves the
// frame's seconds, not its bytes.
func TestWorkPixels(t *testing.T) {
	c := Costs{FrameSeconds: 0.5, FramePixels: 100, BytesPerFrame: 10, Launch: 1}
	s := Scale{Ranks: 1, Shares: []int{4}, Segments: 1, Pixels: 100, FSBandwidth: 100, ClientBW: 50, RanksPerNode: 1, Launch: -1}
	plain := Model(c, s)
	s.WorkPixels = 1600
	up := Model(c, s)
	if up.FrameSeconds != 16*plain.FrameSeconds || up.OutputBytes != plain.OutputBytes {
		t.Errorf("×4 work: %g s a frame and %g bytes, want %g and %g", up.FrameSeconds, up.OutputBytes, 16*plain.FrameSeconds, plain.OutputBytes)
	}
}
