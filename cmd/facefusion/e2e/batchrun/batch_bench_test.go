package batchrun

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/facefusion-hpc/facefusion/internal/clitest"
	"github.com/facefusion-hpc/facefusion/internal/testenv"
)

// BenchmarkBatch is batch-run over 5 copies of the demo clip against 5 separate runs of the
// same jobs: Grace Hopper's face into each clip's first 10 frames, one rank, one process per
// run against one process for the batch. The copies differ in one metadata tag (an identical
// file is one target by content). Each of the 5 pairs runs both ways into fresh folders, in
// alternating order; it reports the median wall times and the median of the pairs' ratios.
//
//	go test -run '^$' -bench Batch -benchtime 1x ./cmd/facefusion/e2e/batchrun
func BenchmarkBatch(b *testing.B) {
	const clips, pairs, frames = 5, 5, "10"
	target := filepath.Join(testenv.Cache(b), "demo", "target.mp4")
	source := testenv.Sample(b, "grace_hopper.jpg")
	dir := b.TempDir()
	inbox := filepath.Join(dir, "inbox")
	if err := os.Mkdir(inbox, 0o755); err != nil {
		b.Fatal(err)
	}
	var targets []string
	for i := 0; i < clips; i++ {
		p := filepath.Join(inbox, fmt.Sprintf("clip-%d.mp4", i))
		clitest.FFmpeg(b, "-i", target, "-map", "0", "-c", "copy", "-metadata", fmt.Sprintf("comment=copy %d", i), p)
		targets = append(targets, p)
	}
	timed := func(what string, args ...string) (float64, clitest.Result) {
		start := time.Now()
		r := clitest.Run(b, args...)
		took := time.Since(start).Seconds()
		if r.Code != 0 {
			b.Fatalf("%s: exit %d\n%s", what, r.Code, r.Stderr)
		}
		return took, r
	}
	batchRun := func(round int) float64 {
		out := filepath.Join(dir, fmt.Sprintf("batch-%d", round))
		s, r := timed("batch-run", "batch-run", "-s", source, "-t", filepath.Join(inbox, "*.mp4"), "-o", filepath.Join(out, "{target_name}.mp4"),
			"--trim-frame-end", frames, "--settle-time", "0")
		if n := len(mustGlob(b, filepath.Join(out, "clip-*.mp4"))); n != clips {
			b.Fatalf("batch-run wrote %d outputs, want %d:\n%s", n, clips, r.Stderr)
		}
		return s
	}
	separate := func(round int) float64 {
		var s float64
		for i, t := range targets {
			out := filepath.Join(dir, fmt.Sprintf("runs-%d", round), fmt.Sprintf("clip-%d.mp4", i))
			os.MkdirAll(filepath.Dir(out), 0o755)
			took, _ := timed("run", "run", "-s", source, "-t", t, "-o", out, "--trim-frame-end", frames)
			s += took
		}
		return s
	}
	var batches, runs, ratios []float64
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for p := 0; p < pairs; p++ {
			round := n*pairs + p
			var bt, rt float64
			if p%2 == 0 {
				bt, rt = batchRun(round), separate(round)
			} else {
				rt, bt = separate(round), batchRun(round)
			}
			batches, runs, ratios = append(batches, bt), append(runs, rt), append(ratios, rt/bt)
		}
	}
	b.ReportMetric(median(batches), "s/batch-run")
	b.ReportMetric(median(runs), "s/5-runs")
	b.ReportMetric(median(ratios), "runs/batch")
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func mustGlob(b *testing.B, pattern string) []string {
	m, err := filepath.Glob(pattern)
	if err != nil {
		b.Fatal(err)
	}
	return m
}
