package join

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/ranktest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// hashRanksEnv marks this test binary started by TestOutputHashRanks under mpirun: each rank
// runs its part of the cases in the folder it names.
const hashRanksEnv = "FACEFUSION_TEST_HASH_RANKS"

// hashDone is the line rank 0 prints once every case ran.
const hashDone = "output hash: every case ran"

// The output hash on 3 real MPI ranks, of a file of two and a half blocks (one block a rank):
// every rank reads its block and the sum is coreutils'; a rank that finds no file at the path
// (its node does not see the output folder) and one that finds another file there (same size,
// another time) leave their blocks to rank 0, which warns and hashes them, the sum unchanged;
// a rank that finds a FIFO there (another user replaced the name; opening it must not wait for
// a writer) and one that finds a copy (same size and time, another inode) leave theirs to rank 0
// too; a rank 0 that cannot stat its open file sends nothing to hash, and no rank waits. The
// ranks tell the files apart by their working folders: the path is relative.
func TestOutputHashRanks(t *testing.T) {
	if dir := os.Getenv(hashRanksEnv); dir != "" {
		hashRanks(t, dir)
		return
	}
	dir := t.TempDir()
	data := make([]byte, lustre.HashBlockBytes*5/2)
	rand.NewChaCha8([32]byte{3}).Read(data)
	for _, sub := range []string{"seen", "other", "none", "fifo", "copy"} {
		os.MkdirAll(filepath.Join(dir, sub), 0o755)
	}
	if err := os.WriteFile(filepath.Join(dir, "seen", "out.part"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Another file: the same size (sparse), another time.
	other := filepath.Join(dir, "other", "out.part")
	if err := os.WriteFile(other, nil, 0o644); err != nil || os.Truncate(other, int64(len(data))) != nil ||
		os.Chtimes(other, time.Unix(1e9, 0), time.Unix(1e9, 0)) != nil {
		t.Fatalf("the other file: %v", err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo", "out.part"), 0o666); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(dir, "seen", "out.part"))
	cp := filepath.Join(dir, "copy", "out.part")
	if err := os.WriteFile(cp, data, 0o644); err != nil || os.Chtimes(cp, st.ModTime(), st.ModTime()) != nil {
		t.Fatalf("the copy: %v", err)
	}
	ranktest.Run(t, 3, hashRanksEnv+"="+dir, hashDone, "a rank left in a collective?")
}

// hashRanks is one rank's part of TestOutputHashRanks's cases.
func hashRanks(t *testing.T, dir string) {
	comm := ranktest.Comm(t, 3)
	me := comm.Rank()
	var want string
	if me == 0 {
		want = testenv.BlockHash(t, filepath.Join(dir, "seen", "out.part"), lustre.HashBlockBytes)
	}
	// run is one case: each rank works in the folder named for it; rank 0 checks what it got.
	run := func(name string, folders [3]string, check func(size int64, sum string, secs []float64, failed, warned string)) {
		if err := os.Chdir(filepath.Join(dir, folders[me])); err != nil {
			t.Fatal(err)
		}
		if me != 0 {
			if err := serveHash(comm, nil); err != nil {
				t.Errorf("%s: rank %d: %v", name, me, err)
			}
			return
		}
		var warned strings.Builder
		f, err := os.Open("out.part")
		if err != nil {
			t.Fatal(err)
		}
		if name == "rank 0 cannot" {
			f.Close() // its Stat fails
		}
		defer f.Close()
		size, sum, secs, failed, err := hashOutput(comm, f, logging.New(&warned, logging.Warn))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		check(size, sum, secs, failed, warned.String())
	}
	run("every rank reads", [3]string{"seen", "seen", "seen"}, func(size int64, sum string, secs []float64, failed, warned string) {
		if size != lustre.HashBlockBytes*5/2 || sum != want || failed != "" || warned != "" || len(secs) != 3 || secs[1] <= 0 || secs[2] <= 0 {
			t.Errorf("every rank reads: %d bytes, sum %s (coreutils: %s), seconds %v, failed %q, warned %q", size, sum, want, secs, failed, warned)
		}
	})
	run("ranks 1 and 2 cannot", [3]string{"seen", "other", "none"}, func(size int64, sum string, secs []float64, failed, warned string) {
		if sum != want || failed != "" || !strings.Contains(warned, "2 rank(s) could not read the output") ||
			!strings.Contains(warned, "rank 1: out.part here is another file") || !strings.Contains(warned, "rank 2: open out.part: no such file") {
			t.Errorf("ranks 1 and 2 cannot: sum %s (coreutils: %s), failed %q, warned %q", sum, want, failed, warned)
		}
	})
	run("a FIFO and a copy at the name", [3]string{"seen", "fifo", "copy"}, func(size int64, sum string, secs []float64, failed, warned string) {
		if sum != want || failed != "" || !strings.Contains(warned, "2 rank(s) could not read the output") ||
			!strings.Contains(warned, "rank 1: out.part here is not the file rank 0 made (a FIFO") || !strings.Contains(warned, "rank 2: out.part here is not the file rank 0 made (a regular file, inode") {
			t.Errorf("a FIFO and a copy: sum %s (coreutils: %s), failed %q, warned %q", sum, want, failed, warned)
		}
	})
	run("rank 0 cannot", [3]string{"seen", "seen", "seen"}, func(size int64, sum string, secs []float64, failed, warned string) {
		if sum != "" || !strings.Contains(failed, "file already closed") {
			t.Errorf("rank 0 cannot: sum %q, failed %q; want no sum and why", sum, failed)
		}
	})
	// Every rank is still in step: one more collective.
	if err := comm.Barrier(); err != nil {
		t.Fatal(err)
	}
	if me == 0 && !t.Failed() {
		t.Log(hashDone)
	}
}
