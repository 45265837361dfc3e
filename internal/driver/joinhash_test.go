package driver

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/facefusion-hpc/facefusion/internal/join"
	"github.com/facefusion-hpc/facefusion/internal/logging"
	"github.com/facefusion-hpc/facefusion/internal/report"
	"github.com/facefusion-hpc/facefusion/lustre"
)

// The join's hash goes into the report as it is; where it is incomplete, rank 0 reads the file
// and hashes it alone, with a warning, and its hash stage shows the read: through its
// descriptor, so a FIFO put at the file's name (another user's) is neither waited on nor read.
func TestHashedInJoinFallsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.mp4.part")
	if err := os.WriteFile(path, []byte("joined"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, want, err := lustre.HashFileBlocks(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Remove(path); err != nil || syscall.Mkfifo(path, 0o666) != nil {
		t.Fatalf("the FIFO: %v", err)
	}
	if _, _, err := lustre.HashFileBlocks(path); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("HashFileBlocks of a FIFO: %v", err)
	}
	var log strings.Builder
	rr := &runRecord{perRank: []report.Rank{{StageSeconds: map[string]float64{"hash": 0}}}}
	rr.hashedInJoin(join.Hash{InJoin: true, Size: 6, Sum: "ab"}, f, logging.New(&log, logging.Warn))
	if rr.outSize != 6 || rr.outSum != "ab" || log.Len() != 0 || rr.perRank[0].StageSeconds["hash"] != 0 {
		t.Errorf("the join's hash: %d bytes, %q, hash stage %g, log %q; want it as given, nothing read", rr.outSize, rr.outSum, rr.perRank[0].StageSeconds["hash"], log.String())
	}
	rr.hashedInJoin(join.Hash{InJoin: true, Size: 6, Failed: "rank 2: lost"}, f, logging.New(&log, logging.Warn))
	if rr.outSize != 6 || rr.outSum != want || !strings.Contains(log.String(), "rank 2: lost") || rr.perRank[0].StageSeconds["hash"] <= 0 {
		t.Errorf("an incomplete hash: %d bytes, %q (want %q), hash stage %g, log %q", rr.outSize, rr.outSum, want, rr.perRank[0].StageSeconds["hash"], log.String())
	}
}
