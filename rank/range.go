// Package rank says who this process is in a distributed run (world and node-local rank, bound
// GPU), cuts a frame range into chunks and splits their frames evenly over the ranks (Split).
//
// It is pure: nothing here talks to MPI. The caller hands in the ranks it got from collective,
// so partitioning and binding are tested without a launcher.
package rank

import "fmt"

// Range is the half-open interval [Start, End) of frame or chunk indices.
type Range struct{ Start, End int }

// Len is the number of indices in r; an inverted range has none.
func (r Range) Len() int {
	if r.End <= r.Start {
		return 0
	}
	return r.End - r.Start
}

// Empty reports whether r holds no index.
func (r Range) Empty() bool { return r.Len() == 0 }

func (r Range) String() string { return fmt.Sprintf("[%d,%d)", r.Start, r.End) }

// Chunks cuts r into consecutive ranges of chunkFrames frames; only the last may be shorter.
// A chunk is the unit of work, of output (one segment file) and of checkpoint, so its
// boundaries depend only on r and chunkFrames, never on the rank count: a rerun with a
// different number of ranks finds the same chunks already done.
func Chunks(r Range, chunkFrames int) []Range {
	if chunkFrames <= 0 {
		panic(fmt.Sprintf("rank.Chunks: chunk size %d must be positive", chunkFrames))
	}
	n := r.Len()
	if n == 0 {
		return nil
	}
	out := make([]Range, 0, (n+chunkFrames-1)/chunkFrames)
	for s := r.Start; s < r.End; s += chunkFrames {
		out = append(out, Range{s, min(s+chunkFrames, r.End)})
	}
	return out
}
