package dist

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// joinTime is rank 0's report of the serial tail of a run: the one ffmpeg run that joins the
// segments and muxes the target's other streams.
var joinTime = regexp.MustCompile(`\(join ([0-9.]+) s\)`)

// BenchmarkRanks is the face swap of the demo clip (libx264, the default encoder) on 1 rank
// and on 2 ranks under mpirun, both with --chunk-frames 25 so that 2 ranks get equal shares
// (6 chunks of the 150 frames). It reports both wall times, the speedup of 2 ranks over 1,
// and rank 0's join time as a share of the 2-rank total.
//
//	go test -run '^$' -bench Ranks -benchtime 1x ./cmd/facefusion/e2e/dist
func BenchmarkRanks(b *testing.B) {
	target := filepath.Join(testenv.Cache(b), "demo", "target.mp4")
	source := testenv.Sample(b, "grace_hopper.jpg")
	dir := b.TempDir()
	run := func(ranks int) (total, join float64) {
		out := filepath.Join(dir, "out-"+strconv.Itoa(ranks)+".mp4")
		start := time.Now()
		r := clitest.Mpirun(b, clitest.HangGuard(b), ranks, "run", "-s", source, "-t", target, "-o", out, "--force", "--chunk-frames", "25")
		total = time.Since(start).Seconds()
		if r.Code != 0 {
			b.Fatalf("%d rank(s): exit %d\n%s", ranks, r.Code, r.Stderr)
		}
		m := joinTime.FindStringSubmatch(r.Stderr)
		if m == nil {
			b.Fatalf("%d rank(s): rank 0 did not report its join time:\n%s", ranks, r.Stderr)
		}
		join, _ = strconv.ParseFloat(m[1], 64)
		return total, join
	}
	var one, two, join float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t1, _ := run(1)
		t2, j2 := run(2)
		one, two, join = one+t1, two+t2, join+j2
	}
	n := float64(b.N)
	b.ReportMetric(one/n, "s/1-rank")
	b.ReportMetric(two/n, "s/2-ranks")
	b.ReportMetric(one/two, "speedup")
	b.ReportMetric(100*join/two, "join-%")
}

// BenchmarkChunkSize is what small chunks cost one rank: the face swap of the demo clip
// (libx264) with --chunk-frames 24 (7 chunks) over --chunk-frames 96 (2 chunks), as the median
// of 5 paired runs (the order alternating within the pairs): this machine is shared and noisy,
// and a pair's two runs see the same load. It reports that ratio of wall times, the same ratio
// of CPU time (the binary's and its ffmpegs': less moved by the load), and the median times.
//
//	go test -run '^$' -bench ChunkSize -benchtime 1x ./cmd/facefusion/e2e/dist
func BenchmarkChunkSize(b *testing.B) {
	target := filepath.Join(testenv.Cache(b), "demo", "target.mp4")
	source := testenv.Sample(b, "grace_hopper.jpg")
	out := filepath.Join(b.TempDir(), "out.mp4")
	run := func(chunk int) (wall, cpu float64) {
		cmd := clitest.Command(b, "run", "-s", source, "-t", target, "-o", out, "--force", "--chunk-frames", strconv.Itoa(chunk))
		start := time.Now()
		msg, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("--chunk-frames %d: %v\n%s", chunk, err, msg)
		}
		// wait4's times include the children it waited for: every ffmpeg.
		return time.Since(start).Seconds(), (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	var walls, cpus, small, large []float64
	b.ResetTimer()
	for i := 0; i < 5*b.N; i++ {
		var s, l, sc, lc float64
		if i%2 == 0 {
			s, sc = run(24)
			l, lc = run(96)
		} else {
			l, lc = run(96)
			s, sc = run(24)
		}
		walls, cpus, small, large = append(walls, s/l), append(cpus, sc/lc), append(small, s), append(large, l)
	}
	b.ReportMetric(median(walls), "chunk24/chunk96")
	b.ReportMetric(median(cpus), "cpu-chunk24/chunk96")
	b.ReportMetric(median(small), "s/chunk24")
	b.ReportMetric(median(large), "s/chunk96")
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
