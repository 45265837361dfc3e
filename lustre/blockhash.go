package lustre

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/facefusion-hpc/facefusion/internal/safefs"
	"github.com/facefusion-hpc/facefusion/rank"
)

// The run report's output hash is a hash of fixed-size blocks, so that the ranks can each hash
// a share of the output at once (one SHA-256 over the whole file is sequential: rank 0 alone,
// seconds a GB at the end of every job). Each block's SHA-256 is written as sha256sum writes it
// ("HEX  -\n"), the lines are concatenated in order, and the output hash is their SHA-256: what
//
//	split -b 16777216 --filter=sha256sum OUTPUT | sha256sum
//
// prints, with coreutils alone (an empty file has no block: the SHA-256 of nothing).

// HashBlockBytes is the block of the output hash (16 MiB): the run report records it.
const HashBlockBytes = 16 << 20

// HashBlockCount is the number of blocks of a file of size bytes (the last may be shorter).
func HashBlockCount(size int64) int {
	return int((size + HashBlockBytes - 1) / HashBlockBytes)
}

// BlockSum is one block's SHA-256.
type BlockSum = [sha256.Size]byte

// HashBlocks is the SHA-256 of each of blocks of f, a file of size bytes, in order. A file
// shorter than size is an error.
func HashBlocks(f io.ReaderAt, size int64, blocks rank.Range) ([]BlockSum, error) {
	return HashBlocksOf(f, size, HashBlockBytes, blocks)
}

// HashBlocksOf is HashBlocks with blocks of block bytes (the tests' small blocks; the output
// hash's are HashBlockBytes).
func HashBlocksOf(f io.ReaderAt, size, block int64, blocks rank.Range) ([]BlockSum, error) {
	sums := make([]BlockSum, 0, max(0, blocks.Len()))
	buf := make([]byte, 1<<20)
	h := sha256.New()
	for b := blocks.Start; b < blocks.End; b++ {
		at := int64(b) * block
		n := min(block, size-at)
		if n <= 0 {
			return nil, fmt.Errorf("block %d lies past the file's %d bytes", b, size)
		}
		h.Reset()
		if got, err := io.CopyBuffer(h, io.NewSectionReader(f, at, n), buf); err != nil {
			return nil, fmt.Errorf("block %d: %w", b, err)
		} else if got != n {
			return nil, fmt.Errorf("block %d: %d of its %d bytes (the file is shorter than %d bytes)", b, got, n, size)
		}
		sums = append(sums, BlockSum(h.Sum(nil)))
	}
	return sums, nil
}

// CombineBlockSums is the output hash of a file from every block's SHA-256, in order.
func CombineBlockSums(sums []BlockSum) string {
	h := sha256.New()
	line := make([]byte, 0, 2*sha256.Size+4)
	for _, s := range sums {
		line = hex.AppendEncode(line[:0], s[:])
		h.Write(append(line, "  -\n"...))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// HashFileBlocks is the size and output hash of the file at path, on one process (an image
// output; a rank 0 that hashes the whole output).
func HashFileBlocks(path string) (int64, string, error) {
	// Never through a link, and a FIFO put at the name is refused without waiting for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	return HashOpenBlocks(f)
}

// HashOpenBlocks is HashFileBlocks of the open regular file f, read through it alone.
func HashOpenBlocks(f *os.File) (int64, string, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, "", err
	}
	if !st.Mode().IsRegular() {
		return 0, "", fmt.Errorf("%s is %s, not a regular file", f.Name(), safefs.KindOf(st.Mode()))
	}
	sums, err := HashBlocks(f, st.Size(), rank.Range{Start: 0, End: HashBlockCount(st.Size())})
	if err != nil {
		return 0, "", fmt.Errorf("reading %s: %w", f.Name(), err)
	}
	return st.Size(), CombineBlockSums(sums), nil
}
