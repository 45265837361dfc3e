package join

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/video"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// The segments are split into contiguous runs balanced by bytes, rank 0 with at least one.
func TestSplitBytes(t *testing.T) {
	for _, c := range []struct {
		sizes []int64
		ranks int
		want  []int
	}{
		{[]int64{10, 10, 10, 10}, 2, []int{0, 2, 4}},
		{[]int64{10, 10, 10, 10}, 1, []int{0, 4}},
		{[]int64{30, 10, 10, 10}, 2, []int{0, 1, 4}},
		{[]int64{1, 1, 1, 100}, 2, []int{0, 3, 4}},
		{[]int64{5}, 3, []int{0, 1, 1, 1}}, // more ranks than segments: the others idle
		{[]int64{0, 0}, 2, []int{0, 1, 2}}, // empty segments still go to rank 0 first
		{[]int64{10, 10, 10}, 3, []int{0, 1, 2, 3}},
	} {
		if got := splitBytes(c.sizes, c.ranks); !slices.Equal(got, c.want) {
			t.Errorf("splitBytes(%v, %d) = %v, want %v", c.sizes, c.ranks, got, c.want)
		}
	}
}

// Each rank copies the segments it wrote in this attempt (in its page cache) where it wrote them
// all, in rank order, rank 0 the first; any other case (a resumed job's earlier segments, rank 0
// not the first's writer, a writer out of order or not of this run) is left to splitBytes.
func TestJoinBoundsFollowTheWriters(t *testing.T) {
	for _, c := range []struct {
		sizes   []int64
		writers []int
		ranks   int
		want    []int
	}{
		// Bytes would give [0 1 4]; the writers: rank 0 its three.
		{[]int64{30, 10, 10, 10}, []int{0, 0, 0, 1}, 2, []int{0, 3, 4}},
		{[]int64{10, 10, 10, 10, 10}, []int{0, 0, 2, 2, 2}, 3, []int{0, 2, 2, 5}}, // rank 1 wrote none
		{[]int64{10, 10}, []int{0, 0}, 3, []int{0, 2, 2, 2}},
		{[]int64{10, 10, 10}, []int{0, 1, 2}, 3, []int{0, 1, 2, 3}},
		// Not the writers': splitBytes's split.
		{[]int64{30, 10, 10, 10}, []int{0, -1, 1, 1}, 2, []int{0, 1, 4}}, // an earlier attempt's
		{[]int64{30, 10, 10, 10}, []int{1, 1, 0, 0}, 2, []int{0, 1, 4}},  // rank 0 not first
		{[]int64{30, 10, 10, 10}, []int{0, 1, 0, 1}, 2, []int{0, 1, 4}},  // out of order
		{[]int64{30, 10, 10, 10}, []int{0, 0, 2, 2}, 2, []int{0, 1, 4}},  // rank 2 of 2
		{[]int64{30, 10, 10, 10}, nil, 2, []int{0, 1, 4}},
	} {
		got, why := joinBounds(c.sizes, c.writers, c.ranks, make([][]byte, c.ranks))
		if !slices.Equal(got, c.want) || why != "" {
			t.Errorf("joinBounds(%v, %v, %d) = %v %q, want %v", c.sizes, c.writers, c.ranks, got, why, c.want)
		}
	}
	// The writers come from the manifest: this attempt's chunks by their rank, an earlier
	// attempt's as -1.
	done := []lustre.Chunk{{Chunk: 0, Size: 30, Rank: 0, Attempt: 2}, {Chunk: 1, Size: 10, Rank: 3, Attempt: 1}, {Chunk: 2, Size: 20, Rank: 1, Attempt: 2}}
	sizes, writers := segmentWriters(done, 3, 2)
	if !slices.Equal(sizes, []int64{30, 10, 20}) || !slices.Equal(writers, []int{0, -1, 1}) {
		t.Errorf("segmentWriters: sizes %v, writers %v; want [30 10 20] and [0 -1 1]", sizes, writers)
	}
}

// A rank that cannot open the output's temp file (the output on rank 0's own disk, the job
// folder shared) leaves every segment to rank 0, and the reason names it; when every rank with
// segments can, the split is splitBytes's.
func TestJoinBoundsWhenARankCannotWrite(t *testing.T) {
	sizes := []int64{10, 10, 10, 10}
	bounds, why := joinBounds(sizes, nil, 3, [][]byte{nil, {}, nil})
	if want := splitBytes(sizes, 3); !slices.Equal(bounds, want) || why != "" {
		t.Errorf("every rank can write: %v %q, want %v and no reason", bounds, why, want)
	}
	bounds, why = joinBounds(sizes, nil, 3, [][]byte{nil, nil, []byte("open /scratch/out.mp4.part: no such file or directory")})
	if !slices.Equal(bounds, []int{0, 4, 4, 4}) || !strings.Contains(why, "rank 2") || !strings.Contains(why, "no such file") {
		t.Errorf("rank 2 cannot write: %v %q, want [0 4 4 4] and a reason naming rank 2 and its error", bounds, why)
	}
	// A rank with no segment to copy (more ranks than segments) does not matter.
	bounds, why = joinBounds([]int64{5}, nil, 3, [][]byte{nil, []byte("permission denied"), nil})
	if !slices.Equal(bounds, []int{0, 1, 1, 1}) || why != "" {
		t.Errorf("an idle rank cannot write: %v %q, want [0 1 1 1] and no reason", bounds, why)
	}
	bounds, _ = joinBounds(sizes, nil, 3, [][]byte{nil, nil, []byte("x")})
	if busy(bounds) != 1 || busy(splitBytes(sizes, 3)) != 3 {
		t.Errorf("busy: %d and %d, want 1 and 3", busy(bounds), busy(splitBytes(sizes, 3)))
	}
}

// A rank's failure before or during its share (an instruction it cannot decode, a segment it
// cannot read) goes through every collective of the join and comes back as the join's error,
// naming it; nothing is copied. On the single-process communicator: rank 0's path.
func TestJoinShareCarriesALocalFailure(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.mp4.part")
	if err := os.WriteFile(out, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	lg := logging.New(&log, logging.Debug)
	ins := &instruction{Segs: []video.JoinSegment{{Path: filepath.Join(dir, "seg-000000.mp4")}}, Sizes: []int64{10}, Out: out}
	for _, c := range []struct {
		local error
		want  string
	}{
		{errors.New("rank 0: decoding the join: boom"), "decoding the join: boom"},
		{nil, "rank 0: segment 0:"},
	} {
		res, err := joinShare(context.Background(), collective.Single(), ins, c.local, &Side{}, lg)
		if err == nil || !strings.Contains(err.Error(), c.want) || res.Serial || len(res.Seconds) != 1 {
			t.Errorf("joinShare: serial %v, seconds %v, error %v; want an error with %q and one rank's seconds", res.Serial, res.Seconds, err, c.want)
		}
		if st, err := os.Stat(out); err != nil || st.Size() != 0 {
			t.Errorf("the output was written after a failure: %v", err)
		}
	}
}

// remove stops the side file's writer (here one that runs until it is cancelled, as ffmpeg
// muxing a long target's audio would) instead of waiting for it, and removes the file.
func TestSideFileRemoveStopsItsWriter(t *testing.T) {
	jd := &lustre.JobDir{Path: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Side{path: jd.Side(1, ".mp4"), done: make(chan struct{}), cancel: cancel}
	if err := os.WriteFile(s.path, []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.done)
		<-ctx.Done()
		s.err = ctx.Err()
	}()
	s.remove()
	if !errors.Is(s.err, context.Canceled) {
		t.Errorf("the writer ended with %v, want it cancelled", s.err)
	}
	if _, err := os.Stat(s.path); err == nil {
		t.Errorf("%s left", s.path)
	}
}
