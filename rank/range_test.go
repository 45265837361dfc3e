package rank

import (
	"math/rand/v2"
	"testing"
)

func TestChunksCoverExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 5000; iter++ {
		start := rng.IntN(1000)
		n := rng.IntN(3000)
		if iter%10 == 0 {
			n = 0
		}
		size := 1 + rng.IntN(400)
		r := Range{start, start + n}
		cs := Chunks(r, size)
		want := (n + size - 1) / size
		if len(cs) != want {
			t.Fatalf("Chunks(%v, %d): %d chunks, want %d", r, size, len(cs), want)
		}
		next := r.Start
		for i, c := range cs {
			if c.Start != next {
				t.Fatalf("Chunks(%v, %d)[%d] = %v starts at %d, want %d (gap or overlap)", r, size, i, c, c.Start, next)
			}
			if c.Len() == 0 || c.Len() > size || (i < len(cs)-1 && c.Len() != size) {
				t.Fatalf("Chunks(%v, %d)[%d] = %v has length %d", r, size, i, c, c.Len())
			}
			next = c.End
		}
		if n > 0 && next != r.End {
			t.Fatalf("Chunks(%v, %d) ends at %d, want %d", r, size, next, r.End)
		}
	}
}

func TestChunksExample(t *testing.T) {
	got := Chunks(Range{10, 35}, 10)
	want := []Range{{10, 20}, {20, 30}, {30, 35}}
	if len(got) != len(want) {
		t.Fatalf("Chunks = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Chunks = %v, want %v", got, want)
		}
	}
}

func TestAssignBalancedContiguous(t *testing.T) {
	for chunks := 0; chunks <= 200; chunks++ {
		for ranks := 1; ranks <= 70; ranks++ {
			as := Assign(chunks, ranks)
			if len(as) != ranks {
				t.Fatalf("Assign(%d, %d): %d ranges", chunks, ranks, len(as))
			}
			next, lo, hi := 0, chunks+1, -1
			for i, a := range as {
				if a.Start != next || a.End < a.Start {
					t.Fatalf("Assign(%d, %d)[%d] = %v, want start %d", chunks, ranks, i, a, next)
				}
				next = a.End
				lo, hi = min(lo, a.Len()), max(hi, a.Len())
				if i > 0 && a.Len() > as[i-1].Len() {
					t.Fatalf("Assign(%d, %d): rank %d gets more than rank %d: %v", chunks, ranks, i, i-1, as)
				}
			}
			if next != chunks {
				t.Fatalf("Assign(%d, %d) covers [0,%d), want [0,%d)", chunks, ranks, next, chunks)
			}
			if hi-lo > 1 {
				t.Fatalf("Assign(%d, %d) unbalanced: sizes %d..%d: %v", chunks, ranks, lo, hi, as)
			}
			if ranks > chunks && as[ranks-1].Len() != 0 {
				t.Fatalf("Assign(%d, %d): last rank should be idle, got %v", chunks, ranks, as[ranks-1])
			}
		}
	}
}

// Frames → chunks → ranks must hand every frame to exactly one rank.
func TestChunksThenAssignCoverEveryFrameOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 2000; iter++ {
		frames := Range{0, rng.IntN(5000)}
		cs := Chunks(frames, 1+rng.IntN(300))
		owner := make([]int, frames.Len())
		for i := range owner {
			owner[i] = -1
		}
		ranks := 1 + rng.IntN(64)
		for rk, block := range Assign(len(cs), ranks) {
			for _, c := range cs[block.Start:block.End] {
				for f := c.Start; f < c.End; f++ {
					if owner[f] != -1 {
						t.Fatalf("frame %d owned by ranks %d and %d", f, owner[f], rk)
					}
					owner[f] = rk
				}
			}
		}
		for f, o := range owner {
			if o == -1 {
				t.Fatalf("frame %d of %v owned by no rank", f, frames)
			}
		}
	}
}

func TestRangeLen(t *testing.T) {
	if (Range{5, 3}).Len() != 0 || !(Range{4, 4}).Empty() || (Range{2, 9}).Len() != 7 {
		t.Fatal("Range.Len wrong on inverted, empty or ordinary range")
	}
}
