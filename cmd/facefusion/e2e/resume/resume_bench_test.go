package resume

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// checkpointWork is rank 0's report of an attempt's checkpoint cost, summed over the ranks.
var checkpointWork = regexp.MustCompile(`(\d+) manifest write\(s\), ([0-9.]+) s of checkpoint work`)

// BenchmarkCheckpoint is the checkpoint overhead of the demo job (face swap, 150 frames,
// libx264, 1 rank) as a share of its wall time: hashing each finished segment, rewriting the
// rank's journal and rank 0's manifest writes, which the program times itself (a difference of
// two wall times would drown in the machine's noise). Reported at the default cadence (30 s)
// and at a 1 s cadence, with --chunk-frames 25 (6 chunks) as in BenchmarkRanks.
//
//	go test -run '^$' -bench Checkpoint -benchtime 1x ./cmd/facefusion/e2e/resume
func BenchmarkCheckpoint(b *testing.B) {
	target := filepath.Join(testenv.Cache(b), "demo", "target.mp4")
	source := testenv.Sample(b, "grace_hopper.jpg")
	dir := b.TempDir()
	run := func(interval string) (share, writes float64) {
		out := filepath.Join(dir, "out-"+interval+".mp4")
		start := time.Now()
		r := clitest.Mpirun(b, clitest.HangGuard(b), 1, "run", "-s", source, "-t", target, "-o", out, "--force", "--chunk-frames", "25", "--checkpoint-interval", interval)
		wall := time.Since(start).Seconds()
		if r.Code != 0 {
			b.Fatalf("exit %d\n%s", r.Code, r.Stderr)
		}
		m := checkpointWork.FindStringSubmatch(r.Stderr)
		if m == nil {
			b.Fatalf("no checkpoint report:\n%s", r.Stderr)
		}
		work, _ := strconv.ParseFloat(m[2], 64)
		n, _ := strconv.ParseFloat(m[1], 64)
		return 100 * work / wall, n
	}
	var def, fast, writes float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, _ := run("30")
		f, w := run("1")
		def, fast, writes = def+d, fast+f, writes+w
	}
	n := float64(b.N)
	b.ReportMetric(def/n, "checkpoint-%")
	b.ReportMetric(fast/n, "checkpoint-%-1s")
	b.ReportMetric(writes/n, "manifest-writes-1s")
}
