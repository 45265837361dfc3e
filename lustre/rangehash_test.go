package lustre

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/facefusion-hpc/facefusion/rank"
)

// chainTilings are ranges of a file of 47 bytes in blocks of 10, as cuts (each range runs from
// one cut to the next): ranges on block boundaries exactly, a block over four ranges, empty
// ranges (at a boundary, inside a block, at the end), a first range of a few bytes (rank 0's
// header alone), a range ending at the file's short last block.
var chainTilings = [][]int64{
	{0, 10, 20, 30, 40, 47},
	{0, 3, 5, 5, 8, 27, 47},
	{0, 4, 4, 10, 10, 33, 47, 47},
	{0, 47},
	{0, 1, 2, 3, 46, 47},
	{0, 15, 25, 41, 45},
}

// hashChain runs the chain over data cut by cuts, the ranges in rank order as the ranks would
// (a range with a boundary of its own hands off before the earlier state comes): every block's
// sum, in order, from the range holding its last byte. skip is a range whose earlier state
// never comes (a failed rank before it), -1 none.
func hashChain(t *testing.T, data []byte, block int64, cuts []int64, skip int) (sums []BlockSum, firsts []int) {
	t.Helper()
	size := cuts[len(cuts)-1]
	in, failed := Handoff{At: 0}, false
	for r := 0; r+1 < len(cuts); r++ {
		h, err := NewRangeHasher(block, size, cuts[r], cuts[r+1])
		if err != nil {
			t.Fatal(err)
		}
		// Written in uneven pieces, as a copy's buffer cuts them.
		for at := cuts[r]; at < cuts[r+1]; {
			n := min(cuts[r+1]-at, 1+int64(rand.IntN(7)))
			if _, err := h.WriteAt(data[at:at+n], at); err != nil {
				t.Fatal(err)
			}
			at += n
		}
		early, own := h.Handoff()
		if own != h.Own() {
			t.Errorf("cuts %v, range %d: a handoff before the earlier state: %v; Own says %v", cuts, r, own, h.Own())
		}
		if r == skip || failed {
			failed = !own
		} else if err := h.Continue(in); err != nil {
			t.Fatalf("cuts %v, range %d: %v", cuts, r, err)
		}
		out, ok := h.Handoff()
		if own && !slices.Equal(early.State, out.State) || !failed && !ok {
			t.Errorf("cuts %v, range %d: handoff %v (%v), before the earlier state %v", cuts, r, out, ok, early)
		}
		in = out
		first, s := h.Sums()
		firsts = append(firsts, first)
		if len(s) > 0 && first != len(sums) && skip < 0 {
			t.Errorf("cuts %v, range %d: sums from block %d after %d blocks", cuts, r, first, len(sums))
		}
		sums = append(sums, s...)
	}
	if in.At != size || in.State != nil {
		t.Errorf("cuts %v: the last range hands off %v; want nothing open at %d", cuts, in, size)
	}
	return sums, firsts
}

// The chain's sums are the block hash's, for every tiling above and random ones (including
// blocks of one byte and blocks larger than the file); a range whose earlier state never comes
// gives its own blocks but not the head's.
func TestRangeHasherChain(t *testing.T) {
	data := make([]byte, 300)
	rand.NewChaCha8([32]byte{5}).Read(data)
	check := func(block int64, cuts []int64) {
		size := cuts[len(cuts)-1]
		want, err := HashBlocksOf(bytes.NewReader(data), size, block, rank.Range{Start: 0, End: int((size + block - 1) / block)})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := hashChain(t, data, block, cuts, -1); !slices.Equal(got, want) {
			t.Errorf("blocks of %d, cuts %v: %d sums %x; want %d: %x", block, cuts, len(got), got, len(want), want)
		}
	}
	for _, cuts := range chainTilings {
		check(10, cuts)
	}
	for i := range 200 {
		size := int64(1 + rand.IntN(len(data)))
		cuts := []int64{0}
		for range rand.IntN(8) {
			cuts = append(cuts, rand.Int64N(size+1))
		}
		cuts = append(cuts, size)
		slices.Sort(cuts)
		check([]int64{1, 7, 16, 64, 400}[i%5], cuts)
	}
	// Range 2 of {0,3,5,5,8,27,47} ([5,5)) never gets the state of block 0's first bytes: it
	// hands nothing on, range 3 cannot finish block 0 and gives none, range 4 ([8,27)) gives
	// block 1 only (its head's block lost), range 5 gives blocks 3 and 4 from its own boundary.
	got, firsts := hashChain(t, data, 10, chainTilings[1], 2)
	want, _ := HashBlocksOf(bytes.NewReader(data), 47, 10, rank.Range{Start: 0, End: 5})
	if !slices.Equal(got, want[1:]) || firsts[4] != 1 {
		t.Errorf("a lost state: sums %x from %v; want blocks 1 to 4, %x", got, firsts, want[1:])
	}
	// A gap in a range (bytes never written: the file's zeros) hashes as zeros; bytes out of
	// order or past the range are refused.
	h, _ := NewRangeHasher(10, 23, 0, 23)
	if _, err := h.WriteAt([]byte("abc"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt([]byte("xyz"), 20); err != nil {
		t.Fatal(err)
	}
	if err := h.Continue(Handoff{}); err != nil {
		t.Fatal(err)
	}
	zeros := append(append([]byte("abc"), make([]byte, 17)...), "xyz"...)
	want, _ = HashBlocksOf(bytes.NewReader(zeros), 23, 10, rank.Range{Start: 0, End: 3})
	if _, got := h.Sums(); len(got) != 3 || !slices.Equal(got, want) {
		t.Errorf("a gap: %x; want zeros' %x", got, want)
	}
	if _, err := h.WriteAt([]byte("q"), 5); err == nil {
		t.Error("a byte before the last written was hashed")
	}
	if _, err := h.WriteAt([]byte("qq"), 22); err == nil {
		t.Error("a byte past the range was hashed")
	}
}

// BenchmarkRangeHasher is the hash's cost in the parallel join's copy: a 64 MiB range given in
// the copy's 32 KiB pieces, its blocks summed as they pass (own: the range starts at a block);
// and a range that starts inside a block (head: its first 16 MiB kept until the earlier state
// comes, then hashed).
func BenchmarkRangeHasher(b *testing.B) {
	data := make([]byte, 64<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, c := range []struct {
		name  string
		start int64
	}{{"own", 0}, {"head", 100}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				h, err := NewRangeHasher(HashBlockBytes, 1<<40, c.start, c.start+int64(len(data)))
				if err != nil {
					b.Fatal(err)
				}
				for at := 0; at < len(data); at += 32 << 10 {
					h.WriteAt(data[at:at+32<<10], c.start+int64(at))
				}
				in := Handoff{At: c.start}
				if c.start%HashBlockBytes != 0 {
					in.State, _ = sha256.New().(encoding.BinaryMarshaler).MarshalBinary()
				}
				if err := h.Continue(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
