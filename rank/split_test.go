package rank

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// checkSplit holds Split's promises for one input: every pending frame on exactly one rank, in
// order, stretches differing by at most one frame, owners holding their chunk's first frame, and
// a shared chunk only at a stretch's ends.
func checkSplit(t *testing.T, chunks []Range, pending []int, ranks int) [][]Piece {
	t.Helper()
	split := Split(chunks, pending, ranks)
	if len(split) != ranks {
		t.Fatalf("Split over %d ranks: %d shares", ranks, len(split))
	}
	var want []int // every pending frame, in order
	for _, c := range pending {
		for f := chunks[c].Start; f < chunks[c].End; f++ {
			want = append(want, f)
		}
	}
	var got []int
	lo, hi := len(want), 0
	firstOf := map[int]int{} // chunk: the rank holding its first frame
	for r, pieces := range split {
		n := Frames(pieces)
		lo, hi = min(lo, n), max(hi, n)
		for i, p := range pieces {
			if p.Frames.Empty() {
				t.Fatalf("rank %d piece %d is empty: %+v", r, i, p)
			}
			ch := chunks[p.Chunk]
			if p.Frames.Start < ch.Start || p.Frames.End > ch.End {
				t.Fatalf("rank %d piece %+v is outside its chunk %v", r, p, ch)
			}
			if p.Frames.Start == ch.Start {
				firstOf[p.Chunk] = r
			}
			if p.Shared(chunks) && i != 0 && i != len(pieces)-1 {
				t.Fatalf("rank %d: shared piece %+v in the middle of its stretch", r, p)
			}
			if p.Owner != r && i != 0 {
				t.Fatalf("rank %d: piece %+v of another rank's chunk is not its first", r, p)
			}
			for f := p.Frames.Start; f < p.Frames.End; f++ {
				got = append(got, f)
			}
		}
	}
	if !reflect.DeepEqual(got, want) && len(want)+len(got) > 0 {
		t.Fatalf("Split(%v, %v, %d): frames %v, want each pending frame once in order %v", chunks, pending, ranks, got, want)
	}
	if len(want) > 0 && hi-lo > 1 {
		t.Fatalf("Split(%v, %v, %d): shares of %d to %d frames", chunks, pending, ranks, lo, hi)
	}
	for r, pieces := range split {
		for _, p := range pieces {
			if p.Owner != firstOf[p.Chunk] {
				t.Fatalf("rank %d piece %+v: owner %d, but rank %d holds the chunk's first frame", r, p, p.Owner, firstOf[p.Chunk])
			}
		}
		checkEncodeOrder(t, pieces, r, chunks)
		// The senders of the chunk it ends inside hold exactly that chunk's other frames.
		senders := Senders(split, r)
		if len(pieces) == 0 || pieces[len(pieces)-1].Owner != r {
			continue
		}
		last := pieces[len(pieces)-1]
		held := last.Frames.Len()
		for _, s := range senders {
			if split[s][0].Chunk != last.Chunk || split[s][0].Owner != r {
				t.Fatalf("rank %d: sender %d's first piece %+v is not of chunk %d", r, s, split[s][0], last.Chunk)
			}
			held += split[s][0].Frames.Len()
		}
		if held != chunks[last.Chunk].Len() {
			t.Fatalf("rank %d: chunk %d's %d frames, %d of them held by it and its senders %v", r, last.Chunk, chunks[last.Chunk].Len(), held, senders)
		}
	}
	return split
}

// checkEncodeOrder holds EncodeOrder's promises for rank r's pieces: each piece once, and no
// shared piece before a whole chunk of the rank (a stop, which keeps whole chunks finished,
// then has written no part of a shared chunk unless the rank is past every whole chunk).
func checkEncodeOrder(t *testing.T, pieces []Piece, r int, chunks []Range) {
	t.Helper()
	order := EncodeOrder(pieces, r, chunks)
	if len(order) != len(pieces) {
		t.Fatalf("rank %d: EncodeOrder(%+v) = %+v, not each piece once", r, pieces, order)
	}
	seen := map[Piece]bool{}
	for _, p := range order {
		seen[p] = true
	}
	shared := false
	for i, p := range pieces {
		if !seen[p] {
			t.Fatalf("rank %d: EncodeOrder(%+v) = %+v, missing %+v", r, pieces, order, p)
		}
		if s := order[i].Shared(chunks); s {
			shared = true
		} else if shared {
			t.Fatalf("rank %d: EncodeOrder(%+v) = %+v: a whole chunk after a shared piece", r, pieces, order)
		}
	}
	// The part sent comes before the part owned: a rank's owned part waits for the next rank's
	// part, and that rank's sent part never waits for anything.
	for i, p := range order {
		if p.Shared(chunks) && p.Owner == r && i != len(order)-1 {
			t.Fatalf("rank %d: EncodeOrder(%+v) = %+v: the part owned is not last", r, pieces, order)
		}
	}
}

func TestEncodeOrder(t *testing.T) {
	// 1450 frames in chunks of 96 on 4 ranks (docs/performance.md's clip): rank 1 holds
	// frames [363,726): 21 of chunk 3 (rank 0's), chunks 4 to 6, 54 of chunk 7 (its own).
	chunks := Chunks(Range{0, 1450}, 96)
	split := Split(chunks, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 4)
	var got []int
	for _, p := range EncodeOrder(split[1], 1, chunks) {
		got = append(got, p.Chunk)
	}
	if want := []int{4, 5, 6, 3, 7}; !reflect.DeepEqual(got, want) {
		t.Errorf("rank 1 encodes chunks %v, want %v (whole first, then the part sent, then the part owned)", got, want)
	}
	// With no whole chunk, the order is the frames'.
	split = Split(Chunks(Range{0, 30}, 20), []int{0, 1}, 3)
	if got := EncodeOrder(split[1], 1, Chunks(Range{0, 30}, 20)); !reflect.DeepEqual(got, split[1]) {
		t.Errorf("EncodeOrder(%+v) = %+v, want it unchanged", split[1], got)
	}
}

func TestSplitExamples(t *testing.T) {
	chunks := Chunks(Range{0, 40}, 25) // [0,25) [25,40)
	got := checkSplit(t, chunks, []int{0, 1}, 2)
	want := [][]Piece{
		{{Chunk: 0, Frames: Range{0, 20}, Owner: 0}},
		{{Chunk: 0, Frames: Range{20, 25}, Owner: 0}, {Chunk: 1, Frames: Range{25, 40}, Owner: 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("40 frames, chunks of 25, 2 ranks: %+v, want %+v", got, want)
	}
	if s := Senders(got, 0); !reflect.DeepEqual(s, []int{1}) {
		t.Errorf("senders to rank 0: %v, want [1]", s)
	}
	if s := Senders(got, 1); s != nil {
		t.Errorf("senders to rank 1: %v, want none", s)
	}
	// A chunk over three ranks; the middle rank only sends.
	got = checkSplit(t, Chunks(Range{0, 30}, 30), []int{0}, 3)
	want = [][]Piece{{{0, Range{0, 10}, 0}}, {{0, Range{10, 20}, 0}}, {{0, Range{20, 30}, 0}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("one chunk on 3 ranks: %+v, want %+v", got, want)
	}
	if s := Senders(got, 0); !reflect.DeepEqual(s, []int{1, 2}) {
		t.Errorf("senders to rank 0: %v, want [1 2]", s)
	}
	// A resume with chunk 1 of 4 done in the middle: the pending frames skip it.
	chunks = Chunks(Range{100, 140}, 10)
	got = checkSplit(t, chunks, []int{0, 2, 3}, 2)
	want = [][]Piece{
		{{0, Range{100, 110}, 0}, {2, Range{120, 125}, 0}},
		{{2, Range{125, 130}, 0}, {3, Range{130, 140}, 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resume with a done chunk between: %+v, want %+v", got, want)
	}
	// More ranks than frames: one frame each, the rest idle.
	got = checkSplit(t, Chunks(Range{0, 3}, 2), []int{0, 1}, 5)
	if Frames(got[2]) != 1 || Frames(got[3]) != 0 || len(got[4]) != 0 {
		t.Errorf("3 frames on 5 ranks: %+v", got)
	}
	// Nothing pending.
	for r, p := range checkSplit(t, chunks, nil, 3) {
		if len(p) != 0 {
			t.Errorf("nothing pending: rank %d gets %+v", r, p)
		}
	}
}

func TestSplitRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 3000; iter++ {
		start := rng.IntN(50)
		chunks := Chunks(Range{start, start + 1 + rng.IntN(500)}, 1+rng.IntN(60))
		var pending []int
		for i := range chunks {
			if rng.IntN(4) != 0 {
				pending = append(pending, i)
			}
		}
		checkSplit(t, chunks, pending, 1+rng.IntN(40))
	}
}

// Even is Split's rule on one run: contiguous, in rank order, sizes within one, the extra first.
func TestEven(t *testing.T) {
	for _, c := range []struct {
		r     Range
		ranks int
		want  []Range
	}{
		{Range{0, 10}, 3, []Range{{0, 4}, {4, 7}, {7, 10}}},
		{Range{5, 7}, 4, []Range{{5, 6}, {6, 7}, {7, 7}, {7, 7}}},
		{Range{0, 0}, 2, []Range{{0, 0}, {0, 0}}},
		{Range{0, 3}, 1, []Range{{0, 3}}},
	} {
		if got := Even(c.r, c.ranks); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Even(%v, %d) = %v, want %v", c.r, c.ranks, got, c.want)
		}
	}
}
