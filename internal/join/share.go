package join

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
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// rank0Join is rank 0's part of the join (protocol.go): it sends ins, with out's inode, and does
// its share.
func rank0Join(ctx context.Context, comm collective.Comm, ins *instruction, out *os.File, side *Side, log *logging.Logger) (Result, error) {
	// Created before the instruction goes (by the caller, exclusively): every rank checks that it
	// can open it for writing, and that it is that file (its inode).
	var local error
	if st, err := out.Stat(); err != nil {
		local = fmt.Errorf("rank 0: the join's output: %w", err)
	} else {
		ins.Inode = st.Sys().(*syscall.Stat_t).Ino
	}
	if err := sendInstruction(comm, ins); err != nil {
		return Result{}, err
	}
	return joinShare(ctx, comm, ins, local, side, log)
}

// serveJoin is the join's part of a rank other than 0: it takes rank 0's instruction and, when
// there is one, does its share. Its errors reach rank 0, which fails the job. hashed: the join
// hashed the output, and no hash protocol follows.
func serveJoin(ctx context.Context, comm collective.Comm, log *logging.Logger) (hashed bool, err error) {
	b, err := collective.BcastBytes(comm, 0, nil)
	if err != nil {
		return false, fmt.Errorf("receiving the join: %w", err)
	}
	if len(b) == 0 {
		return false, nil
	}
	// A failure here still takes part in every collective of the join, so that rank 0, which
	// waits in them, learns of it and fails the job.
	var ins instruction
	var local error
	if err := json.Unmarshal(b, &ins); err != nil {
		local = fmt.Errorf("rank %d: decoding the join: %w", comm.Rank(), err)
	}
	res, err := joinShare(ctx, comm, &ins, local, nil, log)
	return res.Hash.InJoin, err
}

// share is one rank's share of the parallel join, step by step (joinShare). Its first failure
// is local: the rank then reads and writes nothing more, but still takes part in every
// collective and reports it.
type share struct {
	comm  collective.Comm
	me    int
	ins   *instruction
	side  *Side // rank 0's
	log   *logging.Logger
	local error
	start time.Time

	bounds  []int               // every rank's run of the segments (splitBytes's form); nil: unknown
	mine    []video.JoinSegment // this rank's run
	pieces  []*video.Piece      // its segments' indexes
	tables  segmentTables       // what it sends rank 0: its tables, or its failure
	size    int64               // its pieces' bytes
	base    int64               // where its bytes start after the video's start
	dec     decision            // rank 0's layout, or why nothing is written
	read    time.Duration       // from the start to the tables' gather
	chain   chainShare          // its part of the output's hash
	hash    Hash                // InJoin once the layout is decided
	chained time.Duration       // its wait in the hash's chain
}

// fail records this rank's first failure.
func (s *share) fail(e error) {
	if s.local == nil {
		s.local = fmt.Errorf("rank %d: %w", s.me, e)
	}
}

// joinShare is every rank's share of the parallel join. local is a failure before it (the
// rank then reads and writes nothing but still takes part in every collective and reports it).
// On rank 0 the result is the join's (Result), on the others only Hash.InJoin.
func joinShare(ctx context.Context, comm collective.Comm, ins *instruction, local error, side *Side, log *logging.Logger) (Result, error) {
	s := &share{comm: comm, me: comm.Rank(), ins: ins, side: side, log: log, local: local, start: time.Now()}
	s.split()
	s.readTables()
	all := s.sendTables()
	s.decide(ctx, all)
	if s.dec.Err == "" {
		s.write()
	}
	return s.outcome()
}

// split agrees on every rank's run of the segments: each rank says whether it can write the
// output's temp file (rank 0 created it beside the output), and rank 0 broadcasts its split.
func (s *share) split() {
	access := ""
	if s.local == nil && s.me != 0 {
		if f, err := openOut(s.ins, 0); err != nil {
			access = err.Error()
		} else {
			f.Close()
		}
	}
	answers, err := s.comm.Gather(0, []byte(access))
	if err != nil {
		s.fail(fmt.Errorf("gathering who can write the join's output: %w", err))
	}
	if s.me == 0 {
		var alone string
		s.bounds, alone = joinBounds(s.ins.Sizes, s.ins.Writers, s.comm.Size(), answers)
		if alone != "" && s.local == nil {
			s.log.Warnf("join: parallel, rank 0 alone: %s", alone)
		}
	}
	bb, _ := json.Marshal(s.bounds)
	if bb, err = collective.BcastBytes(s.comm, 0, bb); err != nil {
		s.fail(fmt.Errorf("broadcasting the join's split: %w", err))
	} else if err := json.Unmarshal(bb, &s.bounds); err != nil || len(s.bounds) != s.comm.Size()+1 {
		s.fail(fmt.Errorf("decoding the join's split: %v", err))
		s.bounds = nil
	}
	if s.local == nil && s.bounds != nil && s.bounds[s.me+1] <= len(s.ins.Segs) {
		s.mine = s.ins.Segs[s.bounds[s.me]:s.bounds[s.me+1]]
	}
}

// readTables reads the index of each of this rank's segments: no process, a few reads of its
// moov.
func (s *share) readTables() {
	for k, seg := range s.mine {
		if s.local != nil {
			break
		}
		p, err := video.ReadSegment(seg, s.ins.Times)
		if err != nil {
			s.fail(fmt.Errorf("segment %d: %w", s.bounds[s.me]+k, err))
			break
		}
		s.pieces = append(s.pieces, p)
		b, _ := p.Table.MarshalBinary()
		s.tables.Tables = append(s.tables.Tables, b)
		s.size += p.Size
	}
	if s.local != nil {
		s.tables = segmentTables{Err: s.local.Error()}
		s.size = 0
	}
}

// sendTables learns where this rank's bytes start (a prefix sum of the ranks' sizes) and sends
// its tables, or its failure, to rank 0; on rank 0 it returns every rank's.
func (s *share) sendTables() [][]byte {
	base := []int64{s.size}
	if err := collective.ExscanInt64(s.comm, base); err != nil {
		s.fail(fmt.Errorf("the join's offsets: %w", err))
		if s.tables.Err == "" {
			s.tables = segmentTables{Err: s.local.Error()}
		}
	}
	s.base = base[0]
	rb, _ := json.Marshal(&s.tables)
	all, err := s.comm.Gather(0, rb)
	if err != nil {
		s.fail(fmt.Errorf("gathering the segments' tables: %w", err))
	}
	s.read = time.Since(s.start)
	return all
}

// decide is rank 0's layout of the output from every rank's tables (all), or why nothing is
// written, broadcast to every rank.
func (s *share) decide(ctx context.Context, all [][]byte) {
	if s.me == 0 {
		if s.local != nil {
			s.dec = decision{Err: s.local.Error()}
		} else {
			s.dec = planOutput(ctx, s.ins, s.side, s.pieces, all, busy(s.bounds), s.log)
		}
	}
	db, _ := json.Marshal(&s.dec)
	var err error
	if db, err = collective.BcastBytes(s.comm, 0, db); err != nil {
		s.fail(fmt.Errorf("broadcasting the join's layout: %w", err))
	} else if err := json.Unmarshal(db, &s.dec); err != nil {
		s.fail(fmt.Errorf("decoding the join's layout: %w", err))
	}
}

// write copies this rank's pieces into the output once its layout is decided, hashing its range
// of it as it writes, and takes its part in the hash's chain whatever fails.
func (s *share) write() {
	s.hash.InJoin = true
	h, hashErr := s.dec.hash, s.local
	at := s.dec.VideoStart + s.base
	if s.me != 0 && s.local == nil {
		var herr error
		if h, herr = lustre.NewRangeHasher(lustre.HashBlockBytes, s.dec.Size, at, at+s.size); herr != nil {
			hashErr = herr
		}
	}
	if s.local == nil {
		if err := copyPieces(s.ins, at, s.pieces, h); err != nil {
			s.fail(err)
			hashErr = err
		}
	}
	copied := time.Now()
	// The chain is the ranks with segments to copy, from the split every rank has (a rank that
	// could not decode it counts every rank in: only a corrupted broadcast does that).
	holds := make([]bool, s.comm.Size())
	for r := range holds {
		holds[r] = s.bounds == nil || s.bounds[r+1] > s.bounds[r]
	}
	if prev, next, in := chainPeers(holds, s.me); in {
		s.chain = chainHash(s.comm, h, hashErr, prev, next)
	}
	s.chained = time.Since(copied)
}

// outcome gathers every rank's outcome at rank 0, whose result it is: the first failure is the
// job's.
func (s *share) outcome() (Result, error) {
	out := outcome{Seconds: time.Since(s.start).Seconds(), Hash: s.chain}
	if s.local != nil && s.dec.Err == "" {
		out.Err, out.Room = s.local.Error(), fault.RoomWhy(s.local)
	}
	ob, _ := json.Marshal(&out)
	outs, err := s.comm.Gather(0, ob)
	if err != nil {
		return Result{Hash: s.hash}, fmt.Errorf("gathering the join's outcome: %w", err)
	}
	s.log.Debugf("its share of the parallel join (%d segment(s), %d bytes) in %.2f s, %.2f s of which reading the segments' tables, %.3f s its wait in the hash's chain", len(s.mine), s.size, out.Seconds, s.read.Seconds(), s.chained.Seconds())
	if s.me != 0 {
		return Result{Hash: s.hash}, nil // its failure, if any, is rank 0's to report: it goes on to the outcome
	}
	return s.result(outs)
}

// result is rank 0's Result from every rank's outcome (outs).
func (s *share) result(outs [][]byte) (Result, error) {
	var first outcome
	res := Result{Seconds: make([]float64, len(outs)), Hash: s.hash}
	shares := make([]chainShare, len(outs))
	for r, b := range outs {
		var o outcome
		if err := json.Unmarshal(b, &o); err != nil {
			o.Err = fmt.Sprintf("rank %d's join outcome: %v", r, err)
			o.Hash.Err = o.Err
		}
		res.Seconds[r], shares[r] = o.Seconds, o.Hash
		if first.Err == "" {
			first = o
		}
	}
	if s.dec.Serial {
		s.log.Infof("join: serial (ffmpeg's concat and mux): %s", s.dec.Err)
		res.Serial = true
		return res, nil
	}
	if s.dec.Err != "" {
		return res, decisionError(s.dec)
	}
	if first.Err != "" {
		var err error = errors.New(first.Err)
		if first.Room != "" {
			err = &fault.RoomError{Words: first.Room, Err: err}
		}
		return res, err
	}
	res.Hash.Size = s.dec.Size
	blocks := int((s.dec.Size + lustre.HashBlockBytes - 1) / lustre.HashBlockBytes)
	if res.Hash.Sum, res.Hash.Failed = combineChain(shares, blocks); res.Hash.Failed == "" {
		s.log.Debugf("output hash: %d block(s) of %d bytes hashed in the join's copy on %d rank(s), no read of the output", blocks, lustre.HashBlockBytes, len(outs))
	}
	return res, nil
}

// decisionError is the join's error when rank 0's decision says nothing is written.
func decisionError(dec decision) error {
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
func planOutput(ctx context.Context, ins *instruction, side *Side, pieces []*video.Piece, all [][]byte, ranks int, log *logging.Logger) decision {
	var tables []video.PieceTable
	for r, b := range all {
		var rep segmentTables
		if err := json.Unmarshal(b, &rep); err != nil {
			return decision{Err: fmt.Sprintf("rank %d's segment tables: %v", r, err)}
		}
		if rep.Err != "" {
			return decision{Err: rep.Err}
		}
		for _, t := range rep.Tables {
			var pt video.PieceTable
			if err := pt.UnmarshalBinary(t); err != nil {
				return decision{Err: fmt.Sprintf("rank %d's segment tables: %v", r, err)}
			}
			tables = append(tables, pt)
		}
	}
	<-side.done
	if side.err != nil {
		if ctx.Err() != nil {
			return decision{Err: ctx.Err().Error()}
		}
		return decision{Err: fmt.Sprintf("the side file failed (%v)", side.err), Serial: true}
	}
	s, err := video.ReadSide(side.path)
	if err != nil {
		return decision{Err: err.Error(), Serial: true}
	}
	l, err := video.PlanJoin(s, tables, pieces[0], ins.Times)
	if ce := (*video.ConfigError)(nil); errors.As(err, &ce) && !ce.Concatenable() && ce.Piece < len(ins.Segs) {
		// Neither join can put both in one file: the serial one would decode every segment
		// with the first one's configuration.
		return decision{Environment: true, Err: fmt.Sprintf("the segments %s and %s were encoded with different %s configurations (another ffmpeg or encoder library on some nodes?): they cannot be joined into one video; give every node the same ffmpeg, then run the job again with --fresh",
			ins.Segs[0].Path, ins.Segs[ce.Piece].Path, ce.Codec)}
	}
	if err != nil {
		return decision{Err: err.Error(), Serial: true}
	}
	// Rank 0's range of the output: the header, the side file's bytes, its pieces.
	var mine int64
	for _, p := range pieces {
		mine += p.Size
	}
	h, err := lustre.NewRangeHasher(lustre.HashBlockBytes, l.Size, 0, l.Offsets[0]+mine)
	if err != nil {
		return decision{Err: fmt.Sprintf("rank 0: %v", err), Room: fault.RoomWhy(err)}
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
		return decision{Err: fmt.Sprintf("rank 0: %v", err), Room: fault.RoomWhy(err)}
	}
	log.Infof("join: parallel (%s): %d segment(s) on %d rank(s), rank 0 writes the index and the side file's %d bytes",
		strings.TrimPrefix(filepath.Ext(ins.Out), "."), len(ins.Segs), ranks, s.Size)
	return decision{VideoStart: l.Offsets[0], Size: l.Size, hash: h}
}

// copyPieces writes pieces one after another from at into the join's output, hashing them
// with h, and syncs what it wrote (on a shared file system each client flushes its own pages).
func copyPieces(ins *instruction, at int64, pieces []*video.Piece, h *lustre.RangeHasher) error {
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
