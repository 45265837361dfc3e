package join

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/facefusion-hpc/facefusion/collective"
	"github.com/facefusion-hpc/facefusion/internal/wire"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// The output's hash in the parallel join: every rank hashes the bytes it copies (rank 0 the
// header and the side file's bytes, then its pieces), and no rank reads the output back. Each
// rank's bytes are one range of the output, the ranges in rank order; a block that spans ranks
// is hashed along the chain (lustre.RangeHasher) of the ranks that hold bytes (chainPeers): each
// but the last sends exactly one message to the next, and each but rank 0 receives exactly one
// from the one before: the SHA-256 state of the block open at the end of its range (or that none
// is), or that it failed. A rank sends as soon as its
// message is known from its own bytes, before it waits for its own; a rank whose range holds no
// block boundary (empty, or inside one block) waits, continues the state with its bytes and
// forwards it. The chain runs in rank order, so no rank waits for a later one: no deadlock. Each
// block's sum is given by the rank holding its last byte; the sums reach rank 0 in the join's
// outcome gather.

// What a chain message is (its first byte): a handoff, or that the rank before failed (the
// block open there cannot be finished).
const (
	chainHandoff byte = iota
	chainFailed
)

// chainMessageMax bounds a message: kind, offset, and crypto/sha256's state (108 bytes).
const chainMessageMax = 1 + 8 + 256

// chainShare is one rank's part of the hash, for rank 0: the sums of the blocks whose last byte
// it holds, from block First; Err when it has none it should have (it or the chain failed).
type chainShare struct {
	First int    `json:",omitempty"`
	Sums  []byte `json:",omitempty"` // sha256.Size bytes a block
	Err   string `json:",omitempty"`
}

func chainMessage(h lustre.Handoff) []byte {
	b := make([]byte, 9, 9+len(h.State))
	b[0] = chainHandoff
	binary.LittleEndian.PutUint64(b[1:], uint64(h.At))
	return append(b, h.State...)
}

func readChainMessage(b []byte) (lustre.Handoff, error) {
	switch {
	case len(b) == 1 && b[0] == chainFailed:
		return lustre.Handoff{}, errors.New("the rank before it could not hash its bytes")
	case len(b) < 9 || b[0] != chainHandoff:
		return lustre.Handoff{}, fmt.Errorf("a hash message of %d bytes that is not a handoff", len(b))
	}
	h := lustre.Handoff{At: int64(binary.LittleEndian.Uint64(b[1:]))}
	if len(b) > 9 {
		h.State = b[9:]
	}
	return h, nil
}

// chainPeers is the chain's order: the ranks that hold bytes of the output (busy[r]: rank r
// copies at least one segment; rank 0, which writes the index, always), each rank's neighbours
// in it (-1: none), and whether me is in it. A rank with nothing to copy (more ranks than
// segments, or rank 0 copying for a rank that cannot write the output) stays out of the chain
// rather than cost it a message in turn. Every rank reckons it from the same split, rank 0's.
func chainPeers(busy []bool, me int) (prev, next int, in bool) {
	prev, next = -1, -1
	for r := me - 1; r >= 0 && prev < 0; r-- {
		if r == 0 || busy[r] {
			prev = r
		}
	}
	for r := me + 1; r < len(busy) && next < 0; r++ {
		if busy[r] {
			next = r
		}
	}
	return prev, next, me == 0 || busy[me]
}

// chainHash is this rank's part of the chain (between prev and next, chainPeers's) once its
// bytes went through h (nil, or failed not nil: it could not hash them; it still sends and
// receives its one message each way). Every request it posts is complete when it returns.
func chainHash(comm collective.Comm, h *lustre.RangeHasher, failed error, prev, next int) chainShare {
	me := comm.Rank()
	if h == nil && failed == nil {
		failed = errors.New("no range to hash")
	}
	var recv collective.RecvRequest
	buf := make([]byte, chainMessageMax)
	if prev >= 0 {
		var err error
		if recv, err = comm.Irecv(prev, wire.HashTag, buf); err != nil && failed == nil {
			failed = err
		}
	}
	var send collective.Request
	sent := next < 0
	post := func() {
		msg := []byte{chainFailed}
		if failed == nil {
			if out, ok := h.Handoff(); ok {
				msg = chainMessage(out)
			}
		}
		var err error
		if send, err = comm.Isend(next, wire.HashTag, msg); err != nil && failed == nil {
			failed = err
		}
		sent = true
	}
	if !sent && (failed != nil || h.Own()) {
		post() // known from its own bytes: the next rank need not wait for the earlier ones
	}
	in := lustre.Handoff{At: 0} // rank 0's range starts the file: nothing open before it
	var inErr error
	if recv != nil {
		if inErr = recv.Wait(); inErr == nil {
			_, k := recv.Message()
			in, inErr = readChainMessage(buf[:k])
		}
	}
	if failed == nil && inErr == nil {
		inErr = h.Continue(in)
	}
	if !sent {
		if inErr != nil && failed == nil {
			failed = inErr // the open block cannot be handed on
		}
		post()
	}
	if send != nil {
		if err := send.Wait(); err != nil && failed == nil {
			failed = err
		}
	}
	if failed != nil {
		return chainShare{Err: fmt.Sprintf("rank %d: %v", me, failed)}
	}
	first, sums := h.Sums()
	s := chainShare{First: first}
	for _, x := range sums {
		s.Sums = append(s.Sums, x[:]...)
	}
	if inErr != nil {
		s.Err = fmt.Sprintf("rank %d: %v", me, inErr) // its own blocks are sound; its head's is lost
	}
	return s
}

// combineChain is rank 0's output hash from every rank's share (in rank order) of a file of
// blocks blocks: "" and why when a block's sum is missing.
func combineChain(shares []chainShare, blocks int) (sum, why string) {
	var sums []lustre.BlockSum
	for r, s := range shares {
		if s.Err != "" {
			return "", s.Err
		}
		if len(s.Sums)%len(lustre.BlockSum{}) != 0 || len(s.Sums) > 0 && s.First != len(sums) {
			return "", fmt.Sprintf("rank %d's sums (%d bytes from block %d) do not follow block %d", r, len(s.Sums), s.First, len(sums))
		}
		for at := 0; at < len(s.Sums); at += len(lustre.BlockSum{}) {
			sums = append(sums, lustre.BlockSum(s.Sums[at:]))
		}
	}
	if len(sums) != blocks {
		return "", fmt.Sprintf("%d of the output's %d blocks were hashed", len(sums), blocks)
	}
	return lustre.CombineBlockSums(sums), ""
}
