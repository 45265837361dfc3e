package join

import (
	"encoding/json"
	"fmt"
	"os"
	"syscall"

	"github.com/facefusion-hpc/facefusion/collective"
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
// learns where the video starts, writes (hashing what it writes: chain.go), and reports how
// that went, its blocks' sums and how long it took. A rank that fails on the way still takes
// part in every collective and in the hash's chain, and reports its failure.

// instruction is what rank 0 tells every rank to join; the zero value: nothing.
type instruction struct {
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
func openOut(ins *instruction, flags int) (*os.File, error) {
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

// segmentTables is one rank's tables (or its error) for rank 0.
type segmentTables struct {
	Err    string   `json:",omitempty"`
	Tables [][]byte `json:",omitempty"`
}

// decision is rank 0's answer: where the video starts, or why nothing is written.
type decision struct {
	Err    string `json:",omitempty"`
	Serial bool   `json:",omitempty"` // rank 0 joins serially instead (Err says why)
	// Environment: Err is the nodes' doing (their encoders differ), not this program's.
	Environment bool   `json:",omitempty"`
	Room        string `json:",omitempty"` // Err found a full file system or quota (outcome.Room)
	VideoStart  int64
	Size        int64 // the output's
	// hash is rank 0's hasher of its range of the output (the header and the side file's bytes
	// written in planOutput, then its pieces); not sent.
	hash *lustre.RangeHasher
}

// outcome is how one rank's share went, for rank 0: its failure ("" none), its wall time in
// the join (the run report's stage "join" of that rank, its hashing included) and its part of
// the output's hash.
type outcome struct {
	Err string `json:",omitempty"`
	// Room: Err found its file system or quota full (fault.RoomWhy's words): the errno does not
	// travel, and the words are not read back out of Err's text, which holds file names.
	Room    string  `json:",omitempty"`
	Seconds float64 `json:",omitempty"`
	Hash    chainShare
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
// in attempt, -1 where an earlier attempt did (instruction's Writers).
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

// sendInstruction broadcasts rank 0's instruction (nil: none).
func sendInstruction(comm collective.Comm, ins *instruction) error {
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
