package rank

import "fmt"

// Piece is one rank's frames of one chunk: all of them, or the part of a chunk shared with the
// ranks before or after it (the rank's stretch of frames begins or ends inside the chunk).
type Piece struct {
	Chunk  int   // index into the chunks
	Frames Range // this rank's frames of the chunk
	Owner  int   // the rank that encodes the chunk: the one holding its first frame
}

// Shared reports whether the chunk's frames are processed by more ranks than this piece's.
func (p Piece) Shared(chunks []Range) bool { return p.Frames != chunks[p.Chunk] }

// Split splits the pending frames, those of chunks[i] for every i in pending (chunk order),
// evenly over ranks: each rank gets one contiguous stretch of them, in rank order, the sizes
// differing by at most one (the first ranks get the extra frame), as pieces in frame order. The
// chunk grid is not moved: a chunk whose frames fall on several ranks is encoded by the rank
// that holds its first frame (its owner), to which the others send their frames of it; so a
// rank's first piece may be another rank's chunk, and only its last piece may be a chunk it
// owns but holds part of. With more ranks than frames the trailing ranks get no piece.
func Split(chunks []Range, pending []int, ranks int) [][]Piece {
	if ranks <= 0 {
		panic(fmt.Sprintf("rank.Split: need ranks > 0, got %d", ranks))
	}
	total := 0
	for _, c := range pending {
		total += chunks[c].Len()
	}
	out := make([][]Piece, ranks)
	base, extra := total/ranks, total%ranks
	r, left := 0, base+min(1, extra) // the rank being filled and the frames it still takes
	owner := 0
	for _, c := range pending {
		ch := chunks[c]
		for at := ch.Start; at < ch.End; {
			for left == 0 { // ranks with no frame left (more ranks than frames) are skipped
				r++
				left = base
				if r < extra {
					left++
				}
			}
			if at == ch.Start {
				owner = r
			}
			n := min(left, ch.End-at)
			out[r] = append(out[r], Piece{Chunk: c, Frames: Range{at, at + n}, Owner: owner})
			at += n
			left -= n
		}
	}
	return out
}

// EncodeOrder is the order in which rank me encodes its pieces (Split's, in frame order): the
// chunks it holds whole first, then its part of the chunk it sends to the rank before it, and
// last its part of the chunk it owns and the ranks after it complete. A stop keeps only chunks
// whose every frame was written, and a shared chunk is complete only once both ranks wrote
// their parts: done at the end of both ranks' shares, the parts are never written early only to
// be thrown away by a stop that comes before the other part. The parts' ranks reach them at
// about the same time, shares being even; the owner's part, last, finds the sender's there.
func EncodeOrder(pieces []Piece, me int, chunks []Range) []Piece {
	var whole, sent, owned []Piece
	for _, p := range pieces {
		switch {
		case p.Owner != me:
			sent = append(sent, p)
		case p.Shared(chunks):
			owned = append(owned, p)
		default:
			whole = append(whole, p)
		}
	}
	return append(append(whole, sent...), owned...)
}

// Frames is the number of frames in pieces.
func Frames(pieces []Piece) int {
	n := 0
	for _, p := range pieces {
		n += p.Frames.Len()
	}
	return n
}

// Senders are the ranks that send rank me their frames of the chunk it encodes last, the one
// its stretch ends inside (none when it ends at a chunk's end), in rank order.
func Senders(split [][]Piece, me int) []int {
	var out []int
	mine := split[me]
	if len(mine) == 0 || mine[len(mine)-1].Owner != me {
		return nil
	}
	c := mine[len(mine)-1].Chunk
	for r := me + 1; r < len(split); r++ {
		if len(split[r]) == 0 || split[r][0].Chunk != c {
			break
		}
		out = append(out, r)
	}
	return out
}

// Even splits r into ranks contiguous runs in rank order, Split's even rule on one chunk: the
// sizes differ by at most one, the first ranks get the extra. With more ranks than indices the
// trailing ranks get an empty run at r's end.
func Even(r Range, ranks int) []Range {
	out := make([]Range, ranks)
	for i := range out {
		out[i] = Range{Start: max(r.Start, r.End), End: max(r.Start, r.End)}
	}
	if r.Len() == 0 {
		return out
	}
	for i, pieces := range Split([]Range{r}, []int{0}, ranks) {
		if len(pieces) > 0 {
			out[i] = pieces[0].Frames
		}
	}
	return out
}
