package join

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/ranktest"
	"github.com/facefusion-hpc/facefusion/lustre"
	"github.com/facefusion-hpc/facefusion/rank"
)

// chainRanksEnv marks this test binary started by TestChainHashRanks under mpirun.
const chainRanksEnv = "FACEFUSION_TEST_CHAIN_RANKS"

// chainDone is the line rank 0 prints once every case ran.
const chainDone = "chain hash: every case ran"

// The output hash's chain on 3 real MPI ranks, in blocks of 10 bytes over synthetic tilings
// (each rank's range from one cut to the next): ranges on block boundaries exactly, a block
// over three ranks, an empty range inside a block, at a boundary and at the end, a rank 0 of a
// few bytes (a header alone), a file shorter than a block; rank 0's combined hash is the block
// hash of the whole file. A rank that fails sends its failure on: rank 0 learns which blocks are
// missing, and no rank waits.
func TestChainHashRanks(t *testing.T) {
	if os.Getenv(chainRanksEnv) != "" {
		chainRanks(t)
		return
	}
	ranktest.Run(t, 3, chainRanksEnv+"=1", chainDone, "a rank left waiting for the chain's message?")
}

// chainRanks is one rank's part of TestChainHashRanks's cases.
func chainRanks(t *testing.T) {
	comm := ranktest.Comm(t, 3)
	me := comm.Rank()
	data := make([]byte, 64)
	rand.NewChaCha8([32]byte{7}).Read(data)
	const block = 10
	// skip: the ranks with an empty range stay out of the chain (chainPeers, as the join does
	// with a rank that has no segment); otherwise they forward the state.
	run := func(cuts [4]int64, fails int, skip bool) (sum, why string) {
		size := cuts[3]
		busy := make([]bool, 3)
		for r := range busy {
			busy[r] = !skip || cuts[r+1] > cuts[r]
		}
		prev, next, in := chainPeers(busy, me)
		h, err := lustre.NewRangeHasher(block, size, cuts[me], cuts[me+1])
		if err != nil {
			t.Fatal(err)
		}
		// Written in pieces of 3 bytes, as the copy's buffer cuts them.
		for at := cuts[me]; at < cuts[me+1]; at += 3 {
			if _, err := h.WriteAt(data[at:min(at+3, cuts[me+1])], at); err != nil {
				t.Fatal(err)
			}
		}
		var failed error
		if me == fails {
			failed = errors.New("its copy failed")
		}
		var share chainShare
		if in {
			share = chainHash(comm, h, failed, prev, next)
		}
		b, _ := json.Marshal(share)
		all, err := comm.Gather(0, b)
		if err != nil {
			t.Fatal(err)
		}
		if me != 0 {
			return "", ""
		}
		shares := make([]chainShare, len(all))
		for r, b := range all {
			if err := json.Unmarshal(b, &shares[r]); err != nil {
				t.Fatal(err)
			}
		}
		return combineChain(shares, int((size+block-1)/block))
	}
	for _, cuts := range [][4]int64{
		{0, 10, 20, 47}, // every range on a boundary
		{0, 3, 5, 47},   // block 0 over all three ranks, rank 2 ends it
		{0, 4, 4, 47},   // rank 1 empty inside block 0
		{0, 10, 10, 47}, // rank 1 empty at a boundary
		{0, 4, 47, 47},  // rank 2 empty at the end
		{0, 3, 8, 9},    // a file under one block, over three ranks
		{0, 15, 33, 64}, // blocks 1 and 3 over two ranks each
	} {
		for _, skip := range []bool{false, true} {
			sum, why := run(cuts, -1, skip)
			if me != 0 {
				continue
			}
			size := cuts[3]
			sums, err := lustre.HashBlocksOf(bytes.NewReader(data[:size]), size, block, rank.Range{Start: 0, End: int((size + block - 1) / block)})
			if want := lustre.CombineBlockSums(sums); err != nil || sum != want || why != "" {
				t.Errorf("cuts %v, empty ranks out of the chain %v: %s (%s); want %s (%v)", cuts, skip, sum, why, want, err)
			}
		}
	}
	// Rank 1 fails: rank 2 learns it (block 0 is lost), rank 0 says so, nobody waits.
	if sum, why := run([4]int64{0, 3, 5, 47}, 1, true); me == 0 && (sum != "" || !strings.Contains(why, "rank 1: its copy failed")) {
		t.Errorf("rank 1 failed: %q (%q); want no hash and rank 1's failure", sum, why)
	}
	if sum, why := run([4]int64{0, 3, 5, 47}, 0, true); me == 0 && (sum != "" || !strings.Contains(why, "rank 0: its copy failed")) {
		t.Errorf("rank 0 failed: %q (%q); want no hash and rank 0's failure", sum, why)
	}
	// Every rank is still in step: one more collective.
	if err := comm.Barrier(); err != nil {
		t.Fatal(err)
	}
	if me == 0 && !t.Failed() {
		t.Log(chainDone)
	}
}
