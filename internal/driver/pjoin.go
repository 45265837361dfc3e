package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/job"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/outpath"
	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// The parallel join of an MP4 or MOV output (video.PlanJoin): every rank reads the indexes of a
// contiguous run of MP4 segments, balanced by bytes, and copies their samples into the output at
// offsets from an exclusive prefix sum of their sizes; no process runs at the join. Rank 0 writes
// the index and the side file's bytes (the target's other streams, written by ffmpeg while the
// frames were worked on). The protocol, after the results are gathered: rank 0 creates the
// output's temp file and broadcasts one instruction (empty: no parallel join); when there is one,
// every rank says whether it can open that file for writing (if one cannot, rank 0 copies every
// segment), learns its segments, reads their tables, scans its size, sends its tables to rank 0,
// learns where the video starts, writes (hashing what it writes: chainhash.go), and reports how
// that went, its blocks' sums and how long it took. A rank that fails on the way still takes
// part in every collective and in the hash's chain, and reports its failure.

// jobDir is p's job folder, its segments in the container cfg's output is joined from: MP4 when
// it is joined in parallel (startSide's test), NUT otherwise.
func jobDir(cfg job.Config, p *Plan) *lustre.JobDir {
	if p.Image {
		return &lustre.JobDir{Path: p.JobDir, ID: p.jobDirID}
	}
	jd := lustre.ForJob(p.JobDir, video.SegmentExtFor(cfg.OutputPath, p.Spec.Codecs.Encoder, p.Spec.Times()))
	jd.ID = p.jobDirID
	return jd
}

// sideFile is rank 0's side file, written in the background from the start of the frame work.
type sideFile struct {
	path   string
	why    string // why the output is joined serially ("" when the side file is written)
	done   chan struct{}
	err    error
	cancel context.CancelFunc // stops its ffmpeg: no join follows, or the join is done
}

// startSide starts the side file of cfg's output when the output can be joined in parallel;
// otherwise the returned sideFile says why not. Rank 0 only. The file is in the job folder jd
// (Side: a killed attempt's is removed by the next, a finished job's with the folder).
func startSide(ctx context.Context, cfg job.Config, p *Plan, jd *lustre.JobDir) *sideFile {
	if p.Image {
		return &sideFile{why: "an image"}
	}
	times := p.Spec.Times()
	if !times.Valid() {
		return &sideFile{why: "the target's frame times are not known"}
	}
	if ok, why := video.ParallelJoin(cfg.OutputPath, p.Spec.Codecs.Encoder, times); !ok {
		return &sideFile{why: why}
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &sideFile{path: jd.Side(p.Attempt, filepath.Ext(cfg.OutputPath)), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(s.done)
		s.err = video.WriteSide(ctx, cfg.TempDir(), times, cfg.TargetPath, p.Spec.Span, p.Spec.Carried.Keep, cfg.OutputPath, p.Spec.Audio, p.Spec.Codecs.Encoder, s.path)
	}()
	return s
}

// remove stops the side file's ffmpeg if it still runs (the attempt failed or stopped before
// the join: its exit must not wait for a whole mux), waits for it, and removes the file.
func (s *sideFile) remove() {
	if s == nil || s.done == nil {
		return
	}
	s.cancel()
	<-s.done
	os.Remove(s.path)
}

// joinInstruction is what rank 0 tells every rank to join; the zero value: nothing.
type joinInstruction struct {
	Segs  []video.JoinSegment `json:",omitempty"`
	Sizes []int64             `json:",omitempty"` // the segments' sizes in bytes
	// Writers is the rank that wrote each segment in this attempt, -1 for an earlier attempt's.
	Writers []int `json:",omitempty"`
	Times   video.Timeline
	Out     string `json:",omitempty"` // the temp file beside the output, created by rank 0
	// Inode is Out's inode number as rank 0 created it (the device differs between a shared
	// file system's clients; its inode numbers do not): every rank writes only into that file.
	Inode uint64 `json:",omitempty"`
}

// openOut opens the join's output ins.Out for writing (flags added), only when it is the
// regular file rank 0 created: never through a link, never another file put in its place.
func openOut(ins *joinInstruction, flags int) (*os.File, error) {
	f, err := os.OpenFile(ins.Out, os.O_WRONLY|syscall.O_NOFOLLOW|flags, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && (!st.Mode().IsRegular() || st.Sys().(*syscall.Stat_t).Ino != ins.Inode) {
		err = fmt.Errorf("%s is not the file rank 0 created (%s, inode %d): another user who can write into its folder replaced it", ins.Out, safefs.KindOf(st.Mode()), st.Sys().(*syscall.Stat_t).Ino)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// joinReport is one rank's tables (or its error) for rank 0.
type joinReport struct {
	Err    string   `json:",omitempty"`
	Tables [][]byte `json:",omitempty"`
}

// joinDecision is rank 0's answer: where the video starts, or why nothing is written.
type joinDecision struct {
	Err    string `json:",omitempty"`
	Serial bool   `json:",omitempty"` // rank 0 joins serially instead (Err says why)
	// Environment: Err is the nodes' doing (their encoders differ), not this program's.
	Environment bool   `json:",omitempty"`
	Room        string `json:",omitempty"` // Err found a full file system or quota (joinOutcome.Room)
	VideoStart  int64
	Size        int64 // the output's
	// hash is rank 0's hasher of its range of the output (the header and the side file's bytes
	// written in planOutput, then its pieces); not sent.
	hash *lustre.RangeHasher
}

// joinOutcome is how one rank's share went, for rank 0: its failure ("" none), its wall time in
// the join (the run report's stage "join" of that rank, its hashing included) and its part of
// the output's hash.
type joinOutcome struct {
	Err string `json:",omitempty"`
	// Room: Err found its file system or quota full (fault.RoomWhy's words): the errno does not
	// travel, and the words are not read back out of Err's text, which holds file names.
	Room    string  `json:",omitempty"`
	Seconds float64 `json:",omitempty"`
	Hash    chainShare
}

// joinHash is the output's hash as the parallel join computed it. InJoin: the join wrote the
// output (its layout was decided), so it hashed it, and no hash protocol (hash.go) follows, on
// every rank. Rank 0 has the output's size and hash (sum "" when it could not: Failed says why).
type joinHash struct {
	InJoin      bool
	Size        int64
	Sum, Failed string
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

// segmentWriters is the size of each of n segments recorded in done, and the rank that wrote it
// in attempt, -1 where an earlier attempt did (joinInstruction's Writers).
func segmentWriters(done []lustre.Chunk, n, attempt int) (sizes []int64, writers []int) {
	sizes, writers = make([]int64, n), make([]int, n)
	for _, c := range done {
		sizes[c.Chunk], writers[c.Chunk] = c.Size, -1
		if c.Attempt == attempt {
			writers[c.Chunk] = c.Rank
		}
	}
	return sizes, writers
}

// splitWriters gives each of ranks the segments it wrote itself (writers[i]: the rank that wrote
// segment i in this attempt, -1 for an earlier attempt's), in splitBytes's form. They are still
// in its node's page cache, so the join reads them from memory and the file system carries each
// byte once, on its way into the output: copied by another rank, a segment would cross the file
// system twice. It applies where every segment is this attempt's and the writers rise with the
// segments (the even split's order), rank 0 writing the first; otherwise it is nil.
func splitWriters(writers []int, ranks int) []int {
	if len(writers) == 0 || writers[0] != 0 {
		return nil
	}
	bounds := make([]int, ranks+1)
	bounds[ranks] = len(writers)
	r := 0
	for i, w := range writers {
		if w < r || w >= ranks {
			return nil // an earlier attempt's, out of order, or not of this communicator
		}
		for ; r < w; r++ {
			bounds[r+1] = i
		}
	}
	for r++; r < ranks; r++ {
		bounds[r] = len(writers)
	}
	return bounds
}

// joinBounds is rank 0's split of the segments of sizes (written by writers, splitWriters's) over
// ranks, from each rank's answer to whether it can open the output's temp file for writing
// (access[r]: "" yes, else why not). Each rank copies the segments it wrote where it wrote them
// all (splitWriters), otherwise a run balanced by bytes. A rank with segments to copy that
// cannot write (the output on a disk only rank 0 sees, while the job folder is shared) leaves
// the whole join to rank 0, still without a process; why then says so ("" otherwise). A rank
// with none to copy does not matter.
func joinBounds(sizes []int64, writers []int, ranks int, access [][]byte) (bounds []int, why string) {
	split := splitWriters(writers, ranks)
	if split == nil {
		split = splitBytes(sizes, ranks)
	}
	for r, a := range access {
		if len(a) > 0 && r < ranks && split[r+1] > split[r] {
			bounds = make([]int, ranks+1)
			for i := 1; i <= ranks; i++ {
				bounds[i] = len(sizes)
			}
			return bounds, fmt.Sprintf("rank %d cannot write the output's temp file (%s): rank 0 copies every segment", r, a)
		}
	}
	return split, ""
}

// busy is how many ranks of bounds (splitBytes's form) copy at least one segment.
func busy(bounds []int) int {
	n := 0
	for r := 0; r+1 < len(bounds); r++ {
		if bounds[r+1] > bounds[r] {
			n++
		}
	}
	return n
}

// parallelJoin is rank 0's part of the join (see the protocol above): segs with their sizes
// and writers (joinBounds) into final. serial is true when rank 0 must join serially instead (the reason is logged);
// err is the join's failure, naming the rank and segment; seconds is each rank's wall time in
// its share.
func parallelJoin(ctx context.Context, comm collective.Comm, cfg job.Config, side *sideFile, segs []video.JoinSegment, sizes []int64, writers []int, times video.Timeline, final *outpath.Temp, log *logging.Logger) (serial bool, seconds []float64, hash joinHash, err error) {
	ins := joinInstruction{Segs: segs, Sizes: sizes, Writers: writers, Times: times, Out: final.Path}
	// Created before the instruction goes (outpath.CreateTemp): every rank checks that it can
	// open it for writing, and that it is that file (its inode).
	var local error
	if st, err := final.File.Stat(); err != nil {
		local = fmt.Errorf("rank 0: the join's output: %w", err)
	} else {
		ins.Inode = st.Sys().(*syscall.Stat_t).Ino
	}
	if err := sendInstruction(comm, &ins); err != nil {
		return false, nil, joinHash{}, err
	}
	return joinShare(ctx, comm, cfg, &ins, local, side, log)
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
// is one, does its share. Its errors reach rank 0, which fails the job. hashed: the join hashed
// the output, and no hash protocol follows.
func serveJoin(ctx context.Context, comm collective.Comm, cfg job.Config, log *logging.Logger) (hashed bool, err error) {
	b, err := collective.BcastBytes(comm, 0, nil)
	if err != nil {
		return false, fmt.Errorf("receiving the join: %w", err)
	}
	if len(b) == 0 {
		return false, nil
	}
	// A failure here still takes part in every collective of the join, so that rank 0, which
	// waits in them, learns of it and fails the job.
	var ins joinInstruction
	var local error
	if err := json.Unmarshal(b, &ins); err != nil {
		local = fmt.Errorf("rank %d: decoding the join: %w", comm.Rank(), err)
	}
	_, _, h, err := joinShare(ctx, comm, cfg, &ins, local, nil, log)
	return h.InJoin, err
}

// joinShare is every rank's share of the parallel join. local is a failure before it (the
// rank then reads and writes nothing but still takes part in every collective and reports it).
func joinShare(ctx context.Context, comm collective.Comm, cfg job.Config, ins *joinInstruction, local error, side *sideFile, log *logging.Logger) (serial bool, seconds []float64, hash joinHash, err error) {
	me := comm.Rank()
	start := time.Now()
	fail := func(e error) {
		if local == nil {
			local = fmt.Errorf("rank %d: %w", me, e)
		}
	}
	// Can this rank write the output's temp file? Rank 0 created it beside the output.
	access := ""
	if local == nil && me != 0 {
		if f, err := openOut(ins, 0); err != nil {
			access = err.Error()
		} else {
			f.Close()
		}
	}
	answers, err := comm.Gather(0, []byte(access))
	if err != nil {
		fail(fmt.Errorf("gathering who can write the join's output: %w", err))
	}
	var bounds []int
	var alone string
	if me == 0 {
		bounds, alone = joinBounds(ins.Sizes, ins.Writers, comm.Size(), answers)
		if alone != "" && local == nil {
			log.Warnf("join: parallel, rank 0 alone: %s", alone)
		}
	}
	bb, _ := json.Marshal(bounds)
	if bb, err = collective.BcastBytes(comm, 0, bb); err != nil {
		fail(fmt.Errorf("broadcasting the join's split: %w", err))
	} else if err := json.Unmarshal(bb, &bounds); err != nil || len(bounds) != comm.Size()+1 {
		fail(fmt.Errorf("decoding the join's split: %v", err))
		bounds = nil
	}
	var mine []video.JoinSegment
	if local == nil && bounds != nil && bounds[me+1] <= len(ins.Segs) {
		mine = ins.Segs[bounds[me]:bounds[me+1]]
	}
	var pieces []*video.Piece
	rep := joinReport{}
	var size int64
	// Each segment's index: no process, a few reads of its moov.
	for k, seg := range mine {
		if local != nil {
			break
		}
		p, err := video.ReadSegment(seg, ins.Times)
		if err != nil {
			fail(fmt.Errorf("segment %d: %w", bounds[me]+k, err))
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
		fail(fmt.Errorf("the join's offsets: %w", err))
		if rep.Err == "" {
			rep = joinReport{Err: local.Error()}
		}
	}
	rb, _ := json.Marshal(&rep)
	all, err := comm.Gather(0, rb)
	if err != nil {
		fail(fmt.Errorf("gathering the segments' tables: %w", err))
	}
	read := time.Since(start)
	var dec joinDecision
	if me == 0 {
		if local != nil {
			dec = joinDecision{Err: local.Error()}
		} else {
			dec = planOutput(ctx, ins, side, pieces, all, busy(bounds), log)
		}
	}
	db, _ := json.Marshal(&dec)
	if db, err = collective.BcastBytes(comm, 0, db); err != nil {
		fail(fmt.Errorf("broadcasting the join's layout: %w", err))
	} else if err := json.Unmarshal(db, &dec); err != nil {
		fail(fmt.Errorf("decoding the join's layout: %w", err))
	}
	var chain chainShare
	copied, chained := time.Now(), time.Duration(0)
	if dec.Err == "" {
		// The output's layout is decided: every rank hashes its range of it as it writes it, and
		// takes part in the chain whatever fails.
		hash.InJoin = true
		h, hashErr := dec.hash, local
		if me != 0 && local == nil {
			at := dec.VideoStart + base[0]
			var herr error
			if h, herr = lustre.NewRangeHasher(lustre.HashBlockBytes, dec.Size, at, at+size); herr != nil {
				hashErr = herr
			}
		}
		if local == nil {
			if err := copyPieces(ins, dec.VideoStart+base[0], pieces, h); err != nil {
				fail(err)
				hashErr = err
			}
		}
		copied = time.Now()
		// The chain is the ranks with segments to copy, from the split every rank has (a rank
		// that could not decode it counts every rank in: only a corrupted broadcast does that).
		holds := make([]bool, comm.Size())
		for r := range holds {
			holds[r] = bounds == nil || bounds[r+1] > bounds[r]
		}
		if prev, next, in := chainPeers(holds, me); in {
			chain = chainHash(comm, h, hashErr, prev, next)
		}
		chained = time.Since(copied)
	}
	// Every rank's outcome at rank 0: the first failure is the job's.
	out := joinOutcome{Seconds: time.Since(start).Seconds(), Hash: chain}
	if local != nil && dec.Err == "" {
		out.Err, out.Room = local.Error(), fault.RoomWhy(local)
	}
	ob, _ := json.Marshal(&out)
	outs, err := comm.Gather(0, ob)
	if err != nil {
		return false, nil, hash, fmt.Errorf("gathering the join's outcome: %w", err)
	}
	log.Debugf("rank %d: its share of the parallel join (%d segment(s), %d bytes) in %.2f s, %.2f s of which reading the segments' tables, %.3f s its wait in the hash's chain", me, len(mine), size, out.Seconds, read.Seconds(), chained.Seconds())
	if me != 0 {
		return false, nil, hash, nil // its failure, if any, is rank 0's to report: it goes on to the outcome
	}
	var first joinOutcome
	seconds = make([]float64, len(outs))
	shares := make([]chainShare, len(outs))
	for r, b := range outs {
		var o joinOutcome
		if err := json.Unmarshal(b, &o); err != nil {
			o.Err = fmt.Sprintf("rank %d's join outcome: %v", r, err)
			o.Hash.Err = o.Err
		}
		seconds[r], shares[r] = o.Seconds, o.Hash
		if first.Err == "" {
			first = o
		}
	}
	if dec.Serial {
		log.Infof("join: serial (ffmpeg's concat and mux): %s", dec.Err)
		return true, seconds, hash, nil
	}
	if dec.Err != "" {
		return false, seconds, hash, decisionError(dec)
	}
	if first.Err != "" {
		var err error = errors.New(first.Err)
		if first.Room != "" {
			err = &fault.RoomError{Words: first.Room, Err: err}
		}
		return false, seconds, hash, err
	}
	hash.Size = dec.Size
	blocks := int((dec.Size + lustre.HashBlockBytes - 1) / lustre.HashBlockBytes)
	if hash.Sum, hash.Failed = combineChain(shares, blocks); hash.Failed == "" {
		log.Debugf("output hash: %d block(s) of %d bytes hashed in the join's copy on %d rank(s), no read of the output", blocks, lustre.HashBlockBytes, len(outs))
	}
	return false, seconds, hash, nil
}

// decisionError is the join's error when rank 0's decision says nothing is written.
func decisionError(dec joinDecision) error {
	switch {
	case dec.Room != "":
		return &fault.RoomError{Words: dec.Room, Err: errors.New(dec.Err)}
	case dec.Environment:
		return fault.AsEnvironment(errors.New(dec.Err))
	}
	return errors.New(dec.Err)
}

// planOutput is rank 0's layout from every rank's tables: it writes the index and the side
// file's bytes into ins.Out and says where the video starts.
func planOutput(ctx context.Context, ins *joinInstruction, side *sideFile, pieces []*video.Piece, all [][]byte, ranks int, log *logging.Logger) joinDecision {
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
	if ce := (*video.ConfigError)(nil); errors.As(err, &ce) && !ce.Concatenable() && ce.Piece < len(ins.Segs) {
		// Neither join can put both in one file: the serial one would decode every segment
		// with the first one's configuration.
		return joinDecision{Environment: true, Err: fmt.Sprintf("the segments %s and %s were encoded with different %s configurations (another ffmpeg or encoder library on some nodes?): they cannot be joined into one video; give every node the same ffmpeg, then run the job again with --fresh",
			ins.Segs[0].Path, ins.Segs[ce.Piece].Path, ce.Codec)}
	}
	if err != nil {
		return joinDecision{Err: err.Error(), Serial: true}
	}
	// Rank 0's range of the output: the header, the side file's bytes, its pieces.
	var mine int64
	for _, p := range pieces {
		mine += p.Size
	}
	h, err := lustre.NewRangeHasher(lustre.HashBlockBytes, l.Size, 0, l.Offsets[0]+mine)
	if err != nil {
		return joinDecision{Err: fmt.Sprintf("rank 0: %v", err), Room: fault.RoomWhy(err)}
	}
	f, err := openOut(ins, os.O_TRUNC)
	if err == nil {
		// Sized at once: the other ranks write into it at their offsets.
		if err = f.Truncate(l.Size); err == nil {
			err = l.WriteHead(f, s, h)
		}
		if err == nil {
			err = f.Sync() // a full quota may show only here or at close (NFS, Lustre)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return joinDecision{Err: fmt.Sprintf("rank 0: %v", err), Room: fault.RoomWhy(err)}
	}
	log.Infof("join: parallel (%s): %d segment(s) on %d rank(s), rank 0 writes the index and the side file's %d bytes",
		strings.TrimPrefix(filepath.Ext(ins.Out), "."), len(ins.Segs), ranks, s.Size)
	return joinDecision{VideoStart: l.Offsets[0], Size: l.Size, hash: h}
}

// copyPieces writes pieces one after another from at into the join's output, hashing them
// with h, and syncs what it wrote (on a shared file system each client flushes its own pages).
func copyPieces(ins *joinInstruction, at int64, pieces []*video.Piece, h *lustre.RangeHasher) error {
	if len(pieces) == 0 {
		return nil
	}
	f, err := openOut(ins, 0)
	if err != nil {
		return fmt.Errorf("the join's output: %w", err)
	}
	defer f.Close()
	var hash io.WriterAt // none: a nil *RangeHasher is not a nil WriterAt
	if h != nil {
		hash = h
	}
	for _, p := range pieces {
		if err := video.CopyPiece(f, at, p, hash); err != nil {
			return err
		}
		at += p.Size
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("the join's output: %w", err)
	}
	return f.Close()
}

// joinContext is what finish needs for the parallel join and the output's hash: the
// communicator, rank 0's side file, and whether the one instruction of each protocol was sent.
type joinContext struct {
	comm   collective.Comm
	side   *sideFile
	sent   bool
	hashed bool // hash.go's instruction, or none due: the parallel join hashed the output
}
