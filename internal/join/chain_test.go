package join

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/lustre"
)

// Rank 0 combines the ranks' sums in rank order into the block hash; a rank's failure, a sum
// out of place (a gap, an overlap) or a block missing gives no hash and says why.
func TestCombineChain(t *testing.T) {
	sum := func(b byte) []byte { s := sha256.Sum256([]byte{b}); return s[:] }
	cat := func(s ...[]byte) (out []byte) {
		for _, x := range s {
			out = append(out, x...)
		}
		return out
	}
	var want []lustre.BlockSum
	for b := range byte(3) {
		want = append(want, lustre.BlockSum(sum(b)))
	}
	whole := lustre.CombineBlockSums(want)
	for _, c := range []struct {
		name   string
		shares []chainShare
		sum    string
		why    string
	}{
		{"in order, a rank with none", []chainShare{{First: 0, Sums: sum(0)}, {First: 1}, {First: 1, Sums: cat(sum(1), sum(2))}}, whole, ""},
		{"a rank failed", []chainShare{{Sums: sum(0)}, {Err: "rank 1: boom"}, {First: 1, Sums: cat(sum(1), sum(2))}}, "", "rank 1: boom"},
		{"a gap", []chainShare{{Sums: sum(0)}, {First: 2, Sums: sum(2)}}, "", "do not follow block 1"},
		{"an overlap", []chainShare{{Sums: cat(sum(0), sum(1))}, {First: 1, Sums: sum(2)}}, "", "do not follow block 2"},
		{"the last block missing", []chainShare{{Sums: cat(sum(0), sum(1))}}, "", "2 of the output's 3 blocks"},
	} {
		if sum, why := combineChain(c.shares, 3); sum != c.sum || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
			t.Errorf("%s: %q, %q; want %q, %q", c.name, sum, why, c.sum, c.why)
		}
	}
}

// The chain runs through the ranks that hold bytes, rank 0 always (it writes the index): a rank
// with no segment is out of it and costs it no message.
func TestChainPeers(t *testing.T) {
	busy := []bool{false, false, true, false, true, false}
	for me, want := range [][3]int{{-1, 2, 1}, {-1, -1, 0}, {0, 4, 1}, {-1, -1, 0}, {2, -1, 1}, {-1, -1, 0}} {
		prev, next, in := chainPeers(busy, me)
		if in != (want[2] == 1) || in && (prev != want[0] || next != want[1]) {
			t.Errorf("rank %d: prev %d, next %d, in %v; want %v", me, prev, next, in, want)
		}
	}
	if prev, next, in := chainPeers([]bool{true}, 0); prev != -1 || next != -1 || !in {
		t.Errorf("one rank: prev %d, next %d, in %v; want -1, -1, true", prev, next, in)
	}
}
