package lustre

import (
	"crypto/sha256"
	"encoding"
	"fmt"
	"hash"
)

// RangeHasher computes the output hash's block sums of one contiguous range of a file as its
// bytes pass by (the parallel join: each rank hashes the bytes it copies, and nothing reads
// the output back). The ranges of the ranks tile the file in rank order; a block that spans
// ranges is hashed along them: the range holding its first byte hashes its part and hands the
// SHA-256 state (Handoff) to the next range, which continues it (Continue) and either finishes
// the block or hands it on. Each block's sum is given by the range holding its last byte.
//
// The range's bytes before its first block boundary (its head: the end of a block begun in
// an earlier range) are kept until the earlier state comes, at most one block; every block
// that begins and ends inside the range is summed as its last byte passes.
type RangeHasher struct {
	block, size, start, end int64
	at                      int64     // the next byte's offset
	head                    []byte    // the head's bytes, until Continue
	cur                     hash.Hash // the block begun at a boundary inside the range
	headSum                 *BlockSum // the head's block, when it ends here, after Continue
	sums                    []BlockSum
	continued               bool
	out                     Handoff // a range with no boundary of its own: Continue sets it
	zero                    []byte  // a gap's zeros
}

// Handoff is a block's hash state passed from one range to the next: At is the offset of the
// next byte to hash (the receiving range's start); State is the SHA-256 state of the block's
// bytes before At (crypto/sha256's MarshalBinary), nil when no block is open there (At is a
// block boundary or the file's end).
type Handoff struct {
	At    int64
	State []byte
}

// NewRangeHasher hashes [start, end) of a file of size bytes, in blocks of block bytes.
func NewRangeHasher(block, size, start, end int64) (*RangeHasher, error) {
	if block < 1 || start < 0 || end < start || size < end {
		return nil, fmt.Errorf("lustre: hashing [%d, %d) of a file of %d bytes in blocks of %d: not a range of it", start, end, size, block)
	}
	return &RangeHasher{block: block, size: size, start: start, end: end, at: start, cur: sha256.New()}, nil
}

// boundary reports whether off is where a block begins or the file ends (no block open).
func (h *RangeHasher) boundary(off int64) bool { return off%h.block == 0 || off == h.size }

// headEnd is where the range's head ends: its first boundary, or its end.
func (h *RangeHasher) headEnd() int64 {
	if h.boundary(h.start) {
		return h.start
	}
	return min(h.end, (h.start/h.block+1)*h.block, h.size)
}

// Own reports whether the range holds a block boundary of its own (it is not empty, and it
// starts at one or its head ends at one): its Handoff is then known from its own bytes, before
// the earlier range's state comes.
func (h *RangeHasher) Own() bool {
	return h.start < h.end && (h.boundary(h.start) || h.boundary(h.headEnd()))
}

// WriteAt hashes p, the range's bytes at off, in order: off is where the bytes written before
// end, or past it (a gap of zeros in the file, hashed as zeros).
func (h *RangeHasher) WriteAt(p []byte, off int64) (int, error) {
	if off < h.at || off+int64(len(p)) > h.end {
		return 0, fmt.Errorf("lustre: hashing %d bytes at %d: the range [%d, %d) is hashed in order, next at %d", len(p), off, h.start, h.end, h.at)
	}
	for h.at < off {
		if h.zero == nil {
			h.zero = make([]byte, 64<<10)
		}
		h.write(h.zero[:min(int64(len(h.zero)), off-h.at)])
	}
	h.write(p)
	return len(p), nil
}

func (h *RangeHasher) write(p []byte) {
	if he := h.headEnd(); h.at < he {
		if h.head == nil {
			h.head = make([]byte, 0, he-h.start) // at once: growing it by appends costs more than hashing
		}
		n := min(int64(len(p)), he-h.at)
		h.head = append(h.head, p[:n]...)
		h.at += n
		p = p[n:]
	}
	for len(p) > 0 {
		n := min(int64(len(p)), h.block-h.at%h.block)
		h.cur.Write(p[:n])
		h.at += n
		p = p[n:]
		if h.boundary(h.at) {
			h.sums = append(h.sums, BlockSum(h.cur.Sum(nil)))
			h.cur.Reset()
		}
	}
}

// Continue takes the earlier range's handoff (for the first range: Handoff{At: 0}) once every
// byte of the range was written: the head's block goes on with it.
func (h *RangeHasher) Continue(in Handoff) error {
	switch {
	case h.at != h.end:
		return fmt.Errorf("lustre: the range [%d, %d) was hashed to %d only", h.start, h.end, h.at)
	case h.continued:
		return fmt.Errorf("lustre: the range [%d, %d) was continued twice", h.start, h.end)
	case in.At != h.start:
		return fmt.Errorf("lustre: a hash state that ends at %d for the range [%d, %d)", in.At, h.start, h.end)
	case (in.State == nil) != h.boundary(h.start):
		return fmt.Errorf("lustre: the hash state at %d says a block is open there: %v; the file's layout says %v", in.At, in.State != nil, !h.boundary(h.start))
	}
	h.continued = true
	if in.State == nil {
		h.out = Handoff{At: h.end}
		return nil
	}
	d := sha256.New()
	if err := d.(encoding.BinaryUnmarshaler).UnmarshalBinary(in.State); err != nil {
		return fmt.Errorf("lustre: the hash state at %d: %w", in.At, err)
	}
	d.Write(h.head)
	h.head = nil
	if h.boundary(h.headEnd()) {
		s := BlockSum(d.Sum(nil))
		h.headSum = &s
		h.out = Handoff{At: h.end}
		return nil
	}
	// No boundary in the range: the block goes on past its end.
	st, err := d.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return fmt.Errorf("lustre: the hash state at %d: %w", h.end, err)
	}
	h.out = Handoff{At: h.end, State: st}
	return nil
}

// Handoff is the state the next range continues: from the range's own bytes when Own, else
// once Continue has taken the earlier state. ok is false before that.
func (h *RangeHasher) Handoff() (out Handoff, ok bool) {
	switch {
	case h.at != h.end:
		return Handoff{}, false
	case h.Own() && h.boundary(h.end):
		return Handoff{At: h.end}, true
	case h.Own():
		st, err := h.cur.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			return Handoff{}, false
		}
		return Handoff{At: h.end, State: st}, true
	case h.continued:
		return h.out, true
	}
	return Handoff{}, false
}

// Sums is the range's block sums: those of the blocks whose last byte it holds, in order, from
// block first; the head's block only once Continue has taken the earlier state (without it
// the sums start at the range's first boundary).
func (h *RangeHasher) Sums() (first int, sums []BlockSum) {
	first = int((h.start + h.block - 1) / h.block)
	if h.headSum != nil {
		return first - 1, append([]BlockSum{*h.headSum}, h.sums...)
	}
	return first, h.sums
}
