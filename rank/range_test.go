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

func TestRangeLen(t *testing.T) {
	if (Range{5, 3}).Len() != 0 || !(Range{4, 4}).Empty() || (Range{2, 9}).Len() != 7 {
		t.Fatal("Range.Len wrong on inverted, empty or ordinary range")
	}
}
