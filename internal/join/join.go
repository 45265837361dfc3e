// Package join writes a job's encoded segments into its output, on rank 0 alone or with every
// rank: the side file, the parallel join's protocol, the serial join, and the output's hash.
//
// Rank 0 holds a Coordinator from the start of the frame work (its side file is written
// meanwhile); once every chunk is done it joins in parallel (Parallel) or serially (Serial),
// hashes the output where the join did not (HashShared), and finally releases the other ranks
// (Release). The other ranks wait in Serve for both protocols' instructions. The output's
// facts (Output) are resolved once by the caller: nothing here reads the job's settings.
package join

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/fault"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// Output is what a join needs to know of the output it writes.
type Output struct {
	// Image: the output is no video, and nothing is joined (the other ranks are still released).
	Image bool
	// Path is the output as the user named it: its extension chooses the container.
	Path string
	// Encoder is the segments' video encoder (whether the parallel join can hold its codec).
	Encoder string
	// Mux is what the output holds beside the segments' video (the target's other streams,
	// metadata, chapters), the output's timeline, and the node-local scratch folder.
	Mux video.Mux
	// Duration is the target's: a span to its end (Mux.Span.End 0) lasts that long, for the
	// room a failed join names.
	Duration time.Duration
}

// Coordinator is rank 0's end of the join's and the hash's protocols: the output's facts, its
// side file, and which of the two instructions the other ranks (in Serve) were sent already.
type Coordinator struct {
	comm   collective.Comm
	out    Output
	side   *Side
	sent   bool // the join's instruction, or that there is none
	hashed bool // the hash's instruction, or none due: the parallel join hashed the output
}

// Start is rank 0's Coordinator of out, whose side file (at side, in the job folder: a killed
// attempt's is removed by the next) it starts writing in the background when out can be joined
// in parallel. Remove stops and removes it.
func Start(ctx context.Context, comm collective.Comm, out Output, side string) *Coordinator {
	return &Coordinator{comm: comm, out: out, side: startSide(ctx, out, side)}
}

// Remove stops the side file's ffmpeg if it still runs and removes the file (a nil Coordinator:
// nothing).
func (c *Coordinator) Remove() {
	if c != nil {
		c.side.remove()
	}
}

// Result is how rank 0's parallel join went.
type Result struct {
	// Serial: rank 0 must join serially instead (why is logged); no error then.
	Serial bool
	// Seconds is each rank's wall time in its share (its hashing included).
	Seconds []float64
	Hash    Hash
}

// Hash is the output's size and block hash for the run report. InJoin: the parallel join wrote
// the output (its layout was decided), so it hashed it, and no hash protocol follows; Sum is
// "" when it could not be computed, Failed says why. Seconds is each rank's wall time in the
// shared hash (HashShared).
type Hash struct {
	InJoin      bool
	Size        int64
	Sum, Failed string
	Seconds     []float64
}

// Parallel is rank 0's parallel join of segs (their sizes and writers from done, the manifest's
// chunks, attempt this one) into out, the output's temp file rank 0 created beside the output
// (see the protocol in protocol.go). Where the output cannot be joined in parallel (its side
// file's reason, or rank 0's decision on the segments) the result says Serial, with the reason
// logged: Serial joins it then. An error names the rank and segment that failed.
func (c *Coordinator) Parallel(ctx context.Context, segs []video.JoinSegment, done []lustre.Chunk, attempt int, out *os.File, log *logging.Logger) (Result, error) {
	if c.side.why != "" {
		log.Infof("join: serial (ffmpeg's concat and mux): %s", c.side.why)
		return Result{Serial: true}, nil
	}
	sizes, writers := segmentWriters(done, len(segs), attempt)
	c.sent = true
	res, err := rank0Join(ctx, c.comm, &instruction{Segs: segs, Sizes: sizes, Writers: writers, Times: c.out.Mux.Times, Out: out.Name()}, out, c.side, log)
	c.hashed = res.Hash.InJoin
	return res, err
}

// Serial is the serial join of segs into out by rank 0's ffmpeg (video.JoinFile): the
// segments joined and the target's other streams muxed in one pass.
func (c *Coordinator) Serial(ctx context.Context, segs []video.JoinSegment, out *os.File) error {
	return video.JoinFile(ctx, c.out.Mux, segs, out)
}

// HashShared is the size and block hash of the joined output f, before its rename, computed by
// every rank (hash.go), and each rank's time in it. The other ranks first leave the join's
// protocol: a serial join sent them no instruction. err is a collective's failure; a hash that
// fails says so in Failed, with no Sum.
func (c *Coordinator) HashShared(f *os.File, log *logging.Logger) (Hash, error) {
	if !c.sent {
		c.sent = true
		if err := sendInstruction(c.comm, nil); err != nil {
			return Hash{}, err
		}
	}
	c.hashed = true
	size, sum, secs, failed, err := hashOutput(c.comm, f, log)
	return Hash{Size: size, Sum: sum, Failed: failed, Seconds: secs}, err
}

// Release tells the other ranks, waiting in Serve, that no join and no hash follows where rank
// 0 sent neither instruction (an image, an attempt failed or stopped before its join).
func (c *Coordinator) Release() error {
	if !c.sent {
		c.sent = true
		if err := sendInstruction(c.comm, nil); err != nil {
			return err
		}
	}
	if !c.hashed {
		c.hashed = true
		if err := sendHash(c.comm, nil); err != nil {
			return err
		}
	}
	return nil
}

// KeptError is the one line of a join into out (absolute) that failed with err while the job
// folder jobDir keeps the finished segments done (keptError): with the room the output needs
// and the room left beside it.
func (c *Coordinator) KeptError(ctx context.Context, err error, out string, done []lustre.Chunk, jobDir string) error {
	need, free := c.needs(ctx, done), fault.FreeRoom(filepath.Dir(out))
	return keptError(err, out, need, free, len(done), jobDir)
}

// Serve is the part of a rank other than 0 in both protocols: it takes rank 0's join
// instruction and does its share when there is one, then, unless that join hashed the output,
// its share of the hash. Its failures in a share reach rank 0, which fails the job; an error
// here is a collective's (the ranks can no longer talk).
func Serve(ctx context.Context, comm collective.Comm, log *logging.Logger) error {
	hashed, err := serveJoin(ctx, comm, log)
	if err != nil || hashed {
		return err
	}
	return serveHash(comm, log)
}
