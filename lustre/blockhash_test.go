package lustre

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/rank"
)

// referenceHash is the rule written out the obvious way: every block's sha256sum line, in order,
// hashed again.
func referenceHash(data []byte) string {
	var lines bytes.Buffer
	for at := 0; at < len(data); at += HashBlockBytes {
		fmt.Fprintf(&lines, "%x  -\n", sha256.Sum256(data[at:min(len(data), at+HashBlockBytes)]))
	}
	return fmt.Sprintf("%x", sha256.Sum256(lines.Bytes()))
}

// The output hash of an empty file, of one under a block, of exactly one block and of two and a
// half is coreutils' (split | sha256sum) and the reference's; any run of blocks hashes to those
// blocks' sums, and a file shorter than its stated size is an error.
func TestHashFileBlocks(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, HashBlockBytes*5/2)
	rand.NewChaCha8([32]byte{1}).Read(data)
	for _, size := range []int{0, 1000, HashBlockBytes, HashBlockBytes * 5 / 2} {
		p := filepath.Join(dir, fmt.Sprintf("out-%d", size))
		if err := os.WriteFile(p, data[:size], 0o644); err != nil {
			t.Fatal(err)
		}
		n, sum, err := HashFileBlocks(p)
		if want := testenv.BlockHash(t, p, HashBlockBytes); err != nil || n != int64(size) || sum != want || sum != referenceHash(data[:size]) {
			t.Errorf("%d bytes: %d, %s, %v; want %d, coreutils' %s", size, n, sum, err, size, want)
		}
		if blocks := HashBlockCount(int64(size)); blocks != (size+HashBlockBytes-1)/HashBlockBytes {
			t.Errorf("%d bytes: %d blocks", size, blocks)
		}
	}
	f, err := os.Open(filepath.Join(dir, fmt.Sprintf("out-%d", HashBlockBytes*5/2)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size := int64(len(data))
	all, err := HashBlocks(f, size, rank.Range{Start: 0, End: 3})
	if err != nil || len(all) != 3 || all[2] != sha256.Sum256(data[2*HashBlockBytes:]) {
		t.Fatalf("every block: %d sums, %v", len(all), err)
	}
	if tail, err := HashBlocks(f, size, rank.Range{Start: 1, End: 3}); err != nil || len(tail) != 2 || tail[0] != all[1] || tail[1] != all[2] {
		t.Errorf("blocks [1,3): %x, %v; want the last two of %x", tail, err, all)
	}
	if _, err := HashBlocks(f, size+1, rank.Range{Start: 2, End: 3}); err == nil || !strings.Contains(err.Error(), "shorter") {
		t.Errorf("a file a byte shorter than said: %v", err)
	}
	if _, err := HashBlocks(f, size, rank.Range{Start: 3, End: 4}); err == nil {
		t.Error("a block past the end hashed")
	}
}

// BenchmarkHashBlocks is the block hash's throughput on one rank's and on two ranks' shares of a
// 256 MiB output in the page cache (two at once, as two ranks of a node), and HashFile's (the
// whole-file sha256 it replaces) on the same file: the MB/s are the bytes of the whole file over
// the time, so ranks=2 shows what a second core adds.
func BenchmarkHashBlocks(b *testing.B) {
	p := filepath.Join(b.TempDir(), "out.bin")
	buf := make([]byte, 256<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		b.Fatal(err)
	}
	size := int64(len(buf))
	blocks := rank.Range{Start: 0, End: HashBlockCount(size)}
	for _, ranks := range []int{1, 2} {
		b.Run(fmt.Sprintf("ranks=%d", ranks), func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				var wg sync.WaitGroup
				for _, share := range rank.Even(blocks, ranks) {
					wg.Go(func() {
						f, err := os.Open(p)
						if err != nil {
							b.Error(err)
							return
						}
						defer f.Close()
						if _, err := HashBlocks(f, size, share); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
			}
		})
	}
	b.Run("HashFile", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if _, _, err := HashFile(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
