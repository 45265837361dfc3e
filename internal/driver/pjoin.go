package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/pipeline"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// The parallel join of an MP4 or MOV output (video.PlanJoin): every rank reads the indexes of a
// contiguous run of MP4 segments, balanced by bytes, and copies their samples into the output at
// offsets from an exclusive prefix sum of their sizes; no process runs at the join. Rank 0 writes the index and the side file's bytes (the target's other
// streams, written by ffmpeg while the frames were worked on). The protocol, after the results
// are gathered: rank 0 broadcasts one instruction (empty: no parallel join), and, when there is
// one, every rank reads its segments' tables, scans its size, sends its tables to rank 0,
// learns where the video starts, writes, and reports how that went.

// jobDir is p's job folder, its segments in the container cfg's output is joined from: MP4 when
// it is joined in parallel (startSide's test), NUT otherwise.
func jobDir(cfg job.Config, p *Plan) *lustre.JobDir {
	if p.Image {
		return &lustre.JobDir{Path: p.JobDir}
	}
	return lustre.ForJob(p.JobDir, cfg.OutputPath, cfg.OutputVideoEncoder, pipeline.OutputTimes(cfg, p.Info))
}

// sideFile is rank 0's side file, written in the background from the start of the frame work.
type sideFile struct {
	path string
	why  string // why the output is joined serially ("" when the side file is written)
	done chan struct{}
	err  error
}

// startSide starts the side file of cfg's output when the output can be joined in parallel;
// otherwise the returned sideFile says why not. Rank 0 only.
func startSide(ctx context.Context, cfg job.Config, p *Plan) *sideFile {
	if p.Image {
		return &sideFile{why: "an image"}
	}
	times := pipeline.OutputTimes(cfg, p.Info)
	if !times.Valid() {
		return &sideFile{why: "the target's frame times are not known"}
	}
	if ok, why := video.ParallelJoin(cfg.OutputPath, cfg.OutputVideoEncoder, times); !ok {
		return &sideFile{why: why}
	}
	ext := filepath.Ext(cfg.OutputPath)
	f, err := os.CreateTemp(cfg.TempDir(), "facefusion-side-*"+ext)
	if err != nil {
		return &sideFile{why: fmt.Sprintf("the side file cannot be written in %s: %v", cfg.TempDir(), err)}
	}
	f.Close()
	s := &sideFile{path: f.Name(), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.err = video.WriteSide(ctx, times, cfg.TargetPath, pipeline.TargetSpan(cfg, p.Info), p.Carried.Keep, cfg.OutputPath, pipeline.AudioOptions(cfg), cfg.OutputVideoEncoder, s.path)
	}()
	return s
}

// remove waits for the side file's ffmpeg and removes the file.
func (s *sideFile) remove() {
	if s == nil || s.done == nil {
		return
	}
	<-s.done
	os.Remove(s.path)
}

// joinInstruction is what rank 0 tells every rank to join; the zero value: nothing.
type joinInstruction struct {
	Segs   []video.JoinSegment `json:",omitempty"`
	Bounds []int               `json:",omitempty"` // rank r copies Segs[Bounds[r]:Bounds[r+1]]
	Times  video.Timeline
	Out    string `json:",omitempty"` // the temp file beside the output, created by rank 0
}

// joinReport is one rank's tables (or its error) for rank 0.
type joinReport struct {
	Err    string   `json:",omitempty"`
	Tables [][]byte `json:",omitempty"`
}

// joinDecision is rank 0's answer: where the video starts, or why nothing is written.
type joinDecision struct {
	Err        string `json:",omitempty"`
	Serial     bool   `json:",omitempty"` // rank 0 joins serially instead (Err says why)
	VideoStart int64
}

// splitBytes gives each of ranks a contiguous run of the segments of sizes, balanced by bytes:
// rank r starts at the first segment whose middle lies at or past r/ranks of the total bytes.
// Rank 0 gets at least one segment (its first gives the video's sample entry).
func splitBytes(sizes []int64, ranks int) []int {
	var total int64
	for _, s := range sizes {
		total += s
	}
	bounds := make([]int, ranks+1)
	bounds[ranks] = len(sizes)
	i, before := 0, int64(0)
	for r := 1; r < ranks; r++ {
		// The integer form of before + sizes[i]/2 < total·r/ranks.
		for i < len(sizes) && ((2*before+sizes[i])*int64(ranks) < 2*total*int64(r) || i == 0) {
			before += sizes[i]
			i++
		}
		bounds[r] = i
	}
	return bounds
}

// parallelJoin is rank 0's part of the join (see the protocol above): segs with their sizes
// into final. serial is true when rank 0 must join serially instead (the reason is logged);
// err is the join's failure, naming the rank and segment.
func parallelJoin(ctx context.Context, comm collective.Comm, cfg job.Config, side *sideFile, segs []video.JoinSegment, sizes []int64, times video.Timeline, final string, log *logging.Logger) (serial bool, err error) {
	ins := joinInstruction{Segs: segs, Bounds: splitBytes(sizes, comm.Size()), Times: times, Out: final}
	if err := sendInstruction(comm, &ins); err != nil {
		return false, err
	}
	return joinShare(ctx, comm, cfg, &ins, side, log)
}

// sendInstruction broadcasts rank 0's instruction (nil: none).
func sendInstruction(comm collective.Comm, ins *joinInstruction) error {
	b := []byte{}
	if ins != nil {
		var err error
		if b, err = json.Marshal(ins); err != nil {
			return err
		}
	}
	if _, err := collective.BcastBytes(comm, 0, b); err != nil {
		return fmt.Errorf("broadcasting the join: %w", err)
	}
	return nil
}

// serveJoin is the part of a rank other than 0: it takes rank 0's instruction and, when there
// is one, does its share. Its errors reach rank 0, which fails the job.
func serveJoin(ctx context.Context, comm collective.Comm, cfg job.Config, log *logging.Logger) error {
	b, err := collective.BcastBytes(comm, 0, nil)
	if err != nil {
		return fmt.Errorf("receiving the join: %w", err)
	}
	if len(b) == 0 {
		return nil
	}
	var ins joinInstruction
	if err := json.Unmarshal(b, &ins); err != nil {
		return fmt.Errorf("decoding the join: %w", err)
	}
	_, err = joinShare(ctx, comm, cfg, &ins, nil, log)
	return err
}

// joinShare is every rank's share of the parallel join.
func joinShare(ctx context.Context, comm collective.Comm, cfg job.Config, ins *joinInstruction, side *sideFile, log *logging.Logger) (serial bool, err error) {
	me := comm.Rank()
	start := time.Now()
	mine := ins.Segs[ins.Bounds[me]:ins.Bounds[me+1]]
	var pieces []*video.Piece
	var local error
	rep := joinReport{}
	var size int64
	// Each segment's index: no process, a few reads of its moov.
	for k, seg := range mine {
		p, err := video.ReadSegment(seg, ins.Times)
		if err != nil {
			local = fmt.Errorf("rank %d: segment %d: %w", me, ins.Bounds[me]+k, err)
			break
		}
		pieces = append(pieces, p)
		b, _ := p.Table.MarshalBinary()
		rep.Tables = append(rep.Tables, b)
		size += p.Size
	}
	if local != nil {
		rep = joinReport{Err: local.Error()}
		size = 0
	}
	base := []int64{size}
	if err := collective.ExscanInt64(comm, base); err != nil {
		return false, fmt.Errorf("the join's offsets: %w", err)
	}
	rb, _ := json.Marshal(&rep)
	all, err := comm.Gather(0, rb)
	if err != nil {
		return false, fmt.Errorf("gathering the segments' tables: %w", err)
	}
	read := time.Since(start)
	var dec joinDecision
	if me == 0 {
		dec = planOutput(ctx, ins, side, pieces, all, log)
	}
	db, _ := json.Marshal(&dec)
	if db, err = collective.BcastBytes(comm, 0, db); err != nil {
		return false, fmt.Errorf("broadcasting the join's layout: %w", err)
	}
	if err := json.Unmarshal(db, &dec); err != nil {
		return false, fmt.Errorf("decoding the join's layout: %w", err)
	}
	if dec.Err == "" && local == nil {
		local = copyPieces(ins.Out, dec.VideoStart+base[0], pieces)
		if local != nil {
			local = fmt.Errorf("rank %d: %w", me, local)
		}
	}
	// Every rank's outcome at rank 0: the first failure is the job's.
	msg := ""
	if local != nil && dec.Err == "" {
		msg = local.Error()
	}
	errs, err := comm.Gather(0, []byte(msg))
	if err != nil {
		return false, fmt.Errorf("gathering the join's outcome: %w", err)
	}
	log.Debugf("rank %d: its share of the parallel join (%d segment(s), %d bytes) in %.2f s, %.2f s of which reading the segments' tables", me, len(mine), size, time.Since(start).Seconds(), read.Seconds())
	if me != 0 {
		return false, nil
	}
	if dec.Serial {
		log.Infof("join: serial (ffmpeg's concat and mux): %s", dec.Err)
		return true, nil
	}
	if dec.Err != "" {
		return false, errors.New(dec.Err)
	}
	for _, e := range errs {
		if len(e) > 0 {
			return false, errors.New(string(e))
		}
	}
	return false, nil
}

// planOutput is rank 0's layout from every rank's tables: it writes the index and the side
// file's bytes into ins.Out and says where the video starts.
func planOutput(ctx context.Context, ins *joinInstruction, side *sideFile, pieces []*video.Piece, all [][]byte, log *logging.Logger) joinDecision {
	var tables []video.PieceTable
	for r, b := range all {
		var rep joinReport
		if err := json.Unmarshal(b, &rep); err != nil {
			return joinDecision{Err: fmt.Sprintf("rank %d's segment tables: %v", r, err)}
		}
		if rep.Err != "" {
			return joinDecision{Err: rep.Err}
		}
		for _, t := range rep.Tables {
			var pt video.PieceTable
			if err := pt.UnmarshalBinary(t); err != nil {
				return joinDecision{Err: fmt.Sprintf("rank %d's segment tables: %v", r, err)}
			}
			tables = append(tables, pt)
		}
	}
	<-side.done
	if side.err != nil {
		if ctx.Err() != nil {
			return joinDecision{Err: ctx.Err().Error()}
		}
		return joinDecision{Err: fmt.Sprintf("the side file failed (%v)", side.err), Serial: true}
	}
	s, err := video.ReadSide(side.path)
	if err != nil {
		return joinDecision{Err: err.Error(), Serial: true}
	}
	l, err := video.PlanJoin(s, tables, pieces[0], ins.Times)
	if err != nil {
		return joinDecision{Err: err.Error(), Serial: true}
	}
	f, err := os.Create(ins.Out)
	if err == nil {
		// Sized at once: the other ranks write into it at their offsets.
		if err = f.Truncate(l.Size); err == nil {
			err = l.WriteHead(f, s)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return joinDecision{Err: fmt.Sprintf("rank 0: %v", err)}
	}
	log.Infof("join: parallel (%s): %d segment(s) on %d rank(s), rank 0 writes the index and the side file's %d bytes",
		strings.TrimPrefix(filepath.Ext(ins.Out), "."), len(ins.Segs), len(ins.Bounds)-1, s.Size)
	return joinDecision{VideoStart: l.Offsets[0]}
}

// copyPieces writes pieces one after another from at into out, and syncs what it wrote (on a
// shared file system each client flushes its own pages).
func copyPieces(out string, at int64, pieces []*video.Piece) error {
	if len(pieces) == 0 {
		return nil
	}
	f, err := os.OpenFile(out, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("the join's output: %v", err)
	}
	defer f.Close()
	for _, p := range pieces {
		if err := video.CopyPiece(f, at, p); err != nil {
			return err
		}
		at += p.Size
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("the join's output: %v", err)
	}
	return f.Close()
}

// joinContext is what finish needs for the parallel join: the communicator, rank 0's side
// file, and whether the one instruction of the protocol was sent.
type joinContext struct {
	comm collective.Comm
	side *sideFile
	sent bool
}
